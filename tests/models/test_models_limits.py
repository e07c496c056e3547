"""Concurrency bound, output order, requests-per-minute spacing, adaptive concurrency."""

from __future__ import annotations

import asyncio
import time

import pytest

from autorater_pipelines.models import ErrorKind, ModelError, ModelRequest, get_model
from autorater_pipelines.models._endpoint import Endpoint
from autorater_pipelines.models._ratelimit import SLOW_START, ConcurrencyLimiter, RateLimiter
from autorater_pipelines.testing import ModelEmulator


def test_concurrency_bound_and_input_order(emulator: ModelEmulator, make_config) -> None:
    def slow_echo(req):
        i = int(req.prompt_text)
        time.sleep(0.01 * ((7 * i) % 5))  # answers finish out of order
        return f"answer {i}"

    emulator.responder = slow_echo
    emulator.latency_s = 0.03
    model = get_model("gemini-2.5-flash", make_config(max_concurrency=3))
    outputs = model.generate([ModelRequest(parts=(str(i),)) for i in range(15)])
    assert [o.text for o in outputs] == [f"answer {i}" for i in range(15)]
    assert 2 <= emulator.max_in_flight <= 3


def test_requests_per_minute_spacing(emulator: ModelEmulator, make_config, monkeypatch) -> None:
    model = get_model("openai/m", make_config(requests_per_minute=600))  # one start per 0.1 s
    starts: list[float] = []
    send = model._backend.generate

    async def spy(request):  # records when the wrapper lets a call go (server arrival times jitter)
        starts.append(time.monotonic())
        return await send(request)

    monkeypatch.setattr(model._backend, "generate", spy)
    began = time.monotonic()
    assert all(o.ok for o in model.generate([ModelRequest(parts=(str(i),)) for i in range(4)]))
    assert time.monotonic() - began >= 0.27  # starts at 0, 0.1, 0.2, 0.3 s
    assert all(t - starts[0] >= 0.1 * k - 0.005 for k, t in enumerate(starts))  # never ahead of the grid
    assert min(b - a for a, b in zip(starts, starts[1:], strict=False)) >= 0.045  # a late start is not made up twice
    assert emulator.call_count == 4


def test_rate_limiter_spaces_starts_evenly() -> None:
    limiter = RateLimiter(1200)  # one start per 0.05 s, no initial burst

    async def run() -> list[float]:
        times = []
        for _ in range(5):
            await limiter.acquire()
            times.append(time.monotonic())
        return times

    times = asyncio.run(run())
    assert all(t - times[0] >= 0.05 * k - 0.002 for k, t in enumerate(times))
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= 0.02


def test_rate_limiter_keeps_the_grid_despite_late_wakeups() -> None:
    now = [0.0]
    limiter = RateLimiter(600, clock=lambda: now[0])  # grid every 0.1 s
    starts = []
    for _ in range(10):
        delay = limiter._try_start()
        if delay:
            now[0] += delay + 0.03  # every wake-up is 30 ms late (a loaded machine)
            assert limiter._try_start() == 0.0
        starts.append(now[0])
    # 10 starts in 0.93 s: the lateness does not accumulate (it would give 0.9 + 9 * 0.03 = 1.17 s)
    assert starts[-1] == pytest.approx(0.93)
    now[0] += 5.0  # idle: the grid restarts from now, no burst of saved-up starts
    assert limiter._try_start() == 0.0
    assert limiter._try_start() == pytest.approx(0.1)


def test_rate_limiter_refund_gives_a_rejected_start_back() -> None:
    now = [0.0]
    limiter = RateLimiter(600, clock=lambda: now[0])
    assert limiter._try_start() == 0.0
    assert limiter._try_start() == pytest.approx(0.1)
    now[0] = 0.05
    limiter.refund()  # the first call came back 503: it used no quota
    assert limiter._try_start() == 0.0  # one extra start off the grid
    assert limiter._try_start() == pytest.approx(0.05)
    now[0] = 0.1
    assert limiter._try_start() == 0.0  # the grid is unchanged
    now[0] = 10.0
    limiter.refund()  # nothing queued: a refund creates no burst
    assert limiter._try_start() == 0.0
    assert limiter._try_start() == pytest.approx(0.1)
    now[0] = 10.05
    for _ in range(50):
        limiter.refund()  # at most one second's worth of credits is kept
    assert sum(limiter._try_start() == 0.0 for _ in range(50)) == 10
    limiter.refund()
    limiter.pause(1.0)  # a pause drops the credits
    now[0] = 11.2
    assert limiter._try_start() == 0.0 and limiter._try_start() == pytest.approx(0.1)


