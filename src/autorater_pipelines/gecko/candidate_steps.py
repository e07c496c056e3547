"""The ``gecko`` pipeline's candidates and generated responses (issue 23): ``response_columns``, ``response_model``.

``response_columns = {"model_a": "response_a", "model_b": "response_b"}``: the rubric step makes each prompt's
rubrics once; the validator step checks every candidate's column against those same rubrics
(:func:`validate_responses`; each request and row carries the candidate's name in ``candidate``, so replay
lines are keyed by the id columns, ``candidate`` and ``question_id``); the scoring step
(:func:`score_candidates`) writes one result or error row per prompt and candidate (a prompt without rubrics
is an error row of every candidate), each candidate's metrics, Vertex AI's ``win_rates`` and the per-rubric
comparison of every pair (:func:`autorater_pipelines.gecko.candidates.compare`, as the DataFrame API's
:func:`~autorater_pipelines.gecko.candidates.evaluate_candidates`).

``response_model``: before validation, each row's text response is generated from its prompt by AutoSxS's
inference stage (:func:`autorater_pipelines.pairwise.responses.generate_responses`; replay key: id columns and
``model`` = ``"response"``) into ``media_column``; a failed generation is an error row of stage ``inference``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.evaluation.values import is_blank
from autorater_pipelines.gecko._common import StageResult, error_row
from autorater_pipelines.gecko.candidates import CANDIDATE_COLUMN, GENERATED_COLUMN, candidate_rows, compare
from autorater_pipelines.gecko.params import ResponseModel
from autorater_pipelines.pairwise.responses import generate_responses

__all__ = ["generate_text_responses", "score_candidates", "validate_responses"]

Validate = Callable[[Sequence[Mapping[str, Any]], Sequence[str], str], StageResult]
"""``validate(rows, id_columns, media_column)``: the validator stage on rows."""


def generate_text_responses(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    prompt_column: str,
    media_column: str,
    responder: ResponseModel,
) -> StageResult:
    """Generate each row's response to its prompt into ``media_column`` (``response_model``).

    Returns:
        ``StageResult(rows with the response, error rows)``: a row whose prompt is blank (kind ``missing_prompt``)
        or whose generation failed (the model error kind and message) is an error row of stage ``inference``.

    Raises:
        InputError: bad ``response_model_parameters`` or model spec.
        ModelCallError: the process got SIGTERM.
    """
    errors: list[dict[str, Any]] = []
    examples: list[dict[str, Any]] = []
    prompt_key, text_key, error_key = "model_response_prompt", "response_response", "inference_error_response"
    for row in rows:
        prompt = row.get(prompt_column)
        if is_blank(prompt) or not isinstance(prompt, str):
            message = f"column {prompt_column!r} has no prompt to generate a response for, got {prompt!r}"
            errors.append(error_row(row, id_columns, stage="inference", kind="missing_prompt", message=message))
        else:
            examples.append({**row, prompt_key: prompt})
    if examples:
        generate_responses(examples, responder, id_columns)
    out = []
    for example in examples:
        example.pop(prompt_key)
        text, failure = example.pop(text_key, None), example.pop(error_key, None)
        if failure is not None or text is None:
            kind, _, message = str(failure or "blocked: no text").partition(": ")
            message = f"response_model {responder.model!r}: {message}"
            errors.append(error_row(example, id_columns, stage="inference", kind=kind, message=message))
        else:
            out.append({**example, media_column: text})
    return StageResult(out, errors)


def validate_responses(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    media_column: str,
    response_columns: Mapping[str, str] | None,
    validate: Validate,
    responder: ResponseModel | None = None,
    prompt_column: str = "",
) -> StageResult:
    """The validator stage on ``media_column``, on each candidate's column, or on responses generated first.

    With ``responder`` (``response_model``), responses are generated from ``prompt_column`` into ``media_column``
    (default :data:`~autorater_pipelines.gecko.candidates.GENERATED_COLUMN`, ``response``) and validated; with
    ``response_columns``, every candidate's column is validated against the same rubric rows.

    Returns:
        One validation row per row (and candidate, with ``candidate`` set), and the error rows (generation's first).
    """
    if responder is not None:
        media_column = media_column or GENERATED_COLUMN
        generated = generate_text_responses(
            rows, id_columns=id_columns, prompt_column=prompt_column, media_column=media_column, responder=responder
        )
        validated = validate(generated.rows, id_columns, media_column)
        return StageResult(validated.rows, generated.errors + validated.errors)
    if not response_columns:
        return validate(rows, id_columns, media_column)
    out: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for name, column in sorted(response_columns.items()):  # name order: KFP's struct keeps no order
        result = validate(candidate_rows(rows, name), [*id_columns, CANDIDATE_COLUMN], column)
        out += result.rows
        errors += result.errors
    return StageResult(out, errors)


def _per_candidate(error: Mapping[str, Any], id_columns: Sequence[str], names: Sequence[str]) -> list[dict[str, Any]]:
    """An error row of a prompt (rubric step), once per candidate; a candidate's own row as it is."""
    if CANDIDATE_COLUMN in error:
        return [dict(error)]
    ids = {c: error.get(c) for c in id_columns}
    rest = {k: v for k, v in error.items() if k not in ids}
    return [{**ids, CANDIDATE_COLUMN: name, **rest} for name in names]


def score_candidates(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    response_columns: Mapping[str, str],
    earlier_errors: Sequence[Mapping[str, Any]],
    score: Callable[..., Any],
) -> Any:
    """Score every candidate's validation rows; metrics per candidate, ``win_rates`` and the per-rubric comparison.

    Args:
        rows: Validation rows of :func:`validate_responses` (with ``candidate``).
        id_columns: The run's id columns (without ``candidate``).
        response_columns: ``{candidate: column}``.
        earlier_errors: Error rows of the rubric step (one per prompt: repeated for every candidate) and of the
            validator step (one per prompt and candidate).
        score: :func:`autorater_pipelines.gecko.steps.score_rows` with the run's ``scoring`` bound.

    Returns:
        ``score``'s ``ScoreResult`` over every candidate's rows (``evaluation_count`` = prompts × candidates), its
        metrics completed with ``response_columns``, ``candidates`` (``{candidate: metrics}``, each as a one-column
        run's: ``mean_score``, ``stdev_score``, ``pass_rate`` …), ``win_rates`` and ``per_rubric_comparison``
        (``{"<a> vs <b>": …}``, rubrics named ``<id column>=<value>: <rubric_id>``).
    """
    names = sorted(response_columns)  # name order, as the validator step's (KFP's struct keeps no order)
    ids = [*id_columns, CANDIDATE_COLUMN]
    errors = [e for error in earlier_errors for e in _per_candidate(error, id_columns, names)]
    overall = score(rows, id_columns=ids, earlier_errors=errors)
    prompts: dict[Any, str] = {}
    for row in [*rows, *errors]:
        prompts.setdefault(io.id_key(row, id_columns), ", ".join(f"{c}={row.get(c)}" for c in id_columns))
    by_candidate: dict[str, dict[Any, Mapping[str, Any]]] = {n: {} for n in names}
    for result in overall.results:
        by_candidate[result[CANDIDATE_COLUMN]][io.id_key(result, id_columns)] = result
    candidates = {
        name: score(
            [r for r in rows if r.get(CANDIDATE_COLUMN) == name],
            id_columns=ids,
            earlier_errors=[e for e in errors if e.get(CANDIDATE_COLUMN) == name],
        ).metrics
        for name in names
    }
    comparison = compare({n: [by_candidate[n].get(k) for k in prompts] for n in names}, labels=list(prompts.values()))
    overall.metrics.update(response_columns=dict(sorted(response_columns.items())), candidates=candidates, **comparison)
    return overall
