"""The AutoSxS report: win rates, confidence, position and length bias, human alignment, judgments.

Headline numbers come from ``metrics.json`` (:func:`autorater_pipelines.autosxs.metrics.pairwise_metrics`);
figures and the judgments table are drawn from ``judgments.jsonl`` (rows documented in
:mod:`autorater_pipelines.pairwise.voting`). Every row-level figure is computed over the rows
``metrics.json`` counts in its rates (:func:`counted_rows`: a verdict, and judged in both orders unless the
run included rows judged in one order only), and its caption or note says so; the position figures count
samples as ``metrics.json``'s per-order figures do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.autosxs.bias import first_position_counts
from autorater_pipelines.report._autosxs_rows import (
    LENGTH_BINS,
    VERDICTS,
    confusion_matrix,
    counted_rows,
    length_bias,
    one_order_only,
)
from autorater_pipelines.report._figures import (
    COLORS,
    FigureHTML,
    Series,
    bar_with_intervals,
    figure,
    heatmap,
    histogram,
    lines_with_intervals,
)
from autorater_pipelines.report._outputs import (
    PROMPT_PARAMETER_KEYS,
    RunOutputs,
    human_preference_column,
    judgment_id_columns,
)
from autorater_pipelines.report._panel import panel_context
from autorater_pipelines.report._stats import Stat, flagged_first, fmt, metric

__all__ = [
    "LENGTH_BINS",
    "VERDICTS",
    "artifact_confusion",
    "autosxs_context",
    "confusion_matrix",
    "counted_rows",
    "length_bias",
]


def _order_verdicts(row: Mapping[str, Any]) -> tuple[str, str] | None:
    """Majority verdict (model terms) of the original-order and of the swapped-order samples."""
    verdicts = []
    for flipped in (False, True):
        votes = Counter(
            s["choice"]
            for s in row.get("samples") or []
            if bool(s.get("flipped")) == flipped and s.get("choice") in VERDICTS
        ).most_common()
        if not votes:
            return None
        verdicts.append("TIE" if len(votes) > 1 and votes[0][1] == votes[1][1] else votes[0][0])
    return verdicts[0], verdicts[1]


def _figures(
    rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any], human: str | None, lb: Mapping[str, Any]
) -> list[FigureHTML]:
    counted = counted_rows(rows, m)
    figures = [
        _win_rates_figure(m),
        _confidence_figure(counted, m),
        _position_figure(rows, m),
        _length_figure(lb, human, m),
    ]
    if human:
        cols = [*VERDICTS, "ERROR"] if m.get("error_count") else list(VERDICTS)
        human_rows = list(VERDICTS) if m.get("human_tie_count") else ["A", "B"]
        full = confusion_matrix([*counted, *(r for r in rows if r.get("choice") == "ERROR")], human, cols)
        sub = [full[cols.index(h)] for h in human_rows]
        left_out = _left_out(m)
        caption = (
            f"Human label (rows) against autorater choice (columns) over the {m.get('judged_count')} rows counted "
            f"in the win rates and the {m.get('error_count')} error rows{left_out}. The A/B block gives the "
            "alignment metrics (model A positive); ties and errors are shown but not scored."
        )
        chart = heatmap(sub, human_rows, cols, "human label", "autorater choice")
        figures.append(figure("fig-confusion", "Confusion matrix", caption, chart))
    return figures


def _left_out(m: Mapping[str, Any]) -> str:
    """``; N rows judged in one order only left out`` when metrics.json left such rows out, else ""."""
    n = m.get("one_order_only_count") or 0
    return f"; {n} row{'' if n == 1 else 's'} judged in one order only left out" if n and _excludes(m) else ""


def _excludes(m: Mapping[str, Any]) -> bool:
    return m.get("one_order_only_excluded") is not False


def _rate_labels(m: Mapping[str, Any]) -> tuple[str, str]:
    """What ``autorater_model_a_win_rate`` / ``_b_`` are: win rates, or mean scores after ``ties_as_half``."""
    if m.get("ties_as_half"):
        return "Model A score, ties as ½", "Model B score, ties as ½"
    return "Model A win rate", "Model B win rate"


def _win_rates_figure(m: Mapping[str, Any]) -> FigureHTML:
    keys = ["autorater_model_a_win_rate", "autorater_model_b_win_rate", "autorater_tie_rate"]
    labels = (
        ["model A, ties as ½", "model B, ties as ½", "tie"]
        if m.get("ties_as_half")
        else ["model A wins", "model B wins", "tie"]
    )
    colors = [COLORS["A"], COLORS["B"], COLORS["TIE"]]
    if not m.get("ties_as_half"):
        keys.append("autorater_model_a_win_rate_ties_as_half")
        labels.append("model A, ties as ½")
        colors.append("#8ab4f8")
    left_out = " and rows judged in one order only" if _left_out(m) else ""
    caption = (
        f"Share of the {m.get('judged_count')} judged rows (errors{left_out} excluded); whiskers: 95 % intervals "
        + (
            "(Student-t). Re-scored with ties as ½: the model bars are mean scores (win 1, tie ½, loss 0), so they "
            "and the tie bar do not add up to 100 %."
            if m.get("ties_as_half")
            else "(Wilson; ties as ½: Student-t)."
        )
    )
    chart = bar_with_intervals(
        labels,
        [m.get(k) for k in keys],
        [(m.get(f"{k}_ci_lower"), m.get(f"{k}_ci_upper")) for k in keys],
        colors,
        xlabel="share of judged rows",
        reference=0.5,
    )
    return figure("fig-win-rates", "Win rates", caption, chart)


def _confidence_figure(rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any]) -> FigureHTML:
    caption = (
        f"Autorater confidence per row, over the {m.get('judged_count')} rows counted in the win rates{_left_out(m)} "
        "(vote share, or verdict probability with logprobs), by choice."
    )
    stacks = [
        (
            c,
            [float(r["confidence"]) for r in rows if r.get("choice") == c and r.get("confidence") is not None],
            COLORS[c],
        )
        for c in VERDICTS
    ]
    chart = histogram(stacks, [i / 10 for i in range(11)], xlabel="confidence")
    return figure("fig-confidence", "Confidence", caption, chart)


def _position_figure(rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any]) -> FigureHTML:
    pairs = [p for p in (_order_verdicts(r) for r in rows) if p]
    order_labels: tuple[str, ...] = VERDICTS if any("TIE" in p for p in pairs) else ("A", "B")
    matrix = [[0] * len(order_labels) for _ in order_labels]
    for original, swapped in pairs:
        matrix[order_labels.index(original)][order_labels.index(swapped)] += 1
    caption = (
        f"Verdict (in model terms) when model A was shown first vs. when model B was shown first, over the "
        f"{len(pairs)} rows judged in both orders (metrics.json both_orders_judged_count); the diagonal is consistent "
        f"(position consistency {fmt(m.get('position_consistency'))})."
    )
    chart = heatmap(matrix, order_labels, order_labels, "A shown first", "B shown first")
    return figure("fig-position", "Position consistency", caption, chart)


def _length_figure(lb: Mapping[str, Any], human: str | None, m: Mapping[str, Any]) -> FigureHTML:
    caption = (
        "Model A's share of A-or-B choices per bin of relative length (characters of A ÷ characters of B), "
        f"with 95 % Wilson intervals, over the {m.get('judged_count')} rows counted in the win rates{_left_out(m)}"
        f"{' (human labels over the same rows)' if human else ''}; n = rows per bin. A flat line means no "
        "length bias."
    )
    series = [Series("autorater", [b["a_share"] for b in lb["bins"]], COLORS["A"], [b["interval"] for b in lb["bins"]])]
    if human:
        series.append(Series("human labels", [b["human_a_share"] for b in lb["bins"]], COLORS["human"], dashed=True))
    chart = lines_with_intervals(
        [f"{b['label']}\nn={b['judged']}" for b in lb["bins"]],
        series,
        xlabel="length of response A ÷ length of response B",
        ylabel="model A chosen",
    )
    return figure("fig-length-bias", "Length bias", caption, chart)


def _judgment_view(row: Mapping[str, Any], ids: Sequence[str], human: str | None, counted: bool) -> dict[str, Any]:
    """One row of the judgments table; its flags count what the headline counts (``counted``: in the rates)."""
    choice = str(row.get("choice"))
    label = row.get(human) if human else None
    samples = row.get("samples") or []
    flags = []
    if counted and label in VERDICTS and choice in ("A", "B") and label != choice:
        flags.append("disagree")  # the autorater chose a model the human did not (its ties are "tie")
    if choice == "ERROR":
        flags.append("error")  # as error_count
    elif any(s.get("error") for s in samples):
        flags.append("sample-error")  # a row with a verdict, some of its samples failed
    if one_order_only(row):
        flags.append("one-order")  # as one_order_only_count
    if counted and choice == "TIE":
        flags.append("tie")
    return {
        "ids": ", ".join(str(row.get(c)) for c in ids) or "—",
        "choice": choice,
        "human": label,
        "confidence": fmt(row.get("confidence"), "float"),
        "explanation": (
            f"[left out of the metrics: {row.get('incomplete_reason')}] "
            if row.get("complete") is False and choice != "ERROR"
            else ""
        )
        + str(row.get("explanation") or ""),
        "prompt": [(k, str(row[k])) for k in PROMPT_PARAMETER_KEYS if row.get(k) is not None],
        "response_a": str(row.get("response_a") or ""),
        "response_b": str(row.get("response_b") or ""),
        "samples": [
            {
                "index": s.get("sample_index"),
                "order": ("B shown first" if s.get("flipped") else "A shown first")
                + (f" · {s['juror']}" if s.get("juror") else ""),  # a panel's sample names its juror
                "choice": s.get("choice"),
                "mapped": _mapped_back(s),
                "explanation": s.get("explanation") or "",
                "raw": s.get("raw_response") or "",
                "error": s.get("error") or s.get("note") or "",  # note: verdicts in the answer disagreed
            }
            for s in samples
        ],
        "flags": " ".join(flags),
    }


def _mapped_back(sample: Mapping[str, Any]) -> str:
    """For a sample shown B-first whose choice names a model: the position its raw answer named, in words.

    Samples' ``choice`` is in model terms (DESIGN: ``A`` = model A whichever position it was shown in); the
    judge answered with a position, so a B-first sample's raw ``"B"`` (the second shown) reads as choice ``A``.
    """
    choice = sample.get("choice")
    if not sample.get("flipped") or choice not in ("A", "B"):
        return ""
    position = "B" if choice == "A" else "A"
    shown = "second" if position == "B" else "first"
    return f"mapped back: the raw answer names position {position} (shown {shown}), which was model {choice}"


def _select_rows(views: list[dict[str, Any]], max_rows: int) -> list[dict[str, Any]]:
    """All rows, or — past ``max_rows`` — every flagged row first, then unflagged ones in order."""
    return [views[i] for i in flagged_first([bool(v["flags"]) for v in views], max_rows)]


def _headline_stats(m: Mapping[str, Any], human: str | None) -> list[Stat]:
    headline = [
        metric(m, "evaluation_count", "Rows", "count"),
        metric(m, "judged_count", "Judged", "count", note="counted in the rates"),
        metric(m, "error_count", "Errors", "count"),
        metric(
            m,
            "one_order_only_count",
            "Judged in one order only",
            "count",
            note="left out of the rates" if _excludes(m) else "counted in the rates",
        ),
        metric(m, "autorater_model_a_win_rate", _rate_labels(m)[0]),
        metric(m, "autorater_model_b_win_rate", _rate_labels(m)[1]),
        metric(m, "autorater_tie_rate", "Tie rate"),
        metric(m, "position_consistency", "Position consistency"),
    ]
    if human and m.get("alignment_count") is not None:
        headline += [metric(m, "accuracy", "Accuracy vs. humans"), metric(m, "cohens_kappa", "Cohen's kappa", "float")]
    return headline


def _rate_stats(m: Mapping[str, Any]) -> list[Stat]:
    return [
        metric(m, "autorater_model_a_win_rate", _rate_labels(m)[0]),
        metric(m, "autorater_model_b_win_rate", _rate_labels(m)[1]),
        metric(m, "autorater_tie_rate", "Tie rate"),
        metric(m, "autorater_model_a_win_rate_ties_as_half", "Model A win rate, ties as ½"),
        *_weighted_stats(m),
    ]


def _weighted_stats(m: Mapping[str, Any]) -> list[Stat]:
    """The weighted win rate of ``preference: "probability"`` (:mod:`autorater_pipelines.pairwise.preference`)."""
    if "autorater_model_a_weighted_win_rate" not in m:
        return []
    error = fmt(m.get("autorater_model_a_weighted_win_rate_standard_error"), "pct")
    fallbacks = int(m.get("preference_fallback_sample_count") or 0)
    note = f"mean verdict probability; standard error {error}; {fallbacks} sample(s) counted by their vote"
    return [metric(m, "autorater_model_a_weighted_win_rate", "Model A weighted win rate", note=note)]


def _confidence_stats(counted: Sequence[Mapping[str, Any]], m: Mapping[str, Any]) -> list[Stat]:
    """Confidence over the rows counted in the rates (as ``mean_confidence``)."""
    confidences = [float(r["confidence"]) for r in counted if r.get("confidence") is not None]
    of = f"of {len(confidences)} rows with a confidence, among the {m.get('judged_count')} counted in the rates"
    return [
        metric(m, "mean_confidence", "Mean confidence", "float", note=f"over the {len(confidences)} rows counted"),
        Stat("Rows with confidence 1", fmt(sum(c >= 1 for c in confidences), "count"), note=of),
        Stat("Rows with confidence < 0.75", fmt(sum(c < 0.75 for c in confidences), "count"), note=of),
    ]


def _one_order_reason(judgments: Sequence[Mapping[str, Any]]) -> str | None:
    """Why no row of ``judgments`` was judged in both orders; None when one was (or there is no row).

    A row with ``flipped`` had its one order fixed before judging (``flip: "random"`` or ``flip_column``); without
    it, every sample showing model A first means ``flip: false``.
    """
    orders = [{bool(s.get("flipped")) for s in r.get("samples") or []} for r in judgments]
    if not judgments or any(len(o) == 2 for o in orders):
        return None
    if any("flipped" in r for r in judgments):
        return 'each row judged in one order fixed before judging (flip "random" or flip_column)'
    return "model A shown first in every row (flip false)"


def _position_stats(rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any], human: str | None) -> list[Stat]:
    first, decisive = first_position_counts(rows)
    position = [
        metric(
            m,
            "position_consistency",
            "Position consistency",
            note=f"{m.get('position_consistency_count')} of {m.get('both_orders_judged_count')} rows judged in both "
            "orders" + (f": {why}" if (why := _one_order_reason(rows)) else ""),
        ),
        metric(
            {"first_position_rate": first / decisive if decisive else None, **m},
            "first_position_rate",
            "First-shown response chosen",
            note=f"{first} of {decisive} A-or-B samples of all rows, as the per-order accuracies (50% = no position "
            "bias)",
        ),
    ]
    if m.get("identical_response_count"):
        position.append(
            metric(m, "identical_response_count", "Identical responses", "count", note="TIE without a judge call")
        )
    if m.get("position_calibration") == "balanced":
        position.append(
            metric(
                m,
                "position_calibration_changed_count",
                "Choices changed by balanced position calibration",
                "count",
                note="scores averaged over both orders before comparing (Wang et al. 2023)",
            )
        )
    if human:
        position += [
            metric(
                m,
                "original_order_accuracy",
                "Accuracy, A shown first",
                note=f"{m.get('original_order_correct_count')} of {m.get('original_order_sample_count')} samples",
            ),
            metric(
                m,
                "swapped_order_accuracy",
                "Accuracy, B shown first",
                note=f"{m.get('swapped_order_correct_count')} of {m.get('swapped_order_sample_count')} samples",
            ),
            metric(m, "both_orders_correct_count", "Correct in both orders", "count"),
        ]
    return position


def _length_stats(lb: Mapping[str, Any], human: str | None, m: Mapping[str, Any]) -> list[Stat]:
    rows = f"of the {sum(b['rows'] for b in lb['bins'])} rows counted in the rates"
    length = [
        metric(
            {"longer_response_win_rate": lb["longer_chosen"], **m},
            "longer_response_win_rate",
            "Longer response chosen (autorater)",
            note=f"of {lb['longer_chosen_n']} A-or-B choices {rows}",
        ),
    ]
    if human:
        length.append(
            Stat(
                "Longer response chosen (humans)",
                fmt(lb["human_longer_chosen"]),
                note=f"of {lb['human_longer_chosen_n']} A-or-B labels {rows}",
            )
        )
    return length


def _alignment_stats(m: Mapping[str, Any], human: str | None) -> list[Stat]:
    if not human:
        return []
    return [
        metric(m, "alignment_count", "Rows scored (human and autorater chose A or B)", "count"),
        metric(m, "accuracy", "Accuracy"),
        metric(m, "precision", "Precision (model A positive)"),
        metric(m, "recall", "Recall"),
        metric(m, "f1_score", "F1 score", "float"),
        metric(m, "cohens_kappa", "Cohen's kappa", "float"),
        metric(m, "true_positive_count", "True positives (both A)", "count"),
        metric(m, "false_positive_count", "False positives (autorater A, human B)", "count"),
        metric(m, "true_negative_count", "True negatives (both B)", "count"),
        metric(m, "false_negative_count", "False negatives (autorater B, human A)", "count"),
        metric(m, "human_preference_model_a_win_rate", "Human preference: model A"),
        metric(m, "human_preference_model_b_win_rate", "Human preference: model B"),
        metric(m, "human_preference_tie_rate", "Human preference: tie"),
        metric(m, "autorater_tie_on_human_labeled_count", "Autorater ties on human-labelled rows", "count"),
        metric(m, "autorater_error_on_human_labeled_count", "Autorater errors on human-labelled rows", "count"),
    ]


def autosxs_context(outputs: RunOutputs, *, max_rows: int = 2000) -> dict[str, Any]:
    """Template context of the AutoSxS report (see ``templates/autosxs.html.j2``)."""
    rows, m = outputs.rows, outputs.metrics
    human = human_preference_column(rows, m)
    ids = judgment_id_columns(rows[0]) if rows else []
    counted = counted_rows(rows, m)
    lb = length_bias(counted, human)
    in_rates = {id(r) for r in counted}
    views = [_judgment_view(r, ids, human, id(r) in in_rates) for r in rows]
    counts = Counter(flag for v in views for flag in v["flags"].split())
    return {
        "kind": outputs.kind,
        "title": "AutoSxS report",
        "headline": _headline_stats(m, human),
        "rates": _rate_stats(m),
        "confidence": _confidence_stats(counted, m),
        "position": _position_stats(rows, m, human),
        "length": _length_stats(lb, human, m),
        "length_bins": lb["bins"],
        "alignment": _alignment_stats(m, human),
        "figures": {f.id: f for f in _figures(rows, m, human, lb)},
        "human_column": human,
        "judgments": _select_rows(views, max_rows),
        "judgment_count": len(views),
        "flag_counts": {"all": len(views), **{k: counts.get(k, 0) for k in ("disagree", "error", "one-order", "tie")}},
        "rows_in_rates": len(counted),
        "length_note": _left_out(m).removeprefix("; "),
        "one_order_excluded": _excludes(m),
        "errors": outputs.errors,
        "ties_as_half": bool(m.get("ties_as_half")),
        "panel": panel_context(m),
    }


def artifact_confusion(outputs: RunOutputs) -> tuple[tuple[str, ...], list[list[int]]]:
    """The confusion matrix the AutoSxS report step logs: ``(categories, matrix)``, ``((), [])`` without human labels.

    Human label (rows) × autorater choice (columns) over :data:`VERDICTS`, over the rows the alignment metrics
    count (rows judged in one order only left out unless included).
    """
    human = human_preference_column(outputs.rows, outputs.metrics)
    if not human:
        return (), []
    return VERDICTS, confusion_matrix(counted_rows(outputs.rows, outputs.metrics), human)
