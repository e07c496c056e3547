"""judge_examples against the emulator: rows judged in one order only, resumes, unparseable cached answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing._protocols import EmulatedRequest, Refusal
from autorater_pipelines.testing.judges import length_judge, responses_in_prompt

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROWS = 8


def _examples(tmp_path: Path) -> list[dict[str, Any]]:
    dataset = tmp_path / "data.jsonl"
    with open(dataset, "w", encoding="utf-8") as fh:
        for i in range(ROWS):
            # model A's answer is longer on even rows: the length judge prefers A there, B elsewhere
            a, b = f"alpha r{i} " + "alpha " * (9 if i % 2 == 0 else 3), f"beta r{i} " + "beta " * 6
            fh.write(json.dumps({"id": f"r{i}", "question": f"question r{i}?", "a": a, "b": b}) + "\n")
    return autosxs.prepare_examples(
        evaluation_dataset=str(dataset),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )


EXPECTED = {f"r{i}": "A" if i % 2 == 0 else "B" for i in range(ROWS)}


def _judge(examples: list[dict[str, Any]], url: str, cache: Path, **params: Any) -> tuple[list, list]:
    judgments, errors, _ = autosxs.judge_examples(
        examples=examples,
        task="question_answering@001",
        id_columns=["id"],
        autorater_model="gemini-2.5-flash",
        autorater_parameters={
            "base_url": url,
            "cache_dir": str(cache),
            "progress": False,
            "max_retries": 0,
            "max_concurrency": 4,
            **params,
        },
    )
    return judgments, errors


def _swapped(request: EmulatedRequest) -> bool:
    return responses_in_prompt(request.prompt_text).get("A", "").startswith("beta")


def _row(request: EmulatedRequest) -> str:
    return responses_in_prompt(request.prompt_text)["A"].split()[1]


def test_rows_judged_in_one_order_only_are_marked_excluded_and_completed_by_a_resume(tmp_path):
    """805 rows, 13 swapped samples lost (retries off): the summary said "0 with errors"; a resume gave TIEs."""
    lose = {"r1", "r4"}

    def quota_on_some_swapped_samples(request: EmulatedRequest) -> str:
        if _row(request) in lose and _swapped(request):
            raise Refusal(503, "The model is overloaded. Please try again later.")
        return length_judge(request)

    examples = _examples(tmp_path)
    cache = tmp_path / "cache"
    with ModelEmulator(quota_on_some_swapped_samples) as emu:
        judgments, errors = _judge(examples, emu.url, cache)
        lose.clear()  # the endpoint recovers: resume with the same cache
        emu.reset()
        resumed, errors_after = _judge(examples, emu.url, cache)
        assert emu.call_count == 2, "only the two lost samples are asked again"
    by_id = {j["id"]: j for j in judgments}
    for row_id in ("r1", "r4"):
        assert by_id[row_id]["complete"] is False
        assert by_id[row_id]["incomplete_reason"].startswith(
            "judged in the original order only: every swapped-order sample failed (transient"
        )
    assert all(
        j["complete"] is True and j["incomplete_reason"] is None for j in judgments if j["id"] not in ("r1", "r4")
    )
    assert {e["id"] for e in errors} == {"r1", "r4"} and all(e["row_complete"] is False for e in errors)

    metrics = pairwise_metrics(judgments)
    assert metrics["one_order_only_count"] == 2 and metrics["one_order_only_excluded"] is True
    assert metrics["judged_count"] == ROWS - 2 and metrics["error_count"] == 0
    # r4 (A) and r1 (B) are left out: 3 A and 3 B among the 6 complete rows
    assert metrics["autorater_model_a_win_rate"] == metrics["autorater_model_b_win_rate"] == 0.5
    included = pairwise_metrics(judgments, include_incomplete=True)
    assert included["judged_count"] == ROWS and included["one_order_only_excluded"] is False

    assert errors_after == []
    assert all(j["complete"] for j in resumed)
    assert {j["id"]: j["choice"] for j in resumed} == EXPECTED, "a resumed run must not turn rows into TIE"


def test_unparseable_cached_answers_are_asked_again_when_retry_unparseable(tmp_path):
    broken = {"on": True}

    def sometimes_prose(request: EmulatedRequest) -> str:
        if broken["on"] and _row(request) == "r3" and not _swapped(request):
            return "I think the first one is better."  # no JSON verdict
        return length_judge(request)

    examples = _examples(tmp_path)
    cache = tmp_path / "cache"
    with ModelEmulator(sometimes_prose) as emu:
        first, _ = _judge(examples, emu.url, cache, temperature=0)
        broken["on"] = False
        again, _ = _judge(examples, emu.url, cache, temperature=0)  # greedy: the default keeps the cached answer
        assert emu.call_count == 2 * ROWS
        metrics = pairwise_metrics(again)
        assert metrics["cached_error_sample_count"] == 1 and metrics["cached_sample_count"] == 2 * ROWS
        r3 = next(j for j in again if j["id"] == "r3")
        assert r3["samples"][0]["cached"] and r3["samples"][0]["error"].startswith("parse_error")
        retried, _ = _judge(examples, emu.url, cache, temperature=0, retry_unparseable=True)
        assert emu.call_count == 2 * ROWS + 1, "only the unparseable answer is asked again"
    assert {j["id"]: j["choice"] for j in retried} == EXPECTED
    assert pairwise_metrics(retried)["cached_error_sample_count"] == 0
    assert first[3]["samples"][0]["error"].startswith("parse_error")


def test_retry_unparseable_is_on_by_default_when_the_judge_samples(tmp_path):
    calls = {"n": 0}

    def prose_once(request: EmulatedRequest) -> str:
        if _row(request) == "r0" and not _swapped(request):
            calls["n"] += 1
            if calls["n"] == 1:
                return "Both are fine, really."
        return length_judge(request)

    examples = _examples(tmp_path)
    cache = tmp_path / "cache"
    with ModelEmulator(prose_once) as emu:
        _judge(examples, emu.url, cache, temperature=0.7)
        second, _ = _judge(examples, emu.url, cache, temperature=0.7)
        assert emu.call_count == 2 * ROWS + 1
    assert second[0]["choice"] == "A" and not second[0]["samples"][0]["cached"]
