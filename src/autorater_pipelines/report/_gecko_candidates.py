"""The candidates section of the Gecko report: a run with ``response_columns`` (issue 23).

From ``metrics.json``: each candidate's ``mean_score``, ``stdev_score``, ``pass_rate`` (95 % intervals) and
rows scored, its win rate (Vertex AI's ``win_rates``: per prompt the highest score wins, an equal highest is a
tie), and for each pair the rubrics one candidate passes and the other fails
(:func:`autorater_pipelines.gecko.candidates.compare`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autorater_pipelines.report._stats import Format, fmt

__all__ = ["candidates_context"]


def _interval(m: Mapping[str, Any], key: str, kind: Format) -> str:
    low, high = m.get(f"{key}_ci_lower"), m.get(f"{key}_ci_upper")
    return f"{fmt(low, kind)}–{fmt(high, kind)}" if low is not None and high is not None else ""


def candidates_context(m: Mapping[str, Any]) -> dict[str, Any] | None:
    """Template context of the candidates section, or None when the run compared no candidates.

    Returns:
        ``{"rows": [per candidate: name, column, mean_score, stdev_score, pass_rate (with intervals), scored,
        win_rate, wins], "ties", "tie_rate", "compared", "not_compared", "pairs": [per pair: first, second,
        rubrics_compared, both_pass, both_fail, only_first, only_second (rubric lists)]}``.
    """
    candidates = m.get("candidates")
    if not isinstance(candidates, Mapping) or not candidates:
        return None
    wins = m.get("win_rates") or {}
    columns = m.get("response_columns") or {}
    rows = [
        {
            "name": name,
            "column": columns.get(name, ""),
            "mean_score": fmt(c.get("mean_score"), "score"),
            "mean_score_ci": _interval(c, "mean_score", "score"),
            "stdev_score": fmt(c.get("stdev_score"), "score"),
            "pass_rate": fmt(c.get("pass_rate")),
            "pass_rate_ci": _interval(c, "pass_rate", "pct"),
            "scored": f"{c.get('rows_scored')} of {c.get('evaluation_count')}",
            "win_rate": fmt((wins.get("win_rates") or {}).get(name)),
            "wins": (wins.get("wins") or {}).get(name),
        }
        for name, c in candidates.items()
    ]
    pairs = []
    for comparison in (m.get("per_rubric_comparison") or {}).values():
        first, second = comparison["candidates"]
        pairs.append(
            {
                "first": first,
                "second": second,
                "rubrics_compared": comparison["rubrics_compared"],
                "both_pass": comparison["both_pass"],
                "both_fail": comparison["both_fail"],
                "only_first": comparison[f"only_{first}_rubric_ids"],
                "only_second": comparison[f"only_{second}_rubric_ids"],
            }
        )
    return {
        "rows": rows,
        "ties": wins.get("ties"),
        "tie_rate": fmt(wins.get("tie_rate")),
        "compared": wins.get("rows_compared"),
        "not_compared": wins.get("rows_not_compared"),
        "pairs": pairs,
    }
