"""Malformed, non-finite or huge log-probabilities from a live server or a replay: the vote stands, counted as a fallback.

A judge answer's text is its verdict; its logprobs only weigh it. Over real HTTP (the project's emulator), an
answer whose logprobs are malformed keeps its verdict, has no verdict probability, says why in its ``note``
and is counted in ``preference_fallback_count`` — never a hang, a crash, a NaN or a fatal row.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.models import ModelOutput, TokenLogprob
from autorater_pipelines.models._cache import ResponseCache
from autorater_pipelines.pairwise.confidence import verdict_probability
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing._protocols import EmulatedRequest

REPO = Path(__file__).resolve().parents[2]
ONE_TOKEN = {"verdict_pattern": "(m|M)", "verdict_map": {"m": "A", "M": "B"}}
WEIGHTED = {**ONE_TOKEN, "preference": "probability", "logprobs": 5, "sampling_count": 1, "flip": False}


def _frame(rows: int) -> pd.DataFrame:
    return pd.read_json(REPO / "examples" / "quickstart" / "dataset.jsonl", lines=True).head(rows)


def _evaluate(model: str, base_url: str, rows: int = 5, cache_dir: str = "off", **extra: Any):
    """Runs in a thread joined with a timeout: a hang fails the test instead of blocking the suite."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = autosxs.evaluate(
                _frame(rows),
                task="question_answering@001",
                id_columns=["question_id"],
                autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
                response_column_a="answer_model_a",
                response_column_b="answer_model_b",
                autorater_model=model,
                autorater_parameters={
                    **WEIGHTED,
                    **extra,
                    "base_url": base_url,
                    "progress": False,
                    "cache_dir": cache_dir,
                },
                progress=False,
            )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the run hung"
    if "error" in result:
        raise result["error"]
    return result["value"]


def _openai_body(logprobs: Any) -> dict[str, Any]:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": "m"},
        "finish_reason": "stop",
        "logprobs": logprobs,
    }
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "judge", "choices": [choice]}


def _gemini_body(result: Any) -> dict[str, Any]:
    candidate = {
        "content": {"role": "model", "parts": [{"text": "m"}]},
        "finishReason": "STOP",
        "logprobsResult": result,
    }
    return {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1}}


def _notes(judgments: pd.DataFrame) -> list[str | None]:
    return [s["note"] for samples in judgments["samples"] for s in samples]


def _assert_fallback(judgments: pd.DataFrame, metrics: dict[str, Any], rows: int, note: str) -> None:
    # every row judged from its text ("m" = the response shown first = A), its vote as its preference
    assert judgments["choice"].tolist() == ["A"] * rows
    assert judgments["preference"].tolist() == [1.0] * rows
    assert judgments["preference_fallback_count"].tolist() == [1] * rows
    # no verdict probability: no confidence, as for a verdict token without alternatives (the note says why)
    assert judgments["confidence"].isna().all()
    assert metrics["preference_fallback_sample_count"] == rows
    assert metrics["autorater_model_a_weighted_win_rate"] == 1.0
    assert all(n is not None and note in n for n in _notes(judgments)), _notes(judgments)


def test_a_logprobs_item_without_token_keeps_the_verdict_and_the_cached_run_finishes(tmp_path):
    body = _openai_body({"content": [{"logprob": -0.1, "top_logprobs": []}]})
    with ModelEmulator(api_versions=("v999",), catch_all=body) as emulator:
        judgments, metrics = _evaluate("openai/judge", emulator.url + "/v1", cache_dir=str(tmp_path / "cache"))
        assert emulator.call_count == 5
        # the answers were cached with the reason, and a second run reads them back the same
        assert len(list((tmp_path / "cache").rglob("*.json"))) == 5
        again, _ = _evaluate("openai/judge", emulator.url + "/v1", cache_dir=str(tmp_path / "cache"))
        assert emulator.call_count == 5
    note = "the answer's log-probabilities are malformed: choices[0].logprobs.content[0].token = None is not a token"
    _assert_fallback(judgments, metrics, 5, note)
    assert _notes(again) == _notes(judgments)


def test_the_cache_writer_survives_an_entry_it_cannot_encode(tmp_path, caplog):
    cache = ResponseCache(tmp_path, background=True)
    unencodable = ModelOutput(text="m", logprobs=(TokenLogprob(None, -0.1),))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="autorater_pipelines.models._cache"):
        cache.put("aa" + "0" * 62, unencodable)
        cache.put("bb" + "0" * 62, ModelOutput(text="M"))
        done = threading.Thread(target=cache.flush, daemon=True)
        done.start()
        done.join(30)
    assert not done.is_alive(), "flush hung"
    assert cache.get("aa" + "0" * 62) is None  # not cached
    assert cache.get("bb" + "0" * 62).text == "M"  # the entry after it still written
    assert (
        f"response cache {tmp_path}: entry aa{'0' * 62} not cached, its output cannot be encoded: AttributeError"
        in (caplog.text)
    )


@pytest.mark.parametrize(
    ("logprob", "shown"), [(math.nan, "NaN"), (math.inf, "Infinity"), (0.5, "0.5"), (800.0, "800.0")]
)
def test_a_non_finite_or_positive_logprob_is_a_counted_fallback(logprob, shown):
    def judge(request: EmulatedRequest) -> dict[str, Any]:
        return {"text": "m", "logprobs": [("m", -0.1, [("m", -0.1), ("M", logprob)])]}

    with ModelEmulator(responder=judge) as emulator:
        judgments, metrics = _evaluate("openai/judge", emulator.url + "/v1", rows=3)
    note = f"choices[0].logprobs.content[0].top_logprobs[1].logprob = {shown} is not a log-probability"
    _assert_fallback(judgments, metrics, 3, note)


