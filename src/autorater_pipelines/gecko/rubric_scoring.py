"""Scoring: votes over samples, normalized exact match against the expected answer, aggregation.

Per question (Gecko, arXiv 2404.16820; TIFA, arXiv 2303.11897): each sample's answer is resolved to
one of the question's choices (:func:`autorater_pipelines.gecko.answer_matching.resolve` — never substring
matching); the most frequent choice is the verdict; score = 1 when the verdict is the expected answer,
else 0. A tie between the k most frequent choices scores 1/k when the expected answer is one of them
and 0 when it is not (``yes``×1, ``no``×1 → 0.5; ``a``×2, ``b``×2, ``c``×1 with ``c`` expected → 0; the
verdict reads ``no | yes`` and ``tied_vote`` is set). With
``logprob_weighting`` the score is instead the mean probability of the expected answer over samples
that carry choice probabilities (questions without them fall back to exact match and are counted).
A question whose answers all fail to parse (no answer names a choice: ``"1000…0"``, ``""``,
``"unsuitable"``, or a reply whose block could not be matched to it) is ``unparseable`` and follows
``unparseable_answer_policy``:

- ``skip`` (default): left out of the row's mean, counted in ``parse_failures``;
- ``zero``: scored 0, as any answer other than the expected one is in TIFA's (arXiv 2303.11897) and DSG's
  published protocol (``1[answer == expected]``); still counted in ``parse_failures``. With several samples,
  a sample naming no choice votes ``(no choice)``, a wrong answer, in the question's vote.

Per row: ``final_score`` = mean score of the scored questions (``questions_scored`` is its denominator;
``metrics["final_score_denominator"]`` says in words what it counts under the options used). With
``dependency_masking`` (DSG, arXiv 2310.18235) a question scores 0 when any parent question's own
(unmasked) answer is wrong — the rule of DSG's reference code, which reproduces its TIFA160 correlations.

Missing answers follow ``missing_answer_policy``: a question is missing when no sample answers it at all — the
validator call failed or had no recording, or the reply answers other questions and leaves this one out (error kind
``missing_question``: a JSON reply without its ``question_id``, blocks that all match other questions). A question
answered with something unreadable is unparseable instead (above). So a reply answering 2 of 4 questions never
scores over those 2 silently:

- ``error`` (default): the row goes to ``error_messages`` (stage ``validation``) and is not scored.
- ``zero``: missing questions score 0 — DSG's published protocol ("images with no answers score
  0"); the row is scored and ALSO listed in ``error_messages`` with ``handled_as="scored_zero"``.
- ``skip``: missing questions are left out of the mean; listed with ``handled_as="skipped"``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

import pydantic

from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.evaluation.error_rows import error_row
from autorater_pipelines.evaluation.parameters import Flag, ParameterModel
from autorater_pipelines.gecko._groups import scores_by_group, type_intervals
from autorater_pipelines.gecko._questions import NO_CHOICE, score_question
from autorater_pipelines.gecko.rubrics import keyword_coverage, parse_keywords
from autorater_pipelines.gecko.vertex_rubrics import score_metrics, vertex_row_fields

__all__ = [
    "COUNT_DEFINITIONS",
    "NO_CHOICE",
    "ScoreResult",
    "ScoringOptions",
    "final_score_denominator",
    "score",
    "score_row",
    "summarize",
]

_DROPPED = ("qas", "answers")


class ScoringOptions(ParameterModel):
    """The ``scoring`` pipeline parameter (flags are ``true``/``false`` or those strings, as in every parameter)."""

    dependency_masking: Flag = False
    """Score a question 0 when any of its parent questions (``dependencies``) was answered wrongly."""
    logprob_weighting: Flag = False
    """Score = probability of the expected answer (needs ``logprobs`` and ``questions_per_call=1``)."""
    missing_answer_policy: Literal["error", "zero", "skip"] = "error"
    """What a question without an answer does to its row (module docstring)."""
    unparseable_answer_policy: Literal["skip", "zero"] = "skip"
    """``skip``: a question whose answer names no choice is left out of the mean; ``zero``: it scores 0 (TIFA/DSG)."""
    group_by: str = ""
    """A dataset column (e.g. ``t2i_model``): ``metrics.json`` adds ``final_score_by_group``, the mean
    ``final_score`` with its 95 % interval and per-type accuracy for each of its values; "" = no breakdown."""

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any] | ScoringOptions | None, *, source: str = "scoring"
    ) -> ScoringOptions:
        """Build options from the ``scoring`` dict.

        Raises:
            InputError: an unknown key (the message lists the valid ones) or a bad value.

        """
        if isinstance(params, ScoringOptions):
            return params
        unknown = sorted(str(k) for k in dict(params or {}) if k not in cls.model_fields)
        if unknown:
            raise InputError(unknown_names("keys", unknown, sorted(cls.model_fields)), source=source)
        try:
            return cls(**dict(params or {}))
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}={e.get('input')!r}: {e['msg']}" for e in exc.errors()
            )
            raise InputError(
                f"invalid scoring options: {problems}; valid keys: {sorted(cls.model_fields)}", source=source
            ) from None

    @classmethod
    def parse(cls, value: Any, *, source: str) -> ScoringOptions:
        """As :meth:`from_params` (the message names the scoring options); the parameter models call this."""
        return cls.from_params(value, source=source)


class ScoreResult(NamedTuple):
    """Output of :func:`score`.

    Attributes:
        results: One result row per scored input row, in input order.
        errors: Error rows (unscored rows, and rows scored under a lenient ``missing_answer_policy``).
        metrics: Dataset metrics (see :func:`summarize`).

    """

    results: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    metrics: dict[str, Any]


def final_score_denominator(options: ScoringOptions) -> str:
    """Say in words which questions ``final_score`` averages over under ``options`` (for metrics.json)."""
    counted = ["questions whose answer names a choice"]
    left_out = []
    if options.dependency_masking:
        counted.append("masked questions (scored 0)")
    if options.unparseable_answer_policy == "zero":
        counted.append("questions whose answers name no choice (scored 0, unparseable_answer_policy=zero)")
    else:
        left_out.append("questions whose answers name no choice (unparseable_answer_policy=skip)")
    if options.missing_answer_policy == "zero":
        counted.append("questions the validator did not answer (scored 0, missing_answer_policy=zero)")
    elif options.missing_answer_policy == "skip":
        left_out.append("questions the validator did not answer (missing_answer_policy=skip)")
    else:
        left_out.append(
            "rows with a question the validator did not answer are not scored (missing_answer_policy=error)"
        )
    over = counted[0] if len(counted) == 1 else ", ".join(counted[:-1]) + " and " + counted[-1]
    text = "mean question score over " + over
    return text + (". Left out: " + "; ".join(left_out) if left_out else "")


def _mask(qa_results: list[dict[str, Any]]) -> None:
    failed = {r["question_id"] for r in qa_results if r.get("exact_score") == 0.0}
    for r in qa_results:
        parents = [p for p in r["dependencies"] if p in failed]
        if parents:
            r.update(score=0.0, status="masked", masked_by=parents)


def score_row(
    row: Mapping[str, Any], *, id_columns: Sequence[str], options: ScoringOptions
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Score one validation row.

    Args:
        row: A validation row (rubric row + ``answers``; see :mod:`autorater_pipelines.gecko.validation`).
        id_columns: Columns that identify the row.
        options: Scoring options.

    Returns:
        ``(result row or None, error rows)``. The result row is the input row without ``qas`` and
        ``answers`` plus ``qa_results`` (per question: ``question_id``, ``question``, ``question_type``,
        ``choices``, ``expected``, ``verdict``, ``score``, ``status`` — ``scored``/``masked``/
        ``unparseable``/``missing``, ``raw``, ``votes``, ``dependencies``, ``keyword_id``, ``error``,
        and ``probability``/``masked_by`` when they apply), ``final_score``, ``keyword_coverage``,
        ``questions_scored``, ``parse_failures``, ``missing_answers``, and Vertex AI's ``rubric_verdicts`` and
        ``score`` (= ``final_score``; :func:`autorater_pipelines.gecko.vertex_rubrics.vertex_row_fields`).

    """
    qas = row.get("qas")
    if not isinstance(qas, list) or not all(isinstance(q, Mapping) and "question_id" in q for q in qas):
        message = f"row has no rubric questions with question ids ('qas'), got {str(qas)[:200]!r}"
        return None, [error_row(row, id_columns, stage="scoring", kind="invalid_rubric", message=message)]
    answers = row.get("answers") or {}
    zero = options.unparseable_answer_policy == "zero"
    qa_results = [
        score_question(qa, answers.get(qa["question_id"]) or [], options.logprob_weighting, zero) for qa in qas
    ]
    missing = [r for r in qa_results if r["status"] == "missing"]
    failures = sum(r["status"] == "unparseable" for r in qa_results)
    # An unscored row's error row says how many questions it had and what became of them (metrics count them).
    counts = {"questions": len(qas), "parse_failures": failures, "missing_answers": len(missing)}
    errors, stop = _missing_answers(row, id_columns, missing, options, counts)
    if stop:
        return None, errors
    if options.unparseable_answer_policy == "zero":  # TIFA/DSG: any answer but the expected one scores 0
        for r in qa_results:
            if r["status"] == "unparseable":
                r.update(score=0.0, exact_score=0.0)
    if options.dependency_masking:
        _mask(qa_results)
    scores = [r["score"] for r in qa_results if r["score"] is not None]
    for r in qa_results:
        r.pop("exact_score", None)
    if not scores:
        message = "no question could be scored: " + "; ".join(
            f"{r['question_id']}: {r['status']} ({(r['error'] or {}).get('message')})" for r in qa_results[:5]
        )
        return None, [
            *errors,
            error_row(row, id_columns, stage="scoring", kind="no_scored_questions", message=message) | counts,
        ]
    result = {k: v for k, v in row.items() if k not in _DROPPED}
    result.update(
        qa_results=qa_results,
        final_score=sum(scores) / len(scores),
        keyword_coverage=keyword_coverage(row.get("keywords"), qas),
        questions_scored=len(scores),
        parse_failures=failures,
        missing_answers=len(missing),
    )
    result.update(vertex_row_fields(result))
    return result, errors


