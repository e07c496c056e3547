"""The retry loop of one request: concurrency slot, rate limit, provider attempt, backoff, run stop.

:class:`RetryLoop` is the half of :class:`~autorater_pipelines.models.Model` that makes the calls of one
request (see the path drawn in :mod:`._model`); the Model class around it keeps the cache, the worker
pool and the run's lifecycle. It is a mixin because both halves share the run state (``_stop``,
``_stopped``) and the endpoint's limiters.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from typing import NamedTuple

from autorater_pipelines.models._classify import Reason, media_refused_message
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._endpoint import Endpoint
from autorater_pipelines.models._provider import Provider, ProviderError, is_unreachable
from autorater_pipelines.models._ratelimit import ConcurrencyLimiter
from autorater_pipelines.models._stats import CallStats
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest, UnsentError

logger = logging.getLogger("autorater_pipelines.models")

_RETRYABLE = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)
CALL_FAILURES = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT, ErrorKind.FATAL)
"""Error kinds of a failed call (as opposed to an answer without text, or a call not made)."""
_TIMEOUT = getattr(asyncio, "timeout", None)


class _Attempt(NamedTuple):
    """One provider call: its output, the retry-classified error (None: success), and its timing."""

    output: ModelOutput
    error: ModelError | None
    unreachable: bool
    started: float
    latency: float


class RetryLoop:
    """Calls for one request with retries; mixed into :class:`~autorater_pipelines.models.Model`."""

    spec: str
    config: GenerateConfig
    stats: CallStats
    _backend: Provider
    _endpoint: Endpoint
    _slots: ConcurrencyLimiter
    _random: random.Random
    _run_started: float
    _stop: tuple[ModelError, str] | None  # (last error, why the run stopped)
    _stopped: asyncio.Event | None  # set when the run stops (generate_each's event loop)

    async def _call_with_retries(self, request: ModelRequest) -> ModelOutput:
        """Call the provider until it answers, fails in a way not worth retrying, or the run stops.

        Only the first 429 of a request in a row is a quota signal for the endpoint's pace and retried first;
        a request refused again queues behind first attempts (so it cannot hold the pace and the slots). One
        refused again while the endpoint answered other calls since its first refusal is refused for itself (a
        limit of this request, :class:`_Refusals`): it waits a backoff of its own that doubles per refusal and
        ends after ``max_retries`` such retries or ``max_stall_s`` seconds, with the server's message.
        """
        attempt = counted = 0  # attempts made; failures that use up max_retries (not rate limits)
        refusals = _Refusals()
        while True:
            made = await self._timed_attempt(request, retry=attempt > 0, priority=attempt > 0 and refusals.total < 2)
            if made is None:
                return self._stopped_output(attempts=attempt)
            if isinstance(made.error, UnsentError):  # refused before sending (max_input_tokens): no attempt
                return ModelOutput(text=None, error=made.error, attempts=attempt)
            attempt += 1
            error, latency = made.error, made.latency
            if error is None:
                self._endpoint.record_success()
                self._slots.on_success()
                if made.output.error is None:
                    self.stats.latency.add(latency)
                return dataclasses.replace(made.output, attempts=attempt, latency_s=latency)
            failed = ModelOutput(text=None, error=error, attempts=attempt, latency_s=latency)
            own = refusals.record(error, made.started, self._endpoint)
            self._record_failure(error, made.started, own=own, signal=refusals.total < 2)
            if error.kind is ErrorKind.TRANSIENT:
                counted += 1
            if own:
                delay = refusals.next_wait = max(error.retry_after_s or 0.0, self._own_backoff(refusals.own))
                final = self._give_up_refused(failed, error, refusals)
            else:
                final = self._give_up(failed, error, made.unreachable, counted, started=made.started)
                hint = error.retry_after_s
                delay = hint if hint is not None else self._backoff(counted or 1)
            if final is not None:
                return final
            self.stats.retries += 1
            logger.debug(
                "%s: attempt %d for %r failed (%s: %s); retrying in %.2f s",
                self.spec,
                attempt,
                request.key,
                error.kind.value,
                error.message,
                delay,
            )
            await self._sleep(delay)

    def _give_up_refused(self, failed: ModelOutput, error: ModelError, refusals: _Refusals) -> ModelOutput | None:
        """The final output of a request refused for itself once its budget is used up, else None."""
        config = self.config
        hint = error.retry_after_s
        if hint is not None and hint > config.max_retry_after_s:
            return self._give_up(failed, error, False, 0)  # the message that says the wait is too long
        waited = time.monotonic() - refusals.since
        if refusals.own <= config.max_retries and waited + refusals.next_wait <= config.max_stall_s:
            return None
        message = (
            f"{error.message} — refused with HTTP 429 {refusals.total} times over {waited:.0f} s while "
            f"{self._endpoint.url} answered other requests: a limit of this request, not of the endpoint's pace "
            f"(given up after max_retries={config.max_retries} such retries or max_stall_s={config.max_stall_s:g} s). "
            "Check the request's size against the quota (tokens per minute), or raise the limit."
        )
        return _with_message(failed, error, message)

    def _own_backoff(self, refusals: int) -> float:
        """The wait before retrying a request refused for itself: ``initial_backoff_s`` doubled per refusal."""
        config = self.config
        delay = min(config.max_backoff_s, config.initial_backoff_s * 2 ** max(0, refusals - 1))
        return delay * self._random.uniform(0.5, 1.0)

    async def _timed_attempt(self, request: ModelRequest, *, retry: bool, priority: bool) -> _Attempt | None:
        """One attempt inside a concurrency slot and the rate limit; None when the run stopped meanwhile.

        ``priority``: go first in both queues (a retry: started work finishes first); ``retry``: hold one of
        the slots retries may use (never all of them: :class:`ConcurrencyLimiter`).
        """
        if self._stop is not None:
            return None
        await self._slots.acquire(priority=priority, retry=retry)
        try:
            await self._endpoint.rate.acquire(priority=priority)
            if self._stop is not None:  # stopped while this call waited for its turn
                return None
            self.stats.calls += 1
            started = time.monotonic()
            output, error, unreachable = await self._attempt(request)
            if isinstance(error, UnsentError):  # nothing was sent: no attempt, no quota used
                self.stats.calls -= 1
                self._endpoint.rate.refund()
            return _Attempt(output, error, unreachable, started, time.monotonic() - started)
        finally:
            self._slots.release(retry=retry)

    def _record_failure(self, error: ModelError, started: float, *, own: bool = False, signal: bool = True) -> None:
        """Tell the limiters about a failed attempt that started at ``started`` (monotonic seconds).

        ``own``: a 429 refusing this request for itself; ``signal``: a 429 may be a quota signal for the
        endpoint's pace (False for a request's repeated 429s: its first one already told the pace).
        """
        if self._endpoint.record_failure(error, started, own=own, signal=signal):
            self._slots.on_overloaded()
        if error.kind is ErrorKind.RATE_LIMIT:
            self.stats.rate_limited += 1

    def _give_up(
        self, failed: ModelOutput, error: ModelError, unreachable: bool, counted: int, *, started: float = 0.0
    ) -> ModelOutput | None:
        """The final output when ``error`` ends the request (stopping the run where it must), else None.

        ``counted`` is the number of failures so far that use up ``max_retries``. A rate limit with a
        server hint pauses the endpoint's pace here, unless other calls were answered since the attempt
        ``started`` (then the hint is this request's own wait: :meth:`Endpoint.pause`).
        """
        config = self.config
        wrong = self._endpoint.wrong_endpoint_message(self.spec, error, unreachable=unreachable)
        if error.reason == Reason.MEDIA_UNSUPPORTED.value:  # every other request with media fails alike
            wrong = media_refused_message(self.spec, self._endpoint.url, error)
        if wrong is not None:
            self._trip(error, wrong)
            return _with_message(failed, error, wrong)
        if error.kind not in _RETRYABLE:
            return failed
        hint = error.retry_after_s
        if hint is not None and hint > config.max_retry_after_s:
            message = (
                f"{error.message} — the server asked to wait {hint:g} s before retrying, longer than "
                f"max_retry_after_s={config.max_retry_after_s:g}; raise max_retry_after_s or run later"
            )
            return _with_message(failed, error, message)
        if error.kind is ErrorKind.RATE_LIMIT and hint is not None:
            self._endpoint.pause(hint, started)
        if error.kind is not ErrorKind.RATE_LIMIT and counted > config.max_retries:
            return failed
        stalled = self._stalled(error)
        if stalled is not None:
            self._trip(error, stalled)
            return _with_message(failed, error, stalled)
        return None

    def _trip(self, error: ModelError, why: str) -> None:
        """Stop the run: no further calls; ``why`` is the first sentence of the ModelCallError."""
        if self._stop is None:
            self._stop = (error, why)
            if self._stopped is not None:
                self._stopped.set()  # wakes the requests waiting out a backoff

    async def _sleep(self, delay: float) -> None:
        """Wait ``delay`` seconds, or less when the run stops meanwhile (no request waits out a long backoff)."""
        stopped = self._stopped
        if stopped is None:
            await asyncio.sleep(delay)
            return
        try:
            await asyncio.wait_for(stopped.wait(), delay)
        except asyncio.TimeoutError:
            pass

    def _backoff(self, attempt: int) -> float:
        """A retry delay with full jitter: at most ``initial_backoff_s`` while the endpoint is healthy.

        The backoff grows with the endpoint's trouble, not with this request's bad luck: while most recent
        attempts (any call) succeed, faults are sporadic and a retry waits at most initial_backoff_s (no
        straggler waits 0.5 + 1 + 2 s after 3 unlucky faults at the end of a run); otherwise it doubles per
        attempt, as long as the endpoint keeps failing.
        """
        config = self.config
        exponent = 0 if self._endpoint.healthy() else min(attempt, self._endpoint.failed_in_a_row) - 1
        return self._random.uniform(0.0, min(config.max_backoff_s, config.initial_backoff_s * 2 ** max(0, exponent)))

    def _stalled(self, error: ModelError) -> str | None:
        """The stop message when no call has succeeded for ``max_stall_s`` (server-requested waits excluded)."""
        return self._endpoint.stall_message(self.spec, error, self.config.max_stall_s, since=self._run_started)

    async def _attempt(self, request: ModelRequest) -> tuple[ModelOutput, ModelError | None, bool]:
        """One provider call bounded by ``timeout_s``: (output, retry-classified error or None, unreachable)."""
        try:
            if _TIMEOUT is not None:  # Python ≥ 3.11: no extra Task per attempt (wait_for creates one)
                async with _TIMEOUT(self.config.timeout_s):
                    output = await self._backend.generate(request)
            else:
                output = await asyncio.wait_for(self._backend.generate(request), self.config.timeout_s)
        except ProviderError as exc:
            return ModelOutput(text=None, error=exc.error), exc.error, False
        except asyncio.TimeoutError:
            error = ModelError(ErrorKind.TRANSIENT, f"no answer within timeout_s={self.config.timeout_s} s")
            return ModelOutput(text=None, error=error), error, False
        except Exception as exc:  # noqa: BLE001 - every SDK failure is classified, never raised
            error = self._backend.classify_error(exc)
            return ModelOutput(text=None, error=error), error, is_unreachable(exc)
        if output.error is not None and output.error.kind in CALL_FAILURES:
            return output, output.error, False
        return output, None, False  # success, or an answer without text (BLOCKED): not retried

    async def _attempt_local(self, request: ModelRequest) -> ModelOutput:
        """One call of a replay-style provider (no network): no limiter, no retry, no timeout."""
        try:
            return await self._backend.generate(request)
        except ProviderError as exc:
            return ModelOutput(text=None, error=exc.error, attempts=0)
        except Exception as exc:  # noqa: BLE001
            return ModelOutput(text=None, error=self._backend.classify_error(exc), attempts=0)

    def _stopped_output(self, attempts: int = 0) -> ModelOutput:
        """The output of a request not called because the run stopped."""
        why = self._stop[1] if self._stop is not None else "the run stopped"
        return ModelOutput(text=None, error=ModelError(ErrorKind.BUDGET, f"not called: {why}"), attempts=attempts)


class _Refusals:
    """The 429s of one request in a row: when they are its own (refused while others are answered).

    A 429 is the request's *own* when this request already got a 429 (``since``: the start of that first
    attempt) and the endpoint answered another call alongside (after that, or at most ``ALONGSIDE_S`` before:
    :meth:`Endpoint.answered_since`): the endpoint has capacity, yet refuses this request. A 429 while nothing
    else succeeds is the endpoint's quota (the adaptive pace and ``max_stall_s`` handle it).
    A transient failure (5xx, timeout) between two 429s keeps the streak; any other failure ends it.
    """

    def __init__(self) -> None:
        self.since = 0.0
        self.next_wait = 0.0  # the backoff before the next retry (a retry past max_stall_s is not made)
        self.total = 0  # 429s in a row
        self.own = 0  # of which refused for itself

    def record(self, error: ModelError, started: float, endpoint: Endpoint) -> bool:
        """Record a failed attempt started at ``started``; True when it is a 429 refusing this request itself."""
        if error.kind is ErrorKind.TRANSIENT and self.total:
            return False  # a 5xx or timeout between two 429s does not end the streak
        if error.kind is not ErrorKind.RATE_LIMIT:
            self.total = self.own = 0
            return False
        self.total += 1
        if self.total == 1:
            self.since = started
            return False
        if endpoint.answered_since(self.since):
            self.own += 1
            return True
        return False


def _with_message(failed: ModelOutput, error: ModelError, message: str) -> ModelOutput:
    return dataclasses.replace(failed, error=dataclasses.replace(error, message=message))
