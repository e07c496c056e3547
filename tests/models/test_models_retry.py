"""Retries, error classification, timeouts and the consecutive-failure budget (real SDKs, emulator)."""

from __future__ import annotations

import email.utils
import socket
import time

import pytest

from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.models import ErrorKind, GenerateConfig, ModelRequest, get_model
from autorater_pipelines.models._provider import parse_retry_after, retry_delay_from_google_details
from autorater_pipelines.testing import ModelEmulator

SPECS = ["gemini-2.5-flash", "openai/m"]


def _requests(n: int) -> list[ModelRequest]:
    return [ModelRequest(parts=(f"q{i}",), key={"id": i}) for i in range(n)]


@pytest.mark.parametrize("spec", SPECS)
def test_429_retry_after_is_honoured(emulator: ModelEmulator, make_config, spec: str) -> None:
    emulator.inject_failures(1, status=429, retry_after_s=0.2)
    model = get_model(spec, make_config(initial_backoff_s=0.001, max_backoff_s=0.001))
    [out] = model.generate(_requests(1))
    assert out.ok and out.attempts == 2
    first, second = emulator.requests
    assert first.status == 429 and second.status == 200
    assert second.received_at - first.received_at >= 0.18  # waited Retry-After, not the 1 ms backoff
    stats = model.stats
    assert (stats.calls, stats.retries, stats.rate_limited, stats.failures) == (2, 1, 1, 0)


@pytest.mark.parametrize("spec", SPECS)
def test_503_is_retried_with_backoff(emulator: ModelEmulator, make_config, spec: str) -> None:
    emulator.inject_failures(2, status=503, retry_after_s=None)
    model = get_model(spec, make_config())
    [out] = model.generate(_requests(1))
    assert out.ok and out.attempts == 3 and emulator.call_count == 3
    assert model.stats.retries == 2 and model.stats.rate_limited == 0


@pytest.mark.parametrize("spec", SPECS)
def test_400_is_fatal_and_not_retried(emulator: ModelEmulator, make_config, spec: str) -> None:
    emulator.inject_failures(1, status=400, retry_after_s=None)
    model = get_model(spec, make_config())
    [out] = model.generate(_requests(1))
    assert out.text is None and out.error.kind is ErrorKind.FATAL
    assert out.error.status_code == 400 and out.attempts == 1
    assert "injected failure (HTTP 400)" in out.error.message
    assert emulator.call_count == 1 and model.stats.failures == 1