@pytest.mark.parametrize(
    ("logprobs", "note"),
    [
        ({"content": [{"token": "m", "logprob": None, "top_logprobs": []}]}, "content[0].logprob = None is not a"),
        ({"content": {"token": "m"}}, "choices[0].logprobs.content = {'token': 'm'} is not a list"),
        ({"content": ["m"]}, "choices[0].logprobs.content[0] = 'm' is not an object"),
        ("oops", "choices[0].logprobs = 'oops' is not an object"),
    ],
)
def test_malformed_openai_logprobs_keep_the_verdict_with_a_note(logprobs, note):
    with ModelEmulator(api_versions=("v999",), catch_all=_openai_body(logprobs)) as emulator:
        judgments, metrics = _evaluate("openai/judge", emulator.url + "/v1", rows=2)
    _assert_fallback(judgments, metrics, 2, note)


@pytest.mark.parametrize(
    ("result", "note"),
    [
        (
            {"chosenCandidates": [{"token": "m", "logProbability": "NaN"}], "topCandidates": []},
            "candidates[0].logprobsResult.chosenCandidates[0].logProbability = NaN is not a log-probability",
        ),
        (
            {
                "chosenCandidates": [{"token": "m"}],
                "topCandidates": [{"candidates": [{"token": "m"}, {"token": "M", "logProbability": "Infinity"}]}],
            },
            "topCandidates[0].candidates[1].logProbability = Infinity is not a log-probability",
        ),
        ("oops", "candidates[0].logprobsResult = 'oops' is not an object"),
    ],
)
def test_malformed_gemini_logprobs_keep_the_verdict_with_a_note(result, note):
    with ModelEmulator(api_versions=("v999",), catch_all=_gemini_body(result)) as emulator:
        judgments, metrics = _evaluate("gemini-2.5-flash", emulator.url, rows=2)
    _assert_fallback(judgments, metrics, 2, note)


def test_gemini_proto_json_defaults_and_numeric_strings_are_read():
    # proto-JSON omits a 0 logProbability and may write a float as a string
    result = {
        "chosenCandidates": [{"token": "m"}],
        "topCandidates": [{"candidates": [{"token": "m"}, {"token": "M", "logProbability": str(math.log(0.25))}]}],
    }
    with ModelEmulator(api_versions=("v999",), catch_all=_gemini_body(result)) as emulator:
        judgments, metrics = _evaluate("gemini-2.5-flash", emulator.url, rows=2)
    assert judgments["preference"].tolist() == pytest.approx([1 / 1.25] * 2, abs=1e-12)
    assert metrics["preference_fallback_sample_count"] == 0


def test_verdict_probabilities_are_normalised_without_overflow_or_underflow():
    def label(text: str) -> str | None:
        return {"m": "A", "M": "B"}.get(text)

    tiny = verdict_probability([TokenLogprob("m", -1e308, (("m", -1e308), ("M", -1e308)))], "m", (0, 1), label)
    assert tiny.distribution == {"A": 0.5, "B": 0.5}
    huge = verdict_probability(
        [TokenLogprob("m", 800.0, (("m", 800.0), ("M", 800.0 + math.log(3))))], "m", (0, 1), label
    )
    assert huge.distribution == pytest.approx({"A": 0.25, "B": 0.75}, abs=1e-12)


def _replay(tmp_path: Path, logprobs: Any) -> str:
    path = tmp_path / "judge.jsonl"
    lines = [
        {"question_id": q, "flipped": False, "response": "m", "logprobs": logprobs} for q in _frame(2)["question_id"]
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines).replace('"NAN"', "NaN") + "\n")
    return f"replay/{path}"


def test_a_replayed_nan_logprob_is_named_as_null_or_nan(tmp_path):
    judge = _replay(tmp_path, [{"token": "m", "logprob": "NAN", "top_logprobs": []}])
    with pytest.raises(ValueError, match=r"logprobs\[0\]\.logprob = null or NaN is not a log-probability"):
        _evaluate(judge, "", rows=2)


def test_replayed_empty_logprobs_are_a_fallback_with_a_note(tmp_path):
    judgments, metrics = _evaluate(_replay(tmp_path, []), "", rows=2)
    _assert_fallback(judgments, metrics, 2, "the log-probabilities came without any token (an empty list)")


def test_identical_ties_count_half_in_the_weighted_win_rate(tmp_path):
    df = _frame(2)
    path = tmp_path / "judge.jsonl"
    path.write_text("")
    frame = df.assign(answer_model_b=df["answer_model_a"])
    judgments, metrics = autosxs.evaluate(
        frame,
        task="question_answering@001",
        id_columns=["question_id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="answer_model_a",
        response_column_b="answer_model_b",
        autorater_model=f"replay/{path}",
        autorater_parameters={**WEIGHTED, "identical_responses": "tie", "progress": False, "cache_dir": "off"},
        progress=False,
    )
    assert judgments["choice"].tolist() == ["TIE", "TIE"]
    assert metrics["autorater_model_a_weighted_win_rate"] == 0.5
    assert metrics["preference_fallback_sample_count"] == 0
