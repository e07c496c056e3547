"""The in-memory dataset (rows + where each came from) and the checks run on it before any model call."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autorater_pipelines.errors import InputError

__all__ = ["Dataset", "check_unique_ids", "id_key", "is_missing", "require_columns"]


def is_missing(value: Any) -> bool:
    """Return True for ``None`` and float NaN, the values every row check treats as "no value"."""
    return value is None or (isinstance(value, float) and math.isnan(value))


@dataclass
class Dataset:
    """Rows read from one or more files, each with the file and 1-based line/row it came from.

    Attributes:
        rows: One plain dict per example; values are JSON-compatible (str, int, float, bool, None,
            lists, dicts). CSV values are strings or ``None`` (empty cell).
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


def _did_you_mean(name: str, options: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, options, n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def require_columns(ds: Dataset, columns: Mapping[str, str | None]) -> None:
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
            raise InputError(
                f"column {column!r} is not in {where}; columns found: {ds.columns}."
                f"{_did_you_mean(column, ds.columns)} Set {param} to one of those columns or add the column "
                "to the data.",
                source=param,
            )


def id_key(row: Mapping[str, Any], id_columns: Sequence[str]) -> tuple[Any, ...]:
    """Return the row's id: the tuple of its ``id_columns`` values, in ``id_columns`` order.

    Args:
        row: One dataset row.
        id_columns: The id column names.

    Returns:
        A hashable tuple (missing columns give ``None``); use it to join rows with judgments or replays.

    """
    return tuple(row.get(column) for column in id_columns)


def _check_id_columns_param(id_columns: Any) -> list[str]:
    if isinstance(id_columns, str) or not isinstance(id_columns, Sequence):
        raise InputError(
            f"expected a list of column names, got {id_columns!r}; write e.g. [\"id\"]", source="id_columns"
        )
    if not id_columns:
        raise InputError(
            "is empty; name at least one column whose values identify each example, e.g. [\"id\"]",
            source="id_columns",
        )
    for column in id_columns:
        if not isinstance(column, str) or not column:
            raise InputError(f"expected non-empty column names, got {column!r} in {list(id_columns)!r}",
                             source="id_columns")
    return list(id_columns)


def check_unique_ids(ds: Dataset, id_columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Check that every row has scalar, non-null values in ``id_columns`` and that ids are unique.

    Args:
        ds: The dataset.
        id_columns: The columns that together identify an example (GCPC's ``id_columns``).

    Returns:
        Each row's :func:`id_key`, parallel to ``ds.rows``.

    Raises:
        InputError: ``id_columns`` is malformed or names a missing column; a row has a missing, null or
            non-scalar id value (names the file, row and column); or two rows share an id (names both
            locations and the id values).

    """
    columns = _check_id_columns_param(id_columns)
    require_columns(ds, {f"id_columns[{i}]": c for i, c in enumerate(columns)})
    seen: dict[tuple[Any, ...], int] = {}
    keys: list[tuple[Any, ...]] = []
    for index, row in enumerate(ds.rows):
        source, number = ds.locations[index]
        for column in columns:
            value = row.get(column)
            if is_missing(value):
                state = "missing" if column not in row else f"null ({value!r})"
                raise InputError(
                    f"the id value is {state}; every row needs a value in each id column {columns}",
                    source=source, row=number, column=column,
                )
            if isinstance(value, (dict, list)):
                raise InputError(
                    f"id values must be strings or numbers, got {value!r}; pick scalar id columns",
                    source=source, row=number, column=column,
                )
        key = id_key(row, columns)
        if key in seen:
            raise InputError(
                f"duplicate id {dict(zip(columns, key, strict=True))!r}: {ds.location(seen[key])} and "
                f"{ds.location(index)} have the same values in id columns {columns}; make the ids unique or "
                "add a column to id_columns",
                source=source, row=number,
            )
        seen[key] = index
        keys.append(key)
    return keys