def test_retries_are_bounded_by_max_retries(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(10, status=500, retry_after_s=None)
    [out] = get_model("gemini-2.5-flash", make_config(max_retries=2)).generate(_requests(1))
    assert out.error.kind is ErrorKind.TRANSIENT and out.error.status_code == 500
    assert out.attempts == 3 and emulator.call_count == 3


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again before the call: nothing listens


@pytest.mark.parametrize("spec", SPECS)
def test_connection_refused_stops_the_run_at_once_naming_the_url(spec: str) -> None:
    port = _closed_port()
    config = GenerateConfig(base_url=f"http://127.0.0.1:{port}", progress=False, cache_dir="off", timeout_s=5)
    model = get_model(spec, config)
    started = time.monotonic()
    with pytest.raises(ModelCallError, match=rf"cannot connect to http://127\.0\.0\.1:{port}(/v1)? \(model '{spec}'\)"):
        model.generate(_requests(30))
    assert time.monotonic() - started < 5  # no retries, no backoff
    assert model.stats.calls <= config.max_concurrency  # the first wave only


@pytest.mark.parametrize("spec", SPECS)
def test_connection_refused_after_the_endpoint_answered_is_transient(spec: str, make_config) -> None:
    with ModelEmulator() as emulator:
        model = get_model(spec, make_config(base_url=emulator.url, max_retries=1))
        assert model.generate(_requests(1))[0].ok
    [out] = model.generate([ModelRequest(parts=("after the restart",))])  # the server is gone now
    assert out.error.kind is ErrorKind.TRANSIENT and out.attempts == 2


@pytest.mark.parametrize(
    ("status", "fix"), [(401, "check the credentials"), (403, "check the credentials"), (404, "check the model name")]
)
def test_auth_and_not_found_stop_a_fresh_endpoint_at_once(
    emulator: ModelEmulator, make_config, status: int, fix: str
) -> None:
    emulator.inject_failures(100, status=status, retry_after_s=None)
    model = get_model("gemini-2.5-flash", make_config(max_concurrency=1))
    with pytest.raises(
        ModelCallError, match=rf"{emulator.url} \(model 'gemini-2.5-flash'\).*HTTP {status}.*Fix: {fix}"
    ):
        model.generate(_requests(20))
    assert emulator.call_count == 1


def test_timeout_is_transient(emulator: ModelEmulator, make_config) -> None:
    emulator.latency_s = 1.0
    started = time.monotonic()
    [out] = get_model("openai/m", make_config(timeout_s=0.2, max_retries=0)).generate(_requests(1))
    assert out.error.kind is ErrorKind.TRANSIENT
    assert time.monotonic() - started < 0.9


def test_budget_of_consecutive_failures_stops_the_run(emulator: ModelEmulator, make_config) -> None:
    emulator.inject_failures(100, status=400, retry_after_s=None)
    model = get_model("gemini-2.5-flash", make_config(max_consecutive_failures=3, max_concurrency=1))
    outputs = []
    with pytest.raises(
        ModelCallError,
        match=r"stopped calling 'gemini-2.5-flash' after 3 consecutive failed calls "
        r"\(max_consecutive_failures=3\)\. Last error: fatal \(HTTP 400\).* 0 of 20 requests were answered\.",
    ):
        model.generate_each(_requests(20), lambda _r, output: outputs.append(output))
    assert emulator.call_count == 3  # the other 17 requests were never sent
    assert [o.error.kind for o in outputs] == [ErrorKind.FATAL] * 3 + [ErrorKind.BUDGET] * 17  # every one answered
    assert outputs[-1].error.message.startswith("not called: stopped calling 'gemini-2.5-flash' after 3")


def test_budget_counts_only_consecutive_failures(emulator: ModelEmulator, make_config) -> None:
    model = get_model("gemini-2.5-flash", make_config(max_consecutive_failures=3, max_concurrency=1))
    emulator.inject_failures(2, status=400, retry_after_s=None)
    outputs = model.generate(_requests(3))
    emulator.inject_failures(2, status=400, retry_after_s=None)
    outputs += model.generate(_requests(3))
    assert [o.ok for o in outputs] == [False, False, True, False, False, True]


def test_agenerate_after_budget_returns_budget_errors(emulator: ModelEmulator, make_config) -> None:
    import asyncio

    emulator.inject_failures(2, status=400, retry_after_s=None)
    model = get_model("openai/m", make_config(max_consecutive_failures=2))

    async def run() -> list:
        outputs = [await model.agenerate(r) for r in _requests(3)]
        await model.aclose()
        return outputs

    outputs = asyncio.run(run())
    assert [o.error.kind for o in outputs] == [ErrorKind.FATAL, ErrorKind.FATAL, ErrorKind.BUDGET]
    assert emulator.call_count == 2


def test_parse_retry_after() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after(None) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after({"Retry-After": future}) <= 31


def test_retry_delay_from_google_error_details() -> None:
    body = {
        "error": {"code": 429, "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}]}
    }
    assert retry_delay_from_google_details(body) == 12.0
    assert retry_delay_from_google_details({"error": {"code": 429}}) is None


def test_backoff_doubles_only_while_the_endpoint_is_in_trouble(emulator: ModelEmulator, make_config) -> None:
    def caps_of_retries(model) -> list[float]:
        caps: list[float] = []
        model._random.uniform = lambda low, high: caps.append(high) or 0.0  # record the cap, do not wait
        emulator.inject_failures(3, status=503, retry_after_s=None)
        assert model.generate([ModelRequest(parts=("unlucky",))])[0].ok
        return caps

    config = make_config(initial_backoff_s=0.05, max_backoff_s=10.0, max_retries=5)
    fresh = get_model("gemini-2.5-flash", config)
    assert caps_of_retries(fresh) == [0.05, 0.1, 0.2]  # nothing but failures so far: exponential
    busy = get_model("gemini-2.5-flash", config)
    busy.generate([ModelRequest(parts=(str(i),)) for i in range(20)])  # the endpoint answers fine
    assert caps_of_retries(busy) == [0.05, 0.05, 0.05]  # sporadic faults: no straggler waits seconds
