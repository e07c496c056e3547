"""Id columns: the one check of the ``id_columns`` parameter, and a row's id values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.errors import InputError

__all__ = ["check_id_columns", "id_values"]

_EXPECTED = 'id_columns must be a non-empty list of column names, e.g. ["id"]'


def check_id_columns(id_columns: Any) -> list[str]:
    """Return ``id_columns`` as a list of column names, or raise one message for every malformed form.

    Args:
        id_columns: The ``id_columns`` pipeline parameter (a list, or a tuple from Python callers).

    Returns:
        The column names, in order.

    Raises:
        InputError: not a list (a single string included), an empty list, or an entry that is not a
            non-empty string (source ``id_columns``).
    """
    if isinstance(id_columns, (str, bytes)) or not isinstance(id_columns, Sequence):
        raise InputError(f"expected a list of column names, got {id_columns!r}; {_EXPECTED}", source="id_columns")
    if not id_columns:
        raise InputError(f"is empty; {_EXPECTED}", source="id_columns")
    for column in id_columns:
        if not isinstance(column, str) or not column:
            raise InputError(
                f"expected non-empty column names, got {column!r} in {list(id_columns)!r}; {_EXPECTED}",
                source="id_columns",
            )
    if len(set(id_columns)) != len(id_columns):
        raise InputError(f"names a column twice: {list(id_columns)!r}; {_EXPECTED}", source="id_columns")
    return list(id_columns)


def id_values(row: Mapping[str, Any], id_columns: Sequence[str]) -> dict[str, Any]:
    """Return ``{column: value}`` for the id columns of ``row`` (copied into outputs, error rows and replay keys)."""
    return {c: row.get(c) for c in id_columns}
