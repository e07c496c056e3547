"""Pacing of model calls: an adaptive requests-per-minute limiter and an adaptive concurrency limiter.

Both are used only by :class:`autorater_pipelines.models.Model`. The rate limiter is shared by every
model of the process that calls the same endpoint and quota (thread-safe, any event loop); the
concurrency limiter belongs to one model and one event loop at a time (``Model.generate`` runs one
``asyncio.run`` per call; state such as the adaptive limits carries over between runs).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import threading
import time
from collections.abc import Callable

__all__ = ["SLOW_START", "ConcurrencyLimiter", "RateLimiter"]

SLOW_START = 4
"""Calls in flight at the start of a model whose quota is unknown; +1 per success (doubling per round trip)."""


class RateLimiter:
    """Paces call starts on a grid ``1 / rate`` s apart; with ``adaptive=True`` the rate follows 429s (AIMD).

    **Pacing.** There is no initial burst: the first call starts at once, the next one interval later,
    and so on. Starts stay on the grid when a waiter wakes up a little late (up to half an interval: timer
    and event-loop jitter), so small delays do not accumulate into a lower rate; a start later than that
    (idle or stalled loop) restarts the grid from now, so a stall never releases a burst. Consequently any
    window of ``k`` intervals holds at most ``k + 1`` starts (plus refunds, below). Waiters are served first
    come, first served, except that priority waiters (retries) go first.

    **Adaptive rate (AIMD).** Without a declared rate the limiter starts unpaced (bounded only by the
    concurrency limit). Each quota signal (:meth:`on_rate_limited`: a 429 from an attempt started after the
    previous decrease, so one burst of 429s counts once) multiplies the rate by ``BETA`` (0.5) — but never
    below ``FLOOR`` (0.95) × the goodput (successful calls per second over the last ``GOODPUT_WINDOW_S``
    s), because the endpoint has just shown that it serves that much, nor below ``REMEMBERED`` (0.5) × the
    goodput of the last ``MEMORY_S`` s; when nothing succeeded in that time the pace carries no
    information and stays at least ``NO_INFO_RATE`` (1/s: the server's wait hints and the stall limit do
    the rest). The first signal of an unpaced limiter starts from the attempt rate of the last second.
    Each success (:meth:`on_success`) adds ``GROWTH`` × max(rate after the last decrease, goodput of the
    last ``MEMORY_S`` s) / rate, i.e. about +5 % of that rate per second, up to the declared ceiling and to
    twice the goodput (no growth while the caller itself is the bottleneck). Against a token-bucket quota
    this settles just under the quota: a decrease lands at ~0.95 × quota, the bucket refills while the
    rate climbs back, and the next 429 comes once it is drained again (about 1 % of the quota lost, a few
    429s per cycle).

    :meth:`refund` gives back the start of a call the server rejected (HTTP 429 or 5xx): a quota counts
    the requests it served, so with a 10 % fault rate the limiter still admits ``rate`` successful calls
    per second. A refund is a credit for one extra start off the grid, granted only while starts are queued
    (at most one second's worth is kept; an idle restart or a pause drops them). :meth:`pause` (a server's
    ``Retry-After``) holds every start until that moment; :meth:`resume` ends it early.

    One limiter can be shared by every model of the process that calls the same endpoint and quota
    (:mod:`autorater_pipelines.models._endpoint`); it is thread-safe and works from several event loops.

    Args:
        requests_per_minute: Declared rate (a ceiling when adaptive); None = no ceiling, unpaced until the
            first quota signal when adaptive, never paced otherwise (``pause`` still works).
        adaptive: Follow quota signals (AIMD, above).
        clock: Monotonic clock in seconds (for tests).
    """

    BETA = 0.5
    FLOOR = 0.95
    GROWTH = 0.05
    GOODPUT_WINDOW_S = 2.0
    MEMORY_S = 60.0  # goodput remembered for the floor of a decrease and the unit of growth
    REMEMBERED = 0.5
    MIN_RATE = 1.0 / 60.0  # one start per minute
    NO_INFO_RATE = 1.0  # floor of a decrease when nothing succeeded in the last MEMORY_S

    def __init__(
        self,
        requests_per_minute: float | None,
        *,
        adaptive: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.adaptive = adaptive
        self.ceiling = requests_per_minute / 60.0 if requests_per_minute else None
        self._rate = self.ceiling  # starts per second; None = unpaced
        self._reference = self._rate  # rate right after the last decrease (growth unit)
        self._last_decrease = -float("inf")
        self._successes: collections.deque[float] = collections.deque()  # completions, last GOODPUT_WINDOW_S
        self._remembered: collections.deque[float] = collections.deque()  # completions, last MEMORY_S
        self._starts: collections.deque[float] = collections.deque()  # start times while unpaced
        self._first_start: float | None = None
        self.decreases = 0
        self.growth_share = 1.0  # fraction of GROWTH (shards that find one quota together grow slower each)
        self._signal_started: float | None = None  # start of the attempt behind the last own decrease
        self._credits = 0
        self._priority_waiting = 0
        self._clock = clock
        self._next_start = -float("inf")
        self._paused_until = -float("inf")
        self._pauses: collections.deque[tuple[float, float]] = collections.deque(maxlen=256)  # (from, until)
        self._lock = threading.Lock()  # shared across threads / event loops
        self._queues: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    @property
    def interval_s(self) -> float:
        """Seconds between two starts now (0 = unpaced)."""
        return 1.0 / self._rate if self._rate else 0.0

    @property
    def requests_per_minute(self) -> float | None:
        """The current pace in requests per minute (None = unpaced)."""
        return self._rate * 60.0 if self._rate else None

    @property
    def unknown(self) -> bool:
        """True for an adaptive limiter that has no pace yet (no declared rate, no quota signal so far)."""
        return self.adaptive and self._rate is None

    @property
    def paused_until(self) -> float:
        """Clock time until which starts are held (``-inf`` when no pause was requested)."""
        return self._paused_until

    def limit_to(self, requests_per_minute: float | None) -> None:
        """Lower the declared ceiling to ``requests_per_minute`` (a second model on the same quota)."""
        if not requests_per_minute:
            return
        with self._lock:
            ceiling = requests_per_minute / 60.0
            if self.ceiling is None or ceiling < self.ceiling:
                self.ceiling = ceiling
                self._rate = ceiling if self._rate is None else min(self._rate, ceiling)
                self._reference = self._reference or self._rate

    def set_ceiling(self, requests_per_minute: float) -> None:
        """Set the declared ceiling to ``requests_per_minute``, up or down (a shard's share of a shared quota).

        The current pace scales with the ceiling (a limiter at its ceiling stays at it; an adaptive one below
        it keeps its distance), so a share handed over by a shard that finished is used at once.
        """
        with self._lock:
            ceiling = requests_per_minute / 60.0
            old = self.ceiling
            self.ceiling = ceiling
            if self._rate is None or old is None:
                self._rate = ceiling if self._rate is None else min(self._rate, ceiling)
            else:
                self._rate = min(ceiling, self._rate * ceiling / old)
            self._reference = min(self._reference or self._rate, ceiling)

    def adopt(self, requests_per_minute: float) -> None:
        """Start an unpaced adaptive limiter at ``requests_per_minute`` (the pace other shards found)."""
        with self._lock:
            if self.adaptive and self._rate is None:
                rate = requests_per_minute / 60.0
                self._rate = rate if self.ceiling is None else min(rate, self.ceiling)
                self._reference = self._rate

    def scale(self, factor: float) -> None:
        """Multiply the current pace by ``factor`` (never above the ceiling): a shard's share of a pace changed."""
        with self._lock:
            if self._rate is not None and factor > 0:
                self._rate = self._rate * factor if self.ceiling is None else min(self.ceiling, self._rate * factor)
                self._reference = self._rate if self._reference is None else self._reference * factor

    @property
    def last_signal_started(self) -> float | None:
        """Clock time at which the attempt behind this limiter's own last decrease started (None: none yet)."""
        return self._signal_started

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
            interval = self.interval_s
            if self._first_start is None:
                self._first_start = now
            if self._priority_waiting and not priority:
                return max(interval / 4.0, 0.001)  # a retry is waiting: it goes first
            if now < self._paused_until:
                return self._paused_until - now
            if not interval:
                if self.adaptive:
                    self._starts.append(now)
                    while self._starts and self._starts[0] <= now - 1.0:
                        self._starts.popleft()
                return 0.0
            if now >= self._next_start:
                on_grid = now - self._next_start <= interval / 2.0 and self._paused_until < self._next_start
                if not on_grid:
                    self._credits = 0  # idle or stalled: the grid restarts from now, refunds expire
                self._next_start = (self._next_start if on_grid else now) + interval
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
            if self._rate and self._next_start > self._clock():
                self._credits = min(self._credits + 1, max(1, int(self._rate)))

    def drop_credits(self) -> None:
        """Forget the refund credits (a quota 429: the quota is spent, extra starts would be refused too)."""
        with self._lock:
            self._credits = 0

    def pause(self, seconds: float) -> None:
        """Hold every start for ``seconds`` from now (never shortens an existing pause)."""
        with self._lock:
            now = self._clock()
            begin, until = max(now, self._paused_until), now + max(0.0, seconds)
            if until > begin:
                self._pauses.append((begin, until))
            self._paused_until = max(self._paused_until, until)
            self._credits = 0  # the server asked for quiet: no extra starts when it ends

    def resume(self) -> None:
        """End a pause now (the endpoint answered a call meanwhile: the wait was not the endpoint's)."""
        with self._lock:
            now = self._clock()
            if self._paused_until <= now:
                return
            self._paused_until = now
            if self._pauses:
                begin, until = self._pauses[-1]
                self._pauses[-1] = (begin, min(until, now))

    def paused_since(self, since: float) -> float:
        """Seconds of server-requested pauses between ``since`` and now (clock time)."""
        with self._lock:
            now = self._clock()
            return sum(max(0.0, min(until, now) - max(begin, since)) for begin, until in self._pauses)

    def on_success(self) -> None:
        """Record a successful call (goodput; additive increase of an adaptive rate)."""
        with self._lock:
            now = self._clock()
            self._successes.append(now)
            self._remembered.append(now)
            if not self.adaptive or self._rate is None or self._reference is None:
                return
            cap = max(2.0 * self._goodput(now), self._reference)
            if self.ceiling is not None:
                cap = min(cap, self.ceiling)
            if self._rate < cap:
                unit = max(self._reference, self._goodput(now, self.MEMORY_S))  # recover from a dip at once
                self._rate = min(cap, self._rate + self.GROWTH * self.growth_share * unit / self._rate)

    def on_rate_limited(self, started_at: float, *, peer: bool = False) -> bool:
        """Record a quota signal for an attempt started at ``started_at`` (multiplicative decrease).

        Args:
            started_at: When the attempt started (clock time).
            peer: The signal came from another shard on the same quota (:mod:`._shared_pace`): it decreases
                this limiter too, but is not published again.

        Returns:
            True when the rate was decreased (the first signal since the previous decrease).
        """
        if not self.adaptive:
            return False
        with self._lock:
            now = self._clock()
            if started_at < self._last_decrease:
                return False  # sent before the last decrease: that decrease already answered it
            recent, remembered = self._goodput(now), self._goodput(now, self.MEMORY_S)
            current = self._rate if self._rate is not None else float(max(len(self._starts), 1))
            if recent or remembered:
                floor = max(self.FLOOR * recent, self.REMEMBERED * remembered, self.MIN_RATE)
            else:  # nothing succeeded lately: the pace says nothing, waits come from the server's hints
                floor = self.NO_INFO_RATE
            rate = min(current, max(self.BETA * current, floor))
            self._rate = rate if self.ceiling is None else min(rate, self.ceiling)
            self._reference = self._rate
            self._last_decrease = now
            if not peer:
                self._signal_started = started_at
            self._credits = 0
            self.decreases += 1
            return True

    def _goodput(self, now: float, window_s: float | None = None) -> float:
        """Successful calls per second over the last ``window_s`` (default ``GOODPUT_WINDOW_S``) seconds.

        The window is at least 1 s and at most the time since the first start. Amortized O(1).
        """
        times = self._remembered if window_s == self.MEMORY_S else self._successes
        span = self.MEMORY_S if window_s == self.MEMORY_S else self.GOODPUT_WINDOW_S
        while times and times[0] <= now - span:
            times.popleft()
        start = self._first_start if self._first_start is not None else now
        window = min(span, max(1.0, now - start))
        if window < span:  # young limiter: count the last `window` seconds only
            return sum(1 for _ in itertools.takewhile(lambda t: t > now - window, reversed(times))) / window
        return len(times) / window


class ConcurrencyLimiter:
    """Bounds calls in flight; optionally adapts the bound to an overloaded endpoint (AIMD).

    With ``adaptive=True``, each :meth:`on_overloaded` (the model wrapper calls it when timeouts and 5xx
    answers make up a large share of the recent attempts) halves the limit (at most once per
    ``cooldown_s``, never below 1) and each :meth:`on_success` adds ``1 / limit`` (so about +1 per
    ``limit`` successes), never above ``max_concurrency``. Waiters are served first come, first served,
    except that priority waiters (retries) go to the front. Retries hold at most ``limit - 1`` slots (all of
    them when the limit is 1), so requests refused time after time never keep first attempts from starting.

    Args:
        max_concurrency: Upper bound on calls in flight (>= 1).
        adaptive: Enable AIMD adaptation.
        cooldown_s: Minimum seconds between two decreases (one burst of failures counts once).
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
        self._slow_start = False
        self._retries_in_flight = 0
        self._waiters: collections.deque[tuple[asyncio.Future[None], bool]] = collections.deque()  # (waiter, retry)

    @property
    def limit(self) -> int:
        """Current bound on calls in flight."""
        return max(1, int(self._limit))

    @property
    def in_flight(self) -> int:
        """Calls holding a slot now."""
        return self._in_flight

    async def acquire(self, priority: bool = False, retry: bool = False) -> None:
        """Wait for a slot. Pair every successful acquire with one :meth:`release` (same ``retry``).

        Args:
            priority: Join the front of the queue (a retry of a call already started).
            retry: The call is a retry: it may only take one of the slots retries may hold.
        """
        if not self._waiters and self._admits(retry):
            self._take(retry)
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (waiter, retry)
        if priority:
            self._waiters.appendleft(entry)
        else:
            self._waiters.append(entry)
        self._wake()  # a retry queued behind nothing but capped retries may start at once
        try:
            await waiter  # _wake() hands the slot over (in_flight already counted)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(retry)  # we were given a slot just as we were cancelled: give it back
            else:
                try:
                    self._waiters.remove(entry)
                except ValueError:
                    pass
            raise

    def release(self, retry: bool = False) -> None:
        """Give a slot back and wake the next waiter."""
        self._in_flight -= 1
        if retry:
            self._retries_in_flight -= 1
        self._wake()

    def _admits(self, retry: bool) -> bool:
        if self._in_flight >= self.limit:
            return False
        return not retry or self._retries_in_flight < max(1, self.limit - 1)

    def _take(self, retry: bool) -> None:
        self._in_flight += 1
        if retry:
            self._retries_in_flight += 1

    def start_at(self, limit: int) -> None:
        """Begin at ``limit`` calls in flight and grow by one per success (slow start) up to ``max_concurrency``.

        N shards of one run that do not know their quota each start at ``max_concurrency / N``, so together
        their first burst is one shard's. The first overload ends the slow start (AIMD from there on).
        """
        self._limit = float(max(1, min(limit, self.max_concurrency)))
        self._slow_start = self._limit < self.max_concurrency

    def on_success(self) -> None:
        """Record a successful call (additive increase; +1 per success during a slow start)."""
        if self._slow_start and self._limit < self.max_concurrency:
            self._limit = min(float(self.max_concurrency), self._limit + 1.0)
            self._wake()
        elif self.adaptive and self._limit < self.max_concurrency:
            self._limit = min(float(self.max_concurrency), self._limit + 1.0 / self._limit)
            self._wake()

    def on_overloaded(self) -> None:
        """Record that the endpoint is overloaded: timeouts / 5xx dominate (multiplicative decrease)."""
        self._slow_start = False
        if not self.adaptive:
            return
        now = self._clock()
        if now - self._last_decrease >= self._cooldown_s:
            self._limit = max(1.0, self._limit / 2.0)
            self._last_decrease = now

    def _wake(self) -> None:
        """Hand free slots to waiters in queue order, skipping retries while retries hold their share."""
        while self._waiters and self._in_flight < self.limit:
            entry = next((e for e in self._waiters if e[0].done() or self._admits(e[1])), None)
            if entry is None:
                return
            self._waiters.remove(entry)
            waiter, retry = entry
            if not waiter.done():
                self._take(retry)
                waiter.set_result(None)
