"""AutoSxS metrics: win rates with confidence intervals, position consistency, human alignment.

All rates are fractions in [0, 1]. Judgments whose choice is ``ERROR`` are never counted as ties or
losses: they are excluded from every rate and reported as ``error_count``.

Key names follow Vertex AI AutoSxS (``autorater_model_a_win_rate``, ``human_preference_model_a_win_rate``,
``true_positive_count`` …, with model A as the positive class) plus our additions. Confidence intervals
are 95 %: Wilson score intervals for proportions, a Student-t interval for the mean score with ties counted
as 0.5 (:mod:`autorater_pipelines.evaluation.intervals`). The alignment metrics are the textbook formulas on
the 2×2 confusion matrix, with scikit-learn's conventions (``zero_division=0``; Cohen's kappa undefined when
both raters used one same label).

Why not ``scipy.stats`` and ``sklearn.metrics`` themselves: every KFP step is a fresh process and importing
them costs ~3 s of CPU (sklearn pulls pandas), more than the rest of a small run; the tests check these
formulas against both libraries.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autorater_pipelines.autosxs.bias import BiasCounts
from autorater_pipelines.evaluation.intervals import mean_interval, wilson_interval
from autorater_pipelines.pairwise.preference import weighted_win_rate

__all__ = ["GOOGLE_METRIC_ALIASES", "console_metrics", "pairwise_metrics", "wilson_interval"]


_PREFERENCE_FIELDS = ("preference", "preference_fallback_count", "verdict_from_alternatives_count")
"""What :func:`~autorater_pipelines.pairwise.preference.weighted_win_rate` reads of a row."""
_CHOICES = {c: c for c in ("A", "B", "TIE", "ERROR", "ONE_ORDER_ONLY", "None")}
"""One string object per label, so the per-row lists hold pointers only."""


def _rate(count: float, total: int) -> float | None:
    return count / total if total else None


def _add_rate(out: dict[str, Any], key: str, count: int, total: int) -> None:
    out[key] = _rate(count, total)
    interval = wilson_interval(count, total)
    out[f"{key}_ci_lower"], out[f"{key}_ci_upper"] = interval if interval else (None, None)


class _OrderStats:
    """Position consistency and per-presentation-order accuracy from the ``samples`` lists, one row at a time."""

    def __init__(self) -> None:
        self.consistent = self.both_orders = self.both_correct = 0
        self.correct = {False: 0, True: 0}
        self.judged = {False: 0, True: 0}
        self.labeled = False

    def add(self, row: Mapping[str, Any], label: str | None) -> None:
        samples = [s for s in row.get("samples") or [] if s.get("choice") in ("A", "B", "TIE")]
        by_order = {flag: [s["choice"] for s in samples if bool(s.get("flipped")) == flag] for flag in (False, True)}
        if by_order[False] and by_order[True]:
            self.both_orders += 1
            choices = set(by_order[False]) | set(by_order[True])
            self.consistent += len(choices) == 1
            if label in ("A", "B") and choices == {label}:
                self.both_correct += 1
        if label in ("A", "B"):
            self.labeled = True
            for flag in (False, True):
                self.judged[flag] += len(by_order[flag])
                self.correct[flag] += sum(c == label for c in by_order[flag])

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "position_consistency": _rate(self.consistent, self.both_orders),
            "position_consistency_count": self.consistent,
            "both_orders_judged_count": self.both_orders,
        }
        if self.labeled:
            out.update(
                original_order_accuracy=_rate(self.correct[False], self.judged[False]),
                original_order_correct_count=self.correct[False],
                original_order_sample_count=self.judged[False],
                swapped_order_accuracy=_rate(self.correct[True], self.judged[True]),
                swapped_order_correct_count=self.correct[True],
                swapped_order_sample_count=self.judged[True],
                both_orders_correct_count=self.both_correct,
            )
        return out


def _alignment(choices: list[str], human: list[str]) -> dict[str, Any]:
    """Alignment of the autorater with human labels on rows where both chose A or B."""
    pairs = [(h, c) for h, c in zip(human, choices, strict=False) if h in ("A", "B") and c in ("A", "B")]
    out: dict[str, Any] = {
        "alignment_count": len(pairs),
        "human_tie_count": sum(h == "TIE" for h in human),
        "autorater_tie_on_human_labeled_count": sum(
            h in ("A", "B") and c == "TIE" for h, c in zip(human, choices, strict=False)
        ),
        "autorater_error_on_human_labeled_count": sum(
            h in ("A", "B") and c == "ERROR" for h, c in zip(human, choices, strict=False)
        ),
    }
    n_human = len(human)
    for label, key in (("A", "model_a"), ("B", "model_b")):
        out[f"human_preference_{key}_win_rate"] = _rate(sum(h == label for h in human), n_human)
    out["human_preference_tie_rate"] = _rate(out["human_tie_count"], n_human)
    if not pairs:
        for key in ("true_positive_count", "false_positive_count", "true_negative_count", "false_negative_count"):
            out[key] = 0
        out.update(accuracy=None, precision=None, recall=None, f1_score=None, cohens_kappa=None)
        return out
    out.update(_confusion_metrics(pairs))
    interval = wilson_interval(out["true_positive_count"] + out["true_negative_count"], len(pairs))
    out["accuracy_ci_lower"], out["accuracy_ci_upper"] = interval if interval else (None, None)
    return out


def _confusion_metrics(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Counts and scores of (human, autorater) pairs, each ``A`` or ``B``, with ``A`` the positive class.

    Precision, recall and F1 are 0 when undefined (scikit-learn's ``zero_division=0``); Cohen's kappa is
    ``(po - pe) / (1 - pe)`` and None when undefined (``pe == 1``: both raters used one same label).
    """
    tp = sum(h == "A" and c == "A" for h, c in pairs)
    fp = sum(h == "B" and c == "A" for h, c in pairs)
    fn = sum(h == "A" and c == "B" for h, c in pairs)
    tn = len(pairs) - tp - fp - fn
    n = len(pairs)
    observed = (tp + tn) / n
    chance = (tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)  # n² × the agreement expected by chance
    expected = chance / (n * n)
    return {
        "true_positive_count": tp,
        "false_positive_count": fp,
        "true_negative_count": tn,
        "false_negative_count": fn,
        "accuracy": observed,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1_score": 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        "cohens_kappa": None if chance == n * n else (observed - expected) / (1 - expected),
    }


