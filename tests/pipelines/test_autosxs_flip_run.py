"""``autorater run autosxs`` with ``flip: "random"`` and ``identical_responses: "tie"`` through the compiled template."""

from __future__ import annotations

import hashlib
import json

import pytest

from autorater_pipelines.cli import main


@pytest.mark.pipeline
def test_flip_random_and_identical_responses_through_the_pipeline(tmp_path, capsys):
    ids = ["r1", "r2", "r3", "r4"]
    dataset, replay = tmp_path / "dataset.jsonl", tmp_path / "replay.jsonl"
    rows = [{"id": i, "q": f"question {i}", "a": f"answer a {i}", "b": f"b {i}"} for i in ids]
    rows[3]["b"] = rows[3]["a"]  # r4: both models gave the same text
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # A judge that always names the response shown first; r4 is not recorded: a call for it would be an error row.
    first = json.dumps({"explanation": "the first one", "choice": "A"})
    replay.write_text(
        "".join(json.dumps({"id": i, "flipped": f, "response": first}) + "\n" for i in ids[:3] for f in (False, True))
    )
    params = {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "q"}},
        "response_column_a": "a",
        "response_column_b": "b",
        "autorater_model": f"replay/{replay}",
        "autorater_parameters": {"flip": "random", "seed": 11, "identical_responses": "tie", "cache_dir": "off"},
    }
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / "out"
    assert main(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out)]) == 0
    # By hand (docs/autosxs.md): rank the rows by sha256 of ["11", id]; the first 2 of 4 are shown swapped.
    keys = {i: hashlib.sha256(json.dumps(["11", i]).encode()).hexdigest() for i in ids}
    swapped = set(sorted(ids, key=keys.__getitem__)[:2])
    judgments = {j["id"]: j for j in map(json.loads, (out / "judgments.jsonl").read_text().splitlines())}
    assert {i: j["flipped"] for i, j in judgments.items()} == {i: i in swapped for i in ids}
    assert {i: [s["flipped"] for s in judgments[i]["samples"]] for i in ids[:3]} == {i: [i in swapped] for i in ids[:3]}
    # The first shown always wins: model B where swapped, model A elsewhere; r4 a TIE without a sample.
    assert {i: judgments[i]["choice"] for i in ids[:3]} == {i: "B" if i in swapped else "A" for i in ids[:3]}
    assert (judgments["r4"]["choice"], judgments["r4"]["samples"], judgments["r4"]["identical_responses"]) == (
        "TIE",
        [],
        True,
    )
    assert (out / "error_messages.jsonl").read_text() == ""
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["first_position_rate"], metrics["first_position_count"], metrics["decisive_sample_count"]) == (
        1.0,
        3,
        3,
    )
    assert metrics["identical_response_count"] == 1 and metrics["autorater_tie_rate"] == 0.25
    # 3/3: the Wilson lower bound is n / (n + z²) = 3 / 6.841459 = 0.4385 → "43.9%" in the report
    assert metrics["first_position_rate_ci_lower"] == pytest.approx(0.438503, abs=1e-6)
    page = (out / "report.html").read_text()
    assert 'data-key="first_position_rate" data-value="1.0">100.0%</td><td class="interval">95% CI 43.9%–100.0%' in page
    printed = capsys.readouterr().out
    assert "  first-shown response chosen 100.0% (3/3 A-or-B samples)\n" in printed
    assert "  identical responses 1 (TIE without a judge call)\n" in printed
