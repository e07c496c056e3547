"""``autorater report`` and ``autorater rescore`` on the command line."""

from __future__ import annotations

import json

from autorater_pipelines.cli import main


def test_report_command_writes_and_prints_the_path(quickstart_out, copy_out, capsys):
    out = copy_out(quickstart_out)
    assert main(["report", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"AutoSxS report: {out / 'report.html'}"
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_report_command_gecko_with_options(mixed_gecko_out, tmp_path, capsys):
    target = tmp_path / "elsewhere" / "gecko.html"
    args = ["report", str(mixed_gecko_out), "--output", str(target), "--id-columns", "id", "--max-rows", "2"]
    assert main(args) == 0
    assert capsys.readouterr().out.strip() == f"Gecko report: {target}"
    page = target.read_text()
    assert (
        page.count('class="gecko-row item"') == 2
        and "Showing 2 of 3 rows: every row with a wrong or failed answer first" in page
    )


def test_report_command_bad_input(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "holds neither of judgments.jsonl (AutoSxS) and results.jsonl (Gecko)" in capsys.readouterr().err


def test_rescore_command_prints_what_changed(quickstart_out, copy_out, tmp_path, capsys, no_network):
    out = copy_out(quickstart_out)
    main(["report", str(out)])
    capsys.readouterr()
    params = tmp_path / "rescore.json"
    params.write_text(json.dumps({"ties_as_half": True}))
    assert main(["rescore", str(out), "--params", str(params)]) == 0
    printed = capsys.readouterr().out
    assert "with no model calls" in printed
    assert "9 figure(s) changed:" in printed  # A and B win rates with intervals, human win rates, the flag
    assert "  autorater_model_a_win_rate           0.4 → 0.6\n" in printed
    assert "  ties_as_half                         (absent) → true\n" in printed and "accuracy " not in printed
    assert "wrote in" in printed and "metrics.1.json" in printed and "report.html" in printed
    assert json.loads((out / "metrics.json").read_text())["ties_as_half"] is True
    assert "Metrics re-scored by `autorater rescore`" in (out / "report.html").read_text()  # rebuilt
    assert no_network == []


def test_rescore_command_inline_json_and_output_dir(mixed_gecko_out, tmp_path, capsys):
    target = tmp_path / "unmasked"
    args = ["rescore", str(mixed_gecko_out), "--params", '{"scoring": {"dependency_masking": false}}']
    assert main([*args, "--output-dir", str(target)]) == 0
    printed = capsys.readouterr().out
    assert "masked_questions" in printed and "1 → 0" in printed
    assert sorted(p.name for p in target.iterdir()) == [
        "error_messages.jsonl",
        "metrics.json",
        "results.jsonl",
        "rubrics.jsonl",
        "validations.jsonl",
    ]
    assert json.loads((mixed_gecko_out / "metrics.json").read_text())["masked_questions"] == 1  # untouched


def test_rescore_command_bad_params(quickstart_out, capsys):
    assert main(["rescore", str(quickstart_out), "--params", '{"ties": true}']) == 2
    assert "invalid re-scoring options for a autosxs run: ties=True: Extra inputs" in capsys.readouterr().err
    assert main(["rescore", str(quickstart_out), "--params", "{not json"]) == 2
    assert "--params: not valid JSON" in capsys.readouterr().err
    assert main(["rescore", str(quickstart_out), "--params", "missing.json"]) == 2
    assert "missing.json: file not found" in capsys.readouterr().err
