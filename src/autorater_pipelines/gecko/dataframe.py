"""Gecko on a pandas DataFrame, from a notebook: the pipeline's steps in-process, no Kubeflow Pipelines.

As in the Vertex AI SDK's Gecko flow (``RubricBasedMetric.generate_rubrics(df)`` then ``EvalTask.evaluate``)::

    from autorater_pipelines import gecko

    with_rubrics = gecko.generate_rubrics(df, prompt_column="prompt")
    results, metrics = gecko.evaluate(with_rubrics, media_column="image")
    results["final_score"].mean()

    # text responses generated from the prompts first, as the pipeline's response_model
    results, metrics = gecko.evaluate(df, media_type="text", response_model="gemini-2.5-flash")

Both call the same step functions as the ``gecko`` pipeline (:func:`autorater_pipelines.gecko.generation.make_rubrics`,
:func:`~autorater_pipelines.gecko.steps.validate_rows`, :func:`~autorater_pipelines.gecko.steps.score_rows`)
through the same model-call layer (cache, retries, rate limits, a tqdm progress bar per stage), and take the
pipeline's parameters by the same names. They work inside Jupyter's running event loop. Every input row is in
the output, in order and with its index: rows that could not be handled carry ``error_stage``, ``error_kind``
and ``error_message`` (all error rows are also in ``DataFrame.attrs["error_messages"]``).

Columns added, as the pipeline writes them plus the SDK's names where they differ:

- ``generate_rubrics``: ``keywords``, ``qas``, ``rubric_warnings``; ``rubrics`` (the SDK's text, one
  ``<question>…<choices>yes,no`` line per question) and ``qa_records`` (the questions with the SDK's field
  names ``question``, ``question_type``, ``gt_answer``, ``answer_choices``, ``justification``, plus
  ``question_id``, ``keyword_id``, ``dependencies``); ``rubric_groups`` (Vertex AI's new client's shape
  ``{"gecko_rubrics": [Rubric, ...]}``, :mod:`autorater_pipelines.gecko.vertex_rubrics`; pass it back as
  ``rubrics_column="rubric_groups"``, or to Vertex's ``evaluate``).
- ``evaluate``: the above and ``qa_results`` (per question: expected, verdict, score, status …),
  ``final_score``, ``keyword_coverage``, ``questions_scored``, ``parse_failures``, ``missing_answers``,
  ``raw_responses`` and ``rubric_results`` (``{question_id: the validator's answer}``; the SDK keys it by
  question text, so two questions with the same text collided there), and Vertex's ``rubric_verdicts`` and
  ``score``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.notebook import FrameRows, frame_rows, outside_event_loop
from autorater_pipelines.gecko import candidate_steps, steps
from autorater_pipelines.gecko._common import StageResult, error_row
from autorater_pipelines.gecko.candidates import GENERATED_COLUMN
from autorater_pipelines.gecko.dataset import check_generated_column
from autorater_pipelines.gecko.generation import SUPPLIED_RUBRICS, make_rubrics, prompt_version
from autorater_pipelines.gecko.params import RubricGenerator
from autorater_pipelines.gecko.preflight import validate_parameters
from autorater_pipelines.gecko.rubrics import parse_supplied_rubrics
from autorater_pipelines.gecko.templates import rubrics_text
from autorater_pipelines.gecko.vertex_rubrics import rubric_groups_from_rubric

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate", "generate_rubrics"]

_RUBRIC = "__gecko_rubric"

PROMPT_VERSION = "rubric_prompt_version"
"""``DataFrame.attrs`` key of :func:`generate_rubrics`' prompt version, read back by :func:`evaluate`."""


def _with_progress(parameters: Mapping[str, Any] | None, progress: bool) -> dict[str, Any]:
    out = dict(parameters or {})
    out.setdefault("progress", progress)
    return out


