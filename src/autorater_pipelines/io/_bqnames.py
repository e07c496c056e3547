r"""BigQuery names: ``bq://project.dataset.table`` URIs, ``bigquery_destination_prefix`` and column names.

Every name is checked here, before any client is created, against BigQuery's documented rules
(https://cloud.google.com/bigquery/docs/tables#table_naming, ``.../datasets#dataset-naming``,
``.../schemas#column_names``, https://cloud.google.com/resource-manager/docs/creating-managing-projects):

- project: 6–30 characters, lowercase letters, digits and hyphens, starting with a letter and not ending
  with a hyphen; a domain-scoped project (``example.com:my-project``) is accepted.
- dataset: 1–1024 letters (ASCII), digits and underscores.
- table: 1–1024 UTF-8 bytes of letters, digits, underscores, hyphens and spaces (``\w``, ``-``, space).
- column: 1–300 characters of letters, digits, underscores, hyphens, spaces and ``&%=+:'<>#|``
  (BigQuery's "flexible column names"), not starting with a reserved prefix (``_TABLE_``, ``_FILE_``,
  ``_PARTITION``, ``_ROW_TIMESTAMP``, ``__ROOT__``, ``_COLIDENTIFIER``); names are case-insensitive, so
  ``ID`` and ``id`` clash.

No google-cloud import happens in this module.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Iterable
from typing import NamedTuple

from autorater_pipelines.errors import InputError

__all__ = [
    "BigQueryTable",
    "DestinationPrefix",
    "check_column_names",
    "judgments_table",
    "parse_destination_prefix",
    "parse_table_uri",
]

_PROJECT = re.compile(r"^(?:[a-z0-9][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_DATASET = re.compile(r"^[A-Za-z0-9_]{1,1024}$")
_TABLE = re.compile(r"^[\w\- ]+$")
_COLUMN = re.compile(r"^[\w\- &%=+:'<>#|]{1,300}$")
_RESERVED_COLUMN_PREFIXES = ("_TABLE_", "_FILE_", "_PARTITION", "_ROW_TIMESTAMP", "__ROOT__", "_COLIDENTIFIER")
_MAX_TABLE_BYTES = 1024

JUDGMENTS_TABLE_SUFFIX = "judgments"
"""Middle part of the name of every exported judgments table (see :func:`judgments_table`)."""


class BigQueryTable(NamedTuple):
    """A fully qualified BigQuery table."""

    project: str
    dataset: str
    table: str

    @property
    def table_id(self) -> str:
        """``project.dataset.table``, the form google-cloud-bigquery accepts."""
        return f"{self.project}.{self.dataset}.{self.table}"

    @property
    def uri(self) -> str:
        """``bq://project.dataset.table``, the form of ``evaluation_dataset`` and ``evaluation_dataset_path``."""
        return f"bq://{self.table_id}"


class DestinationPrefix(NamedTuple):
    """A parsed ``bigquery_destination_prefix``: ``project.dataset`` or ``project.dataset.table_prefix``."""

    project: str
    dataset: str
    table_prefix: str
    """Empty when the prefix names only the dataset."""


def _check_project(project: str, *, value: str, source: str, expected: str) -> None:
    if not _PROJECT.match(project):
        raise InputError(
            f"invalid project id {project!r} in {value!r}; a project id has 6-30 lowercase letters, digits or "
            f"hyphens and starts with a letter (expected {expected})",
            source=source,
        )


def _check_dataset(dataset: str, *, value: str, source: str, expected: str) -> None:
    if not _DATASET.match(dataset):
        raise InputError(
            f"invalid dataset name {dataset!r} in {value!r}; dataset names use only letters, digits and "
            f"underscores (expected {expected})",
            source=source,
        )


def _check_table(table: str, *, value: str, source: str, what: str = "table name") -> None:
    if not _TABLE.match(table) or len(table.encode("utf-8")) > _MAX_TABLE_BYTES:
        raise InputError(
            f"invalid {what} {table!r} in {value!r}; table names use letters, digits, underscores, hyphens "
            f"and spaces, at most {_MAX_TABLE_BYTES} bytes",
            source=source,
        )


def parse_table_uri(uri: str, *, source: str = "evaluation_dataset") -> BigQueryTable:
    """Parse and validate ``bq://project.dataset.table``.

    Args:
        uri: The URI; surrounding whitespace is ignored.
        source: Parameter name for error messages.

    Returns:
        The table.

    Raises:
        InputError: Not of the form ``bq://project.dataset.table`` or a name breaks BigQuery's rules; names
            ``source`` and the value received.

    """
    expected = "bq://project.dataset.table"
    text = uri.strip() if isinstance(uri, str) else ""
    if not text.lower().startswith("bq://"):
        raise InputError(f"expected a BigQuery table URI {expected}, got {uri!r}", source=source)
    body = text[len("bq://") :]
    parts = body.rsplit(".", 2)
    if len(parts) != 3 or not all(parts):
        hint = " (use '.' between project and dataset, not ':')" if ":" in body and len(parts) == 2 else ""
        raise InputError(f"expected {expected}, got {uri!r}{hint}", source=source)
    project, dataset, table = parts
    _check_project(project, value=uri, source=source, expected=expected)
    _check_dataset(dataset, value=uri, source=source, expected=expected)
    _check_table(table, value=uri, source=source)
    return BigQueryTable(project, dataset, table)


