"""Identical responses in the arena (``identical_responses: "tie"``) and model names that read the same.

The judge is scripted on the emulator over real HTTP: the longer response wins, in Arena-Hard's label format. The
expected figures are worked out by hand in comments.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from autorater_pipelines import arena
from autorater_pipelines.arena.params import ArenaParams
from autorater_pipelines.arena.preflight import call_count_note
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import responses_in_prompt

QUIET = {"progress": False, "cache_dir": "off"}


def _longer_wins(request) -> str:
    shown = responses_in_prompt(request.prompt_text)
    assert set(shown) == {"A", "B"}, "not a judge prompt"
    label = "A>B" if len(shown["A"]) > len(shown["B"]) else "B>A"
    return f"Comparing the two.\nMy final verdict is: [[{label}]]"


def _rows(prompts: int = 4) -> list[dict]:
    # X and Y answer every prompt with the same text; Z's answer is longer (the judge prefers it).
    return [
        {"pid": f"p{i}", "q": f"Question {i}?", "X": f"same {i}", "Y": f"same {i}", "Z": f"a longer answer {i}"}
        for i in range(prompts)
    ]


def _params(dataset: Path, url: str, **judge: object) -> dict:
    return {
        "evaluation_dataset": str(dataset),
        "task": "arena_hard",
        "id_columns": ["pid"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "q"}},
        "response_columns": {"X": "X", "Y": "Y", "Z": "Z"},
        "autorater_model": "gemini-2.0-flash",
        "bootstrap_rounds": 0,
        "autorater_parameters": {"base_url": url, "cache_dir": "off", "identical_responses": "tie", **judge},
    }


@pytest.mark.pipeline
def test_run_ties_identical_pairs_without_counting_them_failed_or_unjudged(tmp_path, capsys):
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    params = tmp_path / "params.json"
    out = tmp_path / "out"
    with ModelEmulator(_longer_wins) as emulator:
        params.write_text(json.dumps(_params(dataset, emulator.url, flip="random")))
        code = main(["run", "arena", "--params", str(params), "--output-dir", str(out), "--max-failed-share", "0.2"])
        calls = emulator.call_count
    printed = capsys.readouterr().out
    assert code == 0
    # 3 model pairs × 4 prompts = 12 pairs, one order each; X-Y's 4 are identical: 8 calls.
    assert calls == 8
    assert (
        "8 judge calls: 12 pairs (3 model pairs of 3 models × 4 prompts, pairing 'all') × 1 samples, one order per "
        "pair; 4 identical pairs tied without a call"
    ) in printed
    assert (
        "Arena: 3 models, 8 judged pairs (+4 identical: tied without a judge call), 8 battle samples of 8 "
        "(0 ERROR samples are not battles), 12 battles weighted, 4 prompts"
    ) in printed
    assert "  4 identical pairs tied without a judge call (1 tie battle each, as a judged pair's samples)" in printed
    assert "not judged" not in printed and "ended with an error" not in printed
    assert (out / "error_messages.jsonl").read_text() == ""
    metrics = json.loads((out / "metrics.json").read_text())
    assert {k: metrics[k] for k in ("identical_pair_count", "identical_response_count", "unjudged_pair_count")} == {
        "identical_pair_count": 4,
        "identical_response_count": 4,
        "unjudged_pair_count": 0,
    }
    # By hand: X-Y 4 tie battles (weight 1 = 1 sample with flip random); Z beats X and Y on all 4 prompts.
    board = {r["model"]: r for r in map(json.loads, (out / "leaderboard.jsonl").read_text().splitlines())}
    counts = {m: (r["battles"], r["wins"], r["losses"], r["ties"]) for m, r in board.items()}
    assert counts == {"X": (8, 0, 4, 4), "Y": (8, 0, 4, 4), "Z": (8, 8, 0, 0)}
    assert metrics["battle_count"] == 12
    page = (out / "report.html").read_text()
    assert "4 identical pairs tied without a judge call (1 tie battle each" in page
    # autorater rescore reads the weight from the judgments (it has no judge parameters): the same battles.
    assert main(["rescore", str(out), "--params", '{"seed": 5}']) == 0
    again = json.loads((out / "metrics.json").read_text())
    assert (again["battle_count"], again["identical_battle_weight"], again["identical_response_count"]) == (12, 1, 4)


def test_an_identical_pair_weighs_as_many_tie_battles_as_a_judged_pair_has_samples():
    # flip true, sampling_count 2 (the default): a judged pair is 2 battles, so an identical pair is 2 tie battles.
    with ModelEmulator(_longer_wins) as emulator:
        leaderboard, _, metrics = arena.evaluate(
            pd.DataFrame(_rows()),
            **{k: v for k, v in _params(Path("unused"), emulator.url).items() if k != "evaluation_dataset"},
        )
        assert emulator.call_count == 16  # 8 judged pairs × 2 orders
    assert (metrics["identical_pair_count"], metrics["identical_battle_weight"], metrics["sample_count"]) == (4, 2, 16)
    # By hand: X-Y 4 prompts × 2 tie battles = 8 ties each; Z beats X and Y 4 × 2 times each.
    counts = leaderboard.set_index("model")[["battles", "wins", "losses", "ties"]].to_dict("index")
    assert counts == {
        "X": {"battles": 16.0, "wins": 0.0, "losses": 8.0, "ties": 8.0},
        "Y": {"battles": 16.0, "wins": 0.0, "losses": 8.0, "ties": 8.0},
        "Z": {"battles": 16.0, "wins": 16.0, "losses": 0.0, "ties": 0.0},
    }
    assert metrics["battle_count"] == 24.0


def test_when_every_pair_is_identical_they_are_ranked_as_ties_and_the_note_says_why():
    rows = [{k: v for k, v in r.items() if k != "Z"} for r in _rows()]
    params = {k: v for k, v in _params(Path("unused"), "").items() if k != "evaluation_dataset"}
    with ModelEmulator(_longer_wins) as emulator:
        params["autorater_parameters"]["base_url"] = emulator.url
        leaderboard, _, metrics = arena.evaluate(
            pd.DataFrame(rows), **{**params, "response_columns": {"X": "X", "Y": "Y"}}
        )
        assert emulator.call_count == 0
    # No pair was judged: 1 tie battle per identical pair (the weight of a judged pair is unknown).
    assert leaderboard.set_index("model")["ties"].to_dict() == {"X": 4.0, "Y": 4.0}
    assert leaderboard["score"].tolist() == [0.0, 0.0]
    assert (
        "every battle is a tie of identical responses (4 pairs, identical_responses: tie, no judge call): the scores "
        "are all equal and say nothing about the models"
    ) in metrics["notes"]


def _arena(**overrides: object) -> dict:
    return {
        "evaluation_dataset": "d.jsonl",
        "task": "question_answering",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": "q"},
        **overrides,
    }


def test_with_generated_models_the_call_count_is_an_upper_bound():
    run = ArenaParams.parse(
        _arena(
            response_columns={"X": "x"},
            models={"G": {"model": "gemini-2.0-flash", "prompt_parameters": {"prompt": "q"}}},
            autorater_parameters={"identical_responses": "tie"},
        ),
        source="parameters",
    )
    assert call_count_note(run, 10, model_pairs=1, prompts=10) == (
        "at most 20 judge calls: 10 pairs (1 model pairs of 2 models × 10 prompts, pairing 'all') × 2 samples, both "
        "orders; pairs whose generated responses are identical are tied without a call (identical_responses: tie)"
    )


NFC, NFD = unicodedata.normalize("NFC", "modèle"), unicodedata.normalize("NFD", "modèle")


MODEL = {"model": "gemini-2.0-flash", "prompt_parameters": {"prompt": "q"}}


@pytest.mark.parametrize(
    ("columns", "models", "message"),
    [
        ({"X": "a", "X ": "b"}, {}, "'X' (response_columns) and 'X ' (response_columns)"),
        ({"X": "a", "x": "b"}, {}, "'X' (response_columns) and 'x' (response_columns)"),
        ({NFC: "a", NFD: "b"}, {}, f"{NFC!r} (response_columns) and {NFD!r} (response_columns)"),
        ({"X": "a", "Y": "b"}, {" y": MODEL}, "'Y' (response_columns) and ' y' (models)"),
        ({"X": "a"}, {"G": MODEL, "g": MODEL}, "'G' (models) and 'g' (models)"),
    ],
)
def test_model_names_that_read_the_same_are_refused_naming_both(columns, models, message):
    source = "models" if "(models)" in message else "response_columns"
    expected = (
        f"{source}: model names {message} differ only in surrounding whitespace, letter case or Unicode normalization"
    )
    with pytest.raises(InputError, match=re.escape(expected)):
        ArenaParams.parse(_arena(response_columns=columns, models=models), source="parameters")


def test_run_refuses_names_that_read_the_same_before_any_call(tmp_path, capsys):
    params = tmp_path / "params.json"
    params.write_text(
        json.dumps(_arena(evaluation_dataset=str(tmp_path / "d.jsonl"), response_columns={"X": "a", "x": "b"}))
    )
    assert main(["run", "arena", "--params", str(params), "--output-dir", str(tmp_path / "out")]) != 0
    assert "model names 'X' (response_columns) and 'x' (response_columns) differ only" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
