"""Vertex AI's adaptive-rubric shape, both ways: ``rubric_groups`` in, ``rubric_verdicts`` / ``score`` out.

Google's evaluation client (google-cloud-aiplatform 2.7, ``vertexai.Client().evals``) holds rubrics per prompt as
``rubric_groups``: ``{group name: [Rubric, ...]}`` with ``Rubric = {"rubric_id": str, "content": {"property":
{"description": str}}, "type": str | None, "importance": str | None}``. Gecko's supplied-rubric form
(:mod:`autorater_pipelines.gecko.rubrics`) holds one yes/no question per rubric:

======================================  ==============================================================
Vertex ``Rubric``                       Gecko question (``qas`` entry)
======================================  ==============================================================
``rubric_id``                           ``question_id`` (the key of replay lines and of ``qa_results``)
``content.property.description``        ``question`` (the validator is asked whether it holds)
``type``                                ``question_type`` (``rubric`` when absent)
``importance``                          ``importance`` (kept, not weighted: Vertex's score does not)
(passes)                                ``choices`` ``["yes", "no"]``, ``answer`` ``"yes"``
======================================  ==============================================================

Results go back as Vertex shapes them: per row ``rubric_verdicts`` = ``[{"evaluated_rubric": Rubric, "verdict":
bool | None, "reasoning": str | None}]`` and ``score`` (share of the scored rubrics passed = Gecko's
``final_score``); over a dataset ``mean_score``, ``stdev_score`` and ``pass_rate`` (share of scored rows with
``score`` 1.0), and for several candidates scored on the same rubrics ``win_rates`` (per row the highest score wins;
an equal highest is a tie, as the client computes win rates from pointwise scores).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.intervals import mean_interval, wilson_interval
from autorater_pipelines.gecko._common import RubricError

__all__ = [
    "DEFAULT_GROUP",
    "RUBRIC_QUESTION_TYPE",
    "is_rubric_groups",
    "per_rubric_comparison",
    "rubric_from_groups",
    "rubric_groups_from_rubric",
    "rubric_verdicts",
    "score_metrics",
    "vertex_row_fields",
    "win_rates",
]

DEFAULT_GROUP = "gecko_rubrics"
"""Group name of the ``rubric_groups`` written from Gecko rubrics when no name is given."""

RUBRIC_QUESTION_TYPE = "rubric"
"""``question_type`` of a Vertex rubric that has no ``type``."""


def is_rubric_groups(value: Any) -> bool:
    """True when ``value`` looks like Vertex ``rubric_groups``.

    That is a mapping without ``qas`` whose values are all lists, one of them holding Rubric objects (with
    ``content`` or ``rubric_id``).
    """
    if not isinstance(value, Mapping) or "qas" in value or not value:
        return False
    if not all(isinstance(v, list) for v in value.values()):
        return False
    return any(
        isinstance(item, Mapping) and ("content" in item or "rubric_id" in item)
        for group in value.values()
        for item in group
    )


def _description(rubric: Mapping[str, Any], where: str) -> str:
    content = rubric.get("content")
    prop = content.get("property") if isinstance(content, Mapping) else None
    text = prop.get("description") if isinstance(prop, Mapping) else None
    if not isinstance(text, str) or not text.strip():
        raise RubricError(
            "invalid_rubric",
            f"{where}: no content.property.description, got {str(rubric)[:200]!r}; a Vertex Rubric is "
            '{"rubric_id": ..., "content": {"property": {"description": "The response ..."}}}',
        )
    return text.strip()


def rubric_from_groups(value: Any, group: str = "") -> dict[str, Any]:
    """Gecko's supplied-rubric form of one group of Vertex ``rubric_groups`` (mapping in the module docstring).

    Args:
        value: ``{group: [Rubric, ...]}`` or its JSON text.
        group: The group to use (``rubric_group``); "" = the only group (an error when there are several).

    Returns:
        ``{"keywords": None, "qas": [...]}`` for :func:`autorater_pipelines.gecko.rubrics.normalize_supplied_rubric`.

    Raises:
        RubricError: not JSON / not ``rubric_groups``, the group is absent or not chosen among several, a rubric
            without a description, or a group with no rubric (``empty_rubric``).

    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RubricError("invalid_rubric", f"rubric_groups is not JSON ({exc.msg}): {value[:120]!r}") from None
    if not isinstance(value, Mapping) or not value or not all(isinstance(v, list) for v in value.values()):
        raise RubricError(
            "invalid_rubric", f"expected Vertex rubric_groups {{group: [Rubric, ...]}}, got {str(value)[:200]!r}"
        )
    if not group:
        if len(value) > 1:
            raise RubricError(
                "invalid_rubric",
                f"rubric_groups has {len(value)} groups {sorted(value)}: set rubric_group to the one to use",
            )
        group = next(iter(value))
    if group not in value:
        raise RubricError("missing_rubric", f"rubric_groups has no group {group!r}; groups present: {sorted(value)}")
    qas = []
    for i, rubric in enumerate(value[group], start=1):
        where = f"rubric_groups[{group!r}] rubric #{i}"
        if not isinstance(rubric, Mapping):
            raise RubricError("invalid_rubric", f"{where} is not an object: {rubric!r}")
        rubric_id = rubric.get("rubric_id")
        qas.append(
            {
                "question_id": str(rubric_id) if rubric_id not in (None, "") else f"r{i}",
                "question": _description(rubric, where),
                "question_type": rubric.get("type") or RUBRIC_QUESTION_TYPE,
                "choices": ["yes", "no"],
                "answer": "yes",
                "importance": rubric.get("importance"),
            }
        )
    if not qas:
        raise RubricError("empty_rubric", f"rubric_groups[{group!r}] has no rubric")
    return {"keywords": None, "qas": qas}


