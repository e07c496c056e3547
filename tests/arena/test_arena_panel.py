"""Arena with a panel of judges (``autorater_panel``): each battle is the panel's verdict."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from arena_synthetic import arena_params, write_arena

from autorater_pipelines.cli import main


def _run(params: dict, tmp_path: Path, name: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / name
    return main(["run", "arena", "--params", str(params_path), "--output-dir", str(out), "--quiet"]), out


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.pipeline
def test_a_panel_of_two_copies_and_an_absent_juror_ranks_as_the_one_judge(tmp_path):
    dataset, replay = write_arena(tmp_path, prompts=30, tie_share=0.2)
    copy = tmp_path / "copy.jsonl"
    shutil.copy(replay, copy)
    absent = tmp_path / "absent.jsonl"  # records nothing this run asks: abstains on every pair
    absent.write_text(json.dumps({"prompt_id": "none", "flipped": False, "response": "{}"}) + "\n")
    base = arena_params(dataset, replay, pairing="baseline", baseline="m3", bootstrap_rounds=0)
    code, single = _run(base, tmp_path, "single")
    assert code == 0
    panel = [f"replay/{replay}", f"replay/{copy}", f"replay/{absent}"]
    code, out = _run({**base, "autorater_model": "", "autorater_panel": panel}, tmp_path, "panel")
    assert code == 0
    one, many = _read_jsonl(single / "judgments.jsonl"), _read_jsonl(out / "judgments.jsonl")
    assert [j["choice"] for j in many] == [j["choice"] for j in one]  # 2 equal votes of 2 voters
    assert all([e["choice"] for e in j["jurors"]][2] == "ERROR" for j in many)
    # Each pair is the panel's verdict, as many battles as one juror's samples (2): counted from the one judge's rows.
    expected = {m: Counter() for m in {j["model_a"] for j in one} | {j["model_b"] for j in one}}
    for j in one:
        a, b = expected[j["model_a"]], expected[j["model_b"]]
        a["battles"] += 2
        b["battles"] += 2
        if j["choice"] == "TIE":
            a["ties"] += 2
            b["ties"] += 2
        else:
            winner, loser = (a, b) if j["choice"] == "A" else (b, a)
            winner["wins"] += 2
            loser["losses"] += 2
    board = {r["model"]: r for r in _read_jsonl(out / "leaderboard.jsonl")}
    for model, count in expected.items():
        assert [board[model][k] for k in ("battles", "wins", "losses", "ties")] == [
            count[k] for k in ("battles", "wins", "losses", "ties")
        ], model
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["battle_count"] == 2 * len(one)
    ranked = [r["model"] for r in _read_jsonl(single / "leaderboard.jsonl")]
    assert [r["model"] for r in _read_jsonl(out / "leaderboard.jsonl")] == ranked


def test_arena_refuses_a_bad_panel_naming_the_item(tmp_path, capsys):
    dataset, replay = write_arena(tmp_path, prompts=5)
    params = arena_params(dataset, replay, autorater_model="", autorater_panel=[f"replay/{replay}", "nosuch/judge"])
    code, out = _run(params, tmp_path, "bad")
    assert code != 0 and not out.exists()
    assert "autorater_panel[1]: unknown model provider 'nosuch'" in capsys.readouterr().err


def test_the_dataframe_api_judges_with_the_panel(tmp_path):
    import pandas as pd

    from autorater_pipelines import arena

    dataset, replay = write_arena(tmp_path, prompts=8)
    copy = tmp_path / "copy.jsonl"
    shutil.copy(replay, copy)
    params = arena_params(dataset, replay, bootstrap_rounds=0)
    df = pd.DataFrame(_read_jsonl(dataset))
    _, one, _ = arena.evaluate(
        df,
        task=params["task"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_columns=params["response_columns"],
        id_columns=["prompt_id"],
        progress=False,
        autorater_model=params["autorater_model"],
    )
    _, many, metrics = arena.evaluate(
        df,
        task=params["task"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_columns=params["response_columns"],
        id_columns=["prompt_id"],
        progress=False,
        autorater_panel=[f"replay/{replay}", f"replay/{copy}"],
    )
    assert list(many["choice"]) == list(one["choice"])
    assert [len(j) for j in many["jurors"]] == [2] * len(many)
    assert metrics["battle_count"] == 2 * len(one)


@pytest.mark.parametrize("name", ["jurors", "panel_vote", "panel_preference_a"])
def test_an_id_column_named_like_a_panel_field_is_refused(tmp_path, capsys, name):
    dataset, replay = write_arena(tmp_path, prompts=5)
    rows = _read_jsonl(dataset)
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(json.dumps({name: r.pop("prompt_id"), **r}) + "\n" for r in rows))
    panel = [f"replay/{replay}", f"replay/{replay.with_name('copy.jsonl')}"]
    shutil.copy(replay, replay.with_name("copy.jsonl"))
    params = arena_params(renamed, replay, id_columns=[name], autorater_model="", autorater_panel=panel)
    code, out = _run(params, tmp_path, "bad")
    assert code != 0 and not out.exists()
    assert f"id_columns[0]: column name {name!r} is also a field of the judgments" in capsys.readouterr().err
