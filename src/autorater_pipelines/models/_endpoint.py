"""What every model of the process that calls one endpoint and quota shares: the rate limiter and its health.

An endpoint is identified by ``(provider, endpoint URL, project, location, model name)`` — the unit a
quota is counted in (Vertex AI: per project, region and base model; an OpenAI-compatible server: per
``base_url`` and model). Every :class:`~autorater_pipelines.models.Model` of the process with the same key
gets the same :class:`Endpoint` (:func:`endpoint_for`), so models A/B, the rubric generator and the
validator that call one model on one project share one budget, and several runs of a process (a notebook)
continue where the previous one left the pace. Endpoints live as long as a model uses them.

Health is judged on the last ``OUTCOME_WINDOW`` attempts of any call:

- a 429 is a **quota signal** (the adaptive rate decreases) when the server says how long to wait
  (``Retry-After``, ``retry-after-ms`` or Google's ``RetryInfo``; a wait of 0 s is no hint) while no other call is
  answered alongside (``ALONGSIDE_S``), or when 429s are
  at least ``QUOTA_SHARE`` of the recent attempts — a lone 429 without a hint is a sporadic fault, not the
  quota; only a request's first 429 in a row counts (its repeated 429s are ``refused``, :mod:`._retry`);
- timeouts, connection resets and 5xx answers are an **overload** (the concurrency limit halves) when they
  are at least ``OVERLOAD_SHARE`` of the recent attempts;
- a 429's wait hint pauses every call on the endpoint only while nothing else is answered (:meth:`Endpoint.pause`):
  a success ends the pause, and a hint on a request refused while other calls succeed is that request's own wait;
- the endpoint is **healthy** while at least half of the recent attempts succeeded (retry backoff then
  stays short), and has **answered** once any attempt succeeded (before that, connection refused, DNS
  failure, 401, 403, 404 and an HTTP 200 answer that is not the API's response stop a run at once: the endpoint
  or the credentials are wrong).
"""

from __future__ import annotations

import collections
import threading
import time
import weakref
from typing import Any

from autorater_pipelines.models._classify import Reason
from autorater_pipelines.models._ratelimit import RateLimiter
from autorater_pipelines.models._types import ErrorKind, ModelError

__all__ = ["Endpoint", "endpoint_for"]

OUTCOME_WINDOW = 20
QUOTA_SHARE = 0.2
OVERLOAD_SHARE = 0.3
ALONGSIDE_S = 2.0
"""A success this many seconds before an attempt started (or any time after) was answered alongside it."""
NEVER_ANSWERED_STALL_S = 20.0
"""Stall limit of an endpoint that has not answered once (a dead or wrong endpoint stops sooner)."""


