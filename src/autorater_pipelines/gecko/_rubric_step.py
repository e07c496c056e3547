"""The rubric stage of the Gecko steps: check the run, then parse or generate a rubric per row.

Part of :mod:`autorater_pipelines.gecko.steps` (which re-exports everything here): the entry points of the check
and rubric components (``components/gecko_check.py``, ``components/gecko_rubrics.py``) and their in-memory core.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines import evaluation, gecko, io, models
from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.gecko import generation
from autorater_pipelines.gecko._common import NOT_CALLED, call_options
from autorater_pipelines.gecko.params import RubricGenerationParameters
from autorater_pipelines.gecko.preflight import validate_run

__all__ = [
    "DEFAULT_MODEL",
    "RubricSummary",
    "check_run",
    "make_rubrics",
    "prepare_rubrics",
    "prepare_run",
    "rubrics_for_rows",
    "stop_if_strict",
]

logger = logging.getLogger("autorater_pipelines.gecko.steps")

DEFAULT_MODEL = evaluation.DEFAULT_MODEL
"""Rubric generator and validator used when the model parameter is empty (Vertex AI)."""


class RubricSummary(NamedTuple):
    """Counts from :func:`prepare_rubrics`."""

    evaluation_count: int
    """Rows in the evaluation dataset."""
    rubric_count: int
    """Rows with a usable rubric."""
    error_count: int
    """Rows whose rubric is missing, invalid or could not be generated."""


def make_rubrics(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    media_type: str = "image",
    prompt_column: str = "",
    rubrics_column: str = "",
    rubric_generation_model: str = "",
    rubric_generation_parameters: Mapping[str, Any] | None = None,
    rubric_generation_prompt_template: str = "",
    project: str = "",
    location: str = "",
) -> gecko.StageResult:
    """Give every loaded row a rubric: parsed from ``rubrics_column`` when it is set, else generated.

    The in-memory core of :func:`prepare_rubrics` (arguments as there), shared with the DataFrame API.

    Returns:
        ``StageResult(rubric rows, error rows)``.
    """
    if rubrics_column:
        return gecko.parse_supplied_rubrics(rows, id_columns=id_columns, rubrics_column=rubrics_column)
    return generation.generate_rubrics(
        rows,
        id_columns=id_columns,
        prompt_column=prompt_column,
        media_type=media_type,
        **call_options(
            rubric_generation_model,
            rubric_generation_parameters,
            rubric_generation_prompt_template,
            project=project,
            location=location,
        ),
    )


def prepare_rubrics(
    *,
    evaluation_dataset: str,
    id_columns: Sequence[str],
    media_column: str,
    media_type: str = "image",
    prompt_column: str = "",
    rubrics_column: str = "",
    rubric_generation_model: str = "",
    rubric_generation_parameters: Mapping[str, Any] | None = None,
    rubric_generation_prompt_template: str = "",
    project: str = "",
    location: str = "",
    rubrics_path: str | None = None,
    errors_path: str | None = None,
) -> RubricSummary:
    """Load the dataset and give every row a rubric: parsed from ``rubrics_column`` when it is set, else generated.

    Args:
        evaluation_dataset: Comma-separated JSONL/JSON/CSV/Parquet files.
        id_columns: Columns whose values identify a row (unique).
        media_column: Column with each row's image/video.
        media_type: ``image`` or ``video`` (the kind of generated questions).
        prompt_column: Column with the generation prompt (needed when rubrics are generated).
        rubrics_column: Column with supplied rubrics; empty = generate them with ``rubric_generation_model``.
        rubric_generation_model: Model spec of the rubric generator; empty = :data:`DEFAULT_MODEL`.
        rubric_generation_parameters: :class:`GenerateConfig` fields (``temperature``, ``base_url`` …).
        rubric_generation_prompt_template: Override of the generator prompt (Jinja2 or Vertex AI SDK syntax);
            empty = built-in.
        project: Google Cloud project for Vertex AI.
        location: Google Cloud region for Vertex AI.
        rubrics_path: Where to write the rubric rows (JSONL), or None.
        errors_path: Where to write the error rows of this stage (JSONL), or None.

    Returns:
        Row counts.

    Raises:
        InputError: unreadable data, a missing column, missing or duplicate ids, bad parameters.
        ModelCallError: the process got SIGTERM (when the model calls stop early, the rows not called are error
            rows with the reason).
    """
    rows = gecko.load_dataset(
        evaluation_dataset,
        id_columns=id_columns,
        media_column=media_column,
        prompt_column=prompt_column or None,
        rubrics_column=rubrics_column or None,
    )
    result = make_rubrics(
        rows,
        id_columns=id_columns,
        media_type=media_type,
        prompt_column=prompt_column,
        rubrics_column=rubrics_column,
        rubric_generation_model=rubric_generation_model,
        rubric_generation_parameters=rubric_generation_parameters,
        rubric_generation_prompt_template=rubric_generation_prompt_template,
        project=project,
        location=location,
    )
    if rubrics_path:
        io.write_jsonl(rubrics_path, result.rows)
    if errors_path:
        io.write_jsonl(errors_path, result.errors)
    how = f"parsed from column {rubrics_column!r}" if rubrics_column else "generated"
    logger.info("%d of %d rubrics %s, %d error rows", len(result.rows), len(rows), how, len(result.errors))
    return RubricSummary(len(rows), len(result.rows), len(result.errors))


def prepare_run(params: Mapping[str, Any], rubrics_path: str, errors_path: str) -> RubricSummary:
    """The pipeline's first step: validate the run, then give every row a rubric (parsed or generated).

    :func:`~autorater_pipelines.gecko.preflight.validate_run` checks every parameter and the dataset; the rubric rows
    and the error rows of rows without a usable rubric are written to ``rubrics_path`` and ``errors_path``.

    Raises:
        InputError: the first problem :func:`validate_run` finds (nothing is written then).
        ModelCallError: the process got SIGTERM (when the model calls stop early, the rows not called are error
            rows with the reason).
    """
    run = validate_run(params)
    p, rows = run.params, run.rows or []
    result = make_rubrics(
        rows,
        id_columns=p.id_columns,
        media_type=p.media_type,
        prompt_column=p.prompt_column,
        rubrics_column=p.rubrics_column,
        rubric_generation_model=p.rubric_generation_model,
        rubric_generation_parameters=p.rubric_generation_parameters,
        rubric_generation_prompt_template=p.rubric_generation_prompt_template,
        project=p.project,
        location=p.location,
    )
    io.write_jsonl(rubrics_path, result.rows)
    io.write_jsonl(errors_path, result.errors)
    logger.info("%d of %d rubrics, %d error rows", len(result.rows), len(rows), len(result.errors))
    return RubricSummary(len(rows), len(result.rows), len(result.errors))


def check_run(params: Mapping[str, Any], rows_path: str) -> RubricSummary:
    """The pipeline's first step: validate the run, then write the dataset rows for the rubric step.

    :func:`~autorater_pipelines.gecko.preflight.validate_run` checks every parameter and the dataset; the rows (local
    media paths resolved) are written to ``rows_path`` as JSONL. No model is called: the rubric step, which may
    call one, is a separate step with a retry policy, so that a bad parameter fails once, not once per retry.

    Returns:
        Row counts (``rubric_count`` and ``error_count`` are 0: no rubric is made here).

    Raises:
        InputError: the first problem :func:`validate_run` finds (nothing is written then).
    """
    run = validate_run(params)
    rows = run.rows or []
    io.write_jsonl(rows_path, rows)
    return RubricSummary(len(rows), 0, 0)


def rubrics_for_rows(
    *,
    rows_path: str,
    id_columns: Sequence[str],
    media_type: str = "image",
    prompt_column: str = "",
    rubrics_column: str = "",
    rubric_generation_model: str = "",
    rubric_generation_parameters: Mapping[str, Any] | None = None,
    rubric_generation_prompt_template: str = "",
    project: str = "",
    location: str = "",
    rubrics_path: str,
    errors_path: str,
    pipeline_root: str = "",
) -> RubricSummary:
    """Give every row of ``rows_path`` (written by :func:`check_run`) a rubric; arguments as :func:`make_rubrics`.

    ``pipeline_root``: the pipeline's root; on Cloud Storage the response cache defaults to
    ``<pipeline_root>/autorater-cache`` (:func:`autorater_pipelines.models.use_pipeline_root_cache`), so a retried
    task or a re-run of the pipeline repeats no finished call.

    Raises:
        ModelCallError: the model calls stopped early and ``rubric_generation_parameters.strict`` is set (every
            row is written first: the rows not called are error rows with the reason), or the process got SIGTERM.
    """
    models.use_pipeline_root_cache(pipeline_root)
    rows = io.read_jsonl(rows_path)
    result = make_rubrics(
        rows,
        id_columns=id_columns,
        media_type=media_type,
        prompt_column=prompt_column,
        rubrics_column=rubrics_column,
        rubric_generation_model=rubric_generation_model,
        rubric_generation_parameters=rubric_generation_parameters,
        rubric_generation_prompt_template=rubric_generation_prompt_template,
        project=project,
        location=location,
    )
    io.write_jsonl(rubrics_path, result.rows)
    io.write_jsonl(errors_path, result.errors)
    logger.info("%d of %d rubrics, %d error rows", len(result.rows), len(rows), len(result.errors))
    if not rubrics_column:
        options = RubricGenerationParameters.parse(rubric_generation_parameters, source="rubric_generation_parameters")
        stop_if_strict(result.errors, strict=options.strict, stage="rubric generation")
    return RubricSummary(len(rows), len(result.rows), len(result.errors))


def stop_if_strict(errors: Sequence[Mapping[str, Any]], *, strict: bool, stage: str) -> None:
    """Raise :class:`ModelCallError` in strict mode when rows were not called because the model calls stopped."""
    not_called = [e for e in errors if e.get("error_kind") == NOT_CALLED]
    if strict and not_called:
        raise ModelCallError(
            f"{stage} stopped early (strict): {len(not_called)} row(s) not called; every row was written. "
            f"First reason: {not_called[0].get('error_message')}"
        )
