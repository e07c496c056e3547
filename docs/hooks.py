"""MkDocs hook: a line ``<!-- parameter-reference TEMPLATE MODEL -->`` becomes that pipeline's parameter tables.

TEMPLATE is a compiled template relative to the repository root (``compiled/autosxs.yaml``), MODEL the dotted name
of its parameter model; the tables come from :func:`autorater_pipelines.evaluation.reference.render_markdown`.
``<!-- module-map -->`` becomes a table of every module with its docstring's summary, and
``<!-- bounds-table -->`` becomes the table of every numeric parameter's range (``render_bounds_markdown``).
"""

from __future__ import annotations

import re
from pathlib import Path

from autorater_pipelines.evaluation.reference import docstring_markdown, render_bounds_markdown, render_markdown

_MARKER = re.compile(r"^<!-- parameter-reference (?P<template>\S+) (?P<model>\S+) -->$", re.M)
_REPO = Path(__file__).resolve().parents[1]


def on_page_markdown(markdown, page, config, files):  # noqa: D103 (the MkDocs hook signature)
    markdown = _MARKER.sub(lambda m: render_markdown(str(_REPO / m["template"]), m["model"]), markdown)
    markdown = markdown.replace("<!-- bounds-table -->", render_bounds_markdown())
    return markdown.replace("<!-- module-map -->", module_map()) if "<!-- module-map -->" in markdown else markdown


def _summary(path: Path) -> str:
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return docstring_markdown(doc.split("\n\n", 1)[0]).replace("|", "\\|")


def module_map() -> str:
    """A markdown table of every module of the package (and of ``components/``, ``pipelines/``): docstring summaries."""
    roots = [_REPO / "src", _REPO]
    lines = ["| module | what it holds |", "|---|---|"]
    paths = sorted((_REPO / "src" / "autorater_pipelines").rglob("*.py"))
    paths += [p for d in ("components", "pipelines") if (_REPO / d).is_dir() for p in sorted((_REPO / d).glob("*.py"))]
    for path in paths:
        root = next(r for r in roots if path.is_relative_to(r))
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        lines.append(f"| `{name}` | {_summary(path)} |")
    return "\n".join(lines) + "\n"
