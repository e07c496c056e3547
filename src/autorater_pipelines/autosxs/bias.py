"""Position and length bias of a pairwise judge, as numbers in ``metrics.json``.

- ``first_position_rate``: the share of decisive samples (a sample whose verdict is ``A`` or ``B``, of every row)
  that chose the response shown first, with a 95 % Wilson interval; 0.5 = no position bias (Zheng et al. 2023,
  arXiv 2306.05685, §3.3). A sample with model A shown first that chose ``A``, or one with model B shown first
  (``flipped``) that chose ``B``, chose the first-shown response. When every decisive sample showed the same
  model first (``flip: false``: model A always), the rate is that model's share of the A-or-B samples, not
  position bias: ``first_position_rate_note`` says so (absent when both orders were judged).
- ``longer_response_win_rate``: over the rows counted in the win rates whose choice is ``A`` or ``B`` and whose two
  responses differ in length (characters), the share where the longer response won, with its Wilson interval;
  0.5 = no length bias.
- ``identical_response_count``: rows made a ``TIE`` without a judge call (``identical_responses: "tie"``).
- ``position_calibration``: ``"balanced"`` when the rows' choices come from Balanced Position Calibration
  (:func:`autorater_pipelines.pairwise.order.balanced_choice`), else ``"none"``;
  ``position_calibration_changed_count``: rows whose calibrated choice differs from the samples' vote.

Position consistency is :func:`autorater_pipelines.autosxs.metrics.pairwise_metrics`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.intervals import wilson_interval

__all__ = ["BiasCounts", "bias_metrics", "first_position_counts", "first_position_note", "longer_response_counts"]


def first_position_counts(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """``(samples that chose the response shown first, decisive samples)`` over every row's ``samples``."""
    decisive = [s for r in rows for s in r.get("samples") or [] if s.get("choice") in ("A", "B")]
    return sum((s["choice"] == "A") != bool(s.get("flipped")) for s in decisive), len(decisive)


def first_position_note(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """Why ``first_position_rate`` is no position bias when every decisive sample showed one model first, else None.

    ``"model A was always shown first: this is model A's share, not position bias"`` under ``flip: false``
    (model B with every row's ``flip_column`` true).
    """
    orders = {bool(s.get("flipped")) for r in rows for s in r.get("samples") or [] if s.get("choice") in ("A", "B")}
    if len(orders) != 1:
        return None
    first = "B" if orders.pop() else "A"
    return f"model {first} was always shown first: this is model {first}'s share, not position bias"


def longer_response_counts(rows: Sequence[Mapping[str, Any]], verdict_key: str = "choice") -> tuple[int, int]:
    """``(rows where the longer response won, rows with verdict A or B and responses of unequal length)``.

    Args:
        rows: Judgment rows (``response_a``, ``response_b``).
        verdict_key: The verdict's key: ``choice`` (the autorater) or the human preference column.
    """
    longer = total = 0
    for row in rows:
        verdict = row.get(verdict_key)
        len_a, len_b = len(str(row.get("response_a") or "")), len(str(row.get("response_b") or ""))
        if verdict in ("A", "B") and len_a != len_b:
            total += 1
            longer += (verdict == "A") == (len_a > len_b)
    return longer, total


def _rate(out: dict[str, Any], key: str, count: int, total: int) -> None:
    out[key] = count / total if total else None
    interval = wilson_interval(count, total)
    out[f"{key}_ci_lower"], out[f"{key}_ci_upper"] = interval if interval else (None, None)


def bias_metrics(rows: Iterable[Mapping[str, Any]], counted: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The bias metrics of the module docstring.

    Args:
        rows: Every judgment row.
        counted: The rows counted in the win rates (choice ``A``/``B``/``TIE``, complete unless included).

    Returns:
        ``first_position_rate`` (+ ``_ci_lower``/``_ci_upper``, and ``first_position_rate_note`` when one model
        was always shown first), ``first_position_count``,
        ``decisive_sample_count``, ``longer_response_win_rate`` (+ interval), ``longer_response_win_count``,
        ``unequal_length_decisive_count``, ``identical_response_count``, ``position_calibration`` and
        ``position_calibration_changed_count``; rates are None without a denominator.
    """
    counts = BiasCounts()
    for row in rows:
        counts.add(row, counted=False)
    for row in counted:
        counts.add_counted(row)
    return counts.result()


class BiasCounts:
    """:func:`bias_metrics` one row at a time (rows read in a stream): running counts, no row kept."""

    def __init__(self) -> None:
        self.first = self.decisive = self.longer = self.unequal = 0
        self.identical = self.calibrated = self.changed = 0
        self.orders: set[bool] = set()  # presentation orders (flipped) of the decisive samples

    def add(self, row: Mapping[str, Any], *, counted: bool) -> None:
        """Count one judgment row (``counted``: it is counted in the win rates)."""
        first, decisive = first_position_counts([row])
        self.first, self.decisive = self.first + first, self.decisive + decisive
        self.orders |= {bool(s.get("flipped")) for s in row.get("samples") or [] if s.get("choice") in ("A", "B")}
        self.identical += row.get("identical_responses") is True
        if row.get("uncalibrated_choice") is not None:
            self.calibrated += 1
            self.changed += row["uncalibrated_choice"] != row.get("choice")
        if counted:
            self.add_counted(row)

    def add_counted(self, row: Mapping[str, Any]) -> None:
        """Count a row of the win rates for the length bias."""
        longer, unequal = longer_response_counts([row])
        self.longer, self.unequal = self.longer + longer, self.unequal + unequal

    def result(self) -> dict[str, Any]:
        """The bias metrics of :func:`bias_metrics`."""
        out: dict[str, Any] = {}
        _rate(out, "first_position_rate", self.first, self.decisive)
        out["first_position_count"], out["decisive_sample_count"] = self.first, self.decisive
        note = first_position_note([{"samples": [{"choice": "A", "flipped": flag} for flag in sorted(self.orders)]}])
        if note:
            out["first_position_rate_note"] = note
        _rate(out, "longer_response_win_rate", self.longer, self.unequal)
        out["longer_response_win_count"], out["unequal_length_decisive_count"] = self.longer, self.unequal
        out["identical_response_count"] = self.identical
        out["position_calibration"] = "balanced" if self.calibrated else "none"
        out["position_calibration_changed_count"] = self.changed
        return out
