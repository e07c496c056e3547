"""Probability-weighted preferences (``preference: "probability"``): the weighted win rate and its standard error."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise.preference import weighted_win_rate
from autorater_pipelines.pairwise.settings import AutoraterParameters
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing._protocols import EmulatedRequest
from autorater_pipelines.testing.judges import responses_in_prompt

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
QUIET = {"progress": False, "cache_dir": "off"}
# AlpacaEval's one-token answer: "m" names the response shown first, "M" the one shown second.
ONE_TOKEN = {"verdict_pattern": "(m|M)", "verdict_map": {"m": "A", "M": "B"}}
WEIGHTED = {**ONE_TOKEN, "preference": "probability", "logprobs": 5, "sampling_count": 2, "flip": True}


def _frame(rows: int = 4) -> pd.DataFrame:
    return pd.read_json(QUICKSTART / "dataset.jsonl", lines=True).head(rows)


def _evaluate(judge: str, parameters: dict[str, Any], df: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    return autosxs.evaluate(
        _frame() if df is None else df,
        task="question_answering@001",
        id_columns=["question_id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="answer_model_a",
        response_column_b="answer_model_b",
        autorater_model=judge,
        autorater_parameters={**parameters, **QUIET},
        progress=False,
    )


def _top(token: str, probabilities: dict[str, float]) -> list[dict[str, Any]]:
    """One answer token in OpenAI's ``choices[0].logprobs.content`` shape, with ``bytes`` as OpenAI sends them."""
    top = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in probabilities.items()]
    return [{"token": token, "logprob": math.log(probabilities[token]), "top_logprobs": top}]


# question_id, flipped (model B shown first), answer, logprobs
RECORDED = [
    ("q1", False, "m", _top("m", {"m": 0.6, "M": 0.3, "The": 0.1})),
    ("q1", True, "M", _top("M", {"M": 0.8, "m": 0.2})),
    ("q2", False, "M", _top("M", {"M": 0.9})),  # "m" not in the top alternatives: probability 0
    ("q2", True, "m", _top("m", {"m": 0.5, "M": 0.5})),
    ("q3", False, "m", None),  # no logprobs recorded: falls back to the vote
    ("q3", True, "m", None),
    ("q4", False, "M", _top("M", {"M": 0.75, "m": 0.25})),
    ("q4", True, "M", _top("M", {"M": 0.4, "m": 0.6})),
]


def _replay(tmp_path: Path) -> str:
    path = tmp_path / "judge.jsonl"
    lines = [
        json.dumps({"question_id": q, "flipped": flipped, "response": text, "logprobs": logprobs})
        for q, flipped, text, logprobs in RECORDED
    ]
    path.write_text("\n".join(lines) + "\n")
    return f"replay/{path}"


def test_replayed_logprobs_give_the_weighted_win_rate_and_its_standard_error(tmp_path):
    judgments, metrics = _evaluate(_replay(tmp_path), WEIGHTED)
    # By hand, model A's preference per sample (a flipped sample's "m" is model B):
    # q1: 0.6/(0.6+0.3) = 2/3 and 1 - 0.2 = 0.8; q2: 0 and 1 - 0.5 = 0.5; q3: votes m (A) and m (B) -> 1 and 0;
    # q4: 0.25 and 1 - 0.6 = 0.4.
    rows = [(2 / 3 + 0.8) / 2, (0 + 0.5) / 2, (1 + 0) / 2, (0.25 + 0.4) / 2]
    mean = sum(rows) / 4
    standard_error = math.sqrt(sum((r - mean) ** 2 for r in rows) / 3) / math.sqrt(4)
    assert judgments["choice"].tolist() == ["A", "B", "TIE", "TIE"]
    assert judgments["preference"].tolist() == pytest.approx(rows, abs=1e-12)
    assert judgments["preference_fallback_count"].tolist() == [0, 0, 2, 0]
    assert metrics["autorater_model_a_weighted_win_rate"] == pytest.approx(mean, abs=1e-12)
    assert metrics["autorater_model_a_weighted_win_rate_standard_error"] == pytest.approx(standard_error, abs=1e-12)
    assert metrics["preference_fallback_sample_count"] == 2
    # beside the discrete rates, unchanged
    assert metrics["autorater_model_a_win_rate"] == pytest.approx(1 / 4)
    assert metrics["autorater_tie_rate"] == pytest.approx(2 / 4)


def test_discrete_preference_adds_no_weighted_keys(tmp_path):
    judgments, metrics = _evaluate(_replay(tmp_path), {**ONE_TOKEN, "logprobs": 5})
    assert "preference" not in judgments.columns
    assert "autorater_model_a_weighted_win_rate" not in metrics
    assert judgments["choice"].tolist() == ["A", "B", "TIE", "TIE"]


def test_a_tie_without_samples_counts_half_and_error_rows_are_left_out():
    rows = [
        ({"choice": "A", "preference": 0.9, "preference_fallback_count": 0}, "A"),
        ({"choice": "TIE"}, "TIE"),  # e.g. identical responses, tied without asking the judge
        ({"choice": "B", "preference": 0.2, "preference_fallback_count": 1}, "B"),
    ]
    out = weighted_win_rate(rows)
    values = [0.9, 0.5, 0.2]
    mean = sum(values) / 3
    assert out["autorater_model_a_weighted_win_rate"] == pytest.approx(mean)
    assert out["autorater_model_a_weighted_win_rate_standard_error"] == pytest.approx(
        math.sqrt(sum((v - mean) ** 2 for v in values) / 2) / math.sqrt(3)
    )
    assert out["preference_fallback_sample_count"] == 1
    assert weighted_win_rate(rows[:1])["autorater_model_a_weighted_win_rate_standard_error"] is None


