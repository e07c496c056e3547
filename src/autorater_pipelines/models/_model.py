"""The one wrapper around every provider: cache, concurrency, rate limit, retries, usage, run budget.

Path of one request (:meth:`Model.agenerate`)::

    cache lookup ──hit──▶ output (cached=True, attempts=0; no rate-limit budget used)
        │ miss
        ▼
    per attempt: concurrency slot ▶ rate limiter (grid spacing, 429 pauses) ▶ provider (timeout)
        │ RATE_LIMIT / TRANSIENT: wait Retry-After, or a backoff with full jitter: initial_backoff_s
        │ while most recent attempts of any call succeed (sporadic faults), else doubling per attempt
        │ while the endpoint keeps failing; try again (retries go first in both queues)
        │ (an answer the server rejected gives its rate-limiter start back)
        ▼
    success ▶ cache write ▶ output

Many requests (:meth:`Model.generate`, :meth:`Model.generate_each`) run on a bounded pool of worker
coroutines that pull requests lazily from the input iterable, so memory and scheduling cost do not grow
with the number of requests; outputs are delivered in input order through a small reorder buffer.

Replay-style providers (``uses_network = False``) skip the cache, the limiters and retries.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import dataclasses
import logging
import random
import sys
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from tqdm.auto import tqdm

from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.models._batch import check_batch_support, generate_batch
from autorater_pipelines.models._cache import ResponseCache, cache_key, resolve_cache_dir
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._provider import Provider, ProviderError
from autorater_pipelines.models._ratelimit import ConcurrencyLimiter, RateLimiter
from autorater_pipelines.models._stats import CallStats
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest

__all__ = ["CallStats", "Model"]

logger = logging.getLogger("autorater_pipelines.models")

_T = TypeVar("_T")
_RETRYABLE = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)
_CALL_FAILURES = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT, ErrorKind.FATAL)
_LOGGED_FAILURES = 5  # per generate() run, then only the summary
_TIMEOUT = getattr(asyncio, "timeout", None)
_SPARE_WORKERS = 16  # workers beyond max_concurrency: requests in backoff or reading the cache
_HEALTH_WINDOW = 20  # attempts looked at to tell sporadic faults from a failing endpoint


class Model:
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
        directory = resolve_cache_dir(config.cache_dir) if backend.uses_network else None
        self._cache = ResponseCache(directory, background=True) if directory is not None else None
        self._identity = backend.cache_identity()
        if config.mode == "batch":
            check_batch_support(spec, backend, config)
        self._rate = RateLimiter(config.requests_per_minute)
        self._slots = ConcurrencyLimiter(config.max_concurrency, adaptive=config.adaptive_concurrency)
        self._random = random.Random()
        self._consecutive_failures = 0
        self._failed_attempts_in_a_row = 0  # across all calls: how unhealthy the endpoint looks now
        self._recent_attempts: collections.deque[bool] = collections.deque(maxlen=_HEALTH_WINDOW)  # True = ok
        self._budget_error: ModelError | None = None

    def __repr__(self) -> str:
        return f"Model(spec={self.spec!r}, provider={self.provider!r}, name={self.name!r})"

    @property
    def cache_dir(self) -> str | None:
        """The response-cache directory in use, or None when caching is off (or not applicable)."""
        return str(self._cache.directory) if self._cache is not None else None

    # ------------------------------------------------------------------------------------------
    async def agenerate(self, request: ModelRequest) -> ModelOutput:
        """Answer one request: cache → concurrency → rate limit → provider, with retries.

        Never raises for a failed call: the output's ``error`` says what went wrong. Once the
        consecutive-failure budget is exhausted, further requests are not called and come back with
        error kind ``BUDGET`` (until the next :meth:`generate`).

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
            ModelCallError: ``config.max_consecutive_failures`` calls in a row failed after all their
                retries; the remaining requests were not called.
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

        Raises:
            ModelCallError: as for :meth:`generate`; ``consume`` has then received the outputs before the
                first request that was not answered.
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
        _run_sync(self._generate_each(iter(requests), consume, desc, total))

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
        self._budget_error = None
        before = self.stats.snapshot()
        started = time.monotonic()
        numbered = enumerate(requests)
        ready: dict[int, tuple[ModelRequest, ModelOutput]] = {}  # reorder buffer
        next_index = 0
        answered = 0
        logged = 0
        interactive = bool(getattr(sys.stderr, "isatty", lambda: False)())
        bar = tqdm(
            total=total,
            desc=desc,
            disable=not self.config.progress,
            mininterval=0.5 if interactive else 5.0,
            file=sys.stderr,
        )

        async def worker() -> None:
            nonlocal next_index, answered, logged
            for index, request in numbered:  # shared iterator: each worker pulls the next request
                if self._budget_error is not None:
                    return
                output = await self.agenerate(request)
                if output.error is None:
                    answered += 1
                elif output.error.kind is not ErrorKind.BUDGET and logged < _LOGGED_FAILURES:
                    logged += 1
                    logger.warning(
                        "%s: request %r failed: %s: %s",
                        self.spec,
                        request.key,
                        output.error.kind.value,
                        output.error.message,
                    )
                ready[index] = (request, output)
                while next_index in ready:
                    consume(*ready.pop(next_index))
                    next_index += 1
                bar.update(1)

        workers = 1 if not self._backend.uses_network else self.config.max_concurrency + _SPARE_WORKERS
        tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                failure = None if task.cancelled() else task.exception()
                if failure is not None:
                    raise failure  # a bug in consume or in the iterable
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            bar.close()
            await self.aclose()
        run = self.stats.since(before)
        logger.info("%s (%s): %s in %.1f s", desc, self.spec, run.summary(), time.monotonic() - started)
        if self._budget_error is not None:
            error = self._budget_error
            remaining = f"of {total}" if total is not None else "so far; the rest were not called"
            raise ModelCallError(
                f"stopped calling {self.spec!r} after {self.config.max_consecutive_failures} consecutive "
                f"failed calls (max_consecutive_failures={self.config.max_consecutive_failures}); "
                f"{answered} {remaining} requests were answered. Last error: {error.kind.value}"
                f"{f' (HTTP {error.status_code})' if error.status_code else ''}: {error.message}. "
                "Check the model name, credentials, project/location or base_url, or raise "
                "max_consecutive_failures."
            )

    async def _agenerate_network(self, request: ModelRequest) -> ModelOutput:
        key = cache_key(self._identity, request, self.config) if self._cache is not None else None
        if self._cache is not None and key is not None:
            hit = self._cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        if self._budget_error is not None:
            return self._budget_output()  # cache hits are still served; calls are not made
        output = await self._call_with_retries(request)
        if output.error is None or output.error.kind not in _CALL_FAILURES:
            self._consecutive_failures = 0
        elif output.error.kind in _CALL_FAILURES:
            self._consecutive_failures += 1
            if self._consecutive_failures >= self.config.max_consecutive_failures and self._budget_error is None:
                self._budget_error = output.error
        if output.ok and self._cache is not None and key is not None:
            self._cache.put(key, output)
        return output

    async def _call_with_retries(self, request: ModelRequest) -> ModelOutput:
        config = self.config
        attempt = 0
        while True:
            if self._budget_error is not None:
                return self._budget_output(attempts=attempt)
            await self._slots.acquire(priority=attempt > 0)  # retries go first: started work finishes first
            try:
                await self._rate.acquire(priority=attempt > 0)
                if self._budget_error is not None:  # tripped while this call waited for its turn
                    return self._budget_output(attempts=attempt)
                attempt += 1
                self.stats.calls += 1
                started = time.monotonic()
                output, error = await self._attempt(request)
                latency = time.monotonic() - started
            finally:
                self._slots.release()
            self._recent_attempts.append(error is None)
            if error is None:
                self._failed_attempts_in_a_row = 0
                self._slots.on_success()
                if output.error is None:
                    self.stats.latency.add(latency)
                return dataclasses.replace(output, attempts=attempt, latency_s=latency)
            self._failed_attempts_in_a_row += 1
            if error.status_code is not None and (error.status_code == 429 or error.status_code >= 500):
                self._rate.refund()  # the server rejected it: it used none of the quota
            if error.kind is ErrorKind.RATE_LIMIT:
                self.stats.rate_limited += 1
                self._slots.on_rate_limited()
                if error.retry_after_s is not None:
                    self._rate.pause(error.retry_after_s)
            if error.kind not in _RETRYABLE or attempt > config.max_retries:
                return ModelOutput(text=None, error=error, attempts=attempt, latency_s=latency)
            if error.retry_after_s is not None:
                delay = error.retry_after_s
            else:
                # The backoff grows with the endpoint's trouble, not with this request's bad luck: while
                # most recent attempts (any call) succeed, faults are sporadic and a retry waits at most
                # initial_backoff_s (no straggler waits 0.5 + 1 + 2 s after 3 unlucky faults at the end
                # of a run); otherwise it doubles per attempt, as long as the endpoint keeps failing.
                exponent = 0 if self._healthy() else min(attempt, self._failed_attempts_in_a_row) - 1
                delay = self._random.uniform(0.0, min(config.max_backoff_s, config.initial_backoff_s * 2**exponent))
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
            await asyncio.sleep(delay)

    def _healthy(self) -> bool:
        """True when at least half of the last attempts (of any call) succeeded."""
        window = self._recent_attempts
        return len(window) >= _HEALTH_WINDOW // 2 and 2 * sum(window) >= len(window)

    async def _attempt(self, request: ModelRequest) -> tuple[ModelOutput, ModelError | None]:
        """One provider call bounded by ``timeout_s``; returns (output, retry-classified error or None)."""
        try:
            if _TIMEOUT is not None:  # Python ≥ 3.11: no extra Task per attempt (wait_for creates one)
                async with _TIMEOUT(self.config.timeout_s):
                    output = await self._backend.generate(request)
            else:
                output = await asyncio.wait_for(self._backend.generate(request), self.config.timeout_s)
        except ProviderError as exc:
            return ModelOutput(text=None, error=exc.error), exc.error
        except asyncio.TimeoutError:
            error = ModelError(ErrorKind.TRANSIENT, f"no answer within timeout_s={self.config.timeout_s} s")
            return ModelOutput(text=None, error=error), error
        except Exception as exc:  # noqa: BLE001 - every SDK failure is classified, never raised
            error = self._backend.classify_error(exc)
            return ModelOutput(text=None, error=error), error
        if output.error is not None and output.error.kind in _CALL_FAILURES:
            return output, output.error
        return output, None  # success, or an answer without text (BLOCKED): not retried

    async def _attempt_local(self, request: ModelRequest) -> ModelOutput:
        try:
            return await self._backend.generate(request)
        except ProviderError as exc:
            return ModelOutput(text=None, error=exc.error, attempts=0)
        except Exception as exc:  # noqa: BLE001
            return ModelOutput(text=None, error=self._backend.classify_error(exc), attempts=0)

    def _budget_output(self, attempts: int = 0) -> ModelOutput:
        last = self._budget_error
        message = (
            f"not called: {self.config.max_consecutive_failures} consecutive calls to {self.spec!r} failed "
            f"(last: {last.message if last else 'unknown'})"
        )
        return ModelOutput(text=None, error=ModelError(ErrorKind.BUDGET, message), attempts=attempts)


def _run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine to completion from synchronous code, even inside a running loop (notebooks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