def _missing_answers(
    row: Mapping[str, Any],
    id_columns: Sequence[str],
    missing: list[dict[str, Any]],
    options: ScoringOptions,
    counts: Mapping[str, int],
) -> tuple[list[dict[str, Any]], bool]:
    """Apply ``missing_answer_policy`` to the questions without an answer: (error rows, whether the row stops).

    ``error``: one error row (with the row's ``counts``) and the row is not scored; ``zero``: the missing questions
    score 0 and the row is listed with ``handled_as="scored_zero"``; ``skip``: listed with ``handled_as="skipped"``.
    """
    if not missing:
        return [], False
    first = missing[0]["error"]
    ids = [r["question_id"] for r in missing]
    message = f"no answer for question(s) {ids}: {first['message']}"
    where = {"stage": "validation", "kind": first["kind"], "message": message, "question_ids": ids}
    if options.missing_answer_policy == "error":
        return [error_row(row, id_columns, **where) | dict(counts)], True
    handled = "scored_zero" if options.missing_answer_policy == "zero" else "skipped"
    if handled == "scored_zero":
        for r in missing:
            r.update(score=0.0, exact_score=0.0)
    return [error_row(row, id_columns, **where, handled_as=handled)], False


def score(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    options: Mapping[str, Any] | ScoringOptions | None = None,
) -> ScoreResult:
    """Score validation rows and compute dataset metrics.

    Args:
        rows: Validation rows from :func:`autorater_pipelines.gecko.validate` (JSONL-able dicts).
        id_columns: Columns that identify a row.
        options: The ``scoring`` parameter: ``dependency_masking``, ``logprob_weighting``,
            ``missing_answer_policy``, ``unparseable_answer_policy`` (see :class:`ScoringOptions`).

    Returns:
        ``ScoreResult(results, errors, metrics)``; every input row is in ``results`` or in ``errors``
        (rows scored under ``missing_answer_policy`` ``zero``/``skip`` are in both, the error row
        carrying ``handled_as``).

    Raises:
        InputError: invalid options.

    """
    opts = ScoringOptions.from_params(options)
    results: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for row in rows:
        result, row_errors = score_row(row, id_columns=id_columns, options=opts)
        errors.extend(row_errors)
        if result is not None:
            results.append(result)
    metrics = summarize(results, errors=errors)
    if opts.group_by:
        metrics["final_score_by_group"] = scores_by_group(results, opts.group_by)
    metrics["scoring_options"] = opts.model_dump()
    metrics["final_score_denominator"] = final_score_denominator(opts)
    return ScoreResult(results, errors, metrics)


