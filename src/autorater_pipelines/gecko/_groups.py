"""Scores broken down by a grouping column (``scoring.group_by``), e.g. the image model of each row.

One breakdown for ``metrics.json`` (:func:`autorater_pipelines.gecko.score`) and for the report
(``autorater report --group-by``), so both show the same figures.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.intervals import mean_interval

__all__ = ["MISSING_GROUP", "group_label", "scores_by_group", "type_intervals"]

MISSING_GROUP = "(missing)"
"""The group of a row whose grouping column is absent or null."""


def group_label(value: Any) -> str:
    """A grouping value as the key it gets: strings as they are, other values as JSON, None :data:`MISSING_GROUP`."""
    if value is None:
        return MISSING_GROUP
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def type_intervals(results: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float | None, float | None]]:
    """95 % interval of the mean question score per ``question_type`` over scored questions.

    :func:`~autorater_pipelines.evaluation.intervals.mean_interval`: Student-t, or Wilson when every score is
    equal or there is one question (one question answered right: 20.7 %–100 %, never a certain 100 %).
    Questions are counted as independent draws (questions of one row are not: the interval is optimistic
    when a type has many questions per row).
    """
    by_type: dict[str, list[float]] = defaultdict(list)
    for row in results:
        for qa in row.get("qa_results") or []:
            if qa.get("score") is not None:
                by_type[str(qa.get("question_type"))].append(float(qa["score"]))
    return {t: mean_interval(v)[1:] for t, v in sorted(by_type.items())}


def scores_by_group(results: Sequence[Mapping[str, Any]], column: str) -> dict[str, Any]:
    """Mean ``final_score`` per value of ``column`` over the scored rows (``metrics.json final_score_by_group``).

    Args:
        results: Scored result rows (each has ``final_score`` and the dataset's columns).
        column: The grouping column (``scoring.group_by``).

    Returns:
        ``{"column": column, "groups": {label: {"rows", "mean_final_score", "ci_lower", "ci_upper",
        "accuracy_by_question_type"}}}``, groups in sorted order of their :func:`group_label`; the interval is
        :func:`~autorater_pipelines.evaluation.intervals.mean_interval`'s 95 % interval of the mean.
    """
    rows: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in results:
        rows[group_label(row.get(column))].append(row)
    groups = {}
    for label in sorted(rows):
        finals = [float(r["final_score"]) for r in rows[label] if r.get("final_score") is not None]
        mean, low, high = mean_interval(finals)
        by_type: dict[str, list[float]] = defaultdict(list)
        for r in rows[label]:
            for qa in r.get("qa_results") or []:
                if qa.get("score") is not None:
                    by_type[str(qa.get("question_type"))].append(float(qa["score"]))
        groups[label] = {
            "rows": len(finals),
            "mean_final_score": mean,
            "ci_lower": low,
            "ci_upper": high,
            "accuracy_by_question_type": {t: sum(v) / len(v) for t, v in sorted(by_type.items())},
        }
    return {"column": column, "groups": groups}
