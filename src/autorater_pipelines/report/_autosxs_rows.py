"""Rows of an AutoSxS run as the report counts them: the rows in the rates, confusion matrix, length bias."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.autosxs.bias import longer_response_counts
from autorater_pipelines.autosxs.metrics import wilson_interval

__all__ = ["LENGTH_BINS", "VERDICTS", "confusion_matrix", "counted_rows", "length_bias", "one_order_only"]

VERDICTS = ("A", "B", "TIE")

LENGTH_BINS: tuple[tuple[float, float, str], ...] = (
    (0.0, 0.5, "< 0.5"),
    (0.5, 1 / 1.2, "0.5–0.83"),
    (1 / 1.2, 1.2, "0.83–1.2"),
    (1.2, 2.0, "1.2–2"),
    (2.0, math.inf, "> 2"),
)
"""Bins of len(response_a) / len(response_b) in characters: ``[low, high)``, the middle one closed."""


def confusion_matrix(
    rows: Sequence[Mapping[str, Any]], human_column: str, categories: Sequence[str] = VERDICTS
) -> list[list[int]]:
    """Counts of (human label, autorater choice) over ``categories``: rows = human, columns = autorater.

    Rows whose human label or choice is outside ``categories`` (e.g. ``ERROR``) are not counted. With
    the default categories, the ``A``/``B`` block equals the ``true_positive_count`` …
    ``true_negative_count`` of :func:`~autorater_pipelines.autosxs.metrics.pairwise_metrics` (A positive).
    """
    index = {c: i for i, c in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for row in rows:
        human, choice = str(row.get(human_column)), str(row.get("choice"))
        if human in index and choice in index:
            matrix[index[human]][index[choice]] += 1
    return matrix


def one_order_only(row: Mapping[str, Any]) -> bool:
    """A row with a verdict whose samples do not cover both presentation orders (``complete`` false)."""
    return row.get("complete") is False and row.get("choice") in VERDICTS


def counted_rows(rows: Sequence[Mapping[str, Any]], metrics: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The rows ``metrics.json`` counts in its win rates (its ``judged_count``).

    That is choice ``A``/``B``/``TIE`` and, unless the metrics say ``one_order_only_excluded`` false, judged
    in both presentation orders.
    """
    excluded = metrics.get("one_order_only_excluded") is not False
    return [r for r in rows if r.get("choice") in VERDICTS and not (excluded and one_order_only(r))]


def _bin_of(ratio: float) -> int:
    for i, (low, high, _) in enumerate(LENGTH_BINS):
        if low <= ratio < high or (i == 2 and ratio == high):
            return i
    return len(LENGTH_BINS) - 1


def length_bias(rows: Sequence[Mapping[str, Any]], human_column: str | None) -> dict[str, Any]:
    """Win rate of model A by relative response length, and how often the longer response wins.

    Args:
        rows: The rows to count; the report passes :func:`counted_rows`, so the autorater and the human
            figures are computed over the same rows as the win rates.
        human_column: The human label column, or None.

    Returns:
        ``bins``: per :data:`LENGTH_BINS` bin, ``label``, ``judged`` (rows with choice A/B/TIE),
        ``a``, ``b``, ``tie``, ``a_share`` (A / (A + B), None without decisions) with a Wilson
        ``interval``, and ``human_a_share`` (same over human labels, None without). ``longer_chosen``
        / ``longer_chosen_n``: share of A-or-B choices on rows of unequal length that chose the
        longer response; ``human_longer_chosen`` / ``human_longer_chosen_n`` the same for humans.
    """
    bins: list[dict[str, Any]] = [
        {"label": label, "rows": 0, "judged": 0, "a": 0, "b": 0, "tie": 0, "human_a": 0, "human_b": 0}
        for *_, label in LENGTH_BINS
    ]
    for row in rows:
        len_a, len_b = len(str(row.get("response_a") or "")), len(str(row.get("response_b") or ""))
        ratio = len_a / len_b if len_b else math.inf
        b = bins[_bin_of(ratio)]
        b["rows"] += 1
        choice = row.get("choice")
        human = row.get(human_column) if human_column else None
        if choice in VERDICTS:
            b["judged"] += 1
            b[{"A": "a", "B": "b", "TIE": "tie"}[choice]] += 1
        if human in ("A", "B"):
            b["human_a" if human == "A" else "human_b"] += 1
    for b in bins:
        decided, human_decided = b["a"] + b["b"], b["human_a"] + b["human_b"]
        b["a_share"] = b["a"] / decided if decided else None
        b["interval"] = wilson_interval(b["a"], decided)
        b["human_a_share"] = b["human_a"] / human_decided if human_decided else None
    longer, unequal = longer_response_counts(rows)
    human_longer, human_unequal = longer_response_counts(rows, human_column) if human_column else (0, 0)
    return {
        "bins": bins,
        "longer_chosen": longer / unequal if unequal else None,
        "longer_chosen_n": unequal,
        "human_longer_chosen": human_longer / human_unequal if human_unequal else None,
        "human_longer_chosen_n": human_unequal,
    }