class Endpoint:
    """The rate limiter and recent outcomes of one endpoint and quota (thread-safe).

    Args:
        key: The identity (see the module docstring).
        url: The endpoint's URL for messages (no credentials).
        requests_per_minute: Declared quota share of this process (a ceiling), or None.
        adaptive: Adapt the rate to quota signals (AIMD, :class:`RateLimiter`).
    """

    def __init__(self, key: tuple[Any, ...], url: str, requests_per_minute: float | None, adaptive: bool) -> None:
        self.key = key
        self.url = url
        self.rate = RateLimiter(requests_per_minute, adaptive=adaptive)
        self.last_success: float | None = None
        self.failed_in_a_row = 0
        self._outcomes: collections.deque[str] = collections.deque(maxlen=OUTCOME_WINDOW)
        self._lock = threading.Lock()

    @property
    def answered(self) -> bool:
        """True once any attempt on this endpoint succeeded in this process."""
        return self.last_success is not None

    def healthy(self) -> bool:
        """True when at least half of the recent attempts (and at least half a window of them) succeeded."""
        with self._lock:
            window = list(self._outcomes)
        return len(window) >= OUTCOME_WINDOW // 2 and 2 * window.count("ok") >= len(window)

    def record_success(self) -> None:
        """Record a successful attempt; a success ends a server-requested pause (see :meth:`pause`)."""
        with self._lock:
            self._outcomes.append("ok")
            self.last_success = time.monotonic()
            self.failed_in_a_row = 0
        self.rate.on_success()
        self.rate.resume()

    def pause(self, seconds: float, started_at: float) -> bool:
        """Hold every call for a 429's wait hint, unless the endpoint is answering other calls.

        A ``Retry-After`` (or ``RetryInfo``) on a 429 is the endpoint's wait only while nothing else is answered:
        when another call succeeded after (or ``ALONGSIDE_S`` before) the refused attempt started, the hint is
        that request's own wait
        (a limit of the request, e.g. its size), and the others go on at full pace. A pause also ends as soon as
        a call in flight succeeds (:meth:`record_success`).

        Returns:
            True when the endpoint was paused.
        """
        if self.answered_since(started_at):
            return False
        self.rate.pause(seconds)
        return True

    def answered_since(self, started_at: float) -> bool:
        """True when a call succeeded after, or at most ``ALONGSIDE_S`` before, ``started_at`` (monotonic)."""
        return self.last_success is not None and self.last_success > started_at - ALONGSIDE_S

    def record_failure(self, error: ModelError, started_at: float, *, own: bool = False, signal: bool = True) -> bool:
        """Record a failed attempt started at ``started_at`` (monotonic clock); adapt the rate to quota signals.

        A quota signal lowers the pace and drops the limiter's refund credits (the quota is spent: a start
        given back now would be refused too); a 5xx or a 429 without a wait hint that is no quota signal (a
        fault) gives its start back (:meth:`RateLimiter.refund`). A hinted 429 refusing one request for
        itself gives nothing back: its retries wait out their own backoff.

        Args:
            error: The classified failure.
            started_at: When the attempt started.
            own: A 429 that refuses this request for itself while other calls are answered
                (:mod:`._retry`): recorded, but neither a quota signal nor part of the 429 share.
            signal: A 429 may be a quota signal (False: a request's repeated 429, counted in the share only).

        Returns:
            True when the endpoint looks overloaded (timeouts / 5xx dominate): the caller halves its
            concurrency.
        """
        outcome = {ErrorKind.RATE_LIMIT: "rate_limit", ErrorKind.TRANSIENT: "transient"}.get(error.kind, "other")
        if own or (outcome == "rate_limit" and not signal):
            outcome = "refused"  # a request's repeated 429: not part of the endpoint's 429 share
        with self._lock:
            self._outcomes.append(outcome)
            self.failed_in_a_row += 1
            share = self._outcomes.count(outcome) / OUTCOME_WINDOW
        hinted = error.retry_after_s is not None and error.retry_after_s > 0  # "Retry-After: 0" asks for no wait
        if outcome == "rate_limit" and (hinted or share >= QUOTA_SHARE):
            self.rate.on_rate_limited(started_at)
            self.rate.drop_credits()  # the quota is spent: an extra start now would be refused too
        elif error.status_code is not None and (error.status_code >= 500 or (error.status_code == 429 and not hinted)):
            self.rate.refund()  # a fault, not the quota: the rejected call used none of it
        return outcome == "transient" and share >= OVERLOAD_SHARE

    def stall_message(self, spec: str, error: ModelError, limit_s: float, *, since: float) -> str | None:
        """Why the run must stop when no call succeeded for ``limit_s`` (run start ``since``), else None.

        The time the server asked to wait (``Retry-After`` pauses) is not counted, so a server that answers
        ``Retry-After: 0`` to every call still stalls after ``limit_s``. An endpoint that has not answered once
        in this process gets at most ``NEVER_ANSWERED_STALL_S``.
        """
        if not self.answered:
            limit_s = min(limit_s, NEVER_ANSWERED_STALL_S)
        progress = max(self.last_success or since, since)
        if time.monotonic() - progress - self.rate.paused_since(progress) <= limit_s:
            return None
        status = f" (HTTP {error.status_code})" if error.status_code else ""
        never = "" if self.answered else ", not once in this run"
        return (
            f"no call to {spec!r} at {self.url} succeeded for {limit_s:g} s{never} (max_stall_s); last error: "
            f"{error.kind.value}{status}: {error.message.rstrip('.')}. Check that the endpoint is up and the "
            "quota is not exhausted, or raise max_stall_s."
        )

    def wrong_endpoint_message(self, spec: str, error: ModelError, *, unreachable: bool) -> str | None:
        """Why the run must stop at once when an endpoint that never answered refuses us, else None.

        Connection refused or an unknown host (``unreachable``), HTTP 401/403 and 404 stop a run when no call
        to the endpoint has succeeded yet; once one has, they are a restart or a problem of one request.
        """
        if self.answered:
            return None
        where = f"{self.url} (model {spec!r})"
        detail = error.message.rstrip(".")
        if unreachable:
            return (
                f"cannot connect to {where}: {detail}. Fix: check `base_url` (host, port, scheme) and that the "
                "server is running and reachable from here."
            )
        if error.status_code in (401, 403):
            return (
                f"{where} refused the call with HTTP {error.status_code}: {detail}. Fix: check the credentials "
                "(Application Default Credentials / service account roles, or the API key) and the project."
            )
        if error.status_code == 404:
            return (
                f"{where} answered HTTP 404: {detail}. Fix: check the model name, project and location, and "
                "`base_url` (an OpenAI-compatible server's usually ends in /v1)."
            )
        if error.reason == Reason.WRONG_PROTOCOL.value:  # a catch-all route, a web page: every call would be alike
            return f"{where}: {detail}."
        return None


_ENDPOINTS: weakref.WeakValueDictionary[tuple[Any, ...], Endpoint] = weakref.WeakValueDictionary()
_REGISTRY_LOCK = threading.Lock()


def endpoint_for(key: tuple[Any, ...], url: str, requests_per_minute: float | None, adaptive: bool) -> Endpoint:
    """The process-wide :class:`Endpoint` of ``key``, created on first use.

    A later model with a lower ``requests_per_minute`` lowers the shared ceiling (the quota is one); the
    first model's ``adaptive`` setting stays.
    """
    with _REGISTRY_LOCK:
        endpoint = _ENDPOINTS.get(key)
        if endpoint is None:
            endpoint = Endpoint(key, url, requests_per_minute, adaptive)
            _ENDPOINTS[key] = endpoint
        else:
            endpoint.rate.limit_to(requests_per_minute)
        return endpoint
