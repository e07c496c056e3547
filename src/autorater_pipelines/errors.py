"""Exception types shared by the whole library.

Every error caused by user input (a dataset, a parameter, a template) is an :class:`InputError`
whose message says what failed, where (file, row, column), the value received and how to fix it.
The CLI prints these without a traceback and exits with status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["AutoraterError", "InputError", "ModelCallError", "did_you_mean", "unknown_names"]


class AutoraterError(Exception):
    """Base class of every error raised on purpose by autorater_pipelines."""


class InputError(AutoraterError, ValueError):
    """Bad user input: a dataset, a pipeline parameter, a template or a model spec.

    Args:
        message: What failed and how to fix it.
        source: The file, URI or parameter the problem was found in, if any.
        row: 1-based row (line for JSONL) number in ``source``, if any.
        column: The column or field name, if any.
        unit: The word printed before ``row``: ``"row"`` (default) or ``"line"`` where the number counts
            physical lines and a record may span several (CSV).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        row: int | None = None,
        column: str | None = None,
        unit: str = "row",
    ) -> None:
        self.source = source
        self.row = row
        self.column = column
        where = []
        if source:
            where.append(str(source))
        if row is not None:
            where.append(f"{unit} {row}")
        if column:
            where.append(f"column {column!r}")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(prefix + message)


class ModelCallError(AutoraterError):
    """A whole run of model calls had to stop (e.g. a wrong endpoint, no progress, too many failures).

    Single failed calls never raise: they come back as a ``ModelOutput`` whose ``error`` is set.

    Args:
        message: Why the run stopped and how to fix it.
        interrupted: True when the process was asked to stop (SIGTERM), not the endpoint.
    """

    def __init__(self, message: str, *, interrupted: bool = False) -> None:
        super().__init__(message)
        self.interrupted = interrupted


def did_you_mean(name: str, options: Iterable[str]) -> str:
    """``" Did you mean 'closest'?"`` for the option closest to ``name`` (difflib), or ``""`` if none is close."""
    close = difflib.get_close_matches(str(name), [str(o) for o in options], n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def unknown_names(what: str, unknown: Iterable[str], valid: Iterable[str]) -> str:
    """``"unknown keys ['flipp'] (did you mean 'flip'?); valid keys: [...]"``: unknown names with their closest valid.

    Args:
        what: The plural noun of the names (``"keys"``, ``"pipeline parameters"``).
        unknown: The names given that are not valid.
        valid: The valid names, listed in this order.
    """
    unknown, valid = list(unknown), [str(v) for v in valid]
    close = {u: difflib.get_close_matches(str(u), valid, n=1) for u in unknown}
    hints = [f"{m[0]!r}" + (f" for {u!r}" if len(unknown) > 1 else "") for u, m in close.items() if m]
    hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
    return f"unknown {what} {unknown}{hint}; valid {what}: {valid}"
