"""The AutoSxS metrics and export steps: aggregate the judgments, write them as JSONL, JSON or a BigQuery table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.autosxs.params import check_judgments_format
from autorater_pipelines.evaluation.export import ExportResult, export_rows

__all__ = ["JUDGMENTS_BIGQUERY_FIELDS", "ExportResult", "aggregate_judgments", "export_judgments"]

_STRING, _INTEGER, _FLOAT, _BOOLEAN = (
    {"type": t, "mode": "NULLABLE"} for t in ("STRING", "INTEGER", "FLOAT", "BOOLEAN")
)
JUDGMENTS_BIGQUERY_FIELDS: dict[str, dict[str, Any]] = {
    "inference_instruction": _STRING,
    "inference_context": _STRING,
    "response_a": _STRING,
    "response_b": _STRING,
    "choice": _STRING,
    "confidence": _FLOAT,
    "explanation": _STRING,
    "complete": _BOOLEAN,
    "incomplete_reason": _STRING,
    "response_a_score": _FLOAT,
    "response_b_score": _FLOAT,
    "preference": _FLOAT,
    "preference_fallback_count": _INTEGER,
    "verdict_from_alternatives_count": _INTEGER,
    "flipped": _BOOLEAN,
    "identical_responses": _BOOLEAN,
    "uncalibrated_choice": _STRING,
    "samples": {
        "type": "RECORD",
        "mode": "REPEATED",
        "fields": [
            {"name": "sample_index", **_INTEGER},
            {"name": "flipped", **_BOOLEAN},
            {"name": "choice", **_STRING},
            {"name": "explanation", **_STRING},
            {"name": "raw_response", **_STRING},
            {"name": "error", **_STRING},
            {"name": "attempts", **_INTEGER},
            {"name": "cached", **_BOOLEAN},
            {"name": "note", **_STRING},
        ],
    },
    "input_token_count": _INTEGER,
    "output_token_count": _INTEGER,
}
"""BigQuery types of the judgment columns this package computes (REST form). Every other column (id columns,
the human preference column, other prompt parameters) takes its type from its values (see ``io.infer_schema``)."""


def aggregate_judgments(
    *,
    judgments: Sequence[Mapping[str, Any]],
    human_preference_column: str = "",
    metrics_path: str | None = None,
) -> dict[str, Any]:
    """Compute AutoSxS metrics (see :func:`metrics.pairwise_metrics`) and optionally write them as JSON."""
    result = pairwise_metrics(judgments, human_preference_column=human_preference_column or None)
    if metrics_path:
        io.write_json(metrics_path, result)
    return result


def export_judgments(
    *,
    judgments: Sequence[Mapping[str, Any]],
    judgments_format: str,
    destination: str,
    bigquery_destination_prefix: str = "",
    project: str = "",
    bigquery_api_endpoint: str | None = None,
) -> ExportResult:
    """Write the judgments in ``judgments_format`` and return where they are.

    ``bigquery`` loads every judgment row into a new table and also writes ``destination`` as JSONL. The table
    is ``<project>.<dataset>.[<table_prefix>_]judgments_<YYYYMMDD_HHMMSS>_<6 hex>`` (UTC time of the export;
    see :func:`io.judgments_table`); each export creates its own table in one load job (all rows or none) and
    never appends to or overwrites a table. The dataset must exist. Columns: every key of the judgment rows,
    in row order; computed columns have fixed types (:data:`JUDGMENTS_BIGQUERY_FIELDS`, ``samples`` is a
    REPEATED RECORD), the others are typed from their values (see :func:`io.infer_schema`).

    Args:
        judgments: Judgment rows.
        judgments_format: ``jsonl`` (one object per line), ``json`` (one array) or ``bigquery``.
        destination: File path (or ``gs://`` URI) for the export.
        bigquery_destination_prefix: ``project.dataset`` or ``project.dataset.table_prefix``; required for
            ``bigquery``, ignored otherwise.
        project: Project that runs (and pays for) the BigQuery load job; empty = the destination's project.
        bigquery_api_endpoint: BigQuery endpoint override; None = ``$BIGQUERY_EMULATOR_HOST`` or Google's.

    Returns:
        The file written and, for ``bigquery``, the table.

    Raises:
        InputError: an unsupported format, a missing or invalid ``bigquery_destination_prefix``, an invalid
            column name, a missing dataset, or a rejected load.
    """
    fmt = check_judgments_format(judgments_format)
    table = io.judgments_table(bigquery_destination_prefix) if fmt == "bigquery" else None
    return export_rows(
        judgments,
        fmt=fmt,
        destination=destination,
        table=table,
        fields=JUDGMENTS_BIGQUERY_FIELDS,
        project=project,
        bigquery_api_endpoint=bigquery_api_endpoint,
        what="AutoSxS judgments",
    )
