"""Reading datasets and writing results: local paths, ``gs://`` objects and ``bq://`` BigQuery tables.

- :func:`read_dataset` reads a comma-separated list of JSONL/JSON/CSV/Parquet sources (local or
  ``gs://``, wildcards allowed) and BigQuery tables (``bq://project.dataset.table``) into a
  :class:`Dataset` whose rows remember their file and line; :class:`DatasetScan` reads the same list in passes,
  one row at a time; :func:`check_sources` makes the checks of such a list that need no request (what a dry run
  can check).
- :func:`require_columns`, :func:`check_unique_ids`, :func:`id_key` validate it before any model call; ids are
  compared as text (:func:`canonical_id_value`: ``7`` == ``"7"``), the same rule the ``replay/`` model matches by.
- :func:`write_jsonl`, :func:`write_json` write atomically; :func:`read_jsonl` reads JSONL back;
  :func:`iter_jsonl` and :class:`JsonlWriter` do the same row by row (memory bounded by one row).
- :func:`register_filesystem` / :func:`register_source_reader` plug in URI schemes; ``gs`` (:class:`GcsFileSystem`)
  and ``bq`` (:func:`read_bigquery_table`) are registered here. google-cloud-storage and google-cloud-bigquery are
  imported only when such a URI is used.
- :func:`parse_table_uri`, :func:`parse_destination_prefix`, :func:`judgments_table` validate and build BigQuery
  names; :func:`infer_schema` and :func:`load_rows_to_new_table` write rows to a new BigQuery table.
"""

from autorater_pipelines.io._bigquery import (
    BIGQUERY_EMULATOR_ENV,
    bigquery_client,
    bigquery_endpoint,
    infer_schema,
    load_rows_to_new_table,
    read_bigquery_table,
)
from autorater_pipelines.io._bqnames import (
    BigQueryTable,
    DestinationPrefix,
    check_column_names,
    judgments_table,
    parse_destination_prefix,
    parse_table_uri,
)
from autorater_pipelines.io._dataset import (
    Dataset,
    IdKey,
    UniqueIds,
    canonical_id_value,
    check_unique_ids,
    id_key,
    is_missing,
    require_columns,
)
from autorater_pipelines.io._formats import SUPPORTED_EXTENSIONS, surrogate_warnings_left_to_the_steps
from autorater_pipelines.io._fs import FileSystem, LocalFileSystem, filesystem_for, register_filesystem
from autorater_pipelines.io._gcs import STORAGE_EMULATOR_ENV, GcsFileSystem
from autorater_pipelines.io._jsonl import read_jsonl, write_json, write_jsonl
from autorater_pipelines.io._jsonsafe import to_jsonable
from autorater_pipelines.io._read import SourcePart, check_sources, read_dataset, register_source_reader
from autorater_pipelines.io._scan import DatasetScan, ScannedRow
from autorater_pipelines.io._stream import JsonArrayWriter, JsonlFile, JsonlWriter, iter_jsonl

register_filesystem("gs", GcsFileSystem())
register_source_reader("bq", read_bigquery_table, check=parse_table_uri)

__all__ = [
    "BIGQUERY_EMULATOR_ENV",
    "STORAGE_EMULATOR_ENV",
    "SUPPORTED_EXTENSIONS",
    "ScannedRow",
    "BigQueryTable",
    "Dataset",
    "DatasetScan",
    "DestinationPrefix",
    "FileSystem",
    "GcsFileSystem",
    "IdKey",
    "JsonArrayWriter",
    "JsonlFile",
    "JsonlWriter",
    "LocalFileSystem",
    "SourcePart",
    "UniqueIds",
    "bigquery_client",
    "bigquery_endpoint",
    "canonical_id_value",
    "check_column_names",
    "check_sources",
    "check_unique_ids",
    "filesystem_for",
    "id_key",
    "infer_schema",
    "is_missing",
    "iter_jsonl",
    "judgments_table",
    "load_rows_to_new_table",
    "parse_destination_prefix",
    "parse_table_uri",
    "read_bigquery_table",
    "read_dataset",
    "read_jsonl",
    "register_filesystem",
    "register_source_reader",
    "require_columns",
    "surrogate_warnings_left_to_the_steps",
    "to_jsonable",
    "write_json",
    "write_jsonl",
]
