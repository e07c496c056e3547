"""A local HTTP server that speaks Vertex AI / Gemini API ``generateContent`` and OpenAI chat completions.

The real google-genai and openai clients reach it over loopback HTTP, so tests exercise the whole
model-call path (serialization, status codes, headers) without the internet or credentials::

    with ModelEmulator(responder=lambda req: "A") as emu:
        model = get_model("gemini-2.5-flash", GenerateConfig(base_url=emu.url))
        model.generate([...])
        assert emu.call_count == 1

Routes (``POST``):

- ``/{v1,v1beta1}/projects/P/locations/L/publishers/google/models/M:generateContent`` (also
  ``.../models/M`` and ``.../endpoints/E``) → protocol ``vertex``
- ``/{v1,v1beta,v1alpha}/models/M:generateContent`` → protocol ``gemini_api``
- ``/v1/chat/completions`` (or ``/chat/completions``) → protocol ``openai``
- ``/{v1,v1beta1}/projects/P/locations/L/batchPredictionJobs[/ID[:cancel]]`` (``POST``/``GET``) → Vertex AI
  batch prediction jobs whose lines are answered like ``vertex`` calls (:attr:`ModelEmulator.batch`,
  :mod:`autorater_pipelines.testing._batch`)

Failure simulation, decided when a request arrives, in this order: injected failures
(:meth:`ModelEmulator.inject_failures`), random faults (``fault_rate``, seeded; a faulted request uses no
quota), the quota (a token bucket: ``quota_burst`` requests at most, refilled at ``requests_per_minute``;
beyond it 429 with ``Retry-After`` = time until the next token). Every answer, failed or not, is sent
after ``latency_s``. ``Retry-After`` values may be fractional seconds (e.g. ``0.2``) so tests stay fast;
OpenAI answers also carry ``retry-after-ms``.

Protocol mismatches: ``api_versions=("v1",)`` routes only paths of those API versions (every other path is
answered 404, as a server that serves another version); ``catch_all`` answers every path without a route
with HTTP 200 and that body (a dict as JSON, a string as an HTML page), as a web app's catch-all route does.

Gecko's media probe (a prompt holding ``[gecko media probe]``) is answered first, as a seeing model would,
by looking at the image it received (:mod:`autorater_pipelines.testing._probe`); probe requests are kept apart
(:attr:`ModelEmulator.probe_requests`), not in ``requests`` or ``call_count``.

``GET /stats`` answers the counters as JSON (``calls``, ``by_status``, ``max_in_flight``), so a client in
another process (benchmarks) can read them.

Run it by hand: ``python -m autorater_pipelines.testing.emulator --port 8080 --latency-ms 50``
(:mod:`autorater_pipelines.testing.emulator`).
"""

from __future__ import annotations

import collections
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from autorater_pipelines.testing._batch import BatchJobs
from autorater_pipelines.testing._bodies import error_body, success_body
from autorater_pipelines.testing._http import EmulatorServer, RequestHandler
from autorater_pipelines.testing._probe import is_probe, probe_answer
from autorater_pipelines.testing._protocols import (
    Answer,
    EmulatedRequest,
    Refusal,
    Responder,
    default_responder,
    to_answer,
)

__all__ = ["ModelEmulator"]

QUOTA_MESSAGE = "quota of {:g} requests per minute exceeded"


