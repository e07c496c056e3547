"""Model.generate_each (lazy, in order, bounded workers), quota pacing with faults, AIMD recovery, priorities."""

from __future__ import annotations

import asyncio
import time

import pytest

from autorater_pipelines.models import LatencyHistogram, ModelRequest, get_model
from autorater_pipelines.models._ratelimit import ConcurrencyLimiter, RateLimiter
from autorater_pipelines.testing import ModelEmulator


def test_generate_each_pulls_requests_lazily_and_keeps_order(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: f"answer {req.prompt_text}"
    pulled = 0

    def requests():
        nonlocal pulled
        for i in range(300):
            pulled += 1
            yield ModelRequest(parts=(str(i),))

    seen: list[tuple[str, int]] = []
    model = get_model("openai/m", make_config(max_concurrency=4))
    model.generate_each(requests(), lambda req, out: seen.append((out.text, pulled)))
    assert [text for text, _ in seen] == [f"answer {i}" for i in range(300)]
    assert seen[0][1] < 60  # the first output arrived long before the last request was built
    assert model.stats.requests == 300 and emulator.max_in_flight <= 4


def test_an_exception_in_consume_stops_the_run(emulator: ModelEmulator, make_config) -> None:
    def consume(request, output) -> None:
        raise RuntimeError("bug in the consumer")

    # Two workers: the first answer raises in consume, so only the calls already started were made.
    model = get_model("openai/m", make_config(max_concurrency=2))
    with pytest.raises(RuntimeError, match="bug in the consumer"):
        model.generate_each((ModelRequest(parts=(str(i),)) for i in range(50)), consume)
    assert emulator.call_count <= 10


def test_latency_is_recorded(emulator: ModelEmulator, make_config) -> None:
    emulator.latency_s = 0.03
    model = get_model("gemini-2.5-flash", make_config())
    model.generate([ModelRequest(parts=(str(i),)) for i in range(5)])
    assert model.stats.latency.count == 5
    assert 0.025 < model.stats.latency.quantile(0.5) < 1.0
    assert "latency p50" in model.stats.summary()


def test_latency_histogram_quantiles() -> None:
    histogram = LatencyHistogram()
    for ms in range(1, 101):
        histogram.add(ms / 1000)
    assert histogram.quantile(0.5) == pytest.approx(0.050, rel=0.02)
    assert histogram.quantile(0.99) == pytest.approx(0.099, rel=0.02)
    earlier = histogram.copy()
    histogram.add(5.0)
    assert histogram.since(earlier).count == 1 and histogram.since(earlier).quantile(0.5) == pytest.approx(5.0, 0.02)
    assert LatencyHistogram().quantile(0.5) is None


def test_quota_bound_run_with_faults_gets_the_quota(make_config) -> None:
    """Client pacing at the quota, with 20 % faults: every call succeeds, none hits the quota, rate ≈ quota."""
    with ModelEmulator(requests_per_minute=1200, quota_burst=5, fault_rate=0.2, fault_status=503, seed=3) as emu:
        config = make_config(base_url=emu.url, requests_per_minute=1200)
        model = get_model("gemini-2.5-flash", config)
        started = time.monotonic()
        outputs = model.generate([ModelRequest(parts=(str(i),)) for i in range(60)])
        elapsed = time.monotonic() - started
        assert all(o.ok for o in outputs)
        assert "429" not in emu.stats()["by_status"]  # the faulted calls' starts were given back, within quota
        assert emu.stats()["by_status"]["503"] > 0
        assert 60 / elapsed > 0.8 * 20  # close to the quota's 20 calls/s although a fifth of the answers failed


def test_concurrency_backs_off_on_5xx_and_recovers(emulator: ModelEmulator, make_config) -> None:
    emulator.latency_s = 0.01
    model = get_model("gemini-2.5-flash", make_config(max_concurrency=16))
    emulator.inject_failures(8, status=503, retry_after_s=None)
    assert all(o.ok for o in model.generate([ModelRequest(parts=(str(i),)) for i in range(8)]))
    assert model._slots.limit < 16  # backed off
    assert all(o.ok for o in model.generate([ModelRequest(parts=(f"b{i}",)) for i in range(300)]))
    assert model._slots.limit == 16  # recovered after successes


def test_retries_go_first_in_both_limiters() -> None:
    async def run() -> list[str]:
        order: list[str] = []
        slots = ConcurrencyLimiter(1)
        await slots.acquire()

        async def take(name: str, priority: bool) -> None:
            await slots.acquire(priority=priority)
            order.append(name)
            slots.release()

        waiting = [asyncio.ensure_future(take(n, n == "retry")) for n in ("first", "second", "retry")]
        await asyncio.sleep(0)
        slots.release()
        await asyncio.gather(*waiting)
        return order

    assert asyncio.run(run()) == ["retry", "first", "second"]

    async def rate() -> list[str]:
        limiter, order = RateLimiter(600), []  # one start per 0.1 s
        await limiter.acquire()

        async def take(name: str, priority: bool) -> None:
            await limiter.acquire(priority=priority)
            order.append(name)

        normal = asyncio.ensure_future(take("new call", False))
        await asyncio.sleep(0.02)
        await asyncio.gather(normal, take("retry", True))
        return order

    assert asyncio.run(rate()) == ["retry", "new call"]
