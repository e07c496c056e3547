"""CLI behaviour on bad files, bad output directories and undefined metrics (no pipeline runs)."""

import json
import re
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.commands import _autosxs_run

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


def _params(tmp_path, **overrides):
    params = json.loads((QUICKSTART / "params.json").read_text())
    params["evaluation_dataset"] = str(QUICKSTART / "dataset.jsonl")
    params["autorater_model"] = f"replay/{QUICKSTART / 'replay.jsonl'}"
    params.update(overrides)
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    return str(path)


def _run(params, out, capsys):
    code = main(["run", "autosxs", "--params", params, "--output-dir", str(out), "--quiet"])
    return code, capsys.readouterr().err


def test_params_file_that_is_not_utf8_or_is_a_directory(tmp_path, capsys):
    bad = tmp_path / "p.json"
    bad.write_bytes(b"\xff\xfe{}")
    code, err = _run(str(bad), tmp_path / "o", capsys)
    assert code == 2 and "not UTF-8 text" in err and "Traceback" not in err
    code, err = _run(str(tmp_path), tmp_path / "o", capsys)
    assert code == 2 and "is a directory; pass the PARAMS.json file" in err


@pytest.mark.parametrize(
    ("overrides", "where"),
    [
        ({"autorater_parameters": {"flip": None}}, "autorater_parameters.flip"),
        ({"id_columns": ["id", None]}, r"id_columns\[1\]"),
    ],
)
def test_a_null_inside_an_object_or_list_parameter_is_refused_before_the_run_naming_the_key(
    tmp_path, capsys, overrides, where
):
    # Hostile trial: kfp's local runner failed mid-run ("Value must be one of the following types ...").
    out = tmp_path / "o"
    code, err = _run(_params(tmp_path, **overrides), out, capsys)
    assert code == 2, err
    assert re.search(
        rf"params\.json: {where} is null: the KFP local runner cannot pass a null inside an object or list "
        "parameter; remove the key to use its default",
        err,
    ), err
    assert not out.exists()


def test_template_that_is_not_a_template(tmp_path, capsys):
    code = main(
        [
            "run",
            "autosxs",
            "--params",
            _params(tmp_path),
            "--output-dir",
            str(tmp_path / "o"),
            "--template",
            str(QUICKSTART / "dataset.jsonl"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "is not a compiled pipeline template" in err


def test_output_dir_problems_are_found_before_the_run(tmp_path, capsys):
    params = _params(tmp_path)
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    code, err = _run(params, a_file, capsys)
    assert code == 2 and "exists and is not a directory" in err
    out = tmp_path / "out"
    (out / "error_messages.jsonl").mkdir(parents=True)
    (out / "metrics.json").write_text('{"old": 1}')
    code, err = _run(params, out, capsys)
    assert code == 2 and "error_messages.jsonl' is a directory" in err
    assert (out / "metrics.json").read_text() == '{"old": 1}'  # nothing replaced
    code, err = _run(params, a_file / "nested", capsys)
    assert code == 2 and "is not a writable directory" in err


@pytest.mark.parametrize(
    "name",
    ["choice", "confidence", "samples", "sample_index", "response_a", "jurors", "panel_vote", "panel_preference_a"],
)
def test_columns_named_like_output_fields_are_refused(tmp_path, capsys, name):
    rows = [json.loads(line) for line in (QUICKSTART / "dataset.jsonl").read_text().splitlines()]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({**r, name: r["human_preference"]}) + "\n" for r in rows))
    code, err = _run(
        _params(tmp_path, evaluation_dataset=str(data), human_preference_column=name), tmp_path / "o", capsys
    )
    assert code == 2
    assert f"human_preference_column: column name {name!r} is also an output field of the judgments" in err


def test_a_missing_replay_file_fails_before_the_run(tmp_path, capsys):
    code, err = _run(
        _params(tmp_path, autorater_model="replay/" + str(tmp_path / "nope.jsonl")), tmp_path / "o", capsys
    )
    assert code == 2 and "nope.jsonl" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_vertex_autorater_without_project_or_key_fails_before_the_run(tmp_path, capsys):
    code, err = _run(_params(tmp_path, autorater_model="gemini-2.5-flash"), tmp_path / "o", capsys)
    assert code == 2 and "project" in err and "GEMINI_API_KEY" in err


def test_named_response_column_that_is_missing_is_a_typo_even_with_a_model(tmp_path, capsys):
    code, err = _run(
        _params(
            tmp_path,
            response_column_a="answer_modle_a",
            model_a="openai/x",
            model_a_prompt_parameters={"prompt": {"column": "question"}},
        ),
        tmp_path / "o",
        capsys,
    )
    assert code == 2 and "answer_modle_a" in err


def test_summary_prints_na_when_kappa_is_undefined(capsys):
    metrics = {
        "evaluation_count": 3,
        "judged_count": 3,
        "error_count": 0,
        "autorater_model_a_win_rate": 1.0,
        "autorater_model_b_win_rate": 0.0,
        "autorater_tie_rate": 0.0,
        "alignment_count": 3,
        "accuracy": 1.0,
        "f1_score": 1.0,
        "cohens_kappa": None,
    }
    _autosxs_run.print_summary(metrics)
    assert "Cohen's kappa n/a" in capsys.readouterr().out


def test_summary_says_how_many_rows_were_left_out_and_how_many_errors_came_from_the_cache(capsys):
    metrics = {
        "evaluation_count": 805,
        "judged_count": 792,
        "error_count": 0,
        "one_order_only_count": 13,
        "one_order_only_excluded": True,
        "autorater_model_a_win_rate": 0.5,
        "autorater_model_b_win_rate": 0.5,
        "autorater_tie_rate": 0.0,
        "model_call_attempt_count": 13,
        "cached_sample_count": 1597,
        "cached_error_sample_count": 4,
    }
    _autosxs_run.print_summary(metrics)
    out = capsys.readouterr().out
    assert "AutoSxS: 805 examples, 792 judged, 0 with errors" in out
    assert "13 rows judged in one order only: excluded" in out
    assert "cached samples 1597, 4 errors from cached answers that could not be parsed" in out
    assert "retry_unparseable" in out
