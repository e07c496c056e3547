"""``autorater run autosxs`` with ``preference: "probability"``: recorded logprobs replay to the weighted win rate."""

from __future__ import annotations

import json
import math

import pytest

from autorater_pipelines.cli import main


def _answer(token: str, p_first: float) -> list[dict]:
    top = [{"token": "m", "logprob": math.log(p_first)}, {"token": "M", "logprob": math.log(1 - p_first)}]
    return [{"token": token, "logprob": math.log(p_first if token == "m" else 1 - p_first), "top_logprobs": top}]


@pytest.mark.pipeline
def test_replayed_logprobs_give_the_printed_weighted_win_rate(tmp_path, capsys):
    rows = [("r1", "m", 0.9), ("r2", "M", 0.3), ("r3", "m", None)]  # r3: no logprobs recorded, counted by its vote
    dataset, replay = tmp_path / "dataset.jsonl", tmp_path / "replay.jsonl"
    dataset.write_text(
        "".join(
            json.dumps({"id": i, "q": f"question {i}", "a": f"answer a {i}", "b": f"b {i}"}) + "\n" for i, _, _ in rows
        )
    )
    replay.write_text(
        "".join(
            json.dumps({"id": i, "flipped": False, "response": t, "logprobs": None if p is None else _answer(t, p)})
            + "\n"
            for i, t, p in rows
        )
    )
    params = {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "q"}},
        "response_column_a": "a",
        "response_column_b": "b",
        "autorater_model": f"replay/{replay}",
        "autorater_parameters": {
            "sampling_count": 1,
            "flip": False,
            "logprobs": 5,
            "preference": "probability",
            "verdict_pattern": "(m|M)",
            "verdict_map": {"m": "A", "M": "B"},
            "cache_dir": "off",
        },
    }
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / "out"
    assert main(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"]) == 0
    values = [0.9, 0.3, 1.0]  # by hand: P(m) of r1 and r2 (m = model A, shown first); r3 votes m
    mean = sum(values) / 3
    error = math.sqrt(sum((v - mean) ** 2 for v in values) / 2) / math.sqrt(3)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["autorater_model_a_weighted_win_rate"] == pytest.approx(mean, abs=1e-12)
    assert metrics["autorater_model_a_weighted_win_rate_standard_error"] == pytest.approx(error, abs=1e-12)
    assert metrics["preference_fallback_sample_count"] == 1
    printed = capsys.readouterr().out
    assert (
        f"model A weighted win rate {mean:.4%} (standard error {error:.4%}); 1 sample(s) without a verdict "
        "probability counted by their vote" in printed
    )
    report = (out / "report.html").read_text()
    assert "Model A weighted win rate" in report
    assert f"standard error {100 * error:.1f}%" in report
    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert [j["preference"] for j in judgments] == pytest.approx(values, abs=1e-12)