class ModelEmulator:
    """Emulated Gemini (Vertex AI and Developer API) and OpenAI endpoints on ``127.0.0.1``.

    Args:
        responder: ``f(EmulatedRequest) -> str | dict`` giving the answer (see
            :data:`autorater_pipelines.testing.Responder`); default: a fixed short text, or a JSON
            instance of the requested response schema. A responder that raises
            :class:`~autorater_pipelines.testing.Refusal` gets that HTTP error answered; any other
            exception is answered 500 with the exception text.
        latency_s: Seconds each request takes before it is answered (may be changed while running).
        requests_per_minute: Quota: refill rate of a token bucket of ``quota_burst`` requests; a
            request that finds the bucket empty is answered 429 with ``Retry-After`` (None = no quota).
        fault_rate: Probability in [0, 1] that a request fails with ``fault_status``; faulted requests
            use no quota.
        fault_status: HTTP status of random faults, or several (each fault picks one at random, e.g.
            ``(429, 503)``). Random faults carry no ``Retry-After``.
        seed: Seed of the fault generator.
        quota_burst: Capacity of the quota bucket in requests (default: ``requests_per_minute``, one
            minute's worth, which starts full).
        record_requests: Keep every :class:`EmulatedRequest` (``requests``); False keeps only the
            counters (long benchmarks).
        retry_hint: How a quota 429 says when to retry: ``"header"`` (``Retry-After``, and ``retry-after-ms``
            for OpenAI), ``"body"`` (Google's ``RetryInfo.retryDelay`` in the error body, as the Gemini API
            does; OpenAI answers then carry the header) or ``"none"`` (no hint, as Vertex AI often does).
        max_input_tokens: Answer 400 ``INVALID_ARGUMENT`` to a request whose prompt has more tokens
            (whitespace-separated words, as in the usage counts) than this, like the real APIs' context
            limit (None = no limit).
        fail_after: Answer every request after the first ``fail_after`` with ``fault_status`` (the first one given)
            and no ``Retry-After``, as an endpoint that goes down mid-run (None = never). Injected failures come
            first; the requests they fail count.
        api_versions: Route only paths whose first segment is one of these (e.g. ``("v1",)``); None = every
            version above. Other paths get the unrouted answer (404, or ``catch_all``).
        catch_all: Answer a ``POST`` to a path without a route with HTTP 200 and this body (a dict: JSON; a
            string: ``text/html``) instead of 404. Unrouted requests count in ``call_count`` and ``by_status``.
        host: Interface to bind (keep the loopback default in tests).
        port: TCP port; 0 picks a free one.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        latency_s: float = 0.0,
        requests_per_minute: float | None = None,
        fault_rate: float = 0.0,
        fault_status: int | Sequence[int] = 503,
        seed: int = 0,
        *,
        quota_burst: float | None = None,
        record_requests: bool = True,
        retry_hint: str = "header",
        max_input_tokens: int | None = None,
        fail_after: int | None = None,
        api_versions: Sequence[str] | None = None,
        catch_all: dict[str, Any] | str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder: Callable[[EmulatedRequest], Any] = responder or default_responder
        self.latency_s = latency_s
        self.requests_per_minute = requests_per_minute
        self.quota_burst = quota_burst
        self.fault_rate = fault_rate
        self.fault_status = fault_status
        self.record_requests = record_requests
        if retry_hint not in ("header", "body", "none"):
            raise ValueError(f"retry_hint must be 'header', 'body' or 'none', got {retry_hint!r}")
        self.retry_hint = retry_hint
        self._last_minute: collections.deque[float] = collections.deque()  # arrival times, last 60 s
        self._max_per_minute = 0
        self.max_input_tokens = max_input_tokens
        self.fail_after = fail_after
        self.api_versions = tuple(api_versions) if api_versions is not None else None
        self.catch_all = catch_all
        self._random = random.Random(seed)
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._requests: list[EmulatedRequest] = []
        self._probe_requests: list[EmulatedRequest] = []
        self._call_count = 0
        self._by_status: collections.Counter[int] = collections.Counter()
        self._injected: collections.deque[tuple[int, float | None]] = collections.deque()
        self._tokens: float | None = None  # quota bucket level; None = full, not started
        self._refilled_at = 0.0
        self._in_flight = 0
        self._max_in_flight = 0
        self._connections: set[socket.socket] = set()
        self._server: EmulatorServer | None = None
        self.batch = BatchJobs(self, seed=seed)  # Vertex AI batch prediction jobs (testing/_batch.py)
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> ModelEmulator:
        """Start serving in a background thread; returns self."""
        if self._server is not None:
            return self
        server = EmulatorServer((self._host, self._port), RequestHandler)
        server.emulator = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="model-emulator", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection (idempotent)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ModelEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- observation --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321`` (use it as ``base_url`` for every provider)."""
        if self._server is None:
            raise RuntimeError("the emulator is not running: call start() or use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    @property
    def requests(self) -> list[EmulatedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def probe_requests(self) -> list[EmulatedRequest]:
        """The Gecko media probe's requests received so far (a copy).

        They are answered before everything else (no latency, quota or injected failure), by looking at the image
        received (:mod:`autorater_pipelines.testing._probe`), and are not in :attr:`requests` nor
        :attr:`call_count`, which count the evaluation's own calls.
        """
        with self._lock:
            return list(self._probe_requests)

    @property
    def call_count(self) -> int:
        """Number of model calls received (answered with any status)."""
        with self._lock:
            return self._call_count

    def stats(self) -> dict[str, Any]:
        """Counters as a JSON-ready dict (also served on ``GET /stats``).

        Returns:
            ``{"calls": received, "by_status": {"200": answered, ...}, "in_flight": n, "max_in_flight": n,
            "max_calls_per_minute": n}`` (the most requests received in any 60 s, failed ones included).
        """
        with self._lock:
            return {
                "max_calls_per_minute": self._max_per_minute,
                "calls": self._call_count,
                "by_status": {str(k): v for k, v in sorted(self._by_status.items())},
                "in_flight": self._in_flight,
                "max_in_flight": self._max_in_flight,
            }

    @property
    def max_in_flight(self) -> int:
        """Largest number of requests being handled at the same moment."""
        with self._lock:
            return self._max_in_flight

    def reset(self) -> None:
        """Forget recorded requests, counters, injected failures and the quota bucket (full again)."""
        with self._lock:
            self._requests.clear()
            self._probe_requests.clear()
            self._call_count = 0
            self._by_status.clear()
            self._injected.clear()
            self._tokens = None
            self._max_in_flight = self._in_flight
            self._last_minute.clear()
            self._max_per_minute = 0

    # --- control ------------------------------------------------------------------------------
    def inject_failures(self, n: int, status: int = 429, retry_after_s: float | None = 1.0) -> None:
        """Make the next ``n`` requests fail with ``status`` (and ``Retry-After`` when not None, seconds)."""
        with self._lock:
            self._injected.extend([(status, retry_after_s)] * n)

    # --- internals ----------------------------------------------------------------------------
    def _count_unrouted(self) -> None:
        """Count a POST to a path without a route (answered 200 by ``catch_all``, else 404)."""
        with self._lock:
            self._call_count += 1
            self._by_status[200 if self.catch_all is not None else 404] += 1

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _failure(self) -> tuple[int, float | None, str] | None:
        """Decide (under the lock) whether this request fails: (status, retry_after_s, message).

        A quota failure's message is :data:`QUOTA_MESSAGE` (its wait hint follows ``retry_hint``).
        """
        if self._injected:
            status, retry_after = self._injected.popleft()
            return status, retry_after, f"injected failure (HTTP {status})"
        if self.fail_after is not None and self._call_count > self.fail_after:
            status = self.fault_status if isinstance(self.fault_status, int) else list(self.fault_status)[0]
            return status, None, f"down after {self.fail_after} calls (HTTP {status})"
        if self.fault_rate and self._random.random() < self.fault_rate:
            statuses = [self.fault_status] if isinstance(self.fault_status, int) else list(self.fault_status)
            status = statuses[self._random.randrange(len(statuses))] if len(statuses) > 1 else statuses[0]
            return status, None, f"random fault (HTTP {status})"
        if self.requests_per_minute:
            rate = self.requests_per_minute / 60.0  # tokens per second
            capacity = max(1.0, float(self.quota_burst or self.requests_per_minute))
            now = time.monotonic()
            if self._tokens is None:
                self._tokens = capacity
            else:
                self._tokens = min(capacity, self._tokens + (now - self._refilled_at) * rate)
            self._refilled_at = now
            if self._tokens < 1.0:
                wait = max(0.001, (1.0 - self._tokens) / rate)
                return 429, round(wait, 3), QUOTA_MESSAGE.format(self.requests_per_minute)
            self._tokens -= 1.0
        return None

    def _handle(self, request: EmulatedRequest) -> tuple[int, dict[str, Any], dict[str, str]]:
        if is_probe(request):  # Gecko's media probe: answered as a seeing model would, counted apart
            with self._lock:
                self._probe_requests.append(request)
            request.status = 200
            return 200, success_body(request, Answer(text=probe_answer(request))), {}
        with self._lock:
            if self.record_requests:
                self._requests.append(request)
            self._call_count += 1
            now = time.monotonic()
            self._last_minute.append(now)
            while self._last_minute[0] <= now - 60.0:
                self._last_minute.popleft()
            self._max_per_minute = max(self._max_per_minute, len(self._last_minute))
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            failure = self._failure()
        if failure is None and self.max_input_tokens is not None:
            tokens = len(request.prompt_text.split()) + len((request.system_instruction or "").split())
            if tokens > self.max_input_tokens:
                message = (
                    f"The input token count ({tokens}) exceeds the maximum number of tokens allowed "
                    f"({self.max_input_tokens})."
                )
                failure = (400, None, message)
        try:
            if self.latency_s > 0:
                time.sleep(self.latency_s)
            if failure is not None:
                status, retry_after, message = failure
                headers: dict[str, str] = {}
                quota = bool(self.requests_per_minute) and message == QUOTA_MESSAGE.format(self.requests_per_minute)
                hint = self.retry_hint if quota else "header"
                in_body = hint == "body" and request.protocol != "openai"
                if hint != "none" and not in_body:
                    headers = _retry_headers(request.protocol, retry_after)
                body = error_body(request.protocol, status, message, retry_after if in_body else None)
                result = (status, body, headers)
            else:
                try:
                    answer = to_answer(self.responder(request))
                    result = (200, success_body(request, answer), {})
                except Refusal as exc:  # the responder plays a server that refuses the request
                    body = error_body(request.protocol, exc.status, exc.message)
                    body["error"].update(exc.fields)
                    result = (exc.status, body, _retry_headers(request.protocol, exc.retry_after_s))
                except Exception as exc:  # noqa: BLE001 - a responder bug becomes a visible 500
                    message = f"responder failed: {type(exc).__name__}: {exc}"
                    result = (500, error_body(request.protocol, 500, message), {})
            request.status = result[0]
            return result
        finally:
            with self._lock:
                self._in_flight -= 1
                if request.status is not None:
                    self._by_status[request.status] += 1


def _retry_headers(protocol: str, retry_after_s: float | None) -> dict[str, str]:
    """``Retry-After`` (and OpenAI's ``retry-after-ms``) for a wait of ``retry_after_s`` seconds (None: none)."""
    if retry_after_s is None:
        return {}
    headers = {"Retry-After": f"{retry_after_s:g}"}
    if protocol == "openai":
        headers["retry-after-ms"] = str(int(retry_after_s * 1000))
    return headers
