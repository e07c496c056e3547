"""The Gemini provider against llmock, a third-party scripted mock of the Gemini API and its failures (PyPI llmock).

llmock is installed and started by ``.ci/third_party_servers.py`` (127.0.0.1, ready after one real request). Its admin
API queues failures (``/_llmock/scenario``) and grades how the client retried them (``/_llmock/verdict``: waited out
``Retry-After``, did not retry a 400, no retry storm).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.models import ErrorKind, GenerateConfig, ModelRequest, get_model

pytestmark = pytest.mark.third_party

QUIET = {"progress": False, "cache_dir": "off", "initial_backoff_s": 0.05, "max_backoff_s": 0.5}


@pytest.fixture(scope="module")
def llmock(third_party, tmp_path_factory) -> Iterator[Any]:
    with third_party.llmock(tmp_path_factory.mktemp("llmock")) as server:
        yield server


@pytest.fixture
def mock(llmock, third_party) -> Any:
    """The server with no queued behaviour and no recorded request."""
    assert third_party.post_json(f"{llmock.url}/_llmock/reset", {})[0] == 200
    return llmock


def _scenario(third_party, server, *behaviors: dict) -> None:
    status, answer = third_party.post_json(f"{server.url}/_llmock/scenario", {"behaviors": list(behaviors)})
    assert status == 201, answer


def _verdict(server) -> dict:
    with urllib.request.urlopen(f"{server.url}/_llmock/verdict", timeout=10) as answer:
        return json.loads(answer.read())


def _requests(n: int) -> list[ModelRequest]:
    return [ModelRequest(parts=(f"question {i}",), key={"id": i}) for i in range(n)]


def test_429_and_503_chaos_is_recovered_as_llmock_asks(mock, third_party) -> None:
    """Three 429 with Retry-After 0.3 s, then three 503: every request answered, llmock's verdict passes."""
    _scenario(
        third_party,
        mock,
        {"type": "fail", "status": 429, "retry_after": 0.3, "times": 3},
        {"type": "fail", "status": 503, "times": 3},
    )
    model = get_model(
        "gemini/gemini-2.5-flash", GenerateConfig(base_url=f"{mock.url}/gemini", max_concurrency=2, **QUIET)
    )
    outputs = model.generate(_requests(8))
    assert [o.ok for o in outputs] == [True] * 8
    assert all(o.text.startswith("Mock response") for o in outputs)
    assert model.stats.retries == 6 and model.stats.rate_limited == 3
    verdict = _verdict(mock)
    assert verdict["passed"] is True and verdict["findings"] == [], verdict
    assert (verdict["calls"], verdict["attempts"], verdict["faults_injected"]) == (8, 14, 6)


def test_a_400_is_not_retried(mock, third_party) -> None:
    _scenario(third_party, mock, {"type": "fail", "status": 400, "message": "Invalid JSON payload", "times": 1})
    model = get_model(
        "gemini/gemini-2.5-flash", GenerateConfig(base_url=f"{mock.url}/gemini", max_concurrency=1, **QUIET)
    )
    first, second = model.generate(_requests(2))
    assert first.error is not None and first.error.kind is ErrorKind.FATAL and first.attempts == 1
    assert "Invalid JSON payload" in first.error.message and first.error.status_code == 400
    assert second.ok
    verdict = _verdict(mock)
    assert verdict["passed"] is True and verdict["findings"] == [], verdict


def test_a_404_of_another_api_version_names_the_path_and_version(mock) -> None:
    """llmock serves the Gemini API under /gemini/v1beta only: api_version v1 is a 404 that says which path."""
    config = GenerateConfig(base_url=f"{mock.url}/gemini", api_version="v1", max_retries=0, **QUIET)
    [out] = get_model("gemini/gemini-2.5-flash", config).generate(_requests(1))
    assert out.error is not None and out.error.kind is ErrorKind.FATAL and out.error.status_code == 404
    path = f"{mock.url}/gemini/v1/models/gemini-2.5-flash:generateContent"
    assert f"; requested POST {path} (API version v1; for a server that serves another version" in out.error.message
    # the version it does serve works
    config = GenerateConfig(base_url=f"{mock.url}/gemini", api_version="v1beta", **QUIET)
    assert get_model("gemini/gemini-2.5-flash", config).generate(_requests(1))[0].ok


def test_a_launched_server_is_stopped_when_its_block_ends(third_party, tmp_path) -> None:
    """The launcher's contract: loopback only, ready after a real request, its process gone at the end."""
    with third_party.llmock(tmp_path) as server:
        assert server.url.startswith("http://127.0.0.1:")
        status, answer = third_party.post_json(
            f"{server.url}/gemini/v1beta/models/m:generateContent", {"contents": [{"parts": [{"text": "hi"}]}]}
        )
        assert status == 200 and answer["candidates"], answer
        pid = server.pid
    assert server.process.returncode is not None
    assert not Path(f"/proc/{pid}").exists()
