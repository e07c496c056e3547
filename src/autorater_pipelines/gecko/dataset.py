"""Loading a Gecko evaluation dataset: columns checked, relative media paths made absolute."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.values import is_blank

__all__ = ["load_dataset"]


def _absolute(value: Any, source: str) -> Any:
    """Resolve a relative local media path against the directory of the file it came from."""
    if not isinstance(value, str) or is_blank(value):
        return value
    text = value.strip()
    if text.startswith("{") or urlparse(text).scheme or os.path.isabs(text):
        return value
    if urlparse(source).scheme not in ("", "file"):
        return value
    base = Path(urlparse(source).path if source.startswith("file://") else source).parent
    return str((base / text).resolve())


def load_dataset(
    evaluation_dataset: str,
    *,
    id_columns: Sequence[str],
    media_column: str,
    prompt_column: str | None = None,
    rubrics_column: str | None = None,
    response_columns: Mapping[str, str] | None = None,
    response_model: str = "",
    media_type: str = "image",
) -> list[dict[str, Any]]:
    """Read the evaluation dataset and check it before any model call.

    Args:
        evaluation_dataset: Comma-separated JSONL/JSON/CSV/Parquet files (see
            :func:`autorater_pipelines.io.read_dataset`).
        id_columns: Columns whose values identify each row (unique, non-null).
        media_column: Column with the image/video: URI, local path or Vertex ``contents`` JSON.
        prompt_column: Column with the generation prompt; required unless ``rubrics_column`` is set.
        rubrics_column: Column with supplied rubrics (generation is then skipped), or None.
        response_columns: ``{candidate: column}`` when several candidates' columns are compared (``media_column``
            is then ""): every column must be present, and no column ``candidate``.
        response_model: The model generating the responses into ``media_column``, which must then be absent.
        media_type: ``text``: the media columns hold response text, kept as it is (not resolved as paths).

    Returns:
        The rows, with relative local media paths resolved against their own file's directory (not text).

    Raises:
        InputError: unreadable data, a missing column, missing or duplicate ids.

    """
    if response_columns or response_model:
        return _load_responses(
            evaluation_dataset, id_columns, media_column, prompt_column, rubrics_column, response_columns, media_type
        )
    if not media_column:
        raise InputError(
            f"media_column is required (the column with the image/video), got {media_column!r}",
            source="media_column",
        )
    if not rubrics_column and not prompt_column:
        raise InputError(
            f"prompt_column is required when rubrics_column is not set (rubrics are generated from the "
            f"prompts), got {prompt_column!r}",
            source="prompt_column",
        )
    dataset = io.read_dataset(evaluation_dataset)
    columns = {"media_column": media_column}
    if rubrics_column:
        columns["rubrics_column"] = rubrics_column
    else:
        columns["prompt_column"] = prompt_column  # type: ignore[assignment]
    io.require_columns(dataset, columns)
    io.check_unique_ids(dataset, id_columns)
    if media_type == "text":  # the response itself, not a path
        return list(dataset.rows)
    rows = []
    for index, row in enumerate(dataset.rows):
        source = dataset.locations[index][0]
        rows.append({**row, media_column: _absolute(row.get(media_column), source)})
    return rows


def _load_responses(
    evaluation_dataset: str,
    id_columns: Sequence[str],
    media_column: str,
    prompt_column: str | None,
    rubrics_column: str | None,
    response_columns: Mapping[str, str] | None,
    media_type: str,
) -> list[dict[str, Any]]:
    """:func:`load_dataset` of a run with ``response_columns`` or ``response_model``."""
    from autorater_pipelines.gecko.candidates import check_columns

    dataset = io.read_dataset(evaluation_dataset)
    columns: dict[str, str] = {"rubrics_column": rubrics_column} if rubrics_column else {}
    if prompt_column:
        columns["prompt_column"] = prompt_column
    io.require_columns(dataset, columns)
    io.check_unique_ids(dataset, id_columns)
    present = list(dataset.columns)
    if response_columns:
        check_columns(response_columns, present, f"evaluation_dataset {evaluation_dataset!r}")
        if media_type == "text":
            return list(dataset.rows)
        rows = []
        for index, row in enumerate(dataset.rows):
            source = dataset.locations[index][0]
            rows.append({**row, **{c: _absolute(row.get(c), source) for c in response_columns.values()}})
        return rows
    check_generated_column(media_column, present, f"evaluation_dataset {evaluation_dataset!r}")
    return list(dataset.rows)


def check_generated_column(media_column: str, columns: Any, where: str) -> None:
    """Refuse a ``media_column`` that ``where`` (the dataset, the DataFrame) already has, with ``response_model``.

    Raises:
        InputError: ``media_column`` is among ``columns``: the generated responses would overwrite it.
    """
    if media_column in list(columns):
        raise InputError(
            f"media_column {media_column!r} is a column of {where}, and response_model would overwrite it with "
            'the responses it generates; give media_column a new column\'s name (default "response"), or remove '
            "response_model to score the responses in the data",
            source="media_column",
        )