def pairwise_metrics(
    judgments: Iterable[Mapping[str, Any]],
    *,
    human_preference_column: str | None = None,
    ties_as_half: bool = False,
    include_incomplete: bool = False,
) -> dict[str, Any]:
    """Aggregate judgment rows into AutoSxS metrics.

    Args:
        judgments: Judgment rows (see :mod:`autorater_pipelines.pairwise.voting`): ``choice`` in
            ``A``/``B``/``TIE``/``ERROR``, ``samples`` list, token counts, and — when
            ``human_preference_column`` is given — that column holding ``A``/``B``/``TIE``.
        human_preference_column: Column of normalized human labels, or None/empty.
        ties_as_half: Count a tie as half a win for each model. ``autorater_model_a_win_rate`` and
            ``autorater_model_b_win_rate`` become mean scores over judged rows (own win = 1, TIE = 0.5,
            other win = 0) with Student-t intervals instead of Wilson intervals, human preference win
            rates count a human TIE as 0.5, and ``ties_as_half`` (True) is added. Every other key keeps
            its value. Default False: the keys mean what Vertex AI AutoSxS means by them.
        include_incomplete: Count rows judged in one presentation order only (``complete`` False, see
            :func:`autorater_pipelines.pairwise.voting.row_completeness`) like complete rows. Default False:
            they are left out of every rate and of alignment, and counted in ``one_order_only_count``.

    Returns:
        A flat dict of JSON-compatible values (None where a rate has no denominator):
        ``dataset_rows_read`` (data rows read from the dataset: each ends in exactly one judgment),
        ``evaluation_count`` (rows), ``judged_count`` (rows counted in the rates: choice ≠ ERROR and, unless
        ``include_incomplete``, judged in every scheduled order), ``error_count``, ``one_order_only_count``
        (rows judged in one order only) and ``one_order_only_excluded``,
        ``autorater_model_a_win_rate`` / ``_model_b_`` / ``autorater_tie_rate`` (fractions of judged
        rows) each with ``_ci_lower``/``_ci_upper``; ``autorater_model_a_win_rate_ties_as_half``
        (mean of 1/0.5/0 per judged row) with its t-interval; ``mean_confidence``; with preference
        ``probability`` (rows carrying ``preference``): ``autorater_model_a_weighted_win_rate``, its
        ``_standard_error`` and ``preference_fallback_sample_count``
        (:func:`~autorater_pipelines.pairwise.preference.weighted_win_rate`);
        ``position_consistency`` (share of rows judged in both orders whose samples all agree); the position
        and length bias figures of :func:`autorater_pipelines.autosxs.bias.bias_metrics`
        (``first_position_rate``, ``longer_response_win_rate``, ``identical_response_count``,
        ``position_calibration`` …);
        token totals, ``model_call_attempt_count`` (network attempts, retries included),
        ``cached_sample_count`` and ``cached_error_sample_count`` (cached answers that could not be
        parsed); ``not_called_count`` (rows with samples never called because the model calls stopped
        early: a wrong endpoint, no progress, the failure budget); and with human labels:
        ``human_preference_model_a_win_rate`` …,
        ``true_positive_count`` … (A positive), ``accuracy``, ``precision``, ``recall``,
        ``f1_score``, ``cohens_kappa`` over the ``alignment_count`` rows where both chose A or B,
        and per-presentation-order sample accuracy (``original_order_accuracy``,
        ``swapped_order_accuracy``, ``both_orders_correct_count``).
    """
    # one pass, nothing of a row kept but its choice, confidence and label: memory ~30 bytes a row
    choices: list[str] = []
    human: list[str] = []
    confidences: list[float] = []
    order_stats = _OrderStats()
    bias = BiasCounts()
    # (the few fields weighted_win_rate reads, choice) of each counted row, once a row carries "preference"
    preference_rows: list[tuple[dict[str, Any], str]] = []
    has_preference = False
    count = one_order = input_tokens = output_tokens = attempts = cached = cached_errors = not_called = 0
    for r in judgments:
        count += 1
        partial = r.get("complete") is False and r.get("choice") in ("A", "B", "TIE")
        one_order += partial
        choice = "ONE_ORDER_ONLY" if partial and not include_incomplete else str(r.get("choice"))
        choices.append(_CHOICES.get(choice, choice))
        if r.get("confidence") is not None and choice in ("A", "B", "TIE"):
            confidences.append(float(r["confidence"]))
        input_tokens += int(r.get("input_token_count") or 0)
        output_tokens += int(r.get("output_token_count") or 0)
        samples = r.get("samples") or []
        attempts += sum(int(s.get("attempts") or 0) for s in samples)
        cached += sum(bool(s.get("cached")) for s in samples)
        # Answers served from the cache that could not be parsed: the same error as the run that cached them.
        cached_errors += sum(bool(s.get("cached")) and bool(s.get("error")) for s in samples)
        not_called += any(str(s.get("error") or "").startswith("budget:") for s in samples)
        label = str(r.get(human_preference_column)) if human_preference_column else None
        if label is not None:
            human.append(_CHOICES.get(label, label))
        order_stats.add(r, label)
        counted = choice in ("A", "B", "TIE")
        bias.add(r, counted=counted)
        has_preference = has_preference or "preference" in r
        if counted:
            preference_rows.append(({k: r[k] for k in _PREFERENCE_FIELDS if k in r}, _CHOICES[choice]))
    preferences = preference_rows if has_preference else None
    excluded = one_order if not include_incomplete else 0
    judged = [c for c in choices if c in ("A", "B", "TIE")]
    n = len(judged)
    out: dict[str, Any] = {
        "dataset_rows_read": count,  # every dataset row ends in exactly one judgment
        "evaluation_count": count,
        "judged_count": n,
        "error_count": count - n - excluded,
        "one_order_only_count": one_order,
        "one_order_only_excluded": not include_incomplete,
    }
    _add_rate(out, "autorater_model_a_win_rate", judged.count("A"), n)
    _add_rate(out, "autorater_model_b_win_rate", judged.count("B"), n)
    _add_rate(out, "autorater_tie_rate", judged.count("TIE"), n)
    scores = [{"A": 1.0, "TIE": 0.5, "B": 0.0}[c] for c in judged]
    mean, low, high = mean_interval(scores)
    out["autorater_model_a_win_rate_ties_as_half"] = mean
    out["autorater_model_a_win_rate_ties_as_half_ci_lower"] = low
    out["autorater_model_a_win_rate_ties_as_half_ci_upper"] = high
    out["mean_confidence"] = statistics.fmean(confidences) if confidences else None
    if preferences is not None:  # preference "probability"
        out.update(weighted_win_rate(preferences))
    out["input_token_count"] = input_tokens
    out["output_token_count"] = output_tokens
    out["model_call_attempt_count"] = attempts
    out["cached_sample_count"] = cached
    out["cached_error_sample_count"] = cached_errors
    out["not_called_count"] = not_called  # rows whose calls were never made: the model calls stopped early
    if human_preference_column:
        out.update(_alignment(choices, human))
    out.update(order_stats.result())
    out.update(bias.result())
    if ties_as_half:
        _count_ties_as_half(out, judged, human if human_preference_column else None)
    return out


