"""Length-controlled win rate against a baseline (AlpacaEval 2.0's GLM, without its instruction-difficulty table).

For each model ``m`` and its battles against ``baseline``: ``P(m wins) = σ(θ + φ · tanh(Δ / σ_Δ))`` with
``Δ`` = length of m's response − length of the baseline's (characters) and ``σ_Δ`` their standard deviation over
those battles; fitted by weighted maximum likelihood (ties half a win). The length-controlled win rate is
``σ(θ)``: the predicted win rate at equal length. AlpacaEval also fits each instruction's difficulty, from a table
that exists only for its own 805 instructions (tatsu-lab/alpaca_eval#316): here the difficulty term is left out,
and the result says so. Standard errors: the standard deviation over the same prompt bootstrap as the leaderboard.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autorater_pipelines.arena._bradley_terry import fit_logistic
from autorater_pipelines.arena.battles import Battles
from autorater_pipelines.arena.ranking import bootstrap_counts

__all__ = ["LENGTH_CONTROL_WARNING", "length_controlled_win_rates"]

LENGTH_CONTROL_WARNING = 0.05
"""A model whose length-controlled win rate differs from its raw win rate by more than this (5 points) is warned."""


def length_controlled_win_rates(
    battles: Battles, baseline: str, *, bootstrap_rounds: int = 100, seed: int = 0
) -> dict[str, Any]:
    """Raw and length-controlled win rates of every model against ``baseline`` (fractions), with standard errors.

    Returns:
        ``{"models": {model: {"win_rate", "win_rate_standard_error", "length_controlled_win_rate",
        "length_controlled_win_rate_standard_error", "length_coefficient", "battles"}}, "instruction_difficulty":
        "left out …", "warnings": [...]}``; a model that never met the baseline is absent.

    Raises:
        ValueError: no responses in ``battles`` or an unknown ``baseline``.
    """
    if battles.length is None:
        raise ValueError("the length-controlled win rate needs the responses of every battle (response_a, response_b)")
    if baseline not in battles.models:
        raise ValueError(f"baseline {baseline!r} is not one of the ranked models {list(battles.models)}")
    base = battles.models.index(baseline)
    counts = bootstrap_counts(len(battles.prompts), bootstrap_rounds, seed) if bootstrap_rounds else None
    results: dict[str, dict[str, float]] = {}
    warnings = []
    for k, model in enumerate(battles.models):
        if k == base:
            continue
        as_first = (battles.first == k) & (battles.second == base)
        as_second = (battles.second == k) & (battles.first == base)
        chosen = as_first | as_second
        if not chosen.any():
            continue
        share = np.where(as_first, battles.outcome, 1.0 - battles.outcome)[chosen]
        mine = np.where(as_first, battles.length[:, 0], battles.length[:, 1])[chosen]
        theirs = np.where(as_first, battles.length[:, 1], battles.length[:, 0])[chosen]
        delta = mine - theirs
        spread = delta.std(ddof=1) if len(delta) > 1 else 0.0
        x = np.tanh(delta / spread) if spread > 0 else np.zeros_like(delta)
        design = np.column_stack([np.ones_like(x), x])
        weight = battles.weight[chosen]
        won, lost = weight * share, weight * (1.0 - share)
        theta, phi = fit_logistic(design, won, lost, 0)[0]
        raw = float(won.sum() / weight.sum())
        rate = float(_sigmoid(theta))
        raw_se = lc_se = float("nan")
        if counts is not None:
            per_battle = counts[:, battles.prompt[chosen]]
            boot = fit_logistic(design, per_battle * won, per_battle * lost, 0)
            totals = (per_battle * weight).sum(axis=1)
            kept = totals > 0
            raw_boot = (per_battle * won).sum(axis=1)[kept] / totals[kept]
            raw_se = float(raw_boot.std(ddof=1)) if kept.sum() > 1 else float("nan")
            lc_boot = _sigmoid(boot[kept, 0])
            lc_se = float(lc_boot.std(ddof=1)) if kept.sum() > 1 else float("nan")
        results[model] = {
            "win_rate": raw,
            "win_rate_standard_error": raw_se,
            "length_controlled_win_rate": rate,
            "length_controlled_win_rate_standard_error": lc_se,
            "length_coefficient": float(phi),
            "battles": float(weight.sum()),
        }
        if abs(rate - raw) > LENGTH_CONTROL_WARNING:
            warnings.append(
                f"{model!r}: length control moves its win rate against {baseline!r} from {raw:.1%} to {rate:.1%} "
                f"(more than {LENGTH_CONTROL_WARNING:.0%}): the judge's verdicts follow response length"
            )
    return {
        "models": results,
        "baseline": baseline,
        "instruction_difficulty": "left out (AlpacaEval's difficulty table covers only its own instructions)",
        "standard_error": f"standard deviation over {bootstrap_rounds} prompt-bootstrap rounds (seed {seed})",
        "warnings": warnings,
    }


def _sigmoid(x: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-x))
