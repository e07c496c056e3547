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
    """Spaces call starts on a grid ``60 / requests_per_minute`` s apart, so the long-run rate is exact.

    There is no initial burst: the first call starts at once, the next one interval later, and so on.
    Starts stay on the grid when a waiter wakes up a little late (up to half an interval: timer and
    event-loop jitter), so small delays do not accumulate into a lower rate; a start later than that (idle
    or stalled loop) restarts the grid from now, so a stall never releases a burst. Consequently any
    window of ``k`` intervals holds at most ``k + 1`` starts (plus refunds, below). Waiters are served first
    come, first served, except that priority waiters (retries) go first.

    :meth:`refund` gives back the start of a call the server rejected (HTTP 429 or 5xx): a quota counts
    the requests it served, so with a 10 % fault rate the limiter still admits ``requests_per_minute``
    successful calls per minute. A refund is a credit for one extra start off the grid, granted only
    while starts are queued (at most one second's worth is kept; an idle restart or a pause drops them).
    If a server does count rejected requests, it answers 429 with ``Retry-After`` and :meth:`pause` (which
    holds every start until that moment) corrects the pace.

    Args:
        requests_per_minute: Maximum starts per minute; None = no spacing (``pause`` still works).
        clock: Monotonic clock in seconds (for tests).
    """

    def __init__(self, requests_per_minute: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._grace_s = self.interval_s / 2.0
        self._max_credits = max(1, int(1.0 / self.interval_s)) if self.interval_s else 0
        self._credits = 0
        self._priority_waiting = 0
        self._clock = clock
        self._next_start = -float("inf")
        self._paused_until = -float("inf")
        self._lock = threading.Lock()  # pause() may come from any thread
        self._queues: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def _queue(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._lock:
            for old in [lp for lp in self._queues if lp.is_closed()]:
                del self._queues[old]
            return self._queues.setdefault(loop, asyncio.Lock())

    def _try_start(self, priority: bool = False) -> float:
        """Start now if allowed (returns 0) or return the seconds to wait."""
        with self._lock:
            now = self._clock()
            if self._priority_waiting and not priority:
                return max(self.interval_s / 4.0, 0.001)  # a retry is waiting: it goes first
            if now < self._paused_until:
                return self._paused_until - now
            if now >= self._next_start:
                on_grid = now - self._next_start <= self._grace_s and self._paused_until < self._next_start
                if not on_grid:
                    self._credits = 0  # idle or stalled: the grid restarts from now, refunds expire
                self._next_start = (self._next_start if on_grid else now) + self.interval_s
                return 0.0
            if self._credits:
                self._credits -= 1  # an extra start for a call the server rejected
                return 0.0
            return self._next_start - now

    async def acquire(self, priority: bool = False) -> None:
        """Wait until this caller may start a call.

        Args:
            priority: Serve this caller before the queued ones (a retry of a call already started, so
                started work finishes first and no retry waits behind the whole queue).
        """
        if self.interval_s == 0.0 and self._try_start(priority) == 0.0:
            return  # no spacing and no pause: no queueing either
        if priority:
            with self._lock:
                self._priority_waiting += 1
            try:
                while (delay := self._try_start(priority=True)) > 0.0:
                    await asyncio.sleep(delay)
            finally:
                with self._lock:
                    self._priority_waiting -= 1
            return
        async with self._queue():
            while (delay := self._try_start()) > 0.0:
                await asyncio.sleep(delay)

    def refund(self) -> None:
        """Give back one start: the call it was used for was rejected by the server (429 / 5xx).

        Only effective while starts are queued (the grid is ahead of now); at most one second's worth of
        credits is kept, so it never creates a large burst.
        """
        with self._lock:
            if self.interval_s and self._next_start > self._clock():
                self._credits = min(self._credits + 1, self._max_credits)

    def pause(self, seconds: float) -> None:
        """Hold every start for ``seconds`` from now (never shortens an existing pause)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + max(0.0, seconds))
            self._credits = 0  # the server asked for quiet: no extra starts when it ends


class ConcurrencyLimiter:
    """Bounds calls in flight; optionally adapts the bound to rate limiting (AIMD).

    With ``adaptive=True``, each :meth:`on_rate_limited` halves the limit (at most once per
    ``cooldown_s``, never below 1) and each :meth:`on_success` adds ``1 / limit`` (so about +1 per
    ``limit`` successes), never above ``max_concurrency``. Waiters are served first come, first served,
    except that priority waiters (retries) go to the front.

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

    async def acquire(self, priority: bool = False) -> None:
        """Wait for a slot. Pair every successful acquire with one :meth:`release`.

        Args:
            priority: Join the front of the queue (a retry of a call already started).
        """
        if not self._waiters and self._in_flight < self.limit:
            self._in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if priority:
            self._waiters.appendleft(waiter)
        else:
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
