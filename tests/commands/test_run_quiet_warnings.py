"""``autorater run --quiet`` prints one line per kind of step warning, with its count.

Found by the newcomer trial: the DSG run printed 45 WARNING lines under ``--quiet`` (40 rubric warnings, one per
rubric row, and 5 missing recordings).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.commands._isolated import _QuietSink, warning_kind

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "gecko_quickstart"


def _kfp(level: str, message: str) -> str:
    return f"[KFP Executor 2026-12-01 18:15:42,839 {level}]: {message}\n"


def test_warnings_of_one_kind_are_counted_and_printed_once_at_the_end(capsys):
    log = io.StringIO()
    sink = _QuietSink(log)
    for item in ("tifa160_5", "tifa160_13", "tifa160_69"):
        sink.write(_kfp("WARNING", f"rubric of {{'item_id': '{item}'}}: question 3: ignored dependency '3' on itself"))
    sink.write(_kfp("WARNING", "rubric of {'item_id': 'tifa160_110'}: question 10 repeats 8 ('Are the toucans?')"))
    sink.write(_kfp("WARNING", "validator_parameters.logprobs is only used with questions_per_call=1; ignored"))
    sink.write(_kfp("INFO", "an info line"))
    assert capsys.readouterr().err == ""  # nothing while the run goes on
    sink.print_warnings()
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "WARNING ×4: rubric of {'item_id': 'tifa160_5'}: question 3: ignored dependency '3' on itself "
        "(and 3 more like it; the run without --quiet prints each)",
        "WARNING: validator_parameters.logprobs is only used with questions_per_call=1; ignored",
    ]
    assert log.getvalue().count("[KFP Executor") == 6  # the log file keeps every line


def test_warning_kinds_blank_the_ids_and_keep_the_words():
    a = warning_kind("WARNING", "rubric of {'id': '3'}: question 5 repeats 1 ('x')")
    b = warning_kind("WARNING", "rubric of {'id': '7'}: question 2: ignored dependency '2' on itself")
    c = warning_kind("WARNING", "gecko validation (replay/r.jsonl): request {'id': '1', 'question_id': '6'} failed: x")
    d = warning_kind("WARNING", "gecko validation (replay/r.jsonl): request {'id': '2', 'question_id': '7'} failed: y")
    assert a == b == ("WARNING", "rubric of _")
    assert c == d != a
    assert warning_kind("ERROR", "rubric of {'id': '3'}: q") != a


@pytest.mark.pipeline
def test_a_quiet_gecko_run_prints_one_line_per_warning_kind_with_its_count(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    rubrics = [json.loads(line) for line in (QUICKSTART / "rubric_replay.jsonl").read_text().splitlines()]
    rows = []
    for line, recorded in zip((QUICKSTART / "dataset.jsonl").read_text().splitlines(), rubrics, strict=True):
        row = json.loads(line)
        rubric = json.loads(recorded["response"])
        for i, qa in enumerate(rubric["qas"], start=1):
            qa["question_id"] = f"q{i}"
        rubric["qas"][0]["dependencies"] = ["q1"]  # on itself: a rubric warning per row
        rows.append({**row, "image": os.path.join(QUICKSTART, row["image"]), "rubric": rubric})
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = json.loads((QUICKSTART / "params.json").read_text())
    params.pop("rubric_generation_model")
    params.update(evaluation_dataset=str(dataset), rubrics_column="rubric")
    params["validator_parameters"] = {**params["validator_parameters"], "logprobs": 5}
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    code = main(["run", "gecko", "--params", str(path), "--output-dir", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("WARNING")]
    assert warnings == [
        "WARNING ×3: rubric of {'id': 'red-circle'}: question q1: ignored dependency 'q1' on itself "
        "(and 2 more like it; the run without --quiet prints each)",
        "WARNING: validator_parameters.logprobs is only used with questions_per_call=1; ignored",
    ], err


def test_a_warning_repeated_word_for_word_by_a_later_step_is_counted_once(capsys):
    # Hostile trial: two steps read the same dataset line and each warned about it: "WARNING ×2: … line 1 …".
    sink = _QuietSink(io.StringIO())
    line_1 = "d.jsonl, line 1: 1 lone UTF-16 surrogate escape(s) such as \\ud800 replaced by U+FFFD"
    sink.write(_kfp("WARNING", line_1))
    sink.write(_kfp("WARNING", line_1))
    sink.print_warnings()
    assert capsys.readouterr().err.splitlines() == [f"WARNING: {line_1}"]
    sink.write(_kfp("WARNING", line_1.replace("line 1", "line 7")))  # another line: another warning of the kind
    sink.print_warnings()
    assert capsys.readouterr().err.startswith("WARNING ×2: d.jsonl, line 1: ")


@pytest.mark.pipeline
def test_a_lone_surrogate_in_a_dataset_line_is_warned_about_once(tmp_path, capsys, caplog):
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(
        '{"id": "r1", "q": "x\\ud800y", "a": "4", "b": "5"}\n{"id": "r2", "q": "2+2", "a": "4", "b": "5"}\n'
    )
    answer = json.dumps({"explanation": "e", "choice": "A"})
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"id": i, "flipped": f, "response": answer}) + "\n" for i in ("r1", "r2") for f in (False, True)
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
        "autorater_parameters": {"cache_dir": "off"},
    }
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    code = main(["run", "autosxs", "--params", str(path), "--output-dir", str(tmp_path / "out"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    # Before: once from autorater run's own check of the rows, once from the step reading them again.
    logged = [r.getMessage() for r in caplog.records if "lone UTF-16 surrogate" in r.getMessage()]
    assert (captured.out + captured.err).count("lone UTF-16 surrogate") + len(logged) == 1, (captured.err, logged)
    assert f"WARNING: {dataset}, line 1: 1 lone UTF-16 surrogate escape(s)" in captured.err
