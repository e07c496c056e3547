"""Quota without being told: adaptive pace, rate limits that never use up retries, stalls, hints and sharing."""

from __future__ import annotations

import logging

import pytest

from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.models import ErrorKind, ModelRequest, get_model
from autorater_pipelines.testing import ModelEmulator


def _requests(n: int, tag: str = "q") -> list[ModelRequest]:
    return [ModelRequest(parts=(f"{tag}{i}",), key={"id": i}) for i in range(n)]


def test_an_unknown_quota_is_found_and_every_call_succeeds(make_config) -> None:
    with ModelEmulator(latency_s=0.05, requests_per_minute=1200, quota_burst=2) as emulator:  # 20/s
        model = get_model("gemini-2.5-flash", make_config(base_url=emulator.url, max_concurrency=16))
        outputs = model.generate(_requests(80))
    assert all(o.ok for o in outputs)
    statuses = emulator.stats()["by_status"]
    assert statuses["200"] == 80 and int(statuses.get("429", 0)) > 0  # it hit the quota...
    assert emulator.call_count <= 2 * 80  # ...and found the pace instead of hammering it
    assert model._endpoint.rate.requests_per_minute <= 1.3 * 1200


def test_rate_limit_answers_do_not_use_up_max_retries(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(3, status=429, retry_after_s=0.01)
    model = get_model("openai/m", make_config(max_retries=0))
    [out] = model.generate(_requests(1))
    assert out.ok and out.attempts == 4 and model.stats.rate_limited == 3


def test_transient_errors_still_use_up_max_retries(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(6, status=503, retry_after_s=None)
    [out] = get_model("openai/m", make_config(max_retries=2)).generate(_requests(1))
    assert out.error.kind is ErrorKind.TRANSIENT and out.attempts == 3


@pytest.mark.parametrize("status", [429, 503])
def test_an_endpoint_without_progress_stops_the_run_after_max_stall_s(
    emulator: ModelEmulator, make_config, status: int
) -> None:
    emulator.inject_failures(10_000, status=status, retry_after_s=None)  # failing forever, no hint
    model = get_model(
        "gemini-2.5-flash", make_config(max_stall_s=0.5, max_concurrency=2, max_retries=100)
    )  # the most allowed: the stall limit ends the run first
    outputs = []
    with pytest.raises(ModelCallError, match=r"succeeded for 0\.5 s, not once in this run \(max_stall_s\); last error"):
        model.generate_each(_requests(5), lambda _r, o: outputs.append(o))
    assert len(outputs) == 5 and not any(o.ok for o in outputs)
    assert {o.error.kind for o in outputs} <= {ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT, ErrorKind.BUDGET}


def test_an_endpoint_that_never_answered_stalls_sooner(emulator: ModelEmulator, make_config, monkeypatch) -> None:
    from autorater_pipelines.models import _endpoint

    monkeypatch.setattr(_endpoint, "NEVER_ANSWERED_STALL_S", 0.3)
    emulator.inject_failures(10_000, status=503, retry_after_s=None)
    model = get_model(
        "openai/m", make_config(max_stall_s=3600, max_retries=100)
    )  # the most allowed: the stall limit ends the run first
    with pytest.raises(ModelCallError, match=r"succeeded for 0\.3 s, not once in this run"):
        model.generate(_requests(3))


def test_a_retry_after_longer_than_the_cap_fails_the_call_saying_so(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(1, status=429, retry_after_s=86400)
    [out] = get_model("openai/m", make_config()).generate(_requests(1))
    assert out.error.kind is ErrorKind.RATE_LIMIT and emulator.call_count == 1
    assert "the server asked to wait 86400 s before retrying, longer than max_retry_after_s=300" in out.error.message


def test_gemini_retry_info_in_the_error_body_is_honoured(make_config) -> None:
    with ModelEmulator(requests_per_minute=60, quota_burst=1, retry_hint="body") as emulator:  # 1 call/s
        model = get_model("gemini-2.5-flash", make_config(base_url=emulator.url, max_concurrency=2))
        assert all(o.ok for o in model.generate(_requests(2)))
    first, rejected, retried = sorted(emulator.requests, key=lambda r: r.received_at)
    assert (first.status, rejected.status, retried.status) == (200, 429, 200)
    assert retried.received_at - first.received_at >= 0.9  # waited for the body's RetryInfo, not 10 ms


def test_models_of_one_endpoint_and_quota_share_one_limiter(emulator: ModelEmulator, make_config) -> None:
    judge = get_model("openai/m", make_config(requests_per_minute=600))
    generator = get_model("openai/m", make_config(requests_per_minute=300, temperature=1.0))
    other_model = get_model("openai/other", make_config())
    assert judge._endpoint is generator._endpoint and judge._endpoint is not other_model._endpoint
    assert judge._endpoint.rate.requests_per_minute == pytest.approx(300)  # one quota: the lower declaration


def test_a_heartbeat_line_reports_progress_and_failures(
    emulator: ModelEmulator, make_config, caplog: pytest.LogCaptureFixture
) -> None:
    emulator.latency_s = 0.1
    emulator.inject_failures(1, status=400, retry_after_s=None)
    model = get_model("openai/m", make_config(heartbeat_s=0.15, max_concurrency=1))
    with caplog.at_level(logging.INFO, logger="autorater_pipelines.progress"):
        model.generate(_requests(8), desc="judging")
    beats = [r.getMessage() for r in caplog.records if r.name == "autorater_pipelines.progress"]
    assert len(beats) >= 2
    assert beats[-1].startswith("[autorater progress] judging (openai/m): ") and " of 8 done, 1 failed, " in beats[-1]
    assert "last error: fatal: " in beats[-1]


def test_retry_after_0_forever_still_stalls(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(10_000, status=429, retry_after_s=0)  # "retry now", every time, for every call
    model = get_model("openai/m", make_config(max_stall_s=0.5, max_concurrency=2))
    with pytest.raises(ModelCallError, match=r"succeeded for 0\.5 s, not once in this run \(max_stall_s\)"):
        model.generate(_requests(3))
