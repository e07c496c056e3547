"""``autorater report`` and ``autorater rescore`` on the command line."""

from __future__ import annotations

import inspect
import json
import typing

import pytest

from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.cli import main
from autorater_pipelines.gecko import ScoringOptions
from autorater_pipelines.report._rescore import _AutosxsOptions, _GeckoOptions


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
    assert (
        "holds none of judgments.jsonl (AutoSxS), results.jsonl (Gecko) and leaderboard.jsonl (Arena)"
        in capsys.readouterr().err
    )


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
    page = (out / "report.html").read_text()  # rebuilt, showing the options as given (JSON), not the record
    assert "Metrics re-scored by `autorater rescore` without model calls: ties_as_half = true," in page
    assert "original" not in printed.split("figure(s) changed")[0] and "original =" not in page
    assert no_network == []


def test_rescore_command_inline_json_and_output_dir(mixed_gecko_out, tmp_path, capsys):
    target = tmp_path / "unmasked"
    args = ["rescore", str(mixed_gecko_out), "--params", '{"scoring": {"dependency_masking": false}}']
    assert main([*args, "--output-dir", str(target)]) == 0
    printed = capsys.readouterr().out
    assert "masked_questions" in printed and "1 → 0" in printed
    assert sorted(p.name for p in target.iterdir()) == [
        ".autorater-outputs.json",
        "error_messages.jsonl",
        "metrics.json",
        "results.jsonl",
        "rubrics.jsonl",
        "validations.jsonl",
    ]
    assert json.loads((mixed_gecko_out / "metrics.json").read_text())["masked_questions"] == 1  # untouched


def test_rescore_command_bad_params(quickstart_out, capsys):
    assert main(["rescore", str(quickstart_out), "--params", '{"ties": true}']) == 2
    assert (
        "invalid re-scoring options for an AutoSxS run: unknown keys ['ties']; valid keys: ['evaluation_dataset'"
        in capsys.readouterr().err
    )
    assert main(["rescore", str(quickstart_out), "--params", "{not json"]) == 2
    assert "--params: not valid JSON" in capsys.readouterr().err
    assert main(["rescore", str(quickstart_out), "--params", "missing.json"]) == 2
    assert "missing.json: file not found" in capsys.readouterr().err
    assert main(["rescore", str(quickstart_out), "--params", '{"ties_as_half": true, "ties_as_half": false}']) == 2
    assert "--params: has the key 'ties_as_half' twice in one object" in capsys.readouterr().err


def test_rescore_help_lists_every_option_with_its_default(capsys):
    """`autorater rescore --help` names every option the option models accept, with the default a run uses."""
    with pytest.raises(SystemExit) as done:
        main(["rescore", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    from autorater_pipelines.arena.params import RankingOptions

    for name in (*_AutosxsOptions.model_fields, *_GeckoOptions.model_fields, *RankingOptions.model_fields):
        assert name in lines, f"rescore --help does not list {name!r}"
    assert "(default 100)" in lines["bootstrap_rounds"] and RankingOptions().bootstrap_rounds == 100
    run_defaults = inspect.signature(pairwise_metrics).parameters  # what a run computed its metrics with
    for flag in ("ties_as_half", "include_incomplete"):
        assert f"true/false (default {json.dumps(run_defaults[flag].default)})" in lines[flag]
    assert "one presentation order" in lines["include_incomplete"]
    for name, field in ScoringOptions.model_fields.items():
        default = json.dumps(field.default)
        assert f"(default {default})" in lines[name] or f"{default} (default)" in lines[name], lines[name]
        for choice in typing.get_args(field.annotation):
            if isinstance(choice, str):
                assert json.dumps(choice) in lines[name]


def test_top_level_and_report_help_name_every_registered_pipeline(capsys):
    from autorater_pipelines import registry

    for argv in (["--help"], ["report", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = " ".join(capsys.readouterr().out.split())
        assert "AutoSxS and Gecko" not in text
        for spec in registry.specs():
            assert spec.name in text.lower() or spec.title in text, (argv, spec.name)
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert "leaderboard.jsonl" in capsys.readouterr().out


def test_a_null_that_became_an_object_is_listed_as_its_keys():
    from autorater_pipelines.report import changes

    found = changes({"style": None, "n": 1}, {"style": {"length": {"c": 0.5}}, "n": 1})
    assert found == [("style.length.c", None, 0.5)]
