"""The arena's parameters and pair schedule: refused before any call, with what to fix; the judge-call count."""

from __future__ import annotations

import json

import pytest
from arena_synthetic import arena_params, write_arena

from autorater_pipelines.arena.pairs import pairs_for_prompt
from autorater_pipelines.arena.preflight import validate_run
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError


@pytest.fixture
def arena(tmp_path):
    return write_arena(tmp_path, prompts=4)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"response_columns": {"only": "resp_m0"}}, r"response_columns: an arena ranks 2 or more models, got 1"),
        ({"pairing": "baseline"}, r"baseline: pairing 'baseline' needs a baseline: one of the models \['m0'"),
        ({"baseline": "m9"}, r"baseline: 'm9' is not one of the models"),
        ({"pairing": "round-robin"}, r"pairing: must be one of \['all', 'baseline', 'sampled'\], got 'round-robin'"),
        ({"bootstrap_rounds": 5000}, r"bootstrap_rounds must be an integer from 0 to 2000, got 5000"),
        ({"pairing": "sampled", "opponents_per_prompt": 6}, r"6 opponents per prompt, but each model has only 5"),
        ({"response_columns": {"m0": "resp_m0", "mx": "no_such_column"}}, r"no_such_column"),
        ({"id_columns": ["model_a"]}, r"id column 'model_a' is a field of every pair's judgment row"),
        ({"judgments_format": "csv"}, r"judgments_format: must be one of \['jsonl', 'json', 'bigquery'\], got 'csv'"),
        (
            {"judgments_format": "bigquery"},
            r"bigquery_destination_prefix: is required when judgments_format is 'bigquery'",
        ),
        ({"ties": "davidson"}, r"ties: must be one of \['half', 'rao_kupper'\], got 'davidson'"),
    ],
)
def test_bad_parameters_are_refused_naming_the_parameter(arena, overrides, message):
    with pytest.raises(InputError, match=message):
        validate_run(arena_params(*arena, **overrides))


def test_call_count_of_the_issue_example_suggests_sampled():
    # 20 models × 500 prompts, all pairs, both orders: 190 pairs × 500 prompts × 2 samples.
    from autorater_pipelines.arena.params import ArenaParams
    from autorater_pipelines.arena.preflight import call_count_note

    run = ArenaParams.parse(
        {
            "evaluation_dataset": "d.jsonl",
            "task": "question_answering",
            "id_columns": ["id"],
            "autorater_prompt_parameters": {"inference_instruction": "q"},
            "response_columns": {f"model-{i:02d}": f"r{i}" for i in range(20)},
        },
        source="parameters",
    )
    note = call_count_note(run, 190 * 500, model_pairs=190, prompts=500)
    assert note.startswith(
        "190,000 judge calls: 95,000 pairs (190 model pairs of 20 models × 500 prompts, pairing 'all') × 2 samples, both orders"
    )
    assert '"pairing": "sampled"' in note
    random = ArenaParams.parse(
        {
            **run.model_dump(include={"evaluation_dataset", "task", "id_columns", "response_columns"}),
            "autorater_prompt_parameters": {"inference_instruction": "q"},
            "autorater_parameters": {"flip": "random"},
        },
        source="parameters",
    )
    # flip "random": one order per pair, 1 sample unless given: half the calls.
    assert call_count_note(random, 190 * 500, model_pairs=190, prompts=500).startswith(
        "95,000 judge calls: 95,000 pairs (190 model pairs of 20 models × 500 prompts, pairing 'all') × 1 samples, "
        "one order per pair"
    )


def test_pair_schedules():
    models = ["c", "a", "b", "d"]
    assert pairs_for_prompt(models, "all") == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    assert pairs_for_prompt(models, "baseline", baseline="c") == [("a", "c"), ("b", "c"), ("c", "d")]
    drawn = pairs_for_prompt(models, "sampled", opponents_per_prompt=1, seed=3, prompt_key='["p1"]')
    assert drawn == pairs_for_prompt(models, "sampled", opponents_per_prompt=1, seed=3, prompt_key='["p1"]')
    assert all(a < b for a, b in drawn) and {m for p in drawn for m in p} == set(models)
    assert len(pairs_for_prompt(models, "sampled", opponents_per_prompt=3, prompt_key="x")) == 6  # all opponents


def test_run_refuses_bad_parameters_before_the_pipeline(arena, tmp_path, capsys):
    params = tmp_path / "params.json"
    params.write_text(json.dumps(arena_params(*arena, pairing="baseline")))
    code = main(["run", "arena", "--params", str(params), "--output-dir", str(tmp_path / "out")])
    assert code != 0
    assert "pairing 'baseline' needs a baseline" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("value", "shown"), [({"x": 1}, "{'x': 1} (an object)"), (True, "True (a boolean)")])
def test_run_refuses_a_response_cell_that_is_not_text(arena, tmp_path, capsys, value, shown):
    dataset, replay = arena
    rows = [json.loads(line) for line in dataset.read_text().splitlines()]
    rows[2]["resp_m1"] = value
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = tmp_path / "params.json"
    params.write_text(json.dumps(arena_params(dataset, replay)))
    code = main(["run", "arena", "--params", str(params), "--output-dir", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"line 3, column 'resp_m1': response_columns['m1'] 'resp_m1' holds {shown}, expected text" in err
    assert not (tmp_path / "out").exists()


def test_params_command_lists_the_arena_parameters(capsys):
    assert main(["params", "arena", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    text = json.dumps(listed)
    for key in ("response_columns", "pairing", "opponents_per_prompt", "bootstrap_rounds", "strong_verdict_weight"):
        assert key in text


def test_probability_preference_is_refused_by_the_arena(arena):
    """The arena ranks from votes: a weighted preference would be computed and ignored."""
    autorater = {"sampling_count": 2, "flip": True, "preference": "probability", "logprobs": 5}
    with pytest.raises(
        InputError,
        match=r"^autorater_parameters\.preference: preference 'probability' gives AutoSxS's weighted win rate; "
        r"arena computes its metrics from the votes only",
    ):
        validate_run(arena_params(*arena, autorater_parameters=autorater))