def _rubric(qa: Mapping[str, Any]) -> dict[str, Any]:
    """The Vertex ``Rubric`` of one Gecko question (or ``qa_results`` entry)."""
    kind = qa.get("question_type")
    return {
        "rubric_id": qa["question_id"],
        "content": {"property": {"description": qa.get("question")}},
        "type": None if kind in (None, RUBRIC_QUESTION_TYPE) else kind,
        "importance": qa.get("importance"),
    }


def rubric_groups_from_rubric(rubric: Mapping[str, Any], group: str = DEFAULT_GROUP) -> dict[str, list[dict]]:
    """Vertex ``rubric_groups`` ``{group: [Rubric, ...]}`` of a Gecko rubric (its ``qas``).

    The inverse of :func:`rubric_from_groups`: ``rubric_id`` = ``question_id``, description = question text.
    """
    return {group or DEFAULT_GROUP: [_rubric(qa) for qa in rubric.get("qas") or []]}


def _passed(qa: Mapping[str, Any]) -> bool | None:
    """A scored question passes when its score is 1.0 (a split vote scoring 0.5 does not); unscored: None."""
    score = qa.get("score")
    return None if score is None else score == 1.0


def _reasoning(qa: Mapping[str, Any]) -> str | None:
    status = qa.get("status")
    if status in ("scored", None):
        return qa.get("raw") if isinstance(qa.get("raw"), str) else None
    detail = (qa.get("error") or {}).get("message") or ", ".join(qa.get("masked_by") or [])
    return f"{status}: {detail}" if detail else str(status)