def test_cache_hits_use_no_rate_budget(emulator: ModelEmulator, make_config, tmp_path) -> None:
    config = make_config(requests_per_minute=120, cache_dir=str(tmp_path / "c"))  # one start per 0.5 s
    requests = [ModelRequest(parts=(str(i),)) for i in range(2)]
    get_model("openai/m", config).generate(requests)
    model = get_model("openai/m", config)
    started = time.monotonic()
    outputs = model.generate(requests * 5)
    assert time.monotonic() - started < 0.4
    assert all(o.cached for o in outputs) and model.stats.cache_hits == 10 and model.stats.calls == 0


def test_rate_limiter_pause_holds_starts() -> None:
    limiter = RateLimiter(None)

    async def run() -> float:
        await limiter.acquire()
        limiter.pause(0.15)
        started = time.monotonic()
        await limiter.acquire()
        return time.monotonic() - started

    assert asyncio.run(run()) >= 0.13


def test_concurrency_limiter_aimd() -> None:
    now = [0.0]
    limiter = ConcurrencyLimiter(8, adaptive=True, cooldown_s=1.0, clock=lambda: now[0])
    limiter.on_overloaded()
    assert limiter.limit == 4
    limiter.on_overloaded()  # same burst (within the cooldown): no further decrease
    assert limiter.limit == 4
    now[0] = 2.0
    limiter.on_overloaded()
    assert limiter.limit == 2
    for _ in range(100):
        limiter.on_success()
    assert limiter.limit == 8  # grows back, never above max_concurrency

    fixed = ConcurrencyLimiter(8, adaptive=False)
    fixed.on_overloaded()
    assert fixed.limit == 8


