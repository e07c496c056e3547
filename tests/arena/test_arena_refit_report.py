"""An arena run refitted without model calls (``autorater rescore``), its report, and the DataFrame API."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from arena_synthetic import STRENGTHS, arena_params, write_arena

from autorater_pipelines import arena
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("arena-refit")
    dataset, replay = write_arena(tmp, prompts=40)
    params = arena_params(dataset, replay, baseline="m3")
    params_path = tmp / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp / "out"
    assert main(["run", "arena", "--params", str(params_path), "--output-dir", str(out), "--quiet"]) == 0
    replay.unlink()  # from here on, a model call could not be answered
    return out, params


@pytest.mark.pipeline
def test_rescore_refits_with_other_bootstrap_and_style_control_and_no_model_call(run, capsys):
    out, _ = run
    before = _read_jsonl(out / "leaderboard.jsonl")
    assert "score_style_controlled" not in before[0]
    options = '{"bootstrap_rounds": 1000, "seed": 7, "style_control": true}'
    assert main(["rescore", str(out), "--params", options]) == 0
    printed = capsys.readouterr().out
    assert "with no model calls" in printed
    assert "leaderboard.m0.score_ci_lower " in printed  # each changed figure on its own line, per model
    assert 'options: {"bootstrap_rounds": 1000, "seed": 7, "style_control": true}\n' in printed  # as given
    assert "style_coefficients " not in printed and "style_coefficients.length.coefficient " in printed
    for line in printed.splitlines():  # never a figure listed as changed that prints the same
        if " → " in line:
            assert line.split()[-3] != line.split()[-1], line
    assert "the earlier versions kept as leaderboard.1.jsonl, metrics.1.json" in printed
    after = _read_jsonl(out / "leaderboard.jsonl")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["computed_over"]["bootstrap_rounds"] == 1000 and metrics["computed_over"]["seed"] == 7
    assert metrics["rescore_options"]["model_calls"] == 0
    assert metrics["ranking_options"]["style_control"] is True and metrics["ranking_options"]["baseline"] == "m3"
    assert set(metrics["style_coefficients"]) == {"length", "headers", "lists", "bold"}
    assert all("score_style_controlled" in r for r in after)
    assert [r["score"] for r in after] == [r["score"] for r in before]  # the point fit is the same battles
    assert [r["score_ci_lower"] for r in after] != [r["score_ci_lower"] for r in before]
    assert (out / "metrics.1.json").exists() and (out / "leaderboard.1.jsonl").exists()  # the run's own, kept


@pytest.mark.pipeline
def test_rescore_refuses_an_unknown_option_and_a_bound(run, capsys):
    out, _ = run
    assert main(["rescore", str(out), "--params", '{"rounds": 5}']) != 0
    assert "unknown keys ['rounds']; valid keys: ['baseline', 'bootstrap_rounds'" in capsys.readouterr().err
    assert main(["rescore", str(out), "--params", '{"bootstrap_rounds": 5000}']) != 0
    assert "bootstrap_rounds must be an integer from 0 to 2000, got 5000" in capsys.readouterr().err


@pytest.mark.pipeline
def test_report_shows_the_leaderboard_intervals_heatmaps_and_what_it_is_computed_over(run):
    out, _ = run
    assert main(["report", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "<title>Arena report" in page
    for fig in ("fig-forest", "fig-win-rates", "fig-battles"):
        assert f'<figure id="{fig}">' in page
    for model in STRENGTHS:
        assert f'<tr data-model="{model}">' in page
    assert "What the numbers are computed over" in page and "bootstrap_unit" in page
    assert "Flagged pairs" in page
    board = _read_jsonl(out / "leaderboard.jsonl")
    row = page.split(f'<tr data-model="{board[0]["model"]}">', 1)[1].split("</tr>", 1)[0]
    wlt = f"{board[0]['wins']:g} / {board[0]['losses']:g} / {board[0]['ties']:g}"
    assert f'<td class="num">{board[0]["battles"]:g}</td><td>{wlt}</td>' in row and ".0 /" not in row
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["strong_verdict_count"] == 0
    note = (
        f"Battles: every judged sample is one ({metrics['battle_sample_count']} from {metrics['sample_count']} "
        f"samples, both presentation orders; {metrics['error_sample_count']} ERROR samples are not battles).</p>"
    )
    assert note in page and "strong verdicts" not in page  # no strong verdict: no sentence about them


def test_dataframe_api_gives_the_pipeline_s_leaderboard(tmp_path):
    dataset, replay = write_arena(tmp_path, prompts=20)
    df = pd.read_json(dataset, lines=True)
    params = arena_params(dataset, replay)
    leaderboard, judgments, metrics = arena.evaluate(
        df,
        task=params["task"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_columns=params["response_columns"],
        id_columns=["prompt_id"],
        autorater_model=params["autorater_model"],
        autorater_parameters={"sampling_count": 2},
        progress=False,
        bootstrap_rounds=50,
        seed=3,
    )
    assert len(judgments) == 15 * 20 and metrics["sample_count"] == 600
    assert list(leaderboard["model"])[0] == "m0" and list(leaderboard["model"])[-1] == "m5"
    again, _, _ = arena.evaluate(
        df,
        task=params["task"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_columns=params["response_columns"],
        id_columns=["prompt_id"],
        autorater_model=params["autorater_model"],
        progress=False,
        bootstrap_rounds=50,
        seed=3,
    )
    assert again.equals(leaderboard)
    with pytest.raises(InputError, match=r"pairing: must be one of"):
        arena.evaluate(
            df,
            task=params["task"],
            autorater_prompt_parameters=params["autorater_prompt_parameters"],
            response_columns=params["response_columns"],
            autorater_model=params["autorater_model"],
            pairing="every",
        )


@pytest.mark.pipeline
def test_a_run_writes_its_report_and_replaces_a_rescored_one(tmp_path):
    from autorater_pipelines.report._out_dir import MARKER_FILE

    dataset, replay = write_arena(tmp_path, prompts=6)
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(arena_params(dataset, replay)))
    out = tmp_path / "out"
    argv = ["run", "arena", "--params", str(params_path), "--output-dir", str(out), "--quiet"]
    assert main(argv) == 0
    page = (out / "report.html").read_text()
    assert "<title>Arena report" in page and str(out) in page  # named after OUT, not the staging folder
    assert "report.html" in json.loads((out / MARKER_FILE).read_text())["files"]
    assert main(["rescore", str(out), "--params", '{"bootstrap_rounds": 20}']) == 0
    assert "re-scored" in (out / "report.html").read_text()
    assert main(argv) == 0
    assert "re-scored" not in (out / "report.html").read_text()  # the new run's report, not the stale one
