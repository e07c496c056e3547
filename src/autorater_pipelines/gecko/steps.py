"""Gecko pipeline steps, one function per component: JSONL files in, JSONL files out.

Each step is the single call of one KFP component (``components/gecko_*.py``) and can also be called directly:
:func:`check_run` (``check_gecko_run``), :func:`rubrics_for_rows` (``prepare_gecko_rubrics``),
:func:`validate_media` (``validate_gecko_media``), :func:`score_validations` (``score_gecko_validations``),
:func:`export_results` (``export_gecko_results``); the scoring step and its core live in
:mod:`~autorater_pipelines.gecko.score_step` and are re-exported here, the module the components call. A step
builds the run's typed stages from the parameters its component receives
(:class:`~autorater_pipelines.gecko.params.RubricGenerator`, :class:`~autorater_pipelines.gecko.params.Validator`;
KFP's struct form undone: ``{"sampling_count": 2}`` arrives as ``2.0``) and passes them whole to the stage
modules (:mod:`~autorater_pipelines.gecko.generation`, :mod:`~autorater_pipelines.gecko.validation`,
:mod:`~autorater_pipelines.gecko.rubric_scoring`); the in-memory cores (:func:`make_rubrics`, :func:`validate_rows`,
:func:`score_rows`) are shared with the DataFrame API.

Files (one JSON object per line):

- rubrics: the dataset row (without ``rubrics_column``) + ``keywords``, ``qas``, ``rubric_warnings``;
- validations: rubric row + ``answers`` (every validator sample per question), ``validator``,
  ``raw_responses`` — all a later re-scoring needs, without model calls;
- results: validation row without ``qas``/``answers`` + ``qa_results``, ``final_score`` …
  (:func:`autorater_pipelines.gecko.rubric_scoring.score_row`);
- error messages: id columns, ``stage``, ``error_kind``, ``error_message`` (+ ``raw``, ``question_ids``,
  ``handled_as`` where they apply). Every dataset row ends in results or in error messages.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from autorater_pipelines import evaluation, io, models
from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.evaluation.parameters import from_struct
from autorater_pipelines.gecko import candidate_steps
from autorater_pipelines.gecko._common import NOT_CALLED, StageResult
from autorater_pipelines.gecko.export import OUTPUT_FORMATS, ExportResult
from autorater_pipelines.gecko.export import export_results as export_result_rows
from autorater_pipelines.gecko.generation import make_rubrics, prompt_version
from autorater_pipelines.gecko.params import ResponseModel, RubricGenerator, Validator
from autorater_pipelines.gecko.preflight import validate_run
from autorater_pipelines.gecko.score_step import console_metrics, score_rows, score_validations
from autorater_pipelines.gecko.validation import validate

__all__ = [
    "DEFAULT_MODEL",
    "OUTPUT_FORMATS",
    "ExportResult",
    "RubricSummary",
    "check_run",
    "console_metrics",
    "export_results",
    "from_struct",
    "make_rubrics",
    "rubrics_for_rows",
    "score_rows",
    "score_validations",
    "stop_if_strict",
    "validate_media",
    "validate_rows",
]

logger = logging.getLogger(__name__)

DEFAULT_MODEL = evaluation.DEFAULT_MODEL
"""Rubric generator and validator used when the model parameter is empty (Vertex AI)."""


class RubricSummary(NamedTuple):
    """Counts from :func:`check_run` and :func:`rubrics_for_rows`."""

    evaluation_count: int
    """Rows in the evaluation dataset."""
    rubric_count: int
    """Rows with a usable rubric."""
    error_count: int
    """Rows whose rubric is missing, invalid or could not be generated."""
    prompt_version: str = ""
    """The rubric prompt (:func:`~autorater_pipelines.gecko.generation.prompt_version`; "" from :func:`check_run`)."""


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
    rubric_group: str = "",
    rubric_generation_model: str = "",
    rubric_generation_parameters: Mapping[str, Any] | None = None,
    rubric_generation_prompt_template: str = "",
    project: str = "",
    location: str = "",
    rubrics_path: str,
    errors_path: str,
    pipeline_root: str = "",
) -> RubricSummary:
    """Give every row of ``rows_path`` (written by :func:`check_run`) a rubric; the pipeline parameters of the stage.

    ``pipeline_root``: the pipeline's root; on Cloud Storage the response cache defaults to
    ``<pipeline_root>/autorater-cache`` (:func:`autorater_pipelines.models.use_pipeline_root_cache`), so a retried
    task or a re-run of the pipeline repeats no finished call.

    Raises:
        ModelCallError: the model calls stopped early and ``rubric_generation_parameters.strict`` is set (every
            row is written first: the rows not called are error rows with the reason), or the process got SIGTERM.
    """
    models.use_pipeline_root_cache(pipeline_root)
    generator = None
    if not rubrics_column:
        generator = RubricGenerator.of(
            rubric_generation_model,
            rubric_generation_parameters,
            rubric_generation_prompt_template,
            project=project,
            location=location,
        )
    rows = io.read_jsonl(rows_path)
    result = make_rubrics(
        rows,
        id_columns=id_columns,
        media_type=media_type,
        prompt_column=prompt_column,
        rubrics_column=rubrics_column,
        generator=generator,
        rubric_group=rubric_group,
    )
    io.write_jsonl(rubrics_path, result.rows)
    io.write_jsonl(errors_path, result.errors)
    logger.info("%d of %d rubrics, %d error rows", len(result.rows), len(rows), len(result.errors))
    if generator is not None:
        stop_if_strict(result.errors, strict=generator.options.strict, stage="rubric generation")
    version = prompt_version(generator, media_type=media_type)
    return RubricSummary(len(rows), len(result.rows), len(result.errors), version)


def stop_if_strict(errors: Sequence[Mapping[str, Any]], *, strict: bool, stage: str) -> None:
    """Raise :class:`ModelCallError` in strict mode when rows were not called because the model calls stopped."""
    not_called = [e for e in errors if e.get("error_kind") == NOT_CALLED]
    if strict and not_called:
        raise ModelCallError(
            f"{stage} stopped early (strict): {len(not_called)} row(s) not called; every row was written. "
            f"First reason: {not_called[0].get('error_message')}"
        )


def validate_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    media_column: str,
    media_type: str,
    validator: Validator,
    prompt_column: str = "",
) -> StageResult:
    """The in-memory core of :func:`validate_media`, shared with the DataFrame API (no rows: no call).

    Returns:
        :func:`~autorater_pipelines.gecko.validation.validate`'s ``StageResult``.
    """
    if not rows:
        return StageResult([], [])
    return validate(
        rows,
        id_columns=id_columns,
        media_column=media_column,
        media_type=media_type,
        validator=validator,
        prompt_column=prompt_column or None,
    )


def validate_media(
    *,
    rubrics_path: str,
    id_columns: Sequence[str],
    media_column: str,
    media_type: str = "image",
    validator_model: str = "",
    validator_parameters: Mapping[str, Any] | None = None,
    validator_prompt_template: str = "",
    project: str = "",
    location: str = "",
    prompt_column: str = "",
    validations_path: str | None = None,
    errors_path: str | None = None,
    pipeline_root: str = "",
    response_columns: Mapping[str, str] | None = None,
    response_model: str = "",
    response_model_parameters: Mapping[str, Any] | None = None,
) -> int:
    """Have the validator answer every rubric question about each row's media (:func:`gecko.validate`).

    Args:
        rubrics_path: Rubric rows from :func:`rubrics_for_rows`.
        id_columns: Columns that identify a row (and key replay recordings).
        media_column: Column with the image/video.
        media_type: ``image`` or ``video``.
        validator_model: Validator model spec; empty = :data:`DEFAULT_MODEL`.
        validator_parameters: ``questions_per_call`` (0 or 1), ``sampling_count`` and
            :class:`GenerateConfig` fields.
        validator_prompt_template: Override of the validator prompt (Jinja2 or Vertex AI SDK syntax); empty =
            built-in.
        project: Google Cloud project for Vertex AI.
        location: Google Cloud region for Vertex AI.
        prompt_column: Column with the generation prompt, for validator templates that show it (``{prompt}``).
        validations_path: Where to write the validation rows (JSONL), or None.
        errors_path: Where to write the error rows of this stage (rows whose media cannot be read), or None.
        pipeline_root: The pipeline's root; on Cloud Storage the response cache defaults to
            ``<pipeline_root>/autorater-cache``, so a retried task or a re-run repeats no finished call.
        response_columns: ``{candidate: column}``: every candidate's column is validated against each row's
            rubrics (:func:`~autorater_pipelines.gecko.candidate_steps.validate_responses`); empty = ``media_column``.
        response_model: Generate each row's text response from ``prompt_column`` into ``media_column`` first
            (:func:`~autorater_pipelines.gecko.candidate_steps.generate_text_responses`); empty = read it.
        response_model_parameters: The response model's settings (as AutoSxS's ``model_a_parameters``).

    Returns:
        The number of validation rows written.

    Raises:
        InputError: bad parameters or template.
        ModelCallError: the model calls stopped early and ``validator_parameters.strict`` is set (every row is
            written first: the rows not called are error rows with the reason), or the process got SIGTERM.
    """
    models.use_pipeline_root_cache(pipeline_root)
    validator = Validator.of(
        validator_model, validator_parameters, validator_prompt_template, project=project, location=location
    )
    rows = io.read_jsonl(rubrics_path)
    responder = None
    if response_model:
        responder = ResponseModel.of(response_model, response_model_parameters, project=project, location=location)
    result = candidate_steps.validate_responses(
        rows,
        id_columns=id_columns,
        media_column=media_column,
        response_columns=from_struct(response_columns),
        responder=responder,
        prompt_column=prompt_column,
        validate=lambda part, ids, column: validate_rows(
            part,
            id_columns=ids,
            media_column=column,
            media_type=media_type,
            validator=validator,
            prompt_column=prompt_column,
        ),
    )
    if validations_path:
        io.write_jsonl(validations_path, result.rows)
    if errors_path:
        io.write_jsonl(errors_path, result.errors)
    logger.info("validated %d of %d rows, %d error rows", len(result.rows), len(rows), len(result.errors))
    stop_if_strict(result.errors, strict=validator.options.strict, stage="validation")
    return len(result.rows)


def export_results(
    *,
    results_path: str,
    output_format: str,
    destination: str,
    bigquery_destination_prefix: str = "",
    project: str = "",
    bigquery_api_endpoint: str | None = None,
) -> ExportResult:
    """Export the result rows (:func:`autorater_pipelines.gecko.export.export_results`).

    Args:
        results_path: Result rows from :func:`score_validations`.
        output_format: ``jsonl`` (one object per line), ``json`` (one array) or ``bigquery`` (a new table, and
            the JSONL file).
        destination: File path for the export.
        bigquery_destination_prefix: ``project.dataset`` or ``project.dataset.table_prefix`` (``bigquery`` only).
        project: Project that runs the BigQuery load job; empty = the destination's project.
        bigquery_api_endpoint: BigQuery endpoint override; None = ``$BIGQUERY_EMULATOR_HOST`` or Google's.

    Returns:
        The file written and, for ``bigquery``, ``bq://project.dataset.table``.

    Raises:
        InputError: an unsupported format, a bad prefix, or a rejected BigQuery load.
    """
    return export_result_rows(
        io.read_jsonl(results_path),
        output_format=output_format,
        destination=destination,
        bigquery_destination_prefix=bigquery_destination_prefix,
        project=project,
        bigquery_api_endpoint=bigquery_api_endpoint,
    )
