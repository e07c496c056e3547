"""The generated pages of the docs site (docs/hooks.py, run by ``mkdocs build``): the parameter reference says what
``autorater params`` says — every parameter of the compiled templates and every key of the options dicts — with each
key's range from BOUNDS; the bounds table has every bound; the module map names every module."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from autorater_pipelines.commands.params import parameter_table
from autorater_pipelines.evaluation.parameters import BOUNDS

REPO = Path(__file__).resolve().parents[1]


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


@pytest.mark.parametrize("pipeline", ["autosxs", "gecko", "arena"])
def test_the_reference_lists_every_template_parameter_and_every_key(pipeline):
    page = hooks.parameter_reference(pipeline)
    inputs = yaml.safe_load((REPO / "compiled" / f"{pipeline}.yaml").read_text())["root"]["inputDefinitions"]
    for name, item in inputs["parameters"].items():
        [row] = [line for line in page.splitlines() if line.startswith(f"| `{name}` | {item['parameterType']} |")]
        required = "defaultValue" not in item and not item.get("isOptional")
        assert ("**required**" in row) == required, row
    dicts = [p for p in parameter_table(pipeline) if p.get("keys")]
    assert dicts, "no options dict found"
    for p in dicts:
        section = page.split(f"### `{p['name']}`\n", 1)[1].split("\n### ", 1)[0]
        assert [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")] == [
            k["name"] for k in p["keys"]
        ]


def test_the_parameters_page_has_a_section_for_every_registered_pipeline():
    page = (REPO / "docs" / "reference" / "parameters.md").read_text()
    rendered = hooks.on_page_markdown(page, None, None, None)
    assert "<!--" not in rendered
    for title, pipeline in (("AutoSxS", "autosxs"), ("Gecko", "gecko"), ("Arena", "arena")):
        section = rendered.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
        assert section.strip() == hooks.parameter_reference(pipeline).strip()
    assert "| `bootstrap_rounds` |" in rendered.split("\n## Arena\n", 1)[1]


def test_keys_carry_their_range_default_and_description_as_markdown():
    page = hooks.parameter_reference("autosxs")
    section = page.split("### `autorater_parameters`\n", 1)[1].split("\n### ", 1)[0]
    rows = {line.split("`")[1]: line for line in section.splitlines() if line.startswith("| `")}
    assert rows["sampling_count"].startswith("| `sampling_count` | integer | `2` | an integer from 1 to 64 | Samples")
    assert BOUNDS["max_concurrency"].describe() in rows["max_concurrency"]
    assert "| `null` |  |" in rows["verdict_pattern"]  # no range for a text option
    assert "``" not in page  # docstring markup rendered as markdown
    assert rows["verdict_pattern"].count("|") - rows["verdict_pattern"].count("\\|") == 6  # five cells


def test_the_bounds_table_has_every_bound():
    table = hooks.bounds_table()
    for name, bound in BOUNDS.items():
        assert f"| `{name}` | {bound.describe()} |" in table


def test_the_module_map_names_every_module():
    table = hooks.module_map()
    for path in (REPO / "src" / "autorater_pipelines").rglob("*.py"):
        parts = path.relative_to(REPO / "src").with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        assert f"| `{name}` | " in table, name
    assert "| `autorater_pipelines.commands.params` | `autorater params PIPELINE`" in table


def test_docstring_markup_becomes_markdown():
    text = "Uses ``max_tokens`` and :class:`~autorater_pipelines.models.GenerateConfig`\n    over lines."
    assert hooks.docstring_markdown(text) == "Uses `max_tokens` and `GenerateConfig` over lines."


@pytest.mark.parametrize(
    "page, marker",
    [
        ("reference/parameters.md", "<!-- parameter-references -->"),
        ("reference/checks.md", "<!-- bounds-table -->"),
        ("architecture.md", "<!-- module-map -->"),
    ],
)
def test_a_generated_table_says_so_to_readers_of_the_markdown_and_the_site_drops_the_note(page, marker):
    raw = (REPO / "docs" / page).read_text(encoding="utf-8")
    note = raw.split("<!-- offline -->\n", 1)[1].split("<!-- /offline -->", 1)[0]
    assert raw.index("<!-- /offline -->") < raw.index(marker)  # right before the table it explains
    assert "Reading this file outside the docs site?" in note and "docs/hooks.py" in note
    if page == "reference/parameters.md":
        assert "`autorater params autosxs` (or `gecko`, `arena`)" in note
    built = hooks.on_page_markdown(raw, None, None, None)
    assert "Reading this file outside" not in built and "<!-- offline -->" not in built and marker not in built
