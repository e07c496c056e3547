"""BigQuery through google-cloud-bigquery (imported lazily): read a table as a dataset, load rows into a new table.

Endpoint and credentials, decided when a client is created (never at import):

1. ``api_endpoint`` argument, else
2. the ``BIGQUERY_EMULATOR_HOST`` environment variable (``host:port`` or ``http://host:port``; the
   convention of BigQuery emulators, e.g. ``bqemulator``), else
3. Google's BigQuery API.

With an endpoint from 1 or 2 the client uses anonymous credentials; otherwise Application Default
Credentials (``gcloud auth application-default login`` locally, the service account on Vertex AI).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autorater_pipelines.errors import InputError
from autorater_pipelines.io._bqnames import BigQueryTable, check_column_names, parse_table_uri
from autorater_pipelines.io._formats import ParsedFile
from autorater_pipelines.io._jsonsafe import dumps, to_jsonable
from autorater_pipelines.io._read import SourcePart
from autorater_pipelines.redaction import redactor

__all__ = [
    "BIGQUERY_EMULATOR_ENV",
    "bigquery_client",
    "bigquery_endpoint",
    "infer_schema",
    "load_rows_to_new_table",
    "read_bigquery_table",
]

BIGQUERY_EMULATOR_ENV = "BIGQUERY_EMULATOR_HOST"
"""Environment variable naming a BigQuery emulator (``host:port``); read when a client is created."""

SchemaField = dict[str, Any]
"""A field in BigQuery's REST form: ``{"name", "type", "mode", "fields"?}`` (``fields`` for RECORD)."""


def bigquery_endpoint(api_endpoint: str | None = None) -> str | None:
    """Return the BigQuery endpoint override: ``api_endpoint``, else ``$BIGQUERY_EMULATOR_HOST``, else None.

    A value without a scheme gets ``http://`` (emulators speak plain HTTP on loopback).
    """
    value = (api_endpoint or os.environ.get(BIGQUERY_EMULATOR_ENV, "")).strip()
    if not value:
        return None
    return value if "://" in value else f"http://{value}"


def bigquery_client(project: str, *, api_endpoint: str | None = None, source: str = "project") -> Any:
    """Create a ``google.cloud.bigquery.Client`` for ``project`` (the project that runs and pays for jobs).

    Args:
        project: Project id for jobs.
        api_endpoint: Endpoint override (see the module docstring); None = ``$BIGQUERY_EMULATOR_HOST`` or Google.
        source: Parameter name for error messages.

    Raises:
        InputError: google-cloud-bigquery is not installed, or no credentials were found.

    """
    try:
        from google.api_core.client_options import ClientOptions
        from google.auth.credentials import AnonymousCredentials
        from google.auth.exceptions import DefaultCredentialsError
        from google.cloud import bigquery
    except ImportError as exc:  # the optional extra `cloud`
        raise InputError(
            f"BigQuery support needs google-cloud-bigquery: pip install 'autorater-pipelines[cloud]' ({exc})",
            source=source,
        ) from exc
    endpoint = bigquery_endpoint(api_endpoint)
    try:
        if endpoint:
            return bigquery.Client(
                project=project,
                credentials=AnonymousCredentials(),
                client_options=ClientOptions(api_endpoint=endpoint),
            )
        return bigquery.Client(project=project)
    except DefaultCredentialsError as exc:
        raise InputError(
            "no Google Cloud credentials for BigQuery; run `gcloud auth application-default login` (or run on "
            f"Vertex AI with a service account), or set {BIGQUERY_EMULATOR_ENV} to use an emulator",
            source=source,
        ) from exc


def _api_errors() -> tuple[type[Any], type[Any], type[Any]]:
    from google.api_core import exceptions

    return exceptions.NotFound, exceptions.Forbidden, exceptions.BadRequest


