"""The Gecko pipeline's scoring step (``score_gecko_validations``): validation rows in, results and metrics out.

:func:`score_validations` is the step (re-exported by :mod:`autorater_pipelines.gecko.steps`, whose name the
compiled template's component calls); :func:`score_rows` is its in-memory core, shared with the DataFrame API;
:func:`console_metrics` flattens the metrics for the KFP ``Metrics`` artifact. Scoring itself is
:mod:`autorater_pipelines.gecko.rubric_scoring`; a run comparing candidates is scored per candidate by
:func:`autorater_pipelines.gecko.candidate_steps.score_candidates`.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.parameters import from_struct
from autorater_pipelines.gecko import candidate_steps
from autorater_pipelines.gecko._common import MEDIA_REFUSED, NOT_CALLED
from autorater_pipelines.gecko.media_probe import MEDIA_UNSEEN
from autorater_pipelines.gecko.rubric_scoring import ScoreResult, ScoringOptions, score

__all__ = ["console_metrics", "score_rows", "score_validations"]

logger = logging.getLogger("autorater_pipelines.gecko.steps")  # the steps' logger, as before the split


def score_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    scoring: Mapping[str, Any] | ScoringOptions | None = None,
    earlier_errors: Sequence[Mapping[str, Any]] = (),
    rubric_prompt_version: str = "",
) -> ScoreResult:
    """Score validation rows and complete the metrics with the rows earlier stages could not handle.

    The in-memory core of :func:`score_validations` (arguments as there), shared with the DataFrame API;
    ``rubric_prompt_version`` (:func:`~autorater_pipelines.gecko.generation.prompt_version`) is recorded in the
    metrics when given.

    Returns:
        ``ScoreResult(results, errors, metrics)``: errors are ``earlier_errors`` then the scoring step's; the
        metrics are those of :func:`score_validations`.

    Raises:
        InputError: the validator refused the media (an earlier error of kind ``media_not_supported``: a
            text-only model) or failed the media probe (``media_not_seen``), with the model and the fix; raised
            here, in a step without a retry policy, so the run fails at once instead of retrying a validator that
            cannot see images.
    """
    refused = next((e for e in earlier_errors if e.get("error_kind") in (MEDIA_REFUSED, MEDIA_UNSEEN)), None)
    if refused is not None:  # not N row errors: one error naming the model and the fix, before any score
        raise InputError(str(refused.get("error_message")), source="validator_model")
    result = score(rows, id_columns=id_columns, options=from_struct(scoring))
    errors = [dict(e) for e in earlier_errors] + result.errors
    unscored = Counter(e.get("stage", "unknown") for e in errors if "handled_as" not in e)
    not_called = [e for e in errors if e.get("error_kind") == NOT_CALLED and "handled_as" not in e]
    metrics = dict(result.metrics)
    metrics.update(
        evaluation_count=len(earlier_errors) + len(rows),
        rows_unscored=sum(unscored.values()),
        unscored_rows_by_stage=dict(sorted(unscored.items())),
        error_count=len(errors),
        not_called_count=len(not_called),
        model_calls_stopped=str(not_called[0].get("error_message") or "") if not_called else "",
    )
    probe = next((r["validator"]["media_probe"] for r in rows if "media_probe" in (r.get("validator") or {})), None)
    if probe is not None:
        metrics["media_probe"] = probe
    if rubric_prompt_version:
        metrics["rubric_prompt_version"] = rubric_prompt_version
    return ScoreResult(result.results, errors, metrics)


def score_validations(
    *,
    validations_path: str,
    id_columns: Sequence[str],
    scoring: Mapping[str, Any] | None = None,
    earlier_error_paths: Sequence[str] = (),
    results_path: str | None = None,
    error_messages_path: str | None = None,
    metrics_path: str | None = None,
    response_columns: Mapping[str, str] | None = None,
    rubric_prompt_version: str = "",
) -> dict[str, Any]:
    """Score validation rows, gather every stage's error rows and compute the dataset metrics.

    Args:
        validations_path: Validation rows from :func:`~autorater_pipelines.gecko.steps.validate_media`.
        id_columns: Columns that identify a row.
        scoring: ``dependency_masking``, ``logprob_weighting``, ``missing_answer_policy``
            (:class:`autorater_pipelines.gecko.ScoringOptions`).
        earlier_error_paths: Error rows of the rubric and validation steps (one per row they dropped).
        results_path: Where to write the result rows (JSONL), or None.
        error_messages_path: Where to write all error rows (earlier stages first), or None.
        metrics_path: Where to write the metrics (JSON), or None.
        response_columns: ``{candidate: column}`` of a run comparing candidates: rows are scored per prompt and
            candidate, with the comparison metrics of
            :func:`~autorater_pipelines.gecko.candidate_steps.score_candidates`.
        rubric_prompt_version: The rubric step's prompt version, recorded in the metrics.

    Returns:
        The metrics of :func:`autorater_pipelines.gecko.summarize` (``mean_final_score``,
        ``accuracy_by_question_type``, ``parse_failures``, ``rows_scored`` …) and ``scoring_options``, with
        ``evaluation_count`` (dataset rows), ``rows_unscored`` (dataset rows without a result, any stage),
        ``unscored_rows_by_stage``, ``error_count`` (rows in error messages, including rows scored
        under a lenient ``missing_answer_policy``), ``not_called_count`` (rows unscored because the model calls
        stopped early before theirs were made), ``model_calls_stopped`` (the first such reason, or empty) and
        ``media_probe`` (the validator's media probe, :mod:`autorater_pipelines.gecko.media_probe`; absent when
        no row was validated).

    Raises:
        InputError: invalid scoring options.
    """
    rows = io.read_jsonl(validations_path)
    earlier = [e for path in earlier_error_paths for e in io.read_jsonl(path)]
    candidates = from_struct(response_columns)

    def score_part(part: Sequence[Mapping[str, Any]], **kwargs: Any) -> ScoreResult:
        return score_rows(part, scoring=scoring, rubric_prompt_version=rubric_prompt_version, **kwargs)

    if candidates:
        result = candidate_steps.score_candidates(
            rows, id_columns=id_columns, response_columns=candidates, earlier_errors=earlier, score=score_part
        )
    else:
        result = score_part(rows, id_columns=id_columns, earlier_errors=earlier)
    errors, metrics = result.errors, result.metrics
    if results_path:
        io.write_jsonl(results_path, result.results)
    if error_messages_path:
        io.write_jsonl(error_messages_path, errors)
    if metrics_path:
        io.write_json(metrics_path, metrics)
    logger.info(
        "scored %d of %d rows, mean final_score %s",
        metrics["rows_scored"],
        metrics["evaluation_count"],
        metrics["mean_final_score"],
    )
    return metrics


def console_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Flatten metrics to the numbers a KFP ``Metrics`` artifact shows.

    Numeric top-level values are kept (booleans and None are dropped); ``accuracy_by_question_type``
    becomes ``accuracy_<type>`` with non-alphanumeric characters replaced by ``_``
    (``animal/human`` → ``accuracy_animal_human``).
    """
    flat: dict[str, float] = {}
    for name, value in metrics.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            flat[name] = float(value)
    for qtype, value in (metrics.get("accuracy_by_question_type") or {}).items():
        flat["accuracy_" + re.sub(r"[^0-9A-Za-z]+", "_", str(qtype)).strip("_").lower()] = float(value)
    return flat
