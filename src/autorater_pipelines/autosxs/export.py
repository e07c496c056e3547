"""The AutoSxS metrics and export steps: aggregate the judgments, write them as JSONL, JSON or a BigQuery table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.autosxs.panel_metrics import is_panel, panel_metrics
from autorater_pipelines.evaluation.export import ExportResult, export_file, export_rows
from autorater_pipelines.pairwise.export import JUDGMENTS_BIGQUERY_FIELDS, check_judgments_format

__all__ = ["JUDGMENTS_BIGQUERY_FIELDS", "ExportResult", "aggregate_judgments", "export_judgments"]


def aggregate_judgments(
    *,
    judgments: Iterable[Mapping[str, Any]],
    human_preference_column: str = "",
    metrics_path: str | None = None,
) -> dict[str, Any]:
    """Compute AutoSxS metrics (see :func:`metrics.pairwise_metrics`) and optionally write them as JSON.

    A panel's judgments (rows with ``jurors``) also get the per-juror and agreement sections
    (:func:`~autorater_pipelines.autosxs.panel_metrics.panel_metrics`).

    ``judgments`` may be a stream: a re-iterable one (``io.JsonlFile(path)``) is read in one pass of running
    aggregates (memory grows by a few bytes per row: its choice, confidence and label) plus a quick pass looking
    for a panel's rows, which are then read whole.
    """
    result = pairwise_metrics(judgments, human_preference_column=human_preference_column or None)
    if isinstance(judgments, Sequence) or is_panel(judgments):  # a stream is held only when it is a panel's
        result.update(panel_metrics(judgments, human_preference_column=human_preference_column or None))
    if metrics_path:
        io.write_json(metrics_path, result)
    return result


def export_judgments(
    *,
    judgments: Sequence[Mapping[str, Any]] | None = None,
    judgments_path: str | None = None,
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
        judgments_path: Or the JSONL file of the judgments (local or ``gs://``), read as a stream (twice for
            ``bigquery``: the schema, then the rows) and never held: the same file and table.
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
    if judgments_path is not None:
        return export_file(
            judgments_path,
            fmt=fmt,
            destination=destination,
            table=table,
            fields=JUDGMENTS_BIGQUERY_FIELDS,
            project=project,
            bigquery_api_endpoint=bigquery_api_endpoint,
            what="AutoSxS judgments",
        )
    return export_rows(
        judgments or [],
        fmt=fmt,
        destination=destination,
        table=table,
        fields=JUDGMENTS_BIGQUERY_FIELDS,
        project=project,
        bigquery_api_endpoint=bigquery_api_endpoint,
        what="AutoSxS judgments",
    )
