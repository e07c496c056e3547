"""Render a run's outputs into one self-contained HTML page.

The page inlines its CSS, its script and its figures (SVG) and embeds local images as ``data:``
URIs, so it opens offline and can be mailed or attached as a KFP ``HTML`` artifact. Templates are
Jinja2 in a sandbox with autoescaping on: every value from the data (responses, explanations,
prompts) is escaped; only the figures' SVG and the keyword markup, built here, are marked safe.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from autorater_pipelines import __version__, registry
from autorater_pipelines.redaction import redact
from autorater_pipelines.report._outputs import Kind, RunOutputs, given_options, load_files, load_outputs

__all__ = ["REPORT_FILE", "ArtifactReport", "render_report", "write_artifact_report", "write_report"]

REPORT_FILE = "report.html"
"""Default file name of the report inside the run's output directory."""

_ENV = SandboxedEnvironment(
    loader=jinja2.FileSystemLoader(str(Path(__file__).with_name("templates"))),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["cell"] = lambda value: (
    "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
)
"""Table cell text: strings as they are, other values as JSON (``["2"]``, ``false``), None empty."""

_CONTROL_PICTURES = {c: 0x2400 + c for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20))}
_CONTROL_PICTURES[0x7F] = 0x2421
"""C0 control characters (except tab, line feed, carriage return) and DEL, which HTML does not allow in a page
(a NUL is a parse error), shown as their Unicode control pictures (U+2400 ␀ …, U+2421 ␡) so the text stays
readable and says what the model wrote."""


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Union of the rows' keys, in first-seen order."""
    return list(dict.fromkeys(k for row in rows for k in row))


def _notes(outputs: RunOutputs) -> list[str]:
    notes = []
    if outputs.metrics_computed:
        notes.append("metrics.json was not found: the figures were computed from the rows by this report.")
    if isinstance(outputs.metrics.get("rescore_options"), Mapping):
        shown = ", ".join(f"{k} = {json.dumps(v)}" for k, v in given_options(outputs.metrics).items())
        notes.append(f"Metrics re-scored by `autorater rescore` without model calls: {shown or 'no option changed'}.")
    return notes


def render_report(
    outputs: RunOutputs,
    *,
    max_rows: int = 2000,
    id_columns: Sequence[str] | None = None,
    prompt_column: str | None = None,
    media_column: str | None = None,
    group_by: str | None = None,
    source: str | None = None,
) -> str:
    """The report of ``outputs`` as one HTML document.

    Args:
        outputs: A run's outputs (:func:`load_outputs`).
        max_rows: Most judgments / result rows shown in the browsable table.
        id_columns: Gecko only: columns identifying a row (default: detected).
        prompt_column: Gecko only: column of the generation prompt (default: detected).
        media_column: Gecko only: column of the image or video (default: detected).
        group_by: Gecko only: column to break final_score down by (default: the run's ``scoring.group_by``).
            (An option is passed to the pipeline's report context when its spec lists it in ``report_options``.)
        source: Where the run's outputs are, as named in the page title and heading (default: the absolute
            path of ``outputs.directory``; ``autorater run`` names its ``--output-dir``, not the staging folder
            the files were read from).
    """
    spec = registry.get(outputs.kind)
    given = {"id_columns": id_columns, "prompt_column": prompt_column, "media_column": media_column}
    given["group_by"] = group_by
    options = {name: value for name, value in given.items() if name in spec.report_options}
    context = spec.load("report_context")(outputs, max_rows=max_rows, **options)
    context.update(
        source=source or os.path.abspath(outputs.directory),
        version=__version__,
        generated="",
        notes=_notes(outputs),
        error_columns=_columns(outputs.errors),
    )
    return _ENV.get_template(spec.report_template).render(context).translate(_CONTROL_PICTURES)


def _write_atomic(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(redact(text))  # no credential in a page that gets mailed around
    os.replace(tmp, path)


def write_report(directory: str, output_path: str | None = None, **options: Any) -> str:
    """Build the report of the run in ``directory`` and write it atomically.

    Args:
        directory: A finished run's output directory (``judgments.jsonl`` or ``results.jsonl``, …).
        output_path: Where to write the HTML (default: ``directory/report.html``).
        **options: Passed to :func:`render_report` (``max_rows``, ``id_columns``, …).

    Returns:
        The path written.

    Raises:
        InputError: ``directory`` is not a run's output directory or a file in it cannot be read.
    """
    path = output_path or os.path.join(directory, REPORT_FILE)
    _write_atomic(path, render_report(load_outputs(directory), **options))
    return path


class ArtifactReport(NamedTuple):
    """What a pipeline's report step writes and logs.

    Attributes:
        outputs: The outputs the report was built from.
        categories: Confusion-matrix labels (``A``, ``B``, ``TIE``), or () without human labels.
        matrix: Human label (rows) × autorater choice (columns) counts over ``categories``.
    """

    outputs: RunOutputs
    categories: tuple[str, ...]
    matrix: list[list[int]]


def write_artifact_report(
    kind: Kind,
    *,
    rows_path: str,
    output_path: str,
    metrics_path: str | None = None,
    errors_path: str | None = None,
    **options: Any,
) -> ArtifactReport:
    """Build the report from a pipeline's artifact files (the entry point of the report components).

    Args:
        kind: A registered pipeline name (``autosxs``, ``gecko``).
        rows_path: Its row file: judgments (AutoSxS) or results (Gecko) JSONL.
        output_path: Where to write the HTML.
        metrics_path: The metrics JSON (None: computed from the rows).
        errors_path: The error messages JSONL, or None.
        **options: Passed to :func:`render_report`.

    Returns:
        The outputs read and, for AutoSxS with human labels, the confusion matrix to log (over the rows
        ``metrics.json`` counts in its rates).
    """
    outputs = load_files(kind, rows_path=rows_path, metrics_path=metrics_path, errors_path=errors_path)
    _write_atomic(output_path, render_report(outputs, **options))
    spec = registry.get(kind)
    if not spec.artifact_confusion:
        return ArtifactReport(outputs, (), [])
    categories, matrix = spec.load("artifact_confusion")(outputs)
    return ArtifactReport(outputs, categories, matrix)
