"""The registry of evaluations: one spec per pipeline, registered once; nothing above it compares pipeline names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from autorater_pipelines import registry
from autorater_pipelines.cli import main
from autorater_pipelines.evaluation.pipeline_spec import PipelineSpec

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "autorater_pipelines"


def test_the_registered_pipelines_and_their_specs() -> None:
    assert registry.names() == ("autosxs", "gecko", "arena")
    specs = registry.specs()
    assert [s.name for s in specs] == ["autosxs", "gecko", "arena"]
    assert [(s.title, s.row_file, s.a_run) for s in specs] == [
        ("AutoSxS", "judgments.jsonl", "an AutoSxS run"),
        ("Gecko", "results.jsonl", "a Gecko run"),
        ("Arena", "leaderboard.jsonl", "an Arena run"),
    ]
    assert registry.by_row_file() == {
        "judgments.jsonl": specs[0],
        "results.jsonl": specs[1],
        "leaderboard.jsonl": specs[2],
    }
    # each spec lives in its evaluation's own package
    assert registry.SPEC_MODULES == {name: f"autorater_pipelines.{name}.spec" for name in ("autosxs", "gecko", "arena")}


@pytest.mark.parametrize("name", registry.names())
def test_every_reference_of_a_spec_names_an_object(name: str) -> None:
    spec = registry.get(name)
    refs = spec.references()
    assert {"parameters", "validate_run", "pipeline", "steps", "dataframe", "run", "rescore", "report_context"} <= set(
        refs
    )
    for hook in refs:
        assert callable(spec.load(hook)) or hook in ("run", "steps"), (name, hook)
    assert spec.load("steps").__name__ == f"autorater_pipelines.{name}.steps"
    from autorater_pipelines.commands._run_spec import RunSpec

    assert isinstance(spec.load("run"), RunSpec)
    assert (PACKAGE / "report" / "templates" / spec.report_template).is_file()
    assert (REPO / "compiled" / f"{name}.yaml").is_file()
    assert spec.load("pipeline").name == f"{name}-template"  # the compiled pipelineInfo.name


def test_an_unknown_name_is_refused_naming_the_registered_ones() -> None:
    with pytest.raises(
        registry.UnknownPipelineError,
        match=r"unknown pipeline 'pointwise'; registered pipelines: \['autosxs', 'gecko', 'arena'\]",
    ):
        registry.get("pointwise")
    from autorater_pipelines.commands._common import validate_run

    # a third name is refused, never validated as one of the others
    with pytest.raises(
        ValueError, match=r"unknown pipeline 'pointwise'; registered pipelines: \['autosxs', 'gecko', 'arena'\]"
    ):
        validate_run("pointwise", {})
    with pytest.raises(ValueError, match="has no 'check_rows' hook"):
        registry.get("gecko").load("check_rows")
    with pytest.raises(ValueError, match="has no 'row_file' hook"):
        registry.get("gecko").load("row_file")


def test_a_registration_that_names_another_spec_is_refused(monkeypatch) -> None:
    monkeypatch.setitem(registry.SPEC_MODULES, "pointwise", "autorater_pipelines.gecko.spec")
    with pytest.raises(
        TypeError,
        match=r"autorater_pipelines.gecko.spec.SPEC must be a PipelineSpec named 'pointwise', got PipelineSpec\(name='gecko'",
    ):
        registry.get("pointwise")


@pytest.mark.parametrize("command", ["run", "submit", "params"])
def test_the_commands_offer_the_registered_pipelines(command: str, capsys) -> None:
    with pytest.raises(SystemExit):
        main([command, "nope"])
    assert "invalid choice: nope (choose from arena, autosxs, gecko)" in capsys.readouterr().err.replace("'", "")


def test_nothing_above_the_registry_compares_pipeline_names() -> None:
    """Issue 20's acceptance: ``grep -rn '"gecko"\\|"autosxs"' src/autorater_pipelines/{commands,report}`` finds none."""
    pattern = re.compile(r"""["'](autosxs|gecko)["']""")
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for folder in ("commands", "report")
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert found == []
    assert pattern.search('x == "gecko"') and pattern.search("x == 'autosxs'")  # the check can fail


def test_the_registry_and_the_specs_import_nothing_heavy() -> None:
    code = "import autorater_pipelines.registry as r; print(r.names())"
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True)
    imported = {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert not {"pydantic", "jinja2", "yaml", "pandas", "kfp"} & imported
    assert "autorater_pipelines.autosxs" not in imported  # names are known without importing an evaluation
    assert isinstance(registry.get("gecko"), PipelineSpec)
