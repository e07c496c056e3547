"""Model.generate: progress, logging, stats, and use from inside a running event loop."""

from __future__ import annotations

import asyncio
import logging

import pytest

from autorater_pipelines.models import CallStats, ModelRequest, Usage, get_model
from autorater_pipelines.testing import ModelEmulator


def test_progress_bar_and_summary_log(
    emulator: ModelEmulator, make_config, capsys: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture
) -> None:
    model = get_model("openai/m", make_config(progress=True))
    with caplog.at_level(logging.INFO, logger="autorater_pipelines.models"):
        outputs = model.generate([ModelRequest(parts=("a b",)) for _ in range(3)], desc="judging")
    assert all(o.ok for o in outputs)
    assert "judging" in capsys.readouterr().err
    [summary] = [r.getMessage() for r in caplog.records if r.name == "autorater_pipelines.models"]
    assert summary.startswith(
        "judging (openai/m): 3 requests, 3 calls, 0 cache hits, 0 retries (0 rate-limited), 0 failures"
    )


def test_generate_from_inside_a_running_loop(emulator: ModelEmulator, make_config) -> None:
    model = get_model("gemini-2.5-flash", make_config())

    async def notebook_cell() -> list:
        return model.generate([ModelRequest(parts=("x",))])  # e.g. Jupyter: a loop is already running

    assert asyncio.run(notebook_cell())[0].ok


def test_empty_generate_makes_no_calls(emulator: ModelEmulator, make_config) -> None:
    assert get_model("openai/m", make_config()).generate([]) == []
    assert emulator.call_count == 0


def test_failures_are_logged_with_their_key(
    emulator: ModelEmulator, make_config, caplog: pytest.LogCaptureFixture
) -> None:
    emulator.inject_failures(1, status=400, retry_after_s=None)
    with caplog.at_level(logging.WARNING, logger="autorater_pipelines.models"):
        get_model("openai/m", make_config()).generate([ModelRequest(parts=("x",), key={"id": "row-9"})])
    assert any(
        "request {'id': 'row-9'} failed: fatal: the server refused the request as invalid" in r.getMessage()
        for r in caplog.records
    )


def test_call_stats_since() -> None:
    before = CallStats(requests=1, calls=2, usage=Usage(10, 5))
    after = CallStats(requests=4, calls=6, cache_hits=1, retries=2, rate_limited=1, failures=1, usage=Usage(30, 9))
    assert after.since(before) == CallStats(3, 4, 1, 2, 1, 1, Usage(20, 4))