def parse_destination_prefix(
    prefix: str, *, source: str = "bigquery_destination_prefix", format_parameter: str = "judgments_format"
) -> DestinationPrefix:
    """Parse and validate ``bigquery_destination_prefix``: ``project.dataset[.table_prefix]``.

    A leading ``bq://`` is accepted and ignored. ``format_parameter`` names the parameter that asked for
    BigQuery (``judgments_format`` for AutoSxS, ``output_format`` for Gecko), for the message of an empty prefix.

    Raises:
        InputError: Empty, wrong number of parts, or a name breaks BigQuery's rules; names ``source`` and the
            value received.

    """
    expected = "'project.dataset' or 'project.dataset.table_prefix'"
    text = prefix.strip() if isinstance(prefix, str) else ""
    if text.lower().startswith("bq://"):
        text = text[len("bq://") :]
    if not text:
        raise InputError(
            f"is required when {format_parameter} is 'bigquery'; got {prefix!r}, expected {expected}, "
            "e.g. 'my-project.my_dataset.autosxs'",
            source=source,
        )
    # A domain-scoped project ("example.com:proj") holds dots of its own: split after the colon.
    domain, colon, rest = text.rpartition(":")
    parts = rest.split(".")
    if colon:
        parts[0] = f"{domain}:{parts[0]}"
    if len(parts) not in (2, 3) or not all(parts):
        raise InputError(f"expected {expected}, got {prefix!r}", source=source)
    project, dataset = parts[0], parts[1]
    table_prefix = parts[2] if len(parts) == 3 else ""
    _check_project(project, value=prefix, source=source, expected=expected)
    _check_dataset(dataset, value=prefix, source=source, expected=expected)
    if table_prefix:
        _check_table(table_prefix, value=prefix, source=source, what="table prefix")
        # The longest suffix judgments_table() appends must still fit.
        _check_table(
            _table_name(table_prefix, dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc), "0" * 6),
            value=prefix,
            source=source,
            what="table name built from the table prefix",
        )
    return DestinationPrefix(project, dataset, table_prefix)


def _table_name(table_prefix: str, now: dt.datetime, token: str, kind: str = JUDGMENTS_TABLE_SUFFIX) -> str:
    stamp = now.astimezone(dt.timezone.utc).strftime("%Y%m%d_%H%M%S")
    head = f"{table_prefix}_" if table_prefix else ""
    return f"{head}{kind}_{stamp}_{token}"


def judgments_table(
    prefix: str,
    *,
    now: dt.datetime | None = None,
    token: str | None = None,
    source: str = "bigquery_destination_prefix",
    kind: str = JUDGMENTS_TABLE_SUFFIX,
    format_parameter: str = "judgments_format",
) -> BigQueryTable:
    """Name a new judgments table: ``[<table_prefix>_]judgments_<YYYYMMDD_HHMMSS>_<6 hex>`` (UTC).

    ``my-proj.evals.sxs`` → ``my-proj.evals.sxs_judgments_20250101_120000_a1b2c3``; ``my-proj.evals`` →
    ``my-proj.evals.judgments_20250101_120000_a1b2c3``. The random token keeps two exports in the same second
    apart, so every export writes a table of its own.

    Args:
        prefix: ``bigquery_destination_prefix``.
        now: The export time (default: the current UTC time).
        token: The 6 hex characters at the end (default: random).
        source: Parameter name for error messages.
        kind: What the table holds, the word after the prefix (``judgments``; Gecko's export: ``results``).
        format_parameter: The format parameter that asked for BigQuery, for error messages.

    Raises:
        InputError: The prefix is invalid (see :func:`parse_destination_prefix`).

    """
    parsed = parse_destination_prefix(prefix, source=source, format_parameter=format_parameter)
    name = _table_name(
        parsed.table_prefix, now or dt.datetime.now(dt.timezone.utc), token or secrets.token_hex(3), kind=kind
    )
    return BigQueryTable(parsed.project, parsed.dataset, name)


def check_column_names(names: Iterable[str], *, source: str) -> None:
    """Check that every name is a valid BigQuery column name and that no two clash (case-insensitively).

    Raises:
        InputError: Names the column and the rule it breaks.

    """
    seen: dict[str, str] = {}
    for name in names:
        if not isinstance(name, str) or not _COLUMN.match(name):
            raise InputError(
                f"column name {name!r} is not a valid BigQuery column name (1-300 letters, digits, underscores, "
                "hyphens, spaces or &%=+:'<>#|); rename the column in the dataset or export as jsonl",
                source=source,
            )
        upper = name.upper()
        if upper.startswith(_RESERVED_COLUMN_PREFIXES):
            raise InputError(
                f"column name {name!r} starts with a prefix BigQuery reserves "
                f"({', '.join(_RESERVED_COLUMN_PREFIXES)}); rename the column in the dataset",
                source=source,
            )
        if upper.lower() in seen:
            raise InputError(
                f"columns {seen[upper.lower()]!r} and {name!r} differ only in case, which BigQuery column names "
                "do not distinguish; rename one of them",
                source=source,
            )
        seen[upper.lower()] = name
