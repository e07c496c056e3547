"""Gecko's question types and media types, stage results, the row check of the stages, and their model calls.

Id values and error rows are the shared ones (:mod:`autorater_pipelines.evaluation`), re-exported here for the
stages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from autorater_pipelines.errors import InputError, ModelCallError
from autorater_pipelines.evaluation.error_rows import error_row
from autorater_pipelines.evaluation.ids import check_id_columns, id_values
from autorater_pipelines.unencodable import replaced_note

if TYPE_CHECKING:
    from autorater_pipelines.models import Model, ModelOutput, ModelRequest

__all__ = [
    "IMAGE_QUESTION_TYPES",
    "MEDIA_TYPES",
    "MEDIA_REFUSED",
    "TEXT_QUESTION_TYPES",
    "question_types_for",
    "NOT_CALLED",
    "RubricError",
    "StageResult",
    "call_model",
    "check_media_type",
    "check_rows",
    "error_row",
    "id_values",
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

TEXT_QUESTION_TYPES: tuple[str, ...] = (
    "instruction_following",
    "content",
    "accuracy",
    "completeness",
    "format",
    "style",
    "safety",
    "other",
)
"""Rubric types of generated text rubrics (``media_type: "text"``), after the aspects of Google's general-quality
adaptive rubrics (instruction following, content, accuracy, completeness, format, style, safety)."""

MEDIA_TYPES: tuple[str, ...] = ("image", "video", "text")
"""``text``: the media column holds the response text itself (adaptive rubrics for text, issue 23)."""


def question_types_for(media_type: str) -> tuple[str, ...]:
    """The question types a generated rubric may use for ``media_type``."""
    return TEXT_QUESTION_TYPES if media_type == "text" else IMAGE_QUESTION_TYPES


MEDIA_REFUSED = "media_not_supported"
"""Error kind of the validation rows of a run whose validator refused the media (a text-only model): the scoring
step turns it into one error naming the model and the fix (:func:`autorater_pipelines.gecko.steps.score_rows`)."""

NOT_CALLED = "budget"
"""Error kind of a request that was never called because the model calls stopped early (``ErrorKind.BUDGET``)."""

logger = logging.getLogger(__name__)


class StageResult(NamedTuple):
    """Output of one Gecko stage.

    Attributes:
        rows: Rows that went through the stage, in input order (JSON-compatible dicts).
        errors: Error rows, one per failed input row (see :func:`error_row`).

    """

    rows: list[dict[str, Any]]
    errors: list[dict[str, Any]]


def check_media_type(media_type: str) -> str:
    """Return ``media_type`` lower-cased, or raise InputError when it is not ``image``/``video``/``text``."""
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
            duplicate id values (the message shows the first duplicate). Ids are compared by
            :func:`autorater_pipelines.io.id_key`, so ``1`` and ``"1"`` are the same id, as everywhere.

    """
    id_columns = check_id_columns(id_columns)
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
    from autorater_pipelines.io import id_key

    seen: dict[tuple, int] = {}
    for i, row in enumerate(rows, start=1):
        key = id_key(row, id_columns)
        if key in seen:
            first, this = id_values(rows[seen[key] - 1], id_columns), id_values(row, id_columns)
            where = f"first seen in row {seen[key]}"
            if repr(first) != repr(this):  # e.g. 1 and "1": one id once compared as text, as io.check_unique_ids
                where += f' as {first!r}; ids are compared as text: 1, 1.0 and "1" are the same id'
            raise InputError(
                f"duplicate id {this!r} ({where}); id_columns must identify each row{replaced_note(repr(this))}",
                source="id_columns",
                row=i,
            )
        seen[key] = i


def call_model(
    model: Model,
    requests: Sequence[ModelRequest],
    *,
    desc: str,
    reask: Callable[[ModelOutput], bool] | None = None,
) -> list[ModelOutput]:
    """Answer every request, keeping the answers already given when the model calls stop early.

    The calls stop early (:mod:`autorater_pipelines.models`: a wrong endpoint, no progress for ``max_stall_s``,
    ``max_consecutive_failures`` failed calls in a row); every request still gets an output then: those never
    called fail with error kind ``budget`` and a reason starting ``not called:``, which the stages turn into error
    rows, so no row is lost and no answer already paid for is thrown away. The step decides whether to fail
    afterwards (``strict``), once its rows are written.

    ``reask`` is passed to :meth:`Model.generate_each` (a cached answer it returns True for is asked again).

    Returns:
        One output per request, in input order.

    Raises:
        ModelCallError: the process got SIGTERM (nothing to write; a re-run resumes from the response cache).
    """
    if not requests:
        return []
    outputs: list[ModelOutput] = []
    try:
        model.generate_each(requests, lambda _request, output: outputs.append(output), desc=desc, reask=reask)
    except ModelCallError as exc:
        if exc.interrupted:
            raise
        logger.error("%s: model calls stopped early: %s (rows not called are written as errors)", desc, exc)
    return outputs


class RubricError(ValueError):
    """A rubric cannot be used; ``kind`` is ``invalid_rubric`` or ``empty_rubric``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