def _count_ties_as_half(out: dict[str, Any], judged: list[str], human: list[str] | None) -> None:
    """Replace the win rates in ``out`` by their ties-as-half versions (see :func:`pairwise_metrics`)."""
    for label, key in (("A", "autorater_model_a_win_rate"), ("B", "autorater_model_b_win_rate")):
        scores = [1.0 if c == label else 0.5 if c == "TIE" else 0.0 for c in judged]
        out[key], out[f"{key}_ci_lower"], out[f"{key}_ci_upper"] = mean_interval(scores)
    if human is not None:
        ties = 0.5 * human.count("TIE")
        for label, key in (("A", "model_a"), ("B", "model_b")):
            out[f"human_preference_{key}_win_rate"] = _rate(human.count(label) + ties, len(human))
    out["ties_as_half"] = True


GOOGLE_METRIC_ALIASES = {
    "autosxs_model_a_win_rate": "autorater_model_a_win_rate",
    "autosxs_model_b_win_rate": "autorater_model_b_win_rate",
}
"""Keys of Google's ``autosxs_metrics`` metadata (read by its sample notebooks) → our metric of the same value."""


def console_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The numbers of the ``autosxs_metrics`` Metrics artifact (Vertex AI console).

    Every numeric metric, plus :data:`GOOGLE_METRIC_ALIASES` (``autosxs_model_a_win_rate`` …) where their
    value is defined.
    """
    out = {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    for alias, key in GOOGLE_METRIC_ALIASES.items():
        if key in out:
            out[alias] = out[key]
    return out