def read_bigquery_table(uri: str, *, api_endpoint: str | None = None) -> list[SourcePart]:
    """Read every row of ``bq://project.dataset.table`` (the ``bq`` source reader of :func:`read_dataset`).

    Rows are read with ``tabledata.list`` (no query job, nothing billed) through a client whose project is
    the table's. Values become JSON-compatible Python: RECORD → dict, REPEATED → list, TIMESTAMP/DATE →
    ISO 8601 text, NUMERIC → float, BYTES → base64 text. Row numbers count from 1 in table order.

    Raises:
        InputError: Bad URI, table or dataset not found, or permission denied; names the table.

    """
    table = parse_table_uri(uri)
    client = bigquery_client(table.project, api_endpoint=api_endpoint, source=uri.strip())
    not_found, forbidden, _ = _api_errors()
    try:
        rows = [to_jsonable(dict(row.items())) for row in client.list_rows(table.table_id)]
    except not_found as exc:
        raise InputError(
            f"table {table.table_id} not found ({exc.message}); check the project, dataset and table names",
            source="evaluation_dataset",
        ) from exc
    except forbidden as exc:
        raise InputError(
            f"permission denied reading {table.table_id} ({exc.message}); the caller needs "
            "bigquery.tables.getData (role BigQuery Data Viewer) on the table",
            source="evaluation_dataset",
        ) from exc
    return [SourcePart(table.uri, ParsedFile(list(enumerate(rows, start=1)), "row"))]


