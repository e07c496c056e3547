"""The in-memory dataset (rows + where each came from) and the checks run on it before any model call."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from autorater_pipelines.errors import InputError, did_you_mean
from autorater_pipelines.io._ids import check_id_columns
from autorater_pipelines.io._values import is_missing
from autorater_pipelines.unencodable import replaced_note

__all__ = [
    "Dataset",
    "IdKey",
    "UniqueIds",
    "canonical_id_value",
    "check_unique_ids",
    "id_key",
    "is_missing",
    "require_columns",
]


@dataclass
class Dataset:
    """Rows read from one or more files, each with the file and 1-based line/row it came from.

    Attributes:
        rows: One plain dict per example; values are JSON-compatible (str, int, float, bool, None,
            lists, dicts). CSV values are strings (an empty cell is ``""``).
        locations: Parallel to ``rows``: ``(file or URI, 1-based line/row number)``.
        columns: Union of the rows' keys, in first-seen order (computed when not given).
        source_name: The parameter the data came from (e.g. ``"evaluation_dataset"``), for messages.
        uri: The URI string the dataset was read from, as given.
        units: What the numbers in ``locations`` count, per file: ``"line"``, ``"item"`` or ``"row"``
            (``"row"`` when a file is not listed).

    """

    rows: list[dict[str, Any]]
    locations: list[tuple[str, int]]
    columns: list[str] = field(default_factory=list)
    source_name: str = "evaluation_dataset"
    uri: str = ""
    units: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.rows) != len(self.locations):
            raise ValueError(f"{len(self.rows)} rows but {len(self.locations)} locations")
        if not self.columns:
            seen: dict[str, None] = {}
            for row in self.rows:
                seen.update(dict.fromkeys(row))
            self.columns = list(seen)

    def __len__(self) -> int:
        return len(self.rows)

    def location(self, index: int) -> str:
        """Describe where row ``index`` (0-based) came from, e.g. ``"data.jsonl line 7"``."""
        source, number = self.locations[index]
        return f"{source} {self.units.get(source, 'row')} {number}"


class _HasColumns(Protocol):
    """What :func:`require_columns` reads: a :class:`Dataset` or a :class:`~autorater_pipelines.io.DatasetScan`."""

    columns: list[str]
    source_name: str
    uri: str

    def __len__(self) -> int: ...


def require_columns(ds: _HasColumns, columns: Mapping[str, str | None]) -> None:
    """Check that the named columns exist in the dataset (in at least one row).

    Per-row missing or null values are reported where the values are used, with the row.

    Args:
        ds: The dataset.
        columns: Parameter name → column name, e.g. ``{"response_column_a": "output_1"}``. Entries whose
            column is ``""`` or ``None`` mean "not set" and are skipped.

    Raises:
        InputError: A column is absent; names the parameter, the column and the columns that exist.

    """
    for param, column in columns.items():
        if not column:
            continue
        if not isinstance(column, str):
            raise InputError(f"expected a column name (string), got {column!r}", source=param)
        if column not in ds.columns:
            where = f"{ds.source_name} {ds.uri!r}" if ds.uri else ds.source_name
            if not len(ds):  # "columns found: []" would read as if the data had no such column
                raise InputError(
                    f"column {column!r} cannot be checked: {where} has no rows, so no columns; pass data with at "
                    "least one example",
                    source=param,
                )
            raise InputError(
                f"column {column!r} is not in {where}; columns found: {ds.columns}."
                f"{did_you_mean(column, ds.columns)} Set {param} to one of those columns or add the column "
                "to the data.",
                source=param,
            )


def canonical_id_value(value: Any) -> str:
    """Return the text form under which id (and replay key) values are compared.

    Scalars compare by their string form, so ``7``, ``7.0`` and ``"7"`` are the same id: booleans become
    ``"true"``/``"false"`` (and the strings ``"True"``/``"FALSE"`` too), ``None`` and ``"null"`` become
    ``"null"``, integral floats are written as integers (``7.0`` → ``"7"``), other numbers with ``str``,
    strings are kept; lists and dicts are compact JSON with sorted keys. This is the one definition shared by
    :func:`id_key`, :func:`check_unique_ids` and the ``replay/`` model's matching.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        lowered = value.lower()
        return lowered if lowered in ("true", "false", "null") else value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class IdKey(tuple):
    """A row's id: a tuple of canonical texts (compared and hashed) that prints as the values as written.

    ``IdKey(("7",), (7,)) == ("7",)`` and hashes like it; ``repr`` shows ``(7,)`` so messages quote the ids the
    user wrote.
    """

    values: tuple[Any, ...]

    def __new__(cls, canonical: Sequence[str | None], values: Sequence[Any] | None = None) -> IdKey:
        key = super().__new__(cls, canonical)
        key.values = tuple(canonical if values is None else values)
        return key

    def __repr__(self) -> str:
        return repr(self.values)

    def __getnewargs__(self) -> tuple[Any, ...]:
        return (tuple(self), self.values)


