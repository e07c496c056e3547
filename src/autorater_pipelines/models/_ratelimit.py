"""Pacing of model calls: a requests-per-minute limiter and an (adaptive) concurrency limiter.

Both are used only by :class:`autorater_pipelines.models.Model`. They are meant for one event loop at a
time (``Model.generate`` runs one ``asyncio.run`` per call; state such as the adaptive limit carries
over between runs).
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable

__all__ = ["ConcurrencyLimiter", "RateLimiter"]


class RateLimiter:
    """Spaces call starts evenly: consecutive starts are at least ``60 / requests_per_minute`` s apart.

    There is no initial burst: the first call starts at once, the next one interval later, and so on.
    Spacing is measured between actual start times, so a stalled event loop never releases a burst.
    Waiters are served first come, first served. :meth:`pause` holds every start until a moment in
    the future (used when a server answers 429 with ``Retry-After``, so the other calls do not hammer
    it meanwhile).

    Args:
        requests_per_minute: Maximum starts per minute; None = no spacing (``pause`` still works).
        clock: Monotonic clock in seconds (for tests).
    """

    def __init__(self, requests_per_minute: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._clock = clock
        self._last_start = -float("inf")
        self._paused_until = -float("inf")
        self._lock = threading.Lock()  # pause() may come from any thread
        self._queues: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def _queue(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._lock:
            for old in [lp for lp in self._queues if lp.is_closed()]:
                del self._queues[old]
            return self._queues.setdefault(loop, asyncio.Lock())

    def _try_start(self) -> float:
        """Start now if allowed (returns 0) or return the seconds to wait."""
        with self._lock:
            now = self._clock()
            ready = max(self._last_start + self.interval_s, self._paused_until)
            if now >= ready:
                self._last_start = now
                return 0.0
            return ready - now

    async def acquire(self) -> None:
        """Wait until this caller may start a call."""
        if self.interval_s == 0.0 and self._try_start() == 0.0:
            return  # no spacing and no pause: no queueing either
        async with self._queue():
            while (delay := self._try_start()) > 0.0:
                await asyncio.sleep(delay)

    def pause(self, seconds: float) -> None:
        """Hold every start for ``seconds`` from now (never shortens an existing pause)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + max(0.0, seconds))


class ConcurrencyLimiter:
    """Bounds calls in flight; optionally adapts the bound to rate limiting (AIMD).

    With ``adaptive=True``, each :meth:`on_rate_limited` halves the limit (at most once per
    ``cooldown_s``, never below 1) and each :meth:`on_success` adds ``1 / limit`` (so about +1 per
    ``limit`` successes), never above ``max_concurrency``. Waiters are served first come, first served.

    Args:
        max_concurrency: Upper bound on calls in flight (>= 1).
        adaptive: Enable AIMD adaptation.
        cooldown_s: Minimum seconds between two decreases (one burst of 429s counts once).
        clock: Monotonic clock in seconds (for tests).
    """

    def __init__(
        self,
        max_concurrency: int,
        *,
        adaptive: bool = False,
        cooldown_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        self.max_concurrency = max_concurrency
        self.adaptive = adaptive
        self._limit = float(max_concurrency)
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._last_decrease = -float("inf")
        self._in_flight = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def limit(self) -> int:
        """Current bound on calls in flight."""
        return max(1, int(self._limit))

    @property
    def in_flight(self) -> int:
        """Calls holding a slot now."""
        return self._in_flight

    async def acquire(self) -> None:
        """Wait for a slot. Pair every successful acquire with one :meth:`release`."""
        if not self._waiters and self._in_flight < self.limit:
            self._in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # _wake() hands the slot over (in_flight already counted)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # we were given a slot just as we were cancelled: give it back
            else:
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
            raise

    def release(self) -> None:
        """Give a slot back and wake the next waiter."""
        self._in_flight -= 1
        self._wake()

    def on_success(self) -> None:
        """Record a successful call (additive increase)."""
        if self.adaptive and self._limit < self.max_concurrency:
            self._limit = min(float(self.max_concurrency), self._limit + 1.0 / self._limit)
            self._wake()

    def on_rate_limited(self) -> None:
        """Record an HTTP 429 (multiplicative decrease)."""
        if not self.adaptive:
            return
        now = self._clock()
        if now - self._last_decrease >= self._cooldown_s:
            self._limit = max(1.0, self._limit / 2.0)
            self._last_decrease = now

    def _wake(self) -> None:
        while self._waiters and self._in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._in_flight += 1
                waiter.set_result(None)
