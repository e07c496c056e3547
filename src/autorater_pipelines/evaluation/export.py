"""Exporting result rows, as both pipelines do: a JSONL or JSON file, plus a new BigQuery table on request.

AutoSxS exports its judgments (:func:`autorater_pipelines.autosxs.export_judgments`) and Gecko its result rows
(:func:`autorater_pipelines.gecko.export.export_results`) through :func:`export_rows`; each names its own table
(:func:`autorater_pipelines.io.judgments_table`) and its computed columns' BigQuery types.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines import io

__all__ = ["ExportResult", "export_file", "export_rows"]

logger = logging.getLogger(__name__)


class ExportResult(NamedTuple):
    """Where an export put the rows."""

    path: str
    """The file written (JSONL for ``jsonl`` and ``bigquery``, a JSON array for ``json``)."""
    bigquery_table: str
    """``bq://project.dataset.table`` of the new table for ``bigquery``; empty otherwise."""


def export_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    fmt: str,
    destination: str,
    table: io.BigQueryTable | None,
    fields: Mapping[str, dict[str, Any]],
    project: str = "",
    bigquery_api_endpoint: str | None = None,
    what: str,
) -> ExportResult:
    """Write ``rows`` to ``destination`` (a JSON array for ``json``, else JSONL) and, with a ``table``, load them.

    With a table, the schema is inferred first (``fields``: the fixed types of computed columns, see
    :func:`io.infer_schema`) and its column names checked before anything is written, so a bad column name
    leaves no file behind; the table is new (:func:`io.load_rows_to_new_table`: one load job, all rows or none).

    Args:
        rows: The rows; made JSON-compatible (:func:`io.to_jsonable`).
        fmt: ``jsonl``, ``json`` or ``bigquery`` (already checked).
        destination: File path (or ``gs://`` URI) for the file export.
        table: The new table for ``bigquery``; None otherwise.
        fields: BigQuery types of the columns the pipeline computes (REST form).
        project: Project that runs the load job; empty = the table's project.
        bigquery_api_endpoint: BigQuery endpoint override; None = ``$BIGQUERY_EMULATOR_HOST`` or Google's.
        what: What the rows are, for the table description and the log (e.g. ``AutoSxS judgments``).

    Raises:
        InputError: an invalid column name, a missing dataset, or a rejected load.
    """
    data = [io.to_jsonable(dict(r)) for r in rows]
    schema = None
    if table is not None:
        schema = io.infer_schema(data, fields)
        io.check_column_names([f["name"] for f in schema], source="bigquery_destination_prefix")
    if fmt == "json":
        io.write_json(destination, data)
    else:
        io.write_jsonl(destination, data)
    if table is None or schema is None:
        return ExportResult(destination, "")
    count = io.load_rows_to_new_table(
        data,
        table,
        schema,
        project=project,
        api_endpoint=bigquery_api_endpoint,
        description=f"{what} ({len(data)} rows) written by autorater-pipelines",
    )
    logger.info("loaded %d %s into %s", count, what, table.uri)
    return ExportResult(destination, table.uri)


def export_file(
    source: str,
    *,
    fmt: str,
    destination: str,
    table: io.BigQueryTable | None,
    fields: Mapping[str, dict[str, Any]],
    project: str = "",
    bigquery_api_endpoint: str | None = None,
    what: str,
) -> ExportResult:
    """:func:`export_rows` on the rows of a JSONL file, streamed: the same files and table, memory bounded by one row.

    With a ``table``, a first pass infers the schema (and checks its column names before anything is written);
    the table is loaded from the written JSONL file (the bytes :func:`export_rows` would send).

    Args:
        source: JSONL file of the rows (local or ``gs://``), e.g. a step's judgments.
        fmt: As :func:`export_rows`.
        destination: As :func:`export_rows`.
        table: As :func:`export_rows`.
        fields: As :func:`export_rows`.
        project: As :func:`export_rows`.
        bigquery_api_endpoint: As :func:`export_rows`.
        what: As :func:`export_rows`.

    Raises:
        InputError: as :func:`export_rows`, or a line of ``source`` that is not a JSON object (names file and line).
    """
    schema = None
    if table is not None:
        schema = io.infer_schema(io.iter_jsonl(source), fields)
        io.check_column_names([f["name"] for f in schema], source="bigquery_destination_prefix")
    with (io.JsonArrayWriter if fmt == "json" else io.JsonlWriter)(destination) as writer:
        for row in io.iter_jsonl(source):
            writer.write(row)
        count = writer.commit()
    if table is None or schema is None:
        return ExportResult(destination, "")
    io.load_rows_to_new_table(
        destination,
        table,
        schema,
        project=project,
        api_endpoint=bigquery_api_endpoint,
        description=f"{what} ({count} rows) written by autorater-pipelines",
    )
    logger.info("loaded %d %s into %s", count, what, table.uri)
    return ExportResult(destination, table.uri)
