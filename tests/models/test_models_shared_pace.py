"""Shards that share one quota through small files (models/_shared_pace.py): declared shares, found pace."""

from __future__ import annotations

import json
import time

import pytest

from autorater_pipelines.models import SharedPace
from autorater_pipelines.models._ratelimit import ConcurrencyLimiter, RateLimiter


def _shard(directory: str, index: int, count: int, rpm: float | None) -> SharedPace:
    rate = RateLimiter(rpm / count if rpm else None, adaptive=rpm is None)
    return SharedPace(rate, directory, index, count, requests_per_minute=rpm, interval_s=0.05)


def test_a_declared_quota_is_divided_among_the_shards_running_now(tmp_path) -> None:
    first, second = _shard(str(tmp_path), 0, 2, 600), _shard(str(tmp_path), 1, 2, 600)
    first.exchange()
    assert first.rate.requests_per_minute == pytest.approx(600)  # alone so far: the whole quota
    second.exchange()
    first.exchange()
    assert first.rate.requests_per_minute == pytest.approx(300)
    assert second.rate.requests_per_minute == pytest.approx(300)
    second.exchange(done=True)  # finished: its share goes to the other one
    first.exchange()
    assert first.active == 1
    assert first.rate.requests_per_minute == pytest.approx(600)
    record = json.loads((tmp_path / "shard-1.json").read_text())
    assert record["done"] is True and record["shard"] == 1


def test_a_late_shard_waits_until_the_running_ones_have_lowered_their_share(tmp_path) -> None:
    early = _shard(str(tmp_path), 0, 2, 120)
    early.start()
    try:
        time.sleep(1.2)  # early has been calling for a while, at the whole quota
        assert early.rate.requests_per_minute == pytest.approx(120)
        late = _shard(str(tmp_path), 1, 2, 120)
        late.start()
        # when the late shard may make its first call, the early one has already lowered its share
        assert early.rate.requests_per_minute == pytest.approx(60)
        assert late.rate.requests_per_minute == pytest.approx(60)
        late.stop()
        time.sleep(0.15)
        assert early.rate.requests_per_minute == pytest.approx(120)
    finally:
        early.stop()


def test_a_quota_signal_of_one_shard_slows_every_shard_once(tmp_path) -> None:
    first, second = _shard(str(tmp_path), 0, 2, None), _shard(str(tmp_path), 1, 2, None)
    for limiter in (first.rate, second.rate):
        limiter.adopt(600)  # both found 10/s
    first.exchange()
    second.exchange()
    assert first.rate.on_rate_limited(time.monotonic())  # first gets the quota's 429
    first.exchange()
    second.exchange()
    assert second.peer_signals == 1
    assert second.rate.requests_per_minute is not None and second.rate.requests_per_minute < 600
    second.exchange()
    first.exchange()
    assert second.peer_signals == 1  # the same signal is applied once
    assert first.peer_signals == 0  # and a peer's decrease is not echoed back


def test_a_server_wait_hint_holds_every_shard(tmp_path) -> None:
    first, second = _shard(str(tmp_path), 0, 2, None), _shard(str(tmp_path), 1, 2, None)
    first.rate.pause(5.0)
    first.exchange()
    second.exchange()
    assert second.rate.paused_until - time.monotonic() == pytest.approx(5.0, abs=0.5)


def test_records_of_shards_that_are_gone_are_ignored(tmp_path) -> None:
    stale = {"shard": 1, "time": time.time() - 60, "done": False, "requests_per_minute": 6000.0}
    (tmp_path / "shard-1.json").write_text(json.dumps(stale))
    (tmp_path / "shard-2.json").write_text("{not json")  # being replaced: read again next time
    shard = _shard(str(tmp_path), 0, 3, 900)
    assert shard.exchange() == []
    assert shard.active == 1 and shard.rate.requests_per_minute == pytest.approx(900)


def test_an_unwritable_directory_leaves_the_static_share(tmp_path, caplog) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    shard = _shard(str(blocker / "pace"), 0, 4, 600)
    shard.exchange()
    assert shard.rate.requests_per_minute == pytest.approx(150)  # 600 / 4 as without sharing
    assert "shared pace of shard 0: cannot write" in caplog.text


def test_shards_share_a_pace_under_a_gs_prefix(bucket) -> None:
    _, folder = bucket
    first, second = _shard(f"{folder}/pace", 0, 2, 600), _shard(f"{folder}/pace", 1, 2, 600)
    first.exchange()
    second.exchange()
    first.exchange()
    assert (first.active, second.active) == (2, 2)
    assert first.rate.requests_per_minute == pytest.approx(300)
    second.exchange(done=True)
    first.exchange()
    assert first.rate.requests_per_minute == pytest.approx(600)


def test_bad_shard_index() -> None:
    with pytest.raises(ValueError, match=r"shard_index 4 is outside 0\.\.3"):
        SharedPace(RateLimiter(None), "/tmp/x", 4, 4, requests_per_minute=None)


def test_slow_start_grows_one_slot_per_success() -> None:
    slots = ConcurrencyLimiter(32)
    slots.start_at(8)
    assert slots.limit == 8
    for _ in range(4):
        slots.on_success()
    assert slots.limit == 12
    slots.on_overloaded()  # not adaptive: the limit stays, the slow start ends
    slots.on_success()
    assert slots.limit == 12
