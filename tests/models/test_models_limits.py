"""Concurrency bound, output order, requests-per-minute spacing, adaptive concurrency."""

from __future__ import annotations

import asyncio
import time

import pytest

from autorater_pipelines.models import ModelRequest, get_model
from autorater_pipelines.models._ratelimit import ConcurrencyLimiter, RateLimiter
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
    assert min(b - a for a, b in zip(starts, starts[1:], strict=False)) >= 0.095
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
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= 0.045


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
    limiter.on_rate_limited()
    assert limiter.limit == 4
    limiter.on_rate_limited()  # same burst (within the cooldown): no further decrease
    assert limiter.limit == 4
    now[0] = 2.0
    limiter.on_rate_limited()
    assert limiter.limit == 2
    for _ in range(100):
        limiter.on_success()
    assert limiter.limit == 8  # grows back, never above max_concurrency

    fixed = ConcurrencyLimiter(8, adaptive=False)
    fixed.on_rate_limited()
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


def test_rate_limits_shrink_concurrency(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(1, status=429, retry_after_s=0.01)
    model = get_model("gemini-2.5-flash", make_config(max_concurrency=8))
    assert model.generate([ModelRequest(parts=("x",))])[0].ok
    assert model._slots.limit == 4
