"""Arena with a panel of judges (``autorater_panel``): each battle is the panel's verdict."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from arena_synthetic import arena_params, write_arena
from test_arena_strength import _params as _strength_params
from test_arena_strength import _write as _write_strength

from autorater_pipelines.cli import main


def _run(params: dict, tmp_path: Path, name: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / name
    return main(["run", "arena", "--params", str(params_path), "--output-dir", str(out), "--quiet"]), out


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.pipeline
def test_a_panel_of_two_copies_and_an_absent_juror_ranks_as_the_one_judge(tmp_path, capsys):
    dataset, replay = write_arena(tmp_path, prompts=30, tie_share=0.2)
    copy = tmp_path / "copy.jsonl"
    shutil.copy(replay, copy)
    absent = tmp_path / "absent.jsonl"  # records nothing this run asks: abstains on every pair
    absent.write_text(json.dumps({"prompt_id": "none", "flipped": False, "response": "{}"}) + "\n")
    base = arena_params(dataset, replay, pairing="baseline", baseline="m3", bootstrap_rounds=0)
    code, single = _run(base, tmp_path, "single")
    assert code == 0
    panel = [f"replay/{replay}", f"replay/{copy}", f"replay/{absent}"]
    capsys.readouterr()
    code, out = _run({**base, "autorater_model": "", "autorater_panel": panel}, tmp_path, "panel")
    # the absent juror is held to --max-failed-share as a single judge would be: every sample failed
    assert code == 1
    printed = capsys.readouterr()
    assert f"error: juror 'replay/{absent}': no sample could be evaluated; see error_messages.jsonl" in printed.err
    assert f"(0 ERROR samples are not battles; juror ERROR samples: replay/{absent} 300)" in printed.out
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
    # Per juror: a copy's battles are the one judge's; the absent juror abstains on every pair.
    alone = json.loads((single / "metrics.json").read_text())
    assert metrics["panel_size"] == 3 and list(metrics["jurors"]) == panel
    for spec in panel[:2]:
        section = metrics["jurors"][spec]
        for key in ("sample_count", "battle_sample_count", "error_sample_count", "battle_count"):
            assert section[key] == alone[key], (spec, key)
        assert (section["vote_count"], section["abstention_count"]) == (len(one), 0)
    assert (metrics["jurors"][panel[2]]["vote_count"], metrics["jurors"][panel[2]]["abstention_count"]) == (0, len(one))
    assert metrics["jurors"][panel[2]]["battle_sample_count"] == 0
    agreement = metrics["juror_agreement"]
    assert agreement["pairwise_agreement"][panel[0]][panel[1]] == 1.0
    assert agreement["pairwise_agreement_count"][panel[0]][panel[1]] == len(one)
    assert agreement["pairwise_agreement_count"][panel[0]][panel[2]] == 0
    html = (out / "report.html").read_text()  # the report's panel section shows the same sections
    section = html[html.index('id="panel-jurors"') : html.index('id="panel-agreement"')]
    battles = int(alone["battle_count"])
    row = f"<td>{panel[0]}</td><td>{len(one)}</td><td>0</td><td>{alone['battle_sample_count']}</td>"
    assert row in section and f"<td>{battles}</td>" in section
    assert f"<td>{panel[2]}</td><td>0</td><td>{len(one)}</td>" in section
    assert '100.0% <span class="muted">(' + str(len(one)) + "; " in html
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


_LABEL = re.compile(r"\[\[(A>>B|A>B|A=B|B>A|B>>A)\]\]")


def _sample_verdict(text: str, flipped: bool) -> tuple[str, bool] | None:
    """(winner in model terms, strong) from a raw Arena-Hard answer; None = not a verdict of the five labels."""
    found = _LABEL.search(text)
    if found is None:
        return None
    label = found.group(1)
    position = "TIE" if label == "A=B" else label[0]
    winner = {"A": "B", "B": "A"}.get(position, position) if flipped else position
    return winner, ">>" in label


@pytest.mark.pipeline
def test_a_majority_panel_verdict_is_strong_when_most_voters_gave_it_strongly(tmp_path):
    dataset, replay, _ = _write_strength(tmp_path, prompts=12)
    recorded = _read_jsonl(replay)
    weak = tmp_path / "weak.jsonl"  # the same verdicts, never strong
    weaken = re.compile(r"\[\[(A|B)>>(A|B)\]\]")
    weak.write_text(
        "".join(json.dumps({**r, "response": weaken.sub(r"[[\1>\2]]", r["response"])}) + "\n" for r in recorded)
    )
    shutil.copy(replay, tmp_path / "copy.jsonl")
    panel = [f"replay/{replay}", f"replay/{tmp_path / 'copy.jsonl'}", f"replay/{weak}"]
    params = {**_strength_params(dataset, replay), "autorater_model": "", "autorater_panel": panel}
    params["bootstrap_rounds"] = 0
    code, out = _run(params, tmp_path, "panel")
    assert code == 0

    texts = {s: {} for s in panel}
    for spec, path in zip(panel, (replay, tmp_path / "copy.jsonl", weak), strict=True):
        for r in _read_jsonl(path):
            texts[spec][(r["prompt_id"], r["model_a"], r["model_b"])] = texts[spec].get(
                (r["prompt_id"], r["model_a"], r["model_b"]), []
            ) + [_sample_verdict(r["response"], r["flipped"])]
    expected_strong = expected_weight = 0
    for key in texts[panel[0]]:
        votes = []
        for spec in panel:
            samples = texts[spec][key]
            if None in samples:
                continue  # abstains
            winners = {w for w, _ in samples}
            verdict = winners.pop() if len(winners) == 1 else "TIE"
            strong = verdict != "TIE" and all(w == verdict and st for w, st in samples)
            votes.append((verdict, strong))
        if not votes:
            continue
        label, count = Counter(v for v, _ in votes).most_common(1)[0]
        verdict = label if count * 2 > len(votes) else "TIE"
        strong = verdict != "TIE" and sum(v == verdict and st for v, st in votes) * 2 > len(votes)
        expected_strong += 2 * strong
        expected_weight += 2 * (3 if strong else 1)
    metrics = json.loads((out / "metrics.json").read_text())
    assert expected_strong > 0
    assert (metrics["strong_verdict_count"], metrics["battle_count"]) == (expected_strong, expected_weight)
    assert metrics["jurors"][panel[2]]["strong_verdict_count"] == 0
    assert metrics["jurors"][panel[0]]["strong_verdict_count"] > 0