def _value_type(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    return "JSON"


def _types_column(types: set[str]) -> str:
    """A column's type from the types of its non-null values."""
    if not types:
        return "STRING"
    if types == {"INTEGER", "FLOAT"}:
        return "FLOAT"
    return types.pop() if len(types) == 1 else "JSON"


def infer_schema(
    rows: Iterable[Mapping[str, Any]], hints: Mapping[str, SchemaField] | None = None
) -> list[SchemaField]:
    """Build a BigQuery schema for JSON-compatible rows: one NULLABLE column per key, in first-seen order.

    Types: bool → BOOLEAN, int → INTEGER, float (or int and float mixed) → FLOAT, str → STRING; objects,
    arrays and columns mixing other types → JSON (values round-trip unchanged); a column that is always null
    → STRING. ``hints`` fix the field of a column; a hinted RECORD's ``fields`` are completed with any keys
    the rows' objects have beyond the hint, inferred the same way.

    Args:
        rows: The rows (after :func:`to_jsonable`).
        hints: Column name → field in REST form, e.g. ``{"samples": {"type": "RECORD", "mode": "REPEATED",
            "fields": [...]}}``.

    Returns:
        The schema as REST-form fields.

    """
    builder = _SchemaBuilder(hints)
    for row in rows:
        builder.add(row)
    return builder.schema()


class _SchemaBuilder:
    """:func:`infer_schema` one row at a time: per column, the set of value types seen (rows are not kept)."""

    def __init__(self, hints: Mapping[str, SchemaField] | None) -> None:
        self.hints = dict(hints or {})
        self.types: dict[str, set[str]] = {}
        self.records: dict[str, _SchemaBuilder] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        for name, value in row.items():
            types = self.types.setdefault(name, set())
            hint = self.hints.get(name)
            if hint is None:
                if value is not None:
                    types.add(_value_type(value))
                continue
            if hint.get("type") != "RECORD" or value is None:
                continue
            if name not in self.records:
                self.records[name] = _SchemaBuilder({f["name"]: f for f in hint.get("fields", [])})
            repeated = {"mode": "NULLABLE", **hint}["mode"] == "REPEATED"
            for record in value if repeated else [value]:
                if isinstance(record, Mapping):
                    self.records[name].add(record)

    def schema(self) -> list[SchemaField]:
        schema: list[SchemaField] = []
        for name, types in self.types.items():
            hint = self.hints.get(name)
            if hint is None:
                schema.append({"name": name, "type": _types_column(set(types)), "mode": "NULLABLE"})
                continue
            field = {"mode": "NULLABLE", **hint, "name": name}
            if field["type"] == "RECORD":
                field["fields"] = self.records[name].schema() if name in self.records else []
                known = {f["name"] for f in field["fields"]}
                field["fields"] += [f for f in hint.get("fields", []) if f["name"] not in known]
            schema.append(field)
        return schema


def _ndjson(rows: Sequence[Mapping[str, Any]]) -> bytes:
    redact = redactor()  # a BigQuery table is an output like any file: no credential in it
    return "".join(redact(dumps(row)) + "\n" for row in rows).encode("utf-8")


def load_rows_to_new_table(
    rows: Sequence[Mapping[str, Any]] | str,
    table: BigQueryTable,
    schema: Sequence[SchemaField],
    *,
    project: str = "",
    api_endpoint: str | None = None,
    description: str = "",
    source: str = "bigquery_destination_prefix",
) -> int:
    """Load rows into a table that must not exist yet, in one load job (all rows or none).

    The job uploads newline-delimited JSON with ``CREATE_IF_NEEDED`` + ``WRITE_EMPTY``: the table is created
    with ``schema`` when the job succeeds, and an existing non-empty table makes the job fail rather than
    being appended to or overwritten. The dataset must exist.

    Args:
        rows: JSON-compatible rows; every key must be a column of ``schema``. Or the path (local or ``gs://``) of
            a JSONL file of such rows written by :func:`write_jsonl`/:class:`JsonlWriter` (the same bytes the rows
            would be sent as), uploaded as it is, without holding it.
        table: The destination table.
        schema: REST-form fields (see :func:`infer_schema`).
        project: Project that runs the load job; empty = the table's project.
        api_endpoint: Endpoint override (see the module docstring).
        description: Table description.
        source: Parameter name for error messages.

    Returns:
        The number of rows loaded (0 for a file: its writer knows its count).

    Raises:
        InputError: A column name is invalid, the dataset does not exist, permission is denied, or
            BigQuery rejected the rows (the message holds BigQuery's errors).

    """
    check_column_names([f["name"] for f in schema], source=source)
    client = bigquery_client(project or table.project, api_endpoint=api_endpoint, source=source)
    from google.cloud import bigquery  # installed: bigquery_client names the extra when it is not

    not_found, forbidden, bad_request = _api_errors()
    dataset = f"{table.project}.{table.dataset}"
    try:
        client.get_dataset(dataset)
    except not_found as exc:
        raise InputError(
            f"BigQuery dataset {dataset} does not exist; create it first (bq mk --dataset "
            f"--location=LOCATION {table.project}:{table.dataset}) or name an existing dataset",
            source=source,
        ) from exc
    config = bigquery.LoadJobConfig(
        schema=[bigquery.SchemaField.from_api_repr(dict(f)) for f in schema],
        source_format=bigquery.SourceFormat.NEWLINE_DELIMITED_JSON,
        create_disposition=bigquery.CreateDisposition.CREATE_IF_NEEDED,
        write_disposition=bigquery.WriteDisposition.WRITE_EMPTY,
    )
    if description:
        config.destination_table_description = description
    try:
        if isinstance(rows, str):  # a JSONL file: uploaded as it is, streamed
            from autorater_pipelines.io._stream import open_read

            with open_read(rows) as handle:
                job = client.load_table_from_file(handle, table.table_id, job_config=config)
        else:
            job = client.load_table_from_file(io.BytesIO(_ndjson(rows)), table.table_id, job_config=config)
        job.result()
    except forbidden as exc:
        raise InputError(
            f"permission denied loading into {table.table_id} ({exc.message}); the caller needs "
            "bigquery.jobs.create on the job project and bigquery.tables.create/updateData on the dataset "
            "(roles BigQuery Job User and BigQuery Data Editor)",
            source=source,
        ) from exc
    except bad_request as exc:
        details = "; ".join(str(e.get("message", e)) for e in (getattr(exc, "errors", None) or [])) or exc.message
        raise InputError(f"BigQuery rejected the load into {table.table_id}: {details}", source=source) from exc
    return 0 if isinstance(rows, str) else len(rows)
