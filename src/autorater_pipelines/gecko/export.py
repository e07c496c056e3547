"""Exporting Gecko result rows: a JSONL or JSON file, or a new BigQuery table as AutoSxS's judgments export does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.export import ExportResult, export_rows

__all__ = ["OUTPUT_FORMATS", "RESULTS_BIGQUERY_FIELDS", "ExportResult", "check_output_format", "export_results"]

OUTPUT_FORMATS = ("jsonl", "json", "bigquery")
"""Values of ``output_format``."""

_STRING, _INTEGER, _FLOAT = ({"type": t, "mode": "NULLABLE"} for t in ("STRING", "INTEGER", "FLOAT"))
RESULTS_BIGQUERY_FIELDS: dict[str, dict[str, Any]] = {
    "keywords": _STRING,
    "final_score": _FLOAT,
    "keyword_coverage": _FLOAT,
    "questions_scored": _INTEGER,
    "parse_failures": _INTEGER,
    "missing_answers": _INTEGER,
    "qa_results": {
        "type": "RECORD",
        "mode": "REPEATED",
        "fields": [
            {"name": "question_id", **_STRING},
            {"name": "question", **_STRING},
            {"name": "question_type", **_STRING},
            {"name": "expected", **_STRING},
            {"name": "verdict", **_STRING},
            {"name": "score", **_FLOAT},
            {"name": "status", **_STRING},
            {"name": "raw", **_STRING},
            {"name": "keyword_id", **_INTEGER},
            {"name": "probability", **_FLOAT},
        ],
    },
}
"""BigQuery types of the result columns Gecko computes (REST form). Other columns (the dataset's, and
``qa_results`` keys not listed: ``choices``, ``votes``, ``dependencies``, ``error`` …) take their type from their
values (:func:`autorater_pipelines.io.infer_schema`: lists and objects become JSON)."""


def check_output_format(output_format: str, bigquery_destination_prefix: str = "") -> str:
    """Return the lower-cased ``output_format``; with ``bigquery``, check ``bigquery_destination_prefix`` too.

    Raises:
        InputError: an unsupported format, or a missing or invalid prefix for ``bigquery``.

    """
    fmt = (output_format or "jsonl").strip().lower()
    if fmt not in OUTPUT_FORMATS:
        raise InputError(
            f"unsupported output_format {output_format!r}; valid: {list(OUTPUT_FORMATS)}", source="output_format"
        )
    if fmt == "bigquery":
        io.parse_destination_prefix(bigquery_destination_prefix, format_parameter="output_format")
    return fmt


def export_results(
    rows: Sequence[Mapping[str, Any]],
    *,
    output_format: str,
    destination: str,
    bigquery_destination_prefix: str = "",
    project: str = "",
    bigquery_api_endpoint: str | None = None,
) -> ExportResult:
    """Write the result rows in ``output_format`` and return where they are.

    ``bigquery`` loads every row into a new table ``<project>.<dataset>.[<table_prefix>_]results_<YYYYMMDD_HHMMSS>_
    <6 hex>`` (UTC time of the export) in one load job — all rows or none, never appended to or overwriting a
    table; the dataset must exist — and also writes ``destination`` as JSONL. Columns: every key of the rows;
    ``qa_results`` is a REPEATED RECORD (:data:`RESULTS_BIGQUERY_FIELDS`).

    Args:
        rows: Result rows (:func:`autorater_pipelines.gecko.score`).
        output_format: ``jsonl``, ``json`` or ``bigquery``.
        destination: File path (or ``gs://`` URI) for the file export.
        bigquery_destination_prefix: ``project.dataset`` or ``project.dataset.table_prefix`` (``bigquery`` only).
        project: Project that runs the load job; empty = the destination's project.
        bigquery_api_endpoint: BigQuery endpoint override; None = ``$BIGQUERY_EMULATOR_HOST`` or Google's.

    Returns:
        The file written and, for ``bigquery``, the table.

    Raises:
        InputError: an unsupported format, a missing or invalid prefix, an invalid column name, a missing
            dataset, or a rejected load.

    """
    fmt = check_output_format(output_format, bigquery_destination_prefix)
    table = None
    if fmt == "bigquery":
        table = io.judgments_table(bigquery_destination_prefix, kind="results", format_parameter="output_format")
    return export_rows(
        rows,
        fmt=fmt,
        destination=destination,
        table=table,
        fields=RESULTS_BIGQUERY_FIELDS,
        project=project,
        bigquery_api_endpoint=bigquery_api_endpoint,
        what="Gecko results",
    )