def qa_records(qas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The questions of a rubric with the Vertex SDK's ``QARecord`` field names (and ours that it lacks)."""
    return [
        {
            "question_id": qa.get("question_id"),
            "question": qa.get("question"),
            "question_type": qa.get("question_type"),
            "gt_answer": qa.get("answer"),
            "answer_choices": list(qa.get("choices") or []),
            "justification": qa.get("justification"),
            "keyword_id": qa.get("keyword_id"),
            "dependencies": list(qa.get("dependencies") or []),
        }
        for qa in qas
    ]


def _sdk_rubric(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """A supplied rubric from the SDK's ``qa_records`` (``gt_answer``, ``answer_choices``), or None."""
    records = row.get("qa_records")
    if not isinstance(records, list) or not records:
        return None
    qas = []
    for record in records:
        item = dict(record) if isinstance(record, Mapping) else {}
        if "gt_answer" in item:
            item["answer"] = item.pop("gt_answer")
        if "answer_choices" in item:
            item["choices"] = item.pop("answer_choices")
        qas.append({k: v for k, v in item.items() if v is not None or k in ("question", "answer")})
    return {"keywords": row.get("keywords"), "qas": qas}


def _frame(
    df: pd.DataFrame,
    frame: FrameRows,
    out_rows: Sequence[Mapping[str, Any] | None],
    errors: Sequence[Mapping[str, Any]],
) -> pd.DataFrame:
    """The output DataFrame: input index, one row per input row, error columns for rows without output."""
    import pandas as pd

    first_error: dict[tuple, Mapping[str, Any]] = {}
    for error in errors:
        first_error.setdefault(io.id_key(error, frame.id_columns), error)
    records = []
    for row, out in zip(frame.rows, out_rows, strict=True):
        record = dict(out if out is not None else row)
        error = first_error.get(io.id_key(row, frame.id_columns)) or {}
        record.update(
            error_stage=error.get("stage"), error_kind=error.get("error_kind"), error_message=error.get("error_message")
        )
        if error.get("handled_as"):
            record["error_handled_as"] = error["handled_as"]
        if frame.index_column is not None:
            record.pop(frame.index_column, None)
        records.append(record)
    result = pd.DataFrame.from_records(records, index=df.index)
    result.attrs["error_messages"] = [dict(e) for e in errors]
    return result


def _add_rubric_columns(row: dict[str, Any]) -> dict[str, Any]:
    qas = row.get("qas") or []
    row["rubrics"] = rubrics_text(qas) if qas else None
    row["qa_records"] = qa_records(qas) if qas else None
    row["rubric_groups"] = rubric_groups_from_rubric(row) if qas else None  # Vertex AI's shape, for its client
    return row


@outside_event_loop
def generate_rubrics(
    df: pd.DataFrame,
    *,
    prompt_column: str = "prompt",
    media_type: str = "image",
    rubric_generation_model: str = "",
    rubric_generation_parameters: Mapping[str, Any] | None = None,
    rubric_generation_prompt_template: str = "",
    id_columns: Sequence[str] | None = None,
    project: str = "",
    location: str = "",
    progress: bool = True,
) -> pd.DataFrame:
    """Generate a rubric (keywords and one question per keyword) for every row's prompt.

    Args:
        df: One row per generated image or video, with the generation prompt in ``prompt_column``.
        prompt_column: Column with the text-to-image/video prompt.
        media_type: ``image`` (yes/no questions) or ``video`` (multiple choice a–d).
        rubric_generation_model: Model spec (``gemini-2.5-flash``, ``openai/<model>``, ``replay/<jsonl>`` …);
            empty = the pipeline's default Gemini model.
        rubric_generation_parameters: Model settings (``temperature``, ``base_url``, ``cache_dir`` …).
        rubric_generation_prompt_template: Override of the prompt, Jinja2 (``{{ prompt }}``) or Vertex AI SDK
            syntax (``{prompt}``); empty = built-in.
        id_columns: Columns identifying each row (replay keys); None = the DataFrame index (column ``index``
            or the index's name). A string is one column.
        project: Google Cloud project of Vertex AI calls.
        location: Google Cloud region of Vertex AI calls.
        progress: Show a progress bar (unless ``rubric_generation_parameters`` says otherwise).

    Returns:
        A copy of ``df`` with the rubric columns (module docstring); a row without a rubric has them empty and
        its reason in ``error_stage``/``error_kind``/``error_message``.

    Raises:
        InputError: bad parameters, template, columns or ids; nothing has been called.
        ModelCallError: generation stopped after too many consecutive failed calls.

    """
    frame = frame_rows(df, id_columns=id_columns)
    generator = RubricGenerator.of(
        rubric_generation_model,
        _with_progress(rubric_generation_parameters, progress),
        rubric_generation_prompt_template,
        project=project,
        location=location,
    )
    result = make_rubrics(
        frame.rows,
        id_columns=frame.id_columns,
        media_type=media_type,
        prompt_column=prompt_column,
        rubrics_column="",
        generator=generator,
    )
    by_id = {io.id_key(r, frame.id_columns): _add_rubric_columns(dict(r)) for r in result.rows}
    rows = [by_id.get(io.id_key(r, frame.id_columns)) for r in frame.rows]
    filled = [
        row
        if row is not None
        else {**source, **dict.fromkeys(("keywords", "qas", "rubric_warnings", "rubrics", "rubric_groups"))}
        for row, source in zip(rows, frame.rows, strict=True)
    ]
    out = _frame(df, frame, filled, result.errors)
    out.attrs[PROMPT_VERSION] = prompt_version(generator, media_type=media_type)
    return out


def _rubrics_from_frame(frame: FrameRows, rubrics_column: str) -> StageResult:
    """Rubric rows from ``generate_rubrics`` output (``qas``) or the SDK's ``qa_records``; errors carried over."""
    ready, supplied, errors = [], [], []
    for row in frame.rows:
        if isinstance(row.get("qas"), list) and row["qas"]:
            ready.append(row)
        elif (rubric := _sdk_rubric(row)) is not None:
            supplied.append({**row, _RUBRIC: rubric})
        elif row.get("error_kind"):  # generate_rubrics could not make this row's rubric: keep its reason
            stage = row.get("error_stage") or "rubric_generation"
            message = str(row.get("error_message"))
            errors.append(error_row(row, frame.id_columns, stage=stage, kind=row["error_kind"], message=message))
        else:
            message = f"no rubric: the DataFrame has no usable {rubrics_column or 'qas'!r} for this row"
            errors.append(error_row(row, frame.id_columns, stage="rubrics", kind="missing_rubric", message=message))
    if supplied:
        parsed = parse_supplied_rubrics(supplied, id_columns=frame.id_columns, rubrics_column=_RUBRIC)
        ready += parsed.rows
        errors += parsed.errors
    order = {io.id_key(r, frame.id_columns): i for i, r in enumerate(frame.rows)}
    ready.sort(key=lambda r: order[io.id_key(r, frame.id_columns)])
    return StageResult(ready, errors)


@outside_event_loop
def evaluate(
    df: pd.DataFrame,
    *,
    media_column: str | None = None,
    prompt_column: str = "prompt",
    media_type: str = "image",
    rubrics_column: str = "",
    rubric_group: str = "",
    rubric_generation_model: str = "",
    validator_model: str = "",
    rubric_generation_parameters: Mapping[str, Any] | None = None,
    validator_parameters: Mapping[str, Any] | None = None,
    rubric_generation_prompt_template: str = "",
    validator_prompt_template: str = "",
    scoring: Mapping[str, Any] | None = None,
    id_columns: Sequence[str] | None = None,
    project: str = "",
    location: str = "",
    progress: bool = True,
    response_model: str = "",
    response_model_parameters: Mapping[str, Any] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Validate every row's media against its rubric and score it, as the ``gecko`` pipeline does.

    Rubrics come from, in this order: ``rubrics_column`` when set (supplied rubrics, as in the pipeline); the
    ``qas`` column of :func:`generate_rubrics`; the Vertex SDK's ``qa_records``; otherwise they are generated
    from ``prompt_column`` first.

    Args:
        df: One row per generated image or video.
        media_column: Column with the media: ``gs://`` URI, URL, local path or Vertex ``contents`` JSON string
            (the SDK's ``response_column_name``), or the response text with ``media_type`` text; None =
            ``image``, or ``response`` (the column the responses are generated into) with ``response_model``.
        prompt_column: Column with the generation prompt (generation, and ``{prompt}`` in validator templates).
        media_type: ``image`` or ``video``.
        rubrics_column: Column with supplied rubrics (``{"keywords", "qas": [...]}``, a list of questions, or
            Vertex AI ``rubric_groups``, e.g. the ``rubric_groups`` column of :func:`generate_rubrics`).
        rubric_group: The group of a ``rubric_groups`` column to use ("" = the only group), as the pipeline's.
        rubric_generation_model: As :func:`generate_rubrics`.
        validator_model: Validator model spec; empty = the pipeline's default Gemini model.
        rubric_generation_parameters: As :func:`generate_rubrics`.
        validator_parameters: ``questions_per_call``, ``sampling_count``, ``logprobs`` and model settings.
        rubric_generation_prompt_template: As :func:`generate_rubrics`.
        validator_prompt_template: Override of the validator prompt, Jinja2 or Vertex AI SDK syntax
            (``{rubrics}``, ``{image}`` …); replies as JSON or ``<question>``/``Verdict:`` blocks are read.
        scoring: ``dependency_masking``, ``logprob_weighting``, ``missing_answer_policy``,
            ``unparseable_answer_policy`` (the pipeline's ``scoring``).
        id_columns: As :func:`generate_rubrics`.
        project: Google Cloud project of Vertex AI calls.
        location: Google Cloud region of Vertex AI calls.
        progress: Show progress bars (unless the parameters say otherwise).
        response_model: Generate each row's text response from ``prompt_column`` into ``media_column`` before
            validation, as the pipeline's ``response_model`` (needs ``media_type`` text; replay key: the id
            columns and ``model`` = ``"response"``); a row whose generation fails is an error row of stage
            ``inference``. Empty = the responses are in ``media_column``.
        response_model_parameters: The response model's settings (``temperature``, ``base_url`` …), as the
            pipeline's.

    Returns:
        ``(results, metrics)``: one results row per input row (module docstring) and the metrics the pipeline
        writes to ``metrics.json`` (``mean_final_score``, ``accuracy_by_question_type``, ``parse_failures``,
        ``final_score_denominator``, ``rubric_prompt_version`` …).

    Raises:
        InputError: bad parameters (every one, for every stage, before the first call: the pipeline's parameter
            model), templates, columns or ids, ``response_model`` without ``media_type`` text or with a
            ``media_column`` the DataFrame has, or an explicit ``base_url`` where nothing answers; nothing has
            been called.
        ModelCallError: a stage stopped after too many consecutive failed calls.

    """
    frame = frame_rows(df, id_columns=id_columns)
    has_prompt = bool(prompt_column) and any(prompt_column in r for r in frame.rows)
    generate = not rubrics_column and not any(
        isinstance(r.get("qas"), list) or isinstance(r.get("qa_records"), list) for r in frame.rows
    )
    if media_column is None:
        media_column = "" if response_model else "image"
    if response_model:
        check_generated_column(media_column or GENERATED_COLUMN, df.columns, "the DataFrame")
    elif media_column not in df.columns:
        raise InputError(
            f"column {media_column!r} (media_column) is not in the DataFrame; columns: {list(df.columns)}",
            source="media_column",
        )
    run = validate_parameters(  # the pipeline's parameter model, checked as the pipeline's first step does
        {
            "id_columns": frame.id_columns,
            "media_column": media_column,
            "media_type": media_type,
            "prompt_column": prompt_column if has_prompt or generate else "",
            "rubrics_column": rubrics_column or ("" if generate else _RUBRIC),  # rubrics given: no prompt needed
            "rubric_group": rubric_group,
            "rubric_generation_model": rubric_generation_model,
            "rubric_generation_parameters": _with_progress(rubric_generation_parameters, progress),
            "rubric_generation_prompt_template": rubric_generation_prompt_template,
            "validator_model": validator_model,
            "validator_parameters": _with_progress(validator_parameters, progress),
            "validator_prompt_template": validator_prompt_template,
            "response_model": response_model,
            "response_model_parameters": _with_progress(response_model_parameters, progress),
            "scoring": scoring,
            "project": project,
            "location": location,
        },
        probe_endpoint=True,
    )
    if rubrics_column or generate:
        rubrics = make_rubrics(
            frame.rows,
            id_columns=run.id_columns,
            media_type=run.media_type,
            prompt_column=prompt_column,
            rubrics_column=rubrics_column,
            generator=run.rubric_generator,
            rubric_group=rubric_group,
        )
        version = prompt_version(None if rubrics_column else run.rubric_generator, media_type=run.media_type)
    else:
        rubrics = _rubrics_from_frame(frame, rubrics_column)
        version = str(df.attrs.get(PROMPT_VERSION) or SUPPLIED_RUBRICS)  # generate_rubrics' output, or given
    validator = run.validator
    validated = candidate_steps.validate_responses(  # the pipeline's validator step (response_model first)
        rubrics.rows,
        id_columns=run.id_columns,
        media_column=run.media_column,
        response_columns=None,
        responder=run.responder,
        prompt_column=prompt_column,
        validate=lambda part, ids, column: steps.validate_rows(
            part,
            id_columns=ids,
            media_column=column,
            media_type=run.media_type,
            validator=validator,
            prompt_column=prompt_column if has_prompt else "",
        ),
    )
    scored = steps.score_rows(
        validated.rows,
        id_columns=run.id_columns,
        scoring=run.scoring,
        earlier_errors=rubrics.errors + validated.errors,
        rubric_prompt_version=version,
    )
    return _frame(df, frame, _result_rows(frame, validated.rows, scored.results), scored.errors), scored.metrics


def _result_rows(
    frame: FrameRows, validated: Sequence[Mapping[str, Any]], scored: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One results row per input row, in input order: its score and rubric columns, else ``final_score`` None."""
    qas = {io.id_key(r, frame.id_columns): r["qas"] for r in validated}
    results = {}
    for result in scored:
        key = io.id_key(result, frame.id_columns)
        row = _add_rubric_columns({**result, "qas": qas[key]})
        row["rubric_results"] = {qa["question_id"]: qa.get("raw") for qa in result["qa_results"]}
        row.pop(_RUBRIC, None)
        results[key] = row
    unscored = ({k: v for k, v in r.items() if k != _RUBRIC} | {"final_score": None} for r in frame.rows)
    return [results.get(io.id_key(r, frame.id_columns)) or u for r, u in zip(frame.rows, unscored, strict=True)]
