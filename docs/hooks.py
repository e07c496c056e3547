"""MkDocs hook: pages generated from the code when the site is built, so they cannot fall behind it.

- ``<!-- parameter-references -->`` becomes one section (``## Title``) per registered pipeline (the registry's
  order), each with the tables of ``<!-- parameter-reference PIPELINE -->``;
- ``<!-- parameter-reference PIPELINE -->`` becomes the pipeline's parameter tables: every parameter of its compiled
  template (type, default, description) and every key of its options dicts (type, default, allowed range,
  description), from :func:`autorater_pipelines.commands.params.parameter_table` (what ``autorater params`` prints)
  and the ranges of :data:`autorater_pipelines.evaluation.parameters.BOUNDS`;
- ``<!-- bounds-table -->`` becomes the table of every numeric parameter's range (``BOUNDS``);
- ``<!-- module-map -->`` becomes a table of every module of the package with its docstring's summary;
- a ``<!-- offline -->`` … ``<!-- /offline -->`` note (for readers of the raw Markdown, who see only the marker:
  how to get the table without the site) is dropped.

tests/test_docs_reference.py checks what these render.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

_MARKER = re.compile(r"^<!-- parameter-reference (?P<pipeline>\w+) -->$", re.M)
_REPO = Path(__file__).resolve().parents[1]
_OFFLINE = re.compile(r"^<!-- offline -->\n.*?^<!-- /offline -->\n\n?", re.M | re.S)
"""A note for readers of the raw Markdown (the table below is generated): dropped from the site's pages."""


def on_page_markdown(markdown, page, config, files):  # noqa: D103 (the MkDocs hook signature)
    markdown = _OFFLINE.sub("", markdown)
    if "<!-- parameter-references -->" in markdown:
        markdown = markdown.replace("<!-- parameter-references -->", all_parameter_references())
    markdown = _MARKER.sub(lambda m: parameter_reference(m["pipeline"]), markdown)
    if "<!-- bounds-table -->" in markdown:
        markdown = markdown.replace("<!-- bounds-table -->", bounds_table())
    if "<!-- module-map -->" in markdown:
        markdown = markdown.replace("<!-- module-map -->", module_map())
    return markdown


def docstring_markdown(text: str) -> str:
    """Sphinx markup of a docstring as markdown on one line: ````x```` → ```x```, ``:class:`~a.B``` → ```B```."""
    text = re.sub(r":\w+:`~?([^`]+)`", lambda m: f"`{m[1].rsplit('.', 1)[-1]}`", text)
    return " ".join(text.replace("``", "`").split())


def _cell(text: str) -> str:
    return docstring_markdown(text).replace("|", "\\|")


def _json(value: object) -> str:
    return "`" + json.dumps(value, ensure_ascii=False).replace("|", "\\|") + "`"


def parameter_reference(pipeline: str) -> str:
    """The parameter tables of ``pipeline`` as markdown: its parameters, then one table per options dict."""
    from autorater_pipelines.commands.params import parameter_table
    from autorater_pipelines.evaluation.parameters import BOUNDS

    table = parameter_table(pipeline)
    lines = ["| parameter | type | default | description |", "|---|---|---|---|"]
    for p in table:
        default = "**required**" if p["required"] else _json(p.get("default"))
        lines.append(f"| `{p['name']}` | {p['type']} | {default} | {_cell(p['description'])} |")
    for p in table:
        if not p.get("keys"):
            continue
        lines += ["", f"### `{p['name']}`", ""]
        lines += ["| key | type | default | allowed | description |", "|---|---|---|---|---|"]
        for key in p["keys"]:
            bound = BOUNDS[key["name"]].describe() if key["name"] in BOUNDS else ""
            kind = key["type"].replace("|", "\\|")
            lines.append(
                f"| `{key['name']}` | {kind} | {_json(key['default'])} | {bound} | {_cell(key['description'])} |"
            )
    return "\n".join(lines) + "\n"


def all_parameter_references() -> str:
    """A ``## Title`` section with :func:`parameter_reference` for every registered pipeline, in registry order."""
    from autorater_pipelines import registry

    return "\n".join(f"## {spec.title}\n\n{parameter_reference(spec.name)}" for spec in registry.specs())


def bounds_table() -> str:
    """The range of every numeric parameter, in the words of the error messages."""
    from autorater_pipelines.evaluation.parameters import BOUNDS

    lines = ["| parameter | allowed |", "|---|---|"]
    lines += [f"| `{name}` | {bound.describe()} |" for name, bound in BOUNDS.items()]
    return "\n".join(lines) + "\n"


def _summary(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return _cell(doc.split("\n\n", 1)[0])


def module_map() -> str:
    """Every module of the package (components and pipelines included): docstring summaries."""
    lines = ["| module | what it holds |", "|---|---|"]
    for path in sorted((_REPO / "src" / "autorater_pipelines").rglob("*.py")):
        parts = path.relative_to(_REPO / "src").with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        lines.append(f"| `{name}` | {_summary(path)} |")
    return "\n".join(lines) + "\n"
