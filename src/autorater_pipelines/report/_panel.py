"""The panel section of the AutoSxS report: each juror's alignment next to the panel's, and the agreement matrix.

Reads the ``jurors`` and ``juror_agreement`` sections of ``metrics.json``
(:mod:`autorater_pipelines.autosxs.panel_metrics`); absent for a run with one judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["agreement_context", "arena_panel_context", "panel_context"]


def _percent(value: Any) -> str:
    return "n/a" if value is None else f"{100 * float(value):.1f}%"


def _number(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.3f}"


def _row(name: str, m: Mapping[str, Any], votes: Any, abstained: Any) -> dict[str, Any]:
    return {
        "name": name,
        "votes": votes,
        "abstained": abstained,
        "a": _percent(m.get("autorater_model_a_win_rate")),
        "b": _percent(m.get("autorater_model_b_win_rate")),
        "tie": _percent(m.get("autorater_tie_rate")),
        "accuracy": _percent(m.get("accuracy")),
        "kappa": _number(m.get("cohens_kappa")),
        "aligned": m.get("alignment_count", "n/a"),
        "consistency": _percent(m.get("position_consistency")),
        "calls": m.get("model_call_attempt_count", 0),
        "tokens": int(m.get("input_token_count") or 0) + int(m.get("output_token_count") or 0),
    }


def panel_context(m: Mapping[str, Any]) -> dict[str, Any] | None:
    """The template context of the panel section, or None when ``m`` (metrics.json) is not a panel's."""
    jurors = m.get("jurors")
    agreement = m.get("juror_agreement")
    if not isinstance(jurors, Mapping) or not isinstance(agreement, Mapping):
        return None
    names = list(jurors)
    rows = [_row(f"panel ({m.get('panel_vote', 'majority')})", m, m.get("judged_count"), "")]
    rows += [_row(n, jurors[n], jurors[n].get("vote_count"), jurors[n].get("abstention_count")) for n in names]
    return {"vote": m.get("panel_vote", "majority"), "rows": rows, **agreement_context(names, agreement)}


def agreement_context(names: list[str], agreement: Mapping[str, Any]) -> dict[str, Any]:
    """The agreement matrix and Fleiss' kappa of a ``juror_agreement`` section, for the jurors ``names``."""
    rates = agreement.get("pairwise_agreement") or {}
    counts = agreement.get("pairwise_agreement_count") or {}
    kappas = agreement.get("pairwise_cohens_kappa") or {}
    matrix = [
        [
            {
                "rate": _percent((rates.get(left) or {}).get(right)),
                "count": (counts.get(left) or {}).get(right, 0),
                "kappa": _number((kappas.get(left) or {}).get(right)),
            }
            for right in names
        ]
        for left in names
    ]
    return {
        "names": names,
        "matrix": matrix,
        "fleiss": _number(agreement.get("fleiss_kappa")),
        "fleiss_rows": agreement.get("fleiss_kappa_row_count", 0),
    }


def arena_panel_context(m: Mapping[str, Any]) -> dict[str, Any] | None:
    """The arena report's panel section (each juror's battle counts and the agreement), or None without a panel.

    Reads the ``jurors`` and ``juror_agreement`` sections of an arena's ``metrics.json``
    (:mod:`autorater_pipelines.arena.panel_metrics`).
    """
    jurors = m.get("jurors")
    agreement = m.get("juror_agreement")
    if not isinstance(jurors, Mapping) or not isinstance(agreement, Mapping):
        return None
    names = list(jurors)
    keys = ("vote_count", "abstention_count", "battle_sample_count", "error_sample_count", "strong_verdict_count")
    rows = [
        {"name": n, **{k: jurors[n].get(k, 0) for k in keys}, "battles": _count(jurors[n].get("battle_count"))}
        for n in names
    ]
    return {"vote": m.get("panel_vote", "majority"), "rows": rows, **agreement_context(names, agreement)}


def _count(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value
