"""``autorater report`` and in-place ``autorater rescore`` never overwrite a file no autorater run wrote (issue 25)."""

from __future__ import annotations

import json

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.report._out_dir import MARKER_FILE, record_outputs


def test_report_output_refuses_an_existing_file_no_run_wrote(quickstart_out, copy_out, tmp_path, capsys):
    """Trial F3: another run's metrics.json, a user's file; --force replaces; a listed report.html is replaced."""
    out = copy_out(quickstart_out)
    other = tmp_path / "other"
    other.mkdir()
    (other / "metrics.json").write_text('{"theirs": 1}', encoding="utf-8")
    mine = tmp_path / "notes.html"
    mine.write_text("<p>mine</p>", encoding="utf-8")

    assert main(["report", str(out), "--output", str(other / "metrics.json")]) == 2
    err = capsys.readouterr().err
    assert "--output: " in err and "is named like a run's output file; the report is HTML" in err
    assert main(["report", str(out), "--output", str(tmp_path / "new.JSONL")]) == 2
    assert not (tmp_path / "new.JSONL").exists()
    assert main(["report", str(out), "--output", str(mine)]) == 2
    err = capsys.readouterr().err
    assert f"--output: {str(mine)!r} exists and was not written by an autorater run" in err and "--force" in err
    assert mine.read_text(encoding="utf-8") == "<p>mine</p>"
    assert (other / "metrics.json").read_text(encoding="utf-8") == '{"theirs": 1}'

    assert main(["report", str(out), "--output", str(mine), "--force"]) == 0
    assert mine.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "report.html").write_text("old", encoding="utf-8")
    record_outputs(str(listed), ["report.html"], "autorater run autosxs")
    assert main(["report", str(out), "--output", str(listed / "report.html")]) == 0
    assert (listed / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_report_in_a_directory_without_a_marker_keeps_the_users_report(quickstart_out, copy_out, capsys):
    """Trial F4: ``cp out/* backup/`` skips the marker; the user's own report.html there is not replaced."""
    out = copy_out(quickstart_out)
    (out / "report.html").write_text("<p>my edited report</p>", encoding="utf-8")

    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"OUT: {str(out / 'report.html')!r} exists and was not written by an autorater run" in err
    assert (out / "report.html").read_text(encoding="utf-8") == "<p>my edited report</p>"
    record_outputs(str(out), ["report.html"], "autorater run autosxs")
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "report.html" in json.loads((out / MARKER_FILE).read_text(encoding="utf-8"))["files"]


@pytest.mark.usefixtures("no_network")
def test_in_place_rescore_keeps_a_version_of_report_html(quickstart_out, copy_out, capsys):
    """Trial F4: in place, report.html is kept as report.1.html before it is rebuilt, as every other file is."""
    out = copy_out(quickstart_out)
    (out / "report.html").write_text("<p>my edited report</p>", encoding="utf-8")

    assert main(["rescore", str(out), "--params", '{"ties_as_half": true}']) == 0
    assert "report.1.html" in capsys.readouterr().out
    assert (out / "report.1.html").read_text(encoding="utf-8") == "<p>my edited report</p>"
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("flag", ["--media-column", "--id-columns", "--prompt-column"])
def test_report_refuses_a_column_the_results_do_not_have(mixed_gecko_out, tmp_path, capsys, flag):
    """Trial F10: ``--media-column nosuch`` gave a report with 0 thumbnails and no word, unlike ``--group-by``."""
    target = tmp_path / "gecko.html"

    assert main(["report", str(mixed_gecko_out), "--output", str(target), flag, "nosuch"]) == 2

    err = capsys.readouterr().err
    assert f"{flag}: 'nosuch' is not a column of results.jsonl; columns: [" in err
    assert not target.exists()


@pytest.mark.usefixtures("no_network")
def test_rescore_with_nothing_changed_writes_nothing_and_a_link_to_out_is_out(
    quickstart_out, copy_out, tmp_path, capsys
):
    """Trial F11: a repeated re-scoring wrote version copies of identical files; ``--output-dir LINK`` (a link to
    OUT) copied files onto themselves as if it were another directory."""
    out = copy_out(quickstart_out)
    assert main(["rescore", str(out), "--params", '{"ties_as_half": true}']) == 0
    before = sorted(p.name for p in out.iterdir())
    capsys.readouterr()

    assert main(["rescore", str(out), "--params", '{"ties_as_half": true}']) == 0
    assert f"nothing written: the files in {out} already hold this re-scoring" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == before

    link = tmp_path / "link"
    link.symlink_to(out)
    assert main(["rescore", str(out), "--params", '{"ties_as_half": false}', "--output-dir", str(link)]) == 0
    printed = capsys.readouterr().out
    assert "metrics.2.json" in printed and "judgments.1.jsonl" not in printed  # in place: only what changed
    assert not [p for p in out.iterdir() if p.name.endswith((".tmp", ".new"))]
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8")).get("ties_as_half") is not True