def rubric_verdicts(qa_results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Vertex ``rubric_verdicts`` of a result row's ``qa_results``, one per rubric in order.

    ``verdict`` is True when the rubric's score is 1.0, False when it scored below (a split vote's 0.5 included),
    None when it has no score (unparseable under ``skip``, missing under ``skip``); ``reasoning`` is the validator's
    raw answer, or the status and reason of a rubric not scored as answered (``masked: q1``, ``unparseable: …``).
    """
    return [{"evaluated_rubric": _rubric(qa), "verdict": _passed(qa), "reasoning": _reasoning(qa)} for qa in qa_results]


def vertex_row_fields(result: Mapping[str, Any]) -> dict[str, Any]:
    """``{"rubric_verdicts", "score"}`` of a Gecko result row; ``score`` is its ``final_score`` (share passed)."""
    return {"rubric_verdicts": rubric_verdicts(result.get("qa_results") or []), "score": result.get("final_score")}


def score_metrics(scores: Sequence[float | None], prefix: str = "") -> dict[str, Any]:
    """``mean_score``, ``stdev_score``, ``pass_rate`` and their 95 % intervals over rows' scores (None = unscored).

    ``stdev_score`` is the sample standard deviation (None below 2 rows); ``mean_score``'s interval is Student-t
    (:func:`~autorater_pipelines.evaluation.intervals.mean_interval`), ``pass_rate``'s (share of scored rows whose
    score is 1.0) Wilson's. Keys carry ``prefix`` (e.g. ``"model_a_"``) when given; ``scored_rows`` counts them.
    """
    values = [float(s) for s in scores if s is not None and not math.isnan(s)]
    mean, low, high = mean_interval(values)
    passed = sum(v == 1.0 for v in values)
    pass_ci = wilson_interval(passed, len(values))
    return {
        f"{prefix}mean_score": mean,
        f"{prefix}mean_score_ci_lower": low,
        f"{prefix}mean_score_ci_upper": high,
        f"{prefix}stdev_score": statistics.stdev(values) if len(values) > 1 else None,
        f"{prefix}pass_rate": passed / len(values) if values else None,
        f"{prefix}pass_rate_ci_lower": pass_ci[0] if pass_ci else None,
        f"{prefix}pass_rate_ci_upper": pass_ci[1] if pass_ci else None,
        f"{prefix}scored_rows": len(values),
    }


def win_rates(scores: Mapping[str, Sequence[float | None]]) -> dict[str, Any]:
    """Vertex's ``win_rates`` of candidates from their per-row scores (rows aligned across candidates).

    A row counts when every candidate has a score there; its one highest-scoring candidate wins, an equal highest
    (two or more) is a tie. Rates are shares of the counted rows.

    Returns:
        ``{"win_rates": {candidate: rate}, "tie_rate", "wins": {candidate: count}, "ties", "rows_compared",
        "rows_not_compared"}`` (rates None when no row is compared).

    Raises:
        ValueError: candidates' score lists of different lengths.

    """
    names = list(scores)
    lengths = {name: len(values) for name, values in scores.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"win_rates needs one score per row for every candidate, got row counts {lengths}")
    rows = list(zip(*(scores[n] for n in names), strict=True)) if names else []
    wins = dict.fromkeys(names, 0)
    ties = compared = 0
    for row in rows:
        if any(s is None for s in row):
            continue
        compared += 1
        best = max(row)
        leaders = [n for n, s in zip(names, row, strict=True) if s == best]
        if len(leaders) == 1:
            wins[leaders[0]] += 1
        else:
            ties += 1
    return {
        "win_rates": {n: wins[n] / compared if compared else None for n in names},
        "tie_rate": ties / compared if compared else None,
        "wins": wins,
        "ties": ties,
        "rows_compared": compared,
        "rows_not_compared": len(rows) - compared,
    }


def per_rubric_comparison(
    verdicts: Mapping[str, Sequence[Mapping[str, bool | None]]],
    first: str,
    second: str,
    *,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Which shared rubrics ``first`` passes and ``second`` fails, and the reverse.

    Args:
        verdicts: ``{candidate: [{rubric_id: verdict}, ...]}``, one mapping per row (rows aligned).
        first: A candidate name.
        second: Another candidate name.
        labels: The name of each row in the rubric lists (the pipeline's id values); default ``row <index>``.

    Returns:
        ``{"candidates": [first, second], "rubrics_compared", "both_pass", "both_fail", "only_<first>",
        "only_<second>"}`` counts over the rubrics both have a verdict on, and ``only_<name>_rubric_ids``: the
        ``rubric_id`` (after its row's label, ``row 2: q1``) of each rubric only that candidate passes.

    """
    only: dict[str, list[str]] = {first: [], second: []}
    both_pass = both_fail = 0
    for index, (left, right) in enumerate(zip(verdicts[first], verdicts[second], strict=True)):
        for rubric_id, verdict in left.items():
            other = right.get(rubric_id)
            if verdict is None or other is None:
                continue
            if verdict and other:
                both_pass += 1
            elif not verdict and not other:
                both_fail += 1
            else:
                label = labels[index] if labels is not None else f"row {index}"
                only[first if verdict else second].append(f"{label}: {rubric_id}")
    return {
        "candidates": [first, second],
        "rubrics_compared": both_pass + both_fail + len(only[first]) + len(only[second]),
        "both_pass": both_pass,
        "both_fail": both_fail,
        f"only_{first}": len(only[first]),
        f"only_{second}": len(only[second]),
        f"only_{first}_rubric_ids": only[first],
        f"only_{second}_rubric_ids": only[second],
    }