def _judge(request: EmulatedRequest) -> dict[str, Any]:
    """Prefers the longer response with probability 0.7 (answer "m" or "M", one token, five alternatives)."""
    shown = responses_in_prompt(request.prompt_text)
    first_longer = len(shown["A"]) >= len(shown["B"])
    winner, loser = ("m", "M") if first_longer else ("M", "m")
    alternatives = [(winner, math.log(0.7)), (loser, math.log(0.2)), ("The", math.log(0.1))]
    return {"text": winner, "logprobs": [(winner, math.log(0.7), alternatives)]}


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_the_judges_logprobs_over_http_give_the_weighted_preference(provider):
    df = _frame(6)
    with ModelEmulator(responder=_judge) as emulator:
        model, base_url = (
            ("openai/judge", emulator.url + "/v1") if provider == "openai" else ("gemini-2.5-flash", emulator.url)
        )
        judgments, metrics = _evaluate(model, {**WEIGHTED, "base_url": base_url}, df)
        assert emulator.call_count == 12
        assert all(r.generation.get("logprobs") == 5 for r in emulator.requests)
    # Each sample: P(longer) = 0.7 / (0.7 + 0.2), whichever order; equal lengths: the first shown wins each time.
    longer = 0.7 / 0.9
    expected = []
    for a, b in zip(df["answer_model_a"], df["answer_model_b"], strict=True):
        expected.append(longer if len(a) > len(b) else 1 - longer if len(b) > len(a) else 0.5)
    assert judgments["preference"].tolist() == pytest.approx(expected, abs=1e-9)
    assert metrics["autorater_model_a_weighted_win_rate"] == pytest.approx(sum(expected) / 6, abs=1e-9)
    assert metrics["preference_fallback_sample_count"] == 0


BAD = [
    (
        {"preference": "weighted"},
        r"^autorater_parameters\.preference: preference 'weighted' is not a preference mode; use one of \['discrete', 'probability'\]",
    ),
    ({"preference": 1}, r"^autorater_parameters\.preference: preference 1 is not a preference mode"),
]


@pytest.mark.parametrize(("bad", "message"), BAD, ids=[json.dumps(b) for b, _ in BAD])
def test_an_unknown_preference_names_the_key(bad, message):
    with pytest.raises(InputError, match=message):
        AutoraterParameters.parse(bad, source="autorater_parameters")


def test_probability_without_logprobs_is_refused_before_any_call(tmp_path):
    with pytest.raises(
        InputError,
        match=r"^autorater_parameters\.preference: .*set autorater_parameters\.logprobs to at least 1 \(received None\)",
    ):
        _evaluate(_replay(tmp_path), {**ONE_TOKEN, "preference": "probability"})


def test_a_replay_line_with_malformed_logprobs_names_the_line(tmp_path):
    path = tmp_path / "judge.jsonl"
    good = {"question_id": "q1", "flipped": False, "response": "m", "logprobs": _top("m", {"m": 1.0})}
    bad = {"question_id": "q1", "flipped": True, "response": "m", "logprobs": [{"token": "m", "logprob": "-0.1"}]}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(
        InputError,
        match=r"judge\.jsonl, row 2, column 'logprobs': logprobs\[0\]\.logprob = '-0\.1' is not a log-probability "
        r"\(a finite number <= 0\); logprobs must be a list of \{\"token\": str, \"logprob\": number <= 0",
    ):
        _evaluate(f"replay/{path}", WEIGHTED)


def test_a_one_token_answer_that_is_no_verdict_votes_by_its_alternatives(tmp_path):
    """AlpacaEval's logprob parser reads the verdict token's alternatives whatever token was sampled."""
    path = tmp_path / "judge.jsonl"
    please = _top("Please", {"Please": 0.005, "m": 0.98, "M": 0.01, "The": 0.005})
    lines = [
        {"question_id": "q1", "flipped": False, "response": "Please", "logprobs": please},
        # two tokens and no verdict: a parse error, as without preference "probability"
        {
            "question_id": "q2",
            "flipped": False,
            "response": "Please wait",
            "logprobs": please + _top(" wait", {" wait": 1}),
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    judgments, metrics = _evaluate(f"replay/{path}", {**WEIGHTED, "sampling_count": 1, "flip": False}, _frame(2))
    assert judgments["choice"].tolist() == ["A", "ERROR"]
    assert judgments["preference"].tolist()[0] == pytest.approx(0.98 / (0.98 + 0.01), abs=1e-12)
    assert judgments["verdict_from_alternatives_count"].tolist() == [1, 0]
    note = judgments["samples"][0][0]["note"]
    assert note.startswith(
        "the one-token answer 'Please' is no verdict (verdict_pattern '(m|M)' found no match); voted"
    )
    assert "no match" in judgments["samples"][1][0]["error"]
    assert metrics["verdict_from_alternatives_sample_count"] == 1
    assert metrics["error_count"] == 1 and metrics["judged_count"] == 1
    assert metrics["autorater_model_a_weighted_win_rate"] == pytest.approx(0.98 / 0.99, abs=1e-12)
    # the discrete run keeps the one-token answer a parse error
    discrete, _ = _evaluate(
        f"replay/{path}", {**ONE_TOKEN, "logprobs": 5, "sampling_count": 1, "flip": False}, _frame(2)
    )
    assert discrete["choice"].tolist() == ["ERROR", "ERROR"]