COUNT_DEFINITIONS: dict[str, str] = {
    "questions_total": "questions in the scored rows",
    "questions_scored": "questions in the scored rows that have a score (final_score's denominator)",
    "questions_left_out": "questions in the scored rows without a score (questions_total - questions_scored)",
    "parse_failures_in_scored_rows": "questions in the scored rows whose answers name no choice",
    "missing_answers_in_scored_rows": "questions in the scored rows the validator did not answer",
    "masked_questions": "questions in the scored rows scored 0 by dependency masking",
    "rows_validated": "rows that reached scoring with rubric questions (scored rows + rows unscored there)",
    "questions_in_all_rows": "questions in all rows_validated, scored or not",
    "parse_failures": "questions in all rows_validated whose answers name no choice",
    "missing_answers": "questions in all rows_validated the validator did not answer",
    "unparseable_samples": "samples in the scored rows whose answer names no choice",
}
"""What each question count of the metrics counts, written into ``metrics.json`` as ``count_definitions``."""


def summarize(
    results: Sequence[Mapping[str, Any]],
    *,
    unscored_rows: int | None = None,
    errors: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Dataset metrics from result rows (and the error rows of the rows that could not be scored).

    Args:
        results: Scored rows.
        unscored_rows: ``rows_unscored``; default the error rows without ``handled_as``.
        errors: Error rows; those of rows scoring could not score carry ``questions``, ``parse_failures`` and
            ``missing_answers``, which the all-rows counts add.

    Returns:
        ``mean_final_score`` (None without rows), ``stdev_final_score`` (sample standard deviation,
        as TIFA reports it; None below 2 rows), ``rows_scored``, ``rows_unscored``, the question counts of
        :data:`COUNT_DEFINITIONS` (each says over which rows it counts, also in ``count_definitions``),
        ``logprob_fallbacks``, ``accuracy_by_question_type`` (mean question score per type over scored
        questions) with its 95 % interval per type in ``accuracy_by_question_type_ci_lower`` / ``_ci_upper``
        (:func:`~autorater_pipelines.gecko._groups.type_intervals`), ``questions_by_question_type``,
        ``keyword_coverage`` (fraction of all marked keywords checked by at least one question; None when no
        row has keyword markup), and Vertex AI's ``mean_score``, ``stdev_score``, ``pass_rate`` (share of scored
        rows with score 1.0) with 95 % intervals (:func:`autorater_pipelines.gecko.vertex_rubrics.score_metrics`).

    """
    finals = [r["final_score"] for r in results]
    intervals = type_intervals(results)
    by_type: dict[str, list[float]] = defaultdict(list)
    qa_all = [qa for r in results for qa in r["qa_results"]]
    for qa in qa_all:
        if qa["score"] is not None:
            by_type[qa["question_type"]].append(qa["score"])
    total_keywords = covered = 0
    for r in results:
        ids = parse_keywords(r.get("keywords"))
        if ids:
            total_keywords += len(ids)
            covered += len({qa.get("keyword_id") for qa in r["qa_results"]} & set(ids))
    unscored = [e for e in errors if "handled_as" not in e]
    counted = [e for e in unscored if e.get("questions") or e.get("parse_failures")]
    scored = sum(qa["score"] is not None for qa in qa_all)
    failures = sum(qa["status"] == "unparseable" for qa in qa_all)
    missing = sum(qa["status"] == "missing" for qa in qa_all)
    return {
        "mean_final_score": statistics.fmean(finals) if finals else None,
        "stdev_final_score": statistics.stdev(finals) if len(finals) > 1 else None,
        "rows_scored": len(results),
        "rows_unscored": len(unscored) if unscored_rows is None else unscored_rows,
        "questions_total": len(qa_all),
        "questions_scored": scored,
        "questions_left_out": len(qa_all) - scored,
        "parse_failures_in_scored_rows": failures,
        "missing_answers_in_scored_rows": missing,
        "masked_questions": sum(qa["status"] == "masked" for qa in qa_all),
        "rows_validated": len(results) + len(counted),
        "questions_in_all_rows": len(qa_all) + sum(e.get("questions") or 0 for e in counted),
        "parse_failures": failures + sum(e.get("parse_failures") or 0 for e in counted),
        "missing_answers": missing + sum(e.get("missing_answers") or 0 for e in counted),
        "unparseable_samples": sum(qa.get("unparseable_samples", 0) for qa in qa_all),
        "count_definitions": dict(COUNT_DEFINITIONS),
        "logprob_fallbacks": sum(bool(qa.get("logprob_fallback")) for qa in qa_all),
        "accuracy_by_question_type": {t: statistics.fmean(v) for t, v in sorted(by_type.items())},
        "accuracy_by_question_type_ci_lower": {t: low for t, (low, _) in intervals.items()},
        "accuracy_by_question_type_ci_upper": {t: high for t, (_, high) in intervals.items()},
        "questions_by_question_type": {t: len(v) for t, v in sorted(by_type.items())},
        "keyword_coverage": covered / total_keywords if total_keywords else None,
        **score_metrics(finals),
    }
