"""``autorater run autosxs`` with a free-text judge: the verdict and its logprob confidence come from the right match."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing._protocols import EmulatedRequest
from autorater_pipelines.testing.judges import responses_in_prompt

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


def _p(first: float, *others: float) -> float:
    return math.exp(first) / (math.exp(first) + sum(math.exp(o) for o in others))


def _judge(request: EmulatedRequest) -> dict[str, Any]:
    """Prefers the longer response; echoes the format in quotes first and names the loser after the verdict."""
    shown = responses_in_prompt(request.prompt_text)
    winner = "A" if len(shown["A"]) >= len(shown["B"]) else "B"
    loser = "B" if winner == "A" else "A"
    pieces = [
        ("Format", -0.1, []),
        (":", -0.01, []),
        (' "', -0.01, []),
        ("[[", -0.01, []),
        (loser, -0.02, [(loser, -0.02), (winner, -4.0)]),  # the quoted example names the loser
        ("]]", -0.001, []),
        ('"', -0.01, []),
        (".", -0.01, []),
        ("\n", -0.01, []),
        ("**", -0.01, []),
        ("Verdict", -0.01, []),
        (":**", -0.01, []),
        (" [[", -0.01, []),
        (winner, -0.3, [(winner, -0.3), (loser, -1.5), ("C", -3.0)]),
        ("]]", -0.001, []),
        (" because", -0.2, []),
        (" " + loser, -0.01, [(" " + loser, -0.01), (" " + winner, -5.0)]),
        (" is", -0.1, []),
        (" shorter", -0.1, []),
        (".", -0.01, []),
    ]
    return {"text": "".join(t for t, _, _ in pieces), "logprobs": pieces}


@pytest.mark.pipeline
def test_free_text_judge_verdicts_and_confidence_come_from_the_concluding_verdict_token(tmp_path):
    params = json.loads((QUICKSTART / "params.json").read_text())
    with ModelEmulator(responder=_judge) as emulator:
        params.update(
            evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
            autorater_model="openai/judge",
            autorater_parameters={
                "base_url": emulator.url + "/v1",
                "cache_dir": "off",
                "progress": False,
                "logprobs": 5,
                "verdict_pattern": r"\[\[(A|B|C)\]\]",
                "verdict_map": {"A": "A", "B": "B", "C": "TIE"},
            },
        )
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(params))
        out = tmp_path / "out"
        code = main(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"])
        assert code == 0
        assert all(r.generation.get("logprobs") == 5 for r in emulator.requests)
    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    dataset = {r["question_id"]: r for r in map(json.loads, (QUICKSTART / "dataset.jsonl").read_text().splitlines())}
    assert len(judgments) == len(dataset) == 6
    for j in judgments:
        row = dataset[j["question_id"]]
        a, b = len(row["answer_model_a"]), len(row["answer_model_b"])
        if a == b:  # shown first wins in both orders: A once, B once
            assert j["choice"] == "TIE"
            continue
        assert j["choice"] == ("A" if a > b else "B")
        # the concluding verdict token's probability, not the quoted example's nor the " B is shorter" token's
        assert j["confidence"] == pytest.approx(_p(-0.3, -1.5, -3.0), abs=1e-6)
        assert all("(quoted, left out)" in s["note"] for s in j["samples"])