def id_key(row: Mapping[str, Any], id_columns: Sequence[str]) -> tuple[str | None, ...]:
    """Return the row's id: the canonical text of its ``id_columns`` values, in ``id_columns`` order.

    Values are canonicalized with :func:`canonical_id_value`, so rows whose ids are ``7`` (JSONL) and
    ``"7"`` (CSV) have the same key: they are duplicates for :func:`check_unique_ids`, and a judgment
    written back to JSON joins with its row whatever the type of its id.

    Args:
        row: One dataset row.
        id_columns: The id column names.

    Returns:
        A hashable tuple of strings (a missing column or null value gives ``None``), an :class:`IdKey` whose
        ``repr`` shows the values as written; use it to join rows with judgments or replays.

    """
    values = tuple(row.get(column) for column in id_columns)
    return IdKey(tuple(None if is_missing(value) else canonical_id_value(value) for value in values), values)


def check_unique_ids(ds: Dataset, id_columns: Sequence[str]) -> list[tuple[str | None, ...]]:
    """Check that every row has scalar, non-null values in ``id_columns`` and that ids are unique.

    Args:
        ds: The dataset.
        id_columns: The columns that together identify an example (GCPC's ``id_columns``).

    Returns:
        Each row's :func:`id_key` (canonical text), parallel to ``ds.rows``.

    Raises:
        InputError: ``id_columns`` is malformed or names a missing column; a row has a missing, null or
            non-scalar id value (names the file, row and column); or two rows share an id, compared as
            :func:`id_key` text so ``7`` and ``"7"`` collide (names both locations and the id values).

    """
    checker = UniqueIds(ds, id_columns)
    return [checker.add(row, *ds.locations[index], index, ds.location) for index, row in enumerate(ds.rows)]


class UniqueIds:
    """:func:`check_unique_ids` one row at a time, for rows read in a stream (the same checks and messages).

    Per row it keeps the id's canonical text and an int the caller chooses (``ref``, e.g. the row's position),
    plus the values as written when their text differs from it (``7`` for ``"7"``): ~150 bytes a row.

    Args:
        ds: The dataset's columns (:func:`require_columns` is checked on the id columns first).
        id_columns: The id columns.

    Raises:
        InputError: ``id_columns`` is malformed or names a missing column.
    """

    def __init__(self, ds: _HasColumns, id_columns: Sequence[str]) -> None:
        self.columns = check_id_columns(id_columns)
        require_columns(ds, {f"id_columns[{i}]": c for i, c in enumerate(self.columns)})
        self._seen: dict[tuple[str | None, ...], tuple[int, tuple[Any, ...] | None]] = {}

    def add(
        self, row: Mapping[str, Any], source: str, number: int, ref: int, describe: Callable[[int], str]
    ) -> tuple[str | None, ...]:
        """Check one row (from ``source``, line/row ``number``); return its :func:`id_key`.

        ``describe(ref)`` says where the row of ``ref`` came from (``Dataset.location``), for a duplicate's message.

        Raises:
            InputError: a missing, null or non-scalar id value, or an id seen before (as :func:`check_unique_ids`).
        """
        columns = self.columns
        for column in columns:
            value = row.get(column)
            if is_missing(value):
                state = "missing" if column not in row else f"null ({value!r})"
                raise InputError(
                    f"the id value is {state}; every row needs a value in each id column {columns}",
                    source=source,
                    row=number,
                    column=column,
                )
            if isinstance(value, (dict, list)):
                raise InputError(
                    f"id values must be strings or numbers, got {value!r}; pick scalar id columns",
                    source=source,
                    row=number,
                    column=column,
                )
        key = id_key(row, columns)
        canonical = tuple(key)
        if canonical in self._seen:
            first_ref, first_values = self._seen[canonical]
            first = dict(zip(columns, first_values if first_values is not None else canonical, strict=True))
            this = {c: row.get(c) for c in columns}
            values = repr(this)
            if repr(first) != values:  # e.g. 7 and "7": the same id once compared as text
                values = f'{first!r} and {this!r} (ids are compared as text: 7, 7.0 and "7" are the same id)'
            raise InputError(
                f"duplicate id {values}: {describe(first_ref)} and "
                f"{describe(ref)} have the same values in id columns {columns}; make the ids unique or "
                f"add a column to id_columns{replaced_note(values)}",
                source=source,
                row=number,
            )
        written = key.values  # type: ignore[attr-defined]
        self._seen[canonical] = (ref, None if written == canonical else written)
        return key