def test_concurrency_limiter_cancelled_waiter_leaks_no_slot() -> None:
    limiter = ConcurrencyLimiter(1)

    async def run() -> None:
        await limiter.acquire()
        waiter = asyncio.ensure_future(limiter.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        limiter.release()
        assert limiter.in_flight == 0
        await asyncio.wait_for(limiter.acquire(), 1)
        limiter.release()

    asyncio.run(run())


def test_a_hinted_429_slows_the_pace_not_the_concurrency(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(1, status=429, retry_after_s=0.01)
    model = get_model("gemini-2.5-flash", make_config(max_concurrency=8))
    assert model._endpoint.rate.requests_per_minute is None  # no quota declared: unpaced at first
    assert model._slots.limit == SLOW_START  # ... and probing it: a slow start
    assert model.generate([ModelRequest(parts=("x",))])[0].ok
    assert model._slots.limit == SLOW_START + 1  # not halved by the 429; +1 for the success (slow start)
    assert model._endpoint.rate.requests_per_minute is not None  # the 429 said "quota": now paced


def test_an_unknown_quota_starts_slowly_a_declared_one_at_max_concurrency(emulator: ModelEmulator, make_config) -> None:
    emulator.latency_s = 0.05
    model = get_model("gemini-2.5-flash", make_config(max_concurrency=16))
    assert model._slots.limit == SLOW_START
    assert all(o.ok for o in model.generate([ModelRequest(parts=(f"x{i}",)) for i in range(40)]))
    assert model._slots.limit == 16  # +1 per success up to max_concurrency (no 429, no overload)
    declared = get_model("gemini-2.5-pro", make_config(max_concurrency=16, requests_per_minute=6000))
    assert declared._slots.limit == 16  # a declared quota is paced from the first call: no probing


def test_adaptive_rate_decreases_once_per_burst_and_not_below_the_goodput() -> None:
    now = [0.0]
    limiter = RateLimiter(None, adaptive=True, clock=lambda: now[0])
    for i in range(40):  # 40 starts in the first second, 10 of them succeed
        now[0] = i * 0.025
        assert limiter._try_start() == 0.0
    for _ in range(10):
        limiter.on_success()
    now[0] = 1.0
    assert limiter.on_rate_limited(started_at=0.5)
    # 40 attempts/s halved = 20/s; the goodput floor (0.95 × 10/s) is lower
    assert limiter.requests_per_minute == pytest.approx(20 * 60)
    assert not limiter.on_rate_limited(started_at=0.9)  # sent before the decrease: the same burst
    for i in range(20):  # the endpoint serves 20 more in the next half second
        now[0] = 1.0 + i * 0.025
        limiter.on_success()
    now[0] = 1.5
    assert limiter.on_rate_limited(started_at=1.2)
    # halving would give 10/s, but 30 calls succeeded in the last 1.5 s: the floor is 0.95 × 20/s
    assert limiter.requests_per_minute == pytest.approx(0.95 * 30 / 1.5 * 60)
    assert limiter.decreases == 2


def test_adaptive_rate_grows_back_additively_up_to_the_declared_ceiling() -> None:
    now = [0.0]
    limiter = RateLimiter(600, adaptive=True, clock=lambda: now[0])  # ceiling 10/s
    assert limiter.on_rate_limited(started_at=0.0)
    assert limiter.requests_per_minute == pytest.approx(300)  # halved (no goodput yet)
    rates = []
    for i in range(1, 200):  # one success every 0.1 s: goodput 10/s
        now[0] = 0.1 * i
        limiter.on_success()
        rates.append(limiter.requests_per_minute)
    assert rates == sorted(rates)  # only grows
    assert rates[9] == pytest.approx(300 + 10 * 0.05 * 300 / 5 * 60 / 60, rel=0.05)  # +5 % of 5/s per second
    assert rates[-1] == pytest.approx(600)  # never above the declared quota


def test_a_fixed_rate_limiter_ignores_quota_signals() -> None:
    limiter = RateLimiter(600)
    assert not limiter.on_rate_limited(started_at=0.0)
    assert limiter.requests_per_minute == pytest.approx(600)


def test_retries_never_hold_every_slot() -> None:
    limiter = ConcurrencyLimiter(3)

    async def run() -> None:
        await limiter.acquire(retry=True)
        await limiter.acquire(retry=True)  # two retries: limit - 1
        third = asyncio.ensure_future(limiter.acquire(priority=True, retry=True))
        await asyncio.sleep(0.01)
        assert not third.done()  # the last slot is kept for a first attempt...
        await asyncio.wait_for(limiter.acquire(), 1)  # ...which gets it even though it queued later
        assert limiter.in_flight == 3
        limiter.release(retry=True)
        await asyncio.wait_for(third, 1)  # a retry's slot came free: the waiting retry takes it
        for retry in (True, True, False):
            limiter.release(retry=retry)
        assert limiter.in_flight == 0 and limiter._retries_in_flight == 0

    asyncio.run(run())

    single = ConcurrencyLimiter(1)  # one slot: a retry may take it

    async def run_single() -> None:
        await asyncio.wait_for(single.acquire(retry=True), 1)
        single.release(retry=True)

    asyncio.run(run_single())


def test_pauses_are_not_progress_but_not_stalling_either() -> None:
    now = [0.0]
    limiter = RateLimiter(None, adaptive=True, clock=lambda: now[0])
    for t in (1.0, 2.0, 3.0):  # "Retry-After: 0" three times: no pause at all
        now[0] = t
        limiter.pause(0.0)
    assert limiter.paused_since(0.0) == 0.0
    limiter.pause(10.0)  # a real wait from t=3: counted up to now
    now[0] = 8.0
    limiter.pause(4.0)  # overlaps the first one: only its extension (13..12 → none) counts
    assert limiter.paused_since(0.0) == pytest.approx(5.0)
    now[0] = 20.0
    assert limiter.paused_since(0.0) == pytest.approx(10.0) and limiter.paused_since(10.0) == pytest.approx(3.0)


def test_a_fault_gives_its_start_back_a_quota_429_does_not() -> None:
    endpoint = Endpoint(("vertex", "http://127.0.0.1:1", "p", "l", "m"), "http://127.0.0.1:1", 600, adaptive=True)
    rate = endpoint.rate  # declared 10/s: one start per 0.1 s
    assert rate._try_start() == 0.0
    assert rate._try_start() > 0.0  # the next start is 0.1 s away: starts are queued
    endpoint.record_failure(ModelError(ErrorKind.TRANSIENT, "unavailable", status_code=503), time.monotonic())
    assert rate._try_start() == 0.0  # the 503 used none of the quota: its start is given back at once
    assert rate._try_start() > 0.0
    endpoint.record_failure(ModelError(ErrorKind.TRANSIENT, "unavailable", status_code=503), time.monotonic())
    quota = ModelError(ErrorKind.RATE_LIMIT, "quota exceeded", status_code=429, retry_after_s=0.1)
    endpoint.record_failure(quota, time.monotonic())
    assert rate.decreases == 1  # the hinted 429 is the quota ...
    assert rate._try_start() > 0.0  # ... which is spent: no extra start, and the 503's credit is dropped too
    earlier = time.monotonic() - 1.0  # a 429 of the same burst (sent before the decrease): no second decrease,
    endpoint.record_failure(quota, earlier)  # ... and still no start given back (they fed 429s into an empty quota)
    assert rate.decreases == 1
    assert rate._try_start() > 0.0
