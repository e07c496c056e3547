"""The one wrapper around every provider: cache, concurrency, rate limit, retries, usage, run budget.

Path of one request (:meth:`Model.agenerate`)::

    cache lookup ──hit──▶ output (cached=True, attempts=0; no rate-limit budget used)
        │ miss
        ▼
    per attempt: concurrency slot ▶ endpoint's rate limiter (adaptive pace, server pauses) ▶ provider
        │ RATE_LIMIT: wait the server's hint (≤ max_retry_after_s) or a short jittered backoff, then queue
        │   again — without using up max_retries, for as long as the endpoint makes progress (max_stall_s);
        │   a request refused again while others are answered: its own doubling backoff, behind first
        │   attempts, max_retries / max_stall_s at most (a 429 "request too large" is FATAL at once)
        │ TRANSIENT: the same waits, counted against max_retries; backoff doubles only while the
        │   endpoint keeps failing (retries go first in both queues)
        │ (an answer the server rejected gives its rate-limiter start back)
        ▼
    success ▶ cache write ▶ output

The run stops (every remaining request fails with the reason, :class:`ModelCallError` at the end) when:
the endpoint never answered and refuses the connection, cannot be resolved, or answers 401/403/404
(within seconds, one line naming the URL, the model and the fix); the endpoint refuses the request's images or
videos (the model is text-only: at the first such answer, with the model and the fix); no call has succeeded for
``max_stall_s``; ``max_consecutive_failures`` calls in a row failed; or the process got SIGTERM (calls in
flight finish for up to ``DRAIN_S`` seconds and the cache is written, so a re-run repeats none of them).

Rate limiting is per endpoint and quota, shared by every model of the process (:mod:`._endpoint`).

Many requests (:meth:`Model.generate`, :meth:`Model.generate_each`) run on a bounded pool of worker
coroutines that pull requests lazily from the input iterable, so memory and scheduling cost do not grow
with the number of requests; outputs are delivered in input order through a small reorder buffer.

Replay-style providers (``uses_network = False``) skip the cache, the limiters and retries.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import random
import signal
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar

from autorater_pipelines.errors import InputError, ModelCallError
from autorater_pipelines.models._batch import check_batch_support, generate_batch
from autorater_pipelines.models._cache import cache_key
from autorater_pipelines.models._cache_store import open_response_cache
from autorater_pipelines.models._config import GenerateConfig, base_url_problem
from autorater_pipelines.models._endpoint import endpoint_for
from autorater_pipelines.models._progress import RunProgress
from autorater_pipelines.models._provider import Provider
from autorater_pipelines.models._ratelimit import SLOW_START, ConcurrencyLimiter
from autorater_pipelines.models._retry import CALL_FAILURES, RetryLoop
from autorater_pipelines.models._stats import CallStats
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest

__all__ = ["CallStats", "Model"]

logger = logging.getLogger("autorater_pipelines.models")

_T = TypeVar("_T")
_SPARE_WORKERS = 16  # workers beyond max_concurrency: requests in backoff or reading the cache
DRAIN_S = 10.0
"""Seconds the calls in flight get to finish after SIGTERM before they are cancelled."""


class Model(RetryLoop):
    """A model ready to be called; build it with :func:`autorater_pipelines.models.get_model`.

    Attributes:
        spec: The model spec as given, e.g. ``"openai/gpt-4o-mini"``.
        provider: ``"vertex"``, ``"gemini_api"``, ``"openai"`` or ``"replay"``.
        name: Provider-side model name.
        config: Generation and execution settings.
        stats: Running totals (:class:`CallStats`).
    """

    def __init__(self, spec: str, backend: Provider, config: GenerateConfig) -> None:
        self.spec = spec
        self.provider = backend.provider
        self.name = backend.name
        self.config = config
        self.stats = CallStats()
        self._backend = backend
        self._cache = open_response_cache(config.cache_dir) if backend.uses_network else None
        self._identity = backend.cache_identity()
        if config.mode == "batch":
            check_batch_support(spec, backend, config)
        self._endpoint = endpoint_for(
            backend.quota_key() if backend.uses_network else ("local", spec, id(self)),
            backend.endpoint_url if backend.uses_network else spec,
            config.requests_per_minute,
            config.adaptive_rate,
        )
        self._slots = ConcurrencyLimiter(config.max_concurrency, adaptive=config.adaptive_concurrency)
        if backend.uses_network and self._endpoint.rate.unknown:
            self._slots.start_at(SLOW_START)  # an unknown quota: probe it, not with max_concurrency calls at once
        self._random = random.Random()
        self._consecutive_failures = 0
        self._run_started = time.monotonic()
        self._stop: tuple[ModelError, str] | None = None  # (last error, why the run stopped)
        self._stopped: asyncio.Event | None = None  # set when the run stops (generate_each's event loop)
        self._interrupted = False
        self._reask: Callable[[ModelOutput], bool] | None = None  # cached answers to ask again (generate_each)

    def __repr__(self) -> str:
        return f"Model(spec={self.spec!r}, provider={self.provider!r}, name={self.name!r})"

    @property
    def cache_dir(self) -> str | None:
        """Where the response cache lives (a directory or a ``gs://`` prefix), or None when caching is off."""
        return self._cache.location if self._cache is not None else None

    @property
    def endpoint_url(self) -> str:
        """The URL calls go to (no credentials)."""
        return self._endpoint.url

    def check_reachable(self, timeout_s: float = 5.0) -> None:
        """Open (and close) a TCP connection to an explicitly configured endpoint; no request is sent.

        Only a ``base_url`` given in the parameters or the environment is probed (never a provider's
        default host); replay models and default endpoints pass without a probe. ``autorater run`` calls
        this before the pipeline starts, so a wrong ``base_url`` fails in about a second.

        Raises:
            InputError: the connection was refused, the host name does not resolve, or nothing answered
                within ``timeout_s`` — with the URL (no credentials), the model and the fix.
        """
        target = self._backend.base_url if self._backend.uses_network else None
        if not target:
            return
        problem = base_url_problem(target)  # from the environment ($OPENAI_BASE_URL …): parameters are checked
        if problem:
            raise InputError(f"the endpoint of model {self.spec!r}, {self.endpoint_url!r}, {problem}")
        parts = urllib.parse.urlsplit(target if "//" in target else f"//{target}")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            port = None
        if not parts.hostname or port is None:
            raise InputError(f"base_url {self.endpoint_url!r} of model {self.spec!r} names no host and port")
        try:
            socket.create_connection((parts.hostname, port), timeout=timeout_s).close()
        except OSError as exc:
            raise InputError(
                f"cannot connect to {self.endpoint_url} (model {self.spec!r}): {type(exc).__name__}: {exc}. Fix: "
                "check `base_url` (host, port, scheme) and that the server is running and reachable from here."
            ) from None

    # ------------------------------------------------------------------------------------------
    async def agenerate(self, request: ModelRequest) -> ModelOutput:
        """Answer one request: cache → concurrency → rate limit → provider, with retries.

        Never raises for a failed call: the output's ``error`` says what went wrong. Once the run has
        stopped (see the module docstring), further requests are not called and come back with error
        kind ``BUDGET`` (until the next :meth:`generate`).

        Args:
            request: The request.

        Returns:
            The output (``cached=True, attempts=0`` for a cache hit).
        """
        self.stats.requests += 1
        if not self._backend.uses_network:
            output = await self._attempt_local(request)
        else:
            output = await self._agenerate_network(request)
        if output.error is not None:
            self.stats.failures += 1
        if output.replaced_characters:
            self.stats.repaired_answers += 1
            logger.warning(
                "the answer of %s to request %s held %d lone UTF-16 surrogate(s) (e.g. a JSON escape \\ud800), "
                "which no UTF-8 file can hold: replaced by U+FFFD",
                self.spec,
                request.key,
                output.replaced_characters,
            )
        self.stats.usage = self.stats.usage + output.usage
        return output

    def generate(self, requests: Iterable[ModelRequest], *, desc: str = "model calls") -> list[ModelOutput]:
        """Answer many requests concurrently (bounded by ``config.max_concurrency``).

        Args:
            requests: The requests.
            desc: Label of the progress bar and of the summary log line.

        Returns:
            One output per request, in input order; failed calls are outputs with ``error`` set.

        Raises:
            ModelCallError: the run stopped (see the module docstring); the remaining requests were not
                called.
        """
        requests = list(requests)
        outputs: list[ModelOutput] = []
        if requests:
            self.generate_each(requests, lambda _request, output: outputs.append(output), desc=desc)
        return outputs

    def generate_each(
        self,
        requests: Iterable[ModelRequest],
        consume: Callable[[ModelRequest, ModelOutput], None],
        *,
        desc: str = "model calls",
        total: int | None = None,
        reask: Callable[[ModelOutput], bool] | None = None,
    ) -> None:
        """Answer requests as a stream: pull them lazily, hand each output to ``consume`` in input order.

        Neither the requests nor the outputs are kept, so memory stays flat however many there are (the
        iterable may build each request on demand). ``consume`` runs in the event loop's thread; it should
        be quick, and an exception it raises stops the run and propagates.

        Args:
            requests: The requests; iterated once, a few ahead of the calls in flight.
            consume: Called as ``consume(request, output)`` once per request, in input order.
            desc: Label of the progress bar and of the summary log line.
            total: Number of requests, for the progress bar (default: ``len(requests)`` when it has one).
            reask: Called on each cached answer; when it returns True the answer is not served from the
                cache but asked again (and the new answer replaces the cached one). The judge uses it to
                re-ask answers it could not parse (``retry_unparseable``). Not applied in batch mode.

        Raises:
            ModelCallError: the run stopped (see the module docstring). ``consume`` has then received an
                output for every request: those not called fail with error kind ``BUDGET`` and the reason
                (``error.interrupted`` is True after SIGTERM: then only the requests before the first one
                not answered were consumed).
        """
        if self.config.mode == "batch":  # one Vertex AI batch prediction job (models/_batch.py)
            requests = list(requests)
            outputs = generate_batch(
                self._backend,
                requests,
                spec=self.spec,
                config=self.config,
                identity=self._identity,
                cache=self._cache,
                stats=self.stats,
                desc=desc,
            )
            for request, output in zip(requests, outputs, strict=True):
                consume(request, output)
            return
        if total is None and hasattr(requests, "__len__"):
            total = len(requests)  # type: ignore[arg-type]
        self._reask = reask
        try:
            _run_sync(self._generate_each(iter(requests), consume, desc, total))
        finally:
            self._reask = None

    async def aclose(self) -> None:
        """Close the provider connections opened in the running event loop; finish pending cache writes."""
        await self._backend.aclose()
        if self._cache is not None:
            self._cache.flush()

    # ------------------------------------------------------------------------------------------
    async def _generate_each(
        self,
        requests: Iterable[ModelRequest],
        consume: Callable[[ModelRequest, ModelOutput], None],
        desc: str,
        total: int | None,
    ) -> None:
        self._consecutive_failures = 0
        self._stop = None
        self._stopped = asyncio.Event()
        self._interrupted = False
        self._run_started = time.monotonic()
        numbered = enumerate(requests)
        ready: dict[int, tuple[ModelRequest, ModelOutput]] = {}  # reorder buffer
        next_index = 0
        progress = RunProgress(
            f"{desc} ({self.spec})",
            total,
            show_bar=self.config.progress,
            stats=self.stats,
            pace=lambda: self._endpoint.rate.requests_per_minute,
        )

        async def worker() -> None:
            nonlocal next_index
            for index, request in numbered:  # shared iterator: each worker pulls the next request
                if self._interrupted:
                    return
                output = await self.agenerate(request)
                if self._interrupted and output.error is not None and output.error.kind is ErrorKind.BUDGET:
                    return  # not answered: a re-run calls it
                progress.add(request.key, output)
                ready[index] = (request, output)
                while next_index in ready:
                    consume(*ready.pop(next_index))
                    next_index += 1

        workers = 1 if not self._backend.uses_network else self.config.max_concurrency + _SPARE_WORKERS
        tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
        heartbeat = asyncio.ensure_future(progress.heartbeat(self.config.heartbeat_s))
        restore = self._on_sigterm(tasks) if self._backend.uses_network else None
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                failure = None if task.cancelled() else task.exception()
                if failure is not None:
                    raise failure  # a bug in consume or in the iterable
        finally:
            if restore is not None:
                restore()
            for task in [*tasks, heartbeat]:
                task.cancel()
            await asyncio.gather(*tasks, heartbeat, return_exceptions=True)
            progress.close()
            self._stopped = None
            await self.aclose()
        if self._stop is not None:
            raise ModelCallError(
                f"{self._stop[1]} {progress.answered} of {total if total is not None else progress.done} "
                "requests were answered.",
                interrupted=self._interrupted,
            )

    def _on_sigterm(self, tasks: Sequence[asyncio.Future[None]]) -> Callable[[], None] | None:
        """On SIGTERM: stop starting calls, let those in flight finish (``DRAIN_S``), write the cache."""
        if threading.current_thread() is not threading.main_thread():
            return None
        loop = asyncio.get_running_loop()

        def interrupt() -> None:
            self._interrupted = True
            self._trip(ModelError(ErrorKind.BUDGET, "interrupted"), "interrupted by SIGTERM;")
            loop.call_later(DRAIN_S, lambda: [task.cancel() for task in tasks])

        try:
            previous = signal.signal(signal.SIGTERM, lambda *_: loop.call_soon_threadsafe(interrupt))
        except ValueError:
            return None

        def restore() -> None:
            signal.signal(signal.SIGTERM, previous)

        return restore

    async def _agenerate_network(self, request: ModelRequest) -> ModelOutput:
        key = cache_key(self._identity, request, self.config) if self._cache is not None else None
        if self._cache is not None and key is not None:
            hit = self._cache.get(key)
            if hit is not None and self._reask is not None and self._reask(hit):
                hit = None  # e.g. an answer the judge could not parse: ask again
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        if self._stop is not None:
            return self._stopped_output()  # cache hits are still served; calls are not made
        output = await self._call_with_retries(request)
        if output.error is None or output.error.kind not in CALL_FAILURES:
            self._consecutive_failures = 0
        elif output.error.kind in CALL_FAILURES:
            self._consecutive_failures += 1
            limit = self.config.max_consecutive_failures
            if self._consecutive_failures >= limit:
                error = output.error
                self._trip(
                    error,
                    f"stopped calling {self.spec!r} after {limit} consecutive failed calls "
                    f"(max_consecutive_failures={limit}). Last error: {error.kind.value}"
                    f"{f' (HTTP {error.status_code})' if error.status_code else ''}: {error.message}. "
                    "Check the model name, credentials, project/location or base_url, or raise "
                    "max_consecutive_failures.",
                )
        if output.ok and self._cache is not None and key is not None:
            stored = self._cache.put(key, output)
            if stored is not None:  # a Cloud Storage cache: the call is finished once its answer is stored
                await asyncio.wrap_future(stored)
        return output


def _run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine to completion from synchronous code, even inside a running loop (notebooks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block: an error of the run is not chained to this RuntimeError
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
