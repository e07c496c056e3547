"""The one wrapper around every provider: cache, concurrency, rate limit, retries, usage, run budget.

Path of one request (:meth:`Model.agenerate`)::

    cache lookup ──hit──▶ output (cached=True, attempts=0; no rate-limit budget used)
        │ miss
        ▼
    per attempt: concurrency slot ▶ rate limiter (smooth spacing, 429 pauses) ▶ provider (timeout)
        │ RATE_LIMIT / TRANSIENT: wait Retry-After or exponential backoff with full jitter, try again
        ▼
    success ▶ cache write ▶ output

Replay-style providers (``uses_network = False``) skip the cache, the limiters and retries.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import random
import sys
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from tqdm.auto import tqdm

from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.models._batch import check_batch_support, generate_batch
from autorater_pipelines.models._cache import ResponseCache, cache_key, resolve_cache_dir
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._provider import Provider, ProviderError
from autorater_pipelines.models._ratelimit import ConcurrencyLimiter, RateLimiter
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest, Usage

__all__ = ["CallStats", "Model"]

logger = logging.getLogger("autorater_pipelines.models")

_T = TypeVar("_T")
_RETRYABLE = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)
_CALL_FAILURES = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT, ErrorKind.FATAL)
_LOGGED_FAILURES = 5  # per generate() run, then only the summary


@dataclasses.dataclass
class CallStats:
    """Running totals of a :class:`Model` (never reset).

    Attributes:
        requests: Requests answered by ``agenerate`` (cache hits, replays and failures included).
        calls: Network attempts made (first tries plus retries).
        cache_hits: Requests served from the response cache.
        retries: Attempts after a first one.
        rate_limited: HTTP 429 answers seen.
        failures: Requests whose output carries an error (any kind).
        usage: Token usage summed over successful calls.
    """

    requests: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    rate_limited: int = 0
    failures: int = 0
    usage: Usage = Usage()

    def since(self, earlier: CallStats) -> CallStats:
        """Totals accumulated after the snapshot ``earlier`` (from ``dataclasses.replace(stats)``)."""
        values: dict[str, Any] = {
            f.name: getattr(self, f.name) - getattr(earlier, f.name)
            for f in dataclasses.fields(self)
            if f.name != "usage"
        }
        usage = Usage(
            self.usage.input_tokens - earlier.usage.input_tokens,
            self.usage.output_tokens - earlier.usage.output_tokens,
        )
        return CallStats(**values, usage=usage)

    def summary(self) -> str:
        """Describe the totals in one line (``10 requests, 8 calls, 2 cache hits, ...``)."""
        return (
            f"{self.requests} requests, {self.calls} calls, {self.cache_hits} cache hits, "
            f"{self.retries} retries ({self.rate_limited} rate-limited), {self.failures} failures, "
            f"{self.usage.input_tokens} input / {self.usage.output_tokens} output tokens"
        )


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
        self._cache = ResponseCache(directory) if directory is not None else None
        self._identity = backend.cache_identity()
        if config.mode == "batch":
            check_batch_support(spec, backend, config)
        self._rate = RateLimiter(config.requests_per_minute)
        self._slots = ConcurrencyLimiter(config.max_concurrency, adaptive=config.adaptive_concurrency)
        self._random = random.Random()
        self._consecutive_failures = 0
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

    def generate(self, requests: Sequence[ModelRequest], *, desc: str = "model calls") -> list[ModelOutput]:
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
        if not requests:
            return []
        if self.config.mode == "batch":  # one Vertex AI batch prediction job (models/_batch.py)
            return generate_batch(
                self._backend,
                requests,
                spec=self.spec,
                config=self.config,
                identity=self._identity,
                cache=self._cache,
                stats=self.stats,
                desc=desc,
            )
        return _run_sync(self._generate_all(requests, desc))

    async def aclose(self) -> None:
        """Close the provider connections opened in the running event loop."""
        await self._backend.aclose()

    # ------------------------------------------------------------------------------------------
    async def _generate_all(self, requests: list[ModelRequest], desc: str) -> list[ModelOutput]:
        self._consecutive_failures = 0
        self._budget_error = None
        before = dataclasses.replace(self.stats)
        started = time.monotonic()
        outputs: list[ModelOutput | None] = [None] * len(requests)
        tripped = asyncio.Event()
        logged = 0
        interactive = bool(getattr(sys.stderr, "isatty", lambda: False)())
        bar = tqdm(
            total=len(requests),
            desc=desc,
            disable=not self.config.progress,
            mininterval=0.5 if interactive else 5.0,
            file=sys.stderr,
        )

        async def one(index: int, request: ModelRequest) -> None:
            nonlocal logged
            output = await self.agenerate(request)
            outputs[index] = output
            bar.update(1)
            if output.error is not None and output.error.kind is not ErrorKind.BUDGET and logged < _LOGGED_FAILURES:
                logged += 1
                logger.warning(
                    "%s: request %r failed: %s: %s",
                    self.spec,
                    request.key,
                    output.error.kind.value,
                    output.error.message,
                )
            if self._budget_error is not None:
                tripped.set()

        tasks = [asyncio.ensure_future(one(i, r)) for i, r in enumerate(requests)]
        trip_waiter = asyncio.ensure_future(tripped.wait())
        everything = asyncio.gather(*tasks)
        first_done: set[asyncio.Future[Any]] = {everything, trip_waiter}
        try:
            await asyncio.wait(first_done, return_when=asyncio.FIRST_COMPLETED)
            if tripped.is_set():
                for task in tasks:
                    task.cancel()
            await asyncio.gather(everything, return_exceptions=True)
            if not tripped.is_set():
                everything.result()  # re-raise a programming error from a task, if any
        finally:
            trip_waiter.cancel()
            bar.close()
            await self.aclose()
        run = self.stats.since(before)
        logger.info("%s (%s): %s in %.1f s", desc, self.spec, run.summary(), time.monotonic() - started)
        if self._budget_error is not None:
            answered = sum(1 for o in outputs if o is not None and o.error is None)
            error = self._budget_error
            raise ModelCallError(
                f"stopped calling {self.spec!r} after {self.config.max_consecutive_failures} consecutive "
                f"failed calls (max_consecutive_failures={self.config.max_consecutive_failures}); "
                f"{answered} of {len(requests)} requests were answered. Last error: {error.kind.value}"
                f"{f' (HTTP {error.status_code})' if error.status_code else ''}: {error.message}. "
                "Check the model name, credentials, project/location or base_url, or raise "
                "max_consecutive_failures."
            )
        return [o for o in outputs if o is not None]

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
            attempt += 1
            await self._slots.acquire()
            try:
                await self._rate.acquire()
                self.stats.calls += 1
                started = time.monotonic()
                output, error = await self._attempt(request)
                latency = time.monotonic() - started
            finally:
                self._slots.release()
            if error is None:
                self._slots.on_success()
                return dataclasses.replace(output, attempts=attempt, latency_s=latency)
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
                delay = self._random.uniform(
                    0.0, min(config.max_backoff_s, config.initial_backoff_s * 2 ** (attempt - 1))
                )
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

    async def _attempt(self, request: ModelRequest) -> tuple[ModelOutput, ModelError | None]:
        """One provider call bounded by ``timeout_s``; returns (output, retry-classified error or None)."""
        try:
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
