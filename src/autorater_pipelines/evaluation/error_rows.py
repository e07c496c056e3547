"""One error-row layout for both pipelines' ``error_messages`` (JSONL, one object per failed row or sample).

Every error row holds, in this order:

- the id columns of the row (``id_values``);
- ``stage``: where it failed — AutoSxS ``inference`` or ``judge``; Gecko ``rubrics``, ``rubric_generation``,
  ``media``, ``validation`` or ``scoring``;
- ``error_kind``: a machine-readable kind (``parse_error``, ``not_recorded``, ``rate_limit``, ``invalid_rubric`` …);
- ``error_message``: the human-readable reason;
- ``error``: ``"<error_kind>: <error_message>"`` (the one line the CLI prints; AutoSxS's original field);
- then stage-specific fields: AutoSxS ``sample_index``, ``flipped``, ``row_judged``, ``model``; Gecko ``raw``,
  ``question_ids``, ``handled_as``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.ids import id_values

__all__ = ["ERROR_FIELDS", "error_row", "error_text", "split_error"]

ERROR_FIELDS = ("stage", "error_kind", "error_message", "error")
"""The fields every error row carries besides the id columns."""

_KIND = re.compile(r"^([a-z][a-z0-9_]*): (.*)$", re.DOTALL)


def split_error(text: str) -> tuple[str, str]:
    """Split ``"kind: message"`` (the form of model and parse errors) into ``(kind, message)``.

    Text without a ``snake_case`` kind prefix gives ``("error", text)``.
    """
    match = _KIND.match(text or "")
    return (match.group(1), match.group(2)) if match else ("error", text or "")


def error_row(
    row: Mapping[str, Any],
    id_columns: Sequence[str],
    *,
    stage: str,
    kind: str,
    message: str,
    **extra: Any,
) -> dict[str, Any]:
    """Build one ``error_messages`` row (layout in the module docstring).

    Args:
        row: The input row (or any mapping holding its id columns).
        id_columns: Columns that identify the row; copied first.
        stage: The stage that failed.
        kind: Machine-readable error kind.
        message: Human-readable reason.
        **extra: Stage-specific JSON-compatible fields; ``None`` values are kept (AutoSxS writes
            ``"sample_index": null`` for a whole-row error).

    Returns:
        The error row.
    """
    out = id_values(row, id_columns)
    out.update(stage=stage, error_kind=kind, error_message=message, error=f"{kind}: {message}")
    out.update(extra)
    return out


def error_text(row: Mapping[str, Any]) -> str:
    """The one-line reason of an error row (``error``), for summaries."""
    text = row.get("error")
    if isinstance(text, str) and text:
        return text
    return f"{row.get('error_kind', 'error')}: {row.get('error_message', '')}"
