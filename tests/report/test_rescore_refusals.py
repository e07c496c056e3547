"""``autorater rescore`` refuses what it cannot re-score faithfully, before writing anything (issue 14):
another run in ``--output-dir``, a judgment row listed twice, a choice that is not a verdict."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from autorater_pipelines.cli import main


def _snapshot(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.rglob("*")}


@pytest.mark.parametrize("source_kind", ["autosxs", "gecko"])
def test_output_dir_holding_the_other_pipelines_run_is_refused_before_writing(
    quickstart_out, mixed_gecko_out, copy_out, tmp_path, capsys, source_kind
):
    source = quickstart_out if source_kind == "autosxs" else mixed_gecko_out
    other = copy_out(mixed_gecko_out if source_kind == "autosxs" else quickstart_out)
    before_source, before_other = _snapshot(source), _snapshot(other)

    code = main(["rescore", str(source), "--output-dir", str(other), "--params", "{}"])

    err = capsys.readouterr().err
    assert code == 2
    held = "results.jsonl" if source_kind == "autosxs" else "judgments.jsonl"
    assert str(other) in err and held in err and "would mix two runs" in err
    assert _snapshot(other) == before_other  # nothing written, nothing replaced
    assert _snapshot(source) == before_source


def test_output_dir_of_the_same_pipeline_keeps_every_file_it_replaces(quickstart_out, tmp_path, capsys):
    target = tmp_path / "rescored"
    assert (
        main(["rescore", str(quickstart_out), "--output-dir", str(target), "--params", '{"ties_as_half": true}']) == 0
    )
    first = {p.name: p.read_bytes() for p in target.iterdir()}
    assert json.loads(first["metrics.json"])["ties_as_half"] is True

    assert (
        main(["rescore", str(quickstart_out), "--output-dir", str(target), "--params", '{"ties_as_half": false}']) == 0
    )

    assert json.loads((target / "metrics.json").read_text())["rescore_options"]["ties_as_half"] is False
    for name in ("metrics.json", "judgments.jsonl", "error_messages.jsonl"):
        stem, ext = name.rsplit(".", 1)
        assert (target / f"{stem}.1.{ext}").read_bytes() == first[name], name


def _judgment_lines(out: Path) -> list[str]:
    return (out / "judgments.jsonl").read_text(encoding="utf-8").splitlines()


def test_a_judgment_row_listed_twice_is_refused_with_file_and_line(quickstart_out, copy_out, capsys):
    out = copy_out(quickstart_out)
    lines = _judgment_lines(out)
    (out / "judgments.jsonl").write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    before = _snapshot(out)

    code = main(["rescore", str(out), "--params", '{"ties_as_half": true}'])

    err = capsys.readouterr().err
    assert code == 2
    first_id = json.loads(lines[1])["question_id"]
    assert f"judgments.jsonl, line {len(lines) + 1}:" in err
    assert repr(first_id) in err and "also on line 2" in err
    assert _snapshot(out) == before


@pytest.mark.parametrize("where", ["row", "sample"])
def test_a_choice_that_is_not_a_verdict_is_refused_with_file_and_line(quickstart_out, copy_out, capsys, where):
    out = copy_out(quickstart_out)
    lines = _judgment_lines(out)
    row = json.loads(lines[2])
    if where == "row":
        row["choice"] = "Z"
    else:
        row["samples"][0]["choice"] = "Z"
    lines[2] = json.dumps(row)
    (out / "judgments.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = _snapshot(out)

    code = main(["rescore", str(out), "--params", "{}"])

    err = capsys.readouterr().err
    assert code == 2
    column = "choice" if where == "row" else "samples.choice"
    assert f"judgments.jsonl, line 3: {column} 'Z' is not one of" in err
    assert _snapshot(out) == before


def test_output_dir_holding_another_run_of_the_same_pipeline_is_refused(quickstart_out, copy_out, tmp_path, capsys):
    other = copy_out(quickstart_out)  # a run's own outputs (no rescore_options): another run, even of the same rows
    before = _snapshot(other)

    assert main(["rescore", str(quickstart_out), "--output-dir", str(other), "--params", "{}"]) == 2

    assert "holds the outputs of an AutoSxS run, not a re-scoring" in capsys.readouterr().err
    assert _snapshot(other) == before


def test_output_dir_holding_a_rescoring_of_other_rows_is_refused(quickstart_out, tmp_path, capsys):
    target = tmp_path / "rescored"
    assert main(["rescore", str(quickstart_out), "--output-dir", str(target), "--params", "{}"]) == 0
    lines = (target / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    (target / "judgments.jsonl").write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    before = _snapshot(target)
    capsys.readouterr()

    assert main(["rescore", str(quickstart_out), "--output-dir", str(target), "--params", "{}"]) == 2

    assert "holds a re-scoring of other rows" in capsys.readouterr().err
    assert _snapshot(target) == before


def test_output_dir_holding_files_autorater_did_not_write_is_refused_and_kept(quickstart_out, tmp_path, capsys):
    """As ``autorater run`` (issue 25): a non-empty --output-dir without a marker is not written into."""
    target = tmp_path / "mine"
    target.mkdir()
    (target / "metrics.json").write_text('{"mine": true}', encoding="utf-8")
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    before = _snapshot(target)

    code = main(["rescore", str(quickstart_out), "--output-dir", str(target), "--params", "{}"])

    err = capsys.readouterr().err
    assert code == 2
    assert f"{str(target)!r} is not empty (metrics.json, notes.txt) and holds no .autorater-outputs.json" in err
    assert _snapshot(target) == before
