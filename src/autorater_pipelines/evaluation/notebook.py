"""What the DataFrame (notebook) APIs of both evaluations share: rows from a DataFrame, ids, the event loop.

- :func:`frame_rows` turns a pandas DataFrame into JSON-compatible row dicts (NaN and NaT become None, numpy
  scalars Python numbers); when no id columns are given the row index becomes one (``index`` or the index's
  name), as the Vertex AI SDK identifies rows by position; a lone UTF-16 surrogate in a value (no UTF-8 file can
  hold it) is replaced by U+FFFD with a warning naming the row.
- :func:`outside_event_loop` runs a blocking call in a worker thread when the calling thread already runs an
  asyncio event loop (Jupyter, IPython with autoawait), so ``asyncio.run`` inside the model-call layer works.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import math
import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.unencodable import replace_unencodable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FrameRows", "frame_rows", "outside_event_loop"]

_T = TypeVar("_T")

logger = logging.getLogger(__name__)


class FrameRows(NamedTuple):
    """Rows of a DataFrame, with the id columns that identify them."""

    rows: list[dict[str, Any]]
    """One JSON-compatible dict per DataFrame row, in order (plus the index column when ids were absent)."""
    id_columns: list[str]
    """The id columns given, or ``[<index column>]``."""
    index_column: str | None
    """The column added from the DataFrame index (None when id columns were given)."""


def frame_rows(df: pd.DataFrame, *, id_columns: Sequence[str] | None, source: str = "df") -> FrameRows:
    """Turn a DataFrame into row dicts and settle the id columns.

    Args:
        df: The evaluation data, one row per example.
        id_columns: Columns whose values identify each row; None or empty = the DataFrame index. A string is one
            column (``"ab"`` is the column ``ab``, not ``a`` and ``b``).
        source: Parameter name for error messages.

    Returns:
        The rows and their id columns.

    Raises:
        InputError: ``df`` is not a DataFrame, has no rows, has non-string or duplicate column names, a cell holds
            ±infinity (naming the row and column), the index is not unique (without id columns), or an index column
            name would overwrite a column.

    """
    import pandas as pd

    if isinstance(id_columns, str):  # one column, never its characters
        id_columns = [id_columns]
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}", source=source)
    bad = [c for c in df.columns if not isinstance(c, str)]
    if bad:
        raise InputError(f"column names must be strings, got {bad[:5]!r}", source=source)
    if df.columns.has_duplicates:
        raise InputError(f"duplicate column names {sorted(set(df.columns[df.columns.duplicated()]))}", source=source)
    index_column = None
    if not id_columns:
        index_column = str(df.index.name or "index")
        if index_column in df.columns:
            raise InputError(
                f"the DataFrame has a column {index_column!r}, the name its index would take as the id column; "
                "pass id_columns=[...] or rename the index (df.rename_axis('row'))",
                source="id_columns",
            )
    if df.empty:
        shape = f"columns {list(df.columns)}" if len(df.columns) else "no columns"
        raise InputError(
            f"the DataFrame has no rows ({len(df)} rows, {shape}); pass a DataFrame with at least one example",
            source=source,
        )
    rows = []
    labels = _labels(df)
    for (where, label), record in zip(labels, df.to_dict(orient="records"), strict=True):
        _refuse_infinite(record, where)
        row = io.to_jsonable(record)
        if index_column is not None:
            row[index_column] = io.to_jsonable(label)
        row, replaced = replace_unencodable(row)
        if replaced:
            logger.warning(
                "%s, the row at index %r: %d lone UTF-16 surrogate(s) such as '\\ud800' (no UTF-8 file can hold "
                "them) replaced by U+FFFD",
                source,
                label,
                replaced,
            )
        rows.append(row)
    if index_column is not None:
        _check_unique_index(df, rows, index_column)
    ids = [index_column] if index_column is not None else list(id_columns or [])
    return FrameRows(rows, ids, index_column)


def _labels(df: pd.DataFrame) -> list[tuple[str, Any]]:
    """Each row's place for messages (``index 3``, or ``position 3`` for an index of labels) and its label."""
    labels = list(df.index)
    if all(isinstance(label, int) for label in labels):
        return [(f"index {label}", label) for label in labels]
    return [(f"position {position} (index {label!r})", label) for position, label in enumerate(labels)]


def _refuse_infinite(record: dict[Any, Any], where: str) -> None:
    """Refuse a cell holding ±infinity: a row's values are JSON values, which have no infinity.

    It would otherwise become "no value" (``None``), and a response of ``inf`` be reported as empty.
    """
    for column, value in record.items():
        if isinstance(value, numbers.Real) and not isinstance(value, int) and math.isinf(value):  # numpy too
            raise InputError(
                f"holds the number {value!r} (infinity), which a row cannot carry: rows are JSON values, and JSON "
                "has no infinity; replace it with a finite number, text (e.g. 'inf') or None",
                source=f"the DataFrame {where}",
                column=str(column),
            )


def _check_unique_index(df: pd.DataFrame, rows: list[dict[str, Any]], index_column: str) -> None:
    """Refuse an index with duplicate labels, compared as ids are everywhere (``io.id_key``: 1 and "1" are one)."""
    seen: dict[tuple[str | None, ...], Any] = {}
    duplicated: list[str] = []
    as_text = False  # two labels that differ but are one id once compared as text
    for label, row in zip(df.index, rows, strict=True):
        key = io.id_key(row, [index_column])
        if key in seen:
            differ = repr(seen[key]) != repr(label)
            as_text = as_text or differ
            duplicated.append(f"{seen[key]!r} and {label!r}" if differ else repr(label))
        seen.setdefault(key, label)
    if duplicated:
        shown = "[" + ", ".join(duplicated[:3]) + "]"
        note = " (labels are compared as text: 1, 1.0 and '1' are the same id)" if as_text else ""
        raise InputError(
            f"the DataFrame index identifies the rows when id_columns is not given, but it has duplicates "
            f"{shown}{note}; pass id_columns or df.reset_index(drop=True)",
            source="id_columns",
        )


def outside_event_loop(function: Callable[..., _T]) -> Callable[..., _T]:
    """Decorate a blocking function so that it runs in a worker thread when called inside a running event loop."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> _T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return function(*args, **kwargs)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="autorater") as pool:
            return pool.submit(function, *args, **kwargs).result()

    return wrapper
