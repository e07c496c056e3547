"""Row helpers shared by the Gecko stages: id values, error rows, stage results, parameter checks."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines.errors import InputError

__all__ = [
    "IMAGE_QUESTION_TYPES",
    "MEDIA_TYPES",
    "StageResult",
    "check_media_type",
    "check_rows",
    "error_row",
    "id_values",
    "is_missing",
    "split_parameters",
]

IMAGE_QUESTION_TYPES: tuple[str, ...] = (
    "object",
    "human",
    "animal",
    "food",
    "activity",
    "attribute",
    "counting",
    "color",
    "material",
    "spatial",
    "location",
    "shape",
    "other",
)
"""Question types of generated rubrics (Gecko, arXiv 2404.16820, Sec. 3); unknown types become ``other``."""

MEDIA_TYPES: tuple[str, ...] = ("image", "video")


class StageResult(NamedTuple):
    """Output of one Gecko stage.

    Attributes:
        rows: Rows that went through the stage, in input order (JSON-compatible dicts).
        errors: Error rows, one per failed input row (see :func:`error_row`).

    """

    rows: list[dict[str, Any]]
    errors: list[dict[str, Any]]


def is_missing(value: Any) -> bool:
    """Tell whether a cell is empty: None, NaN or a blank string (as from JSONL, CSV or BigQuery)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def id_values(row: Mapping[str, Any], id_columns: Sequence[str]) -> dict[str, Any]:
    """Return ``{column: value}`` for the id columns of ``row`` (the replay key of a row)."""
    return {c: row.get(c) for c in id_columns}


def error_row(
    row: Mapping[str, Any],
    id_columns: Sequence[str],
    *,
    stage: str,
    kind: str,
    message: str,
    **extra: Any,
) -> dict[str, Any]:
    """Build one ``error_messages`` row.

    Args:
        row: The input row that failed.
        id_columns: Columns that identify the row; copied into the error row.
        stage: ``rubric_generation``, ``rubrics``, ``media``, ``validation`` or ``scoring``.
        kind: Machine-readable error kind, e.g. ``invalid_rubric``, ``not_recorded``, ``unreadable_media``.
        message: Human-readable reason.
        **extra: Further JSON-compatible fields (``question_ids``, ``raw``, ``handled_as`` …).

    Returns:
        ``{<id columns>, "stage", "error_kind", "error_message", **extra}``.

    """
    out = id_values(row, id_columns)
    out.update(stage=stage, error_kind=kind, error_message=message)
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def check_media_type(media_type: str) -> str:
    """Return ``media_type`` lower-cased, or raise InputError when it is not ``image``/``video``."""
    value = str(media_type or "").strip().lower()
    if value not in MEDIA_TYPES:
        raise InputError(f"media_type must be one of {list(MEDIA_TYPES)}, got {media_type!r}", source="media_type")
    return value


def check_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    required: Mapping[str, str | None],
) -> None:
    """Check that every row has the id columns and the required columns, and that ids are unique.

    Args:
        rows: Dataset rows.
        id_columns: Columns whose values identify a row.
        required: ``{parameter name: column name}``; a ``None`` column is itself an error.

    Raises:
        InputError: no id columns, a required parameter not set, a column absent from every row, or
            duplicate id values (the message shows the first duplicate).

    """
    if isinstance(id_columns, str) or not id_columns:
        raise InputError(
            f"id_columns must be a non-empty list of column names, got {id_columns!r}", source="id_columns"
        )
    for param, column in required.items():
        if not column:
            raise InputError(f"{param} is required, got {column!r}", source=param)
    columns: set[str] = set()
    for row in rows:
        columns.update(row)
    wanted = {f"id_columns[{i}]": c for i, c in enumerate(id_columns)} | dict(required)
    for param, column in wanted.items():
        if rows and column not in columns:
            raise InputError(
                f"column {column!r} ({param}) is not in the dataset; columns present: {sorted(columns)}",
                source=param,
            )
    seen: dict[tuple, int] = {}
    for i, row in enumerate(rows, start=1):
        key = tuple(_hashable(row.get(c)) for c in id_columns)
        if key in seen:
            raise InputError(
                f"duplicate id {dict(zip(id_columns, key, strict=True))!r} (first seen in row {seen[key]}); "
                "id_columns must identify each row",
                source="id_columns",
                row=i,
            )
        seen[key] = i


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def split_parameters(
    params: Mapping[str, Any] | None,
    *,
    own: Mapping[str, Any],
    source: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a ``*_parameters`` dict into this stage's own keys and model-config keys.

    Args:
        params: The user's parameters dict (None = empty).
        own: This stage's keys with their defaults, e.g. ``{"questions_per_call": 0}``.
        source: Parameter name for error messages, e.g. ``validator_parameters``.

    Returns:
        ``(own values with defaults filled, the remaining keys for GenerateConfig)``.

    Raises:
        InputError: a key is neither an own key nor a GenerateConfig field (the message lists both).

    """
    from autorater_pipelines.models import GenerateConfig

    params = dict(params or {})
    config_keys = set(GenerateConfig.model_fields)
    unknown = sorted(k for k in params if k not in own and k not in config_keys)
    if unknown:
        raise InputError(
            f"unknown key(s) {unknown}; valid keys are {sorted(own)} and the model settings {sorted(config_keys)}",
            source=source,
        )
    mine = {k: params.pop(k, default) for k, default in own.items()}
    return mine, params
