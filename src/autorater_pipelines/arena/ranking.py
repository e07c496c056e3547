"""The arena leaderboard: Bradley–Terry scores with prompt-bootstrap intervals, ranks, win matrix, style control.

Method (Chatbot Arena / Arena-Hard-Auto v2, with the differences said):

- **Scores**: Bradley–Terry by maximum likelihood over all battles, ties half a win to each side (or Rao–Kupper,
  ``ties="rao_kupper"``) — :mod:`._bradley_terry`. ``score`` is the log-strength on the natural-log scale: 0 for
  ``baseline`` when one is given, else the scores have mean 0. ``elo = 1000 + 400 / ln 10 · score``. The point
  estimate is the fit on all battles (Arena-Hard prints the bootstrap median).
- **Intervals**: 95 % percentile intervals (2.5 % and 97.5 % quantiles) over ``bootstrap_rounds`` refits on prompts
  drawn with replacement (numpy ``default_rng(seed)``): every battle of a drawn prompt comes along, so the battles
  of one prompt are not treated as independent (Arena-Hard resamples battles and prints 5 %/95 %).
- **Ranks**: ``rank`` = 1 + the number of models with a higher score; ``rank_upper`` (the best rank the intervals
  allow; Chatbot Arena's "rank (UB)") = 1 + the number of models whose lower bound is above this one's upper bound;
  ``rank_lower`` (the worst) = 1 + the number of other models whose upper bound is above this one's lower bound.
- **Win rate vs baseline**: ``e^s / (e^s + e^s_baseline)`` from the scores, interval from the bootstrap.
- **Style control** (``style_control=True``): the difference in length ``(m − b) / (m + b)`` (characters) and in
  Markdown density ``(d_m − d_b) / (d_m + d_b + 1)`` with ``d`` = headers, list items, bold per character, each
  z-scored over the battles, enter the logistic fit as covariates (Arena-Hard v2 ``show_result.py``);
  ``score_style_controlled`` is the model coefficient of that fit, re-referenced as ``score``.
- **Separability**: the share of model pairs whose score intervals do not overlap.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from autorater_pipelines.arena._bradley_terry import fit_logistic, fit_pairs, fit_rao_kupper
from autorater_pipelines.arena.battles import Battles

__all__ = ["STYLE_FEATURES", "TIES", "Ranking", "bootstrap_counts", "rank_models"]

TIES = ("half", "rao_kupper")
"""How ties enter the fit: half a win to each side (Chatbot Arena, Arena-Hard), or the Rao–Kupper tie model."""

STYLE_FEATURES = ("length", "headers", "lists", "bold")
"""Style covariates, in order (Arena-Hard v2's length and Markdown density features)."""

ELO_SCALE = 400 / math.log(10)
"""Elo points per unit of natural-log strength."""

_CHUNK_ROUNDS = 250
"""Bootstrap rounds fitted together (plain Bradley–Terry; memory ~ rounds × pairs × models)."""


@dataclasses.dataclass(frozen=True)
class Ranking:
    """A fitted leaderboard.

    Attributes:
        leaderboard: One dict per model, best first, with the keys of :func:`rank_models`.
        win_matrix: ``{model: {opponent: {"win_rate", "wins", "battles"}}}``: observed share of (weighted) battles
            won against each opponent, ties half.
        separability: Share of model pairs whose intervals do not overlap (None with fewer than 2 models).
        style: With style control: ``{feature: {"coefficient", "ci_lower", "ci_upper"}}`` (z-scored features).
        tie_parameter: Rao–Kupper's θ (None with ``ties="half"``).
        computed_over: What the numbers are computed over: battles (weighted), battle records, prompts,
            bootstrap rounds, seed, interval, tie handling, reference.
        notes: Plain-language caveats (a model that won or lost every battle, pairs never compared, …).
    """

    leaderboard: list[dict[str, Any]]
    win_matrix: dict[str, dict[str, dict[str, float]]]
    separability: float | None
    style: dict[str, dict[str, float]] | None
    tie_parameter: float | None
    computed_over: dict[str, Any]
    notes: list[str]


def bootstrap_counts(n_prompts: int, rounds: int, seed: int) -> np.ndarray:
    """Shape (rounds, n_prompts): how often each prompt is drawn in each round (draws with replacement)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_prompts, size=(rounds, n_prompts))
    counts = np.zeros((rounds, n_prompts))
    np.add.at(counts, (np.arange(rounds)[:, None], draws), 1.0)
    return counts


def rank_models(
    battles: Battles,
    *,
    baseline: str | None = None,
    bootstrap_rounds: int = 100,
    seed: int = 0,
    ties: str = "half",
    style_control: bool = False,
    confidence: float = 0.95,
) -> Ranking:
    """Fit the leaderboard of ``battles``.

    Returns:
        A :class:`Ranking` whose leaderboard rows have ``model``, ``score``, ``score_ci_lower``,
        ``score_ci_upper``, ``elo``, ``elo_ci_lower``, ``elo_ci_upper``, ``rank``, ``rank_upper``,
        ``rank_lower``, ``battles``, ``wins``, ``losses``, ``ties`` (weighted battle counts),
        ``mean_response_length`` (characters, over the model's distinct prompts; None without responses), with a
        baseline ``win_rate_vs_baseline`` (+ CI), and with style control ``score_style_controlled`` (+ CI).

    Raises:
        ValueError: an unknown ``baseline`` or ``ties``, ``bootstrap_rounds`` outside 0–10000, style control
            without responses, or fewer than 2 models.
    """
    models = battles.models
    n = len(models)
    if n < 2:
        raise ValueError(f"ranking needs battles between at least 2 models, got {list(models)}")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {list(TIES)}, got {ties!r}")
    if baseline is not None and baseline not in models:
        raise ValueError(f"baseline {baseline!r} is not one of the ranked models {list(models)}")
    if not 0 <= bootstrap_rounds <= 10000:
        raise ValueError(f"bootstrap_rounds must be between 0 and 10000, got {bootstrap_rounds!r}")
    if style_control and battles.length is None:
        raise ValueError("style_control needs the responses of every battle (response_a, response_b)")
    if style_control and ties != "half":
        raise ValueError(
            f"style_control needs ties 'half' (the style covariates are fitted with a tie as half a win), got ties "
            f"{ties!r}: set style_control false to fit Rao–Kupper ties"
        )

    reference = models.index(baseline) if baseline is not None else None
    counts = bootstrap_counts(len(battles.prompts), bootstrap_rounds, seed) if bootstrap_rounds else None
    pairs = _Pairs.of(battles)
    tie_parameter = None
    if ties == "half":
        score = fit_pairs(pairs.i, pairs.j, pairs.wins_i(None), pairs.wins_j(None), n)
        boot = _in_chunks(
            counts, lambda c: fit_pairs(pairs.i, pairs.j, pairs.wins_i(c), pairs.wins_j(c), n), _CHUNK_ROUNDS
        )
    else:
        score, theta = fit_rao_kupper(
            pairs.i, pairs.j, pairs.decisive_i(None), pairs.decisive_j(None), pairs.tied(None), n
        )
        tie_parameter = float(theta)
        boot = _in_chunks(
            counts,
            lambda c: fit_rao_kupper(pairs.i, pairs.j, pairs.decisive_i(c), pairs.decisive_j(c), pairs.tied(c), n)[0],
            _CHUNK_ROUNDS,
        )
    score, boot = _referenced(score, reference), _referenced(boot, reference)
    low, high = _quantiles(boot, confidence, score)

    rows = _rows(battles)
    for k, row in enumerate(rows):
        row.update(score=float(score[k]), score_ci_lower=float(low[k]), score_ci_upper=float(high[k]))
        row.update(elo=1000 + ELO_SCALE * row["score"])
        row.update(elo_ci_lower=1000 + ELO_SCALE * row["score_ci_lower"])
        row.update(elo_ci_upper=1000 + ELO_SCALE * row["score_ci_upper"])
        row["rank"] = 1 + int(np.sum(score > score[k]))
        row["rank_upper"] = 1 + int(np.sum(low > high[k]))
        row["rank_lower"] = 1 + int(np.sum(np.delete(high, k) > low[k]))
        if reference is not None:
            rate = _win_probability(score, reference)
            rate_boot = _win_probability(boot, reference) if boot is not None else None
            rate_low, rate_high = _quantiles(rate_boot, confidence, rate)
            row.update(
                win_rate_vs_baseline=float(rate[k]),
                win_rate_vs_baseline_ci_lower=float(rate_low[k]),
                win_rate_vs_baseline_ci_upper=float(rate_high[k]),
            )
    style = None
    if style_control:
        style = _style_control(battles, counts, reference, confidence, rows)
    rows.sort(key=lambda r: (-r["score"], r["model"]))
    return Ranking(
        leaderboard=rows,
        win_matrix=_win_matrix(battles),
        separability=_separability(low, high),
        style=style,
        tie_parameter=tie_parameter,
        computed_over={
            "battles": float(battles.weight.sum()),
            "battle_records": len(battles),
            "prompts": len(battles.prompts),
            "models": n,
            "bootstrap_rounds": bootstrap_rounds,
            "bootstrap_unit": "prompt",
            "seed": seed,
            "interval": f"{confidence:.0%} percentile" if bootstrap_rounds else "none (bootstrap_rounds = 0)",
            "ties": ties,
            "score_reference": f"baseline {baseline!r} = 0" if baseline is not None else "mean of the scores = 0",
        },
        notes=_notes(battles, pairs),
    )


@dataclasses.dataclass(frozen=True)
class _Pairs:
    """Battles summed per unordered pair (i < j).

    In a bootstrap round each battle weighs as often as its prompt was drawn.
    """

    i: np.ndarray
    j: np.ndarray
    pair: np.ndarray  # (B,): each battle's pair
    prompt: np.ndarray  # (B,): each battle's prompt
    first: np.ndarray  # (B,): weighted wins of the pair's first model, ties half
    second: np.ndarray
    tie: np.ndarray  # (B,): weighted ties (whole)

    @classmethod
    def of(cls, battles: Battles) -> _Pairs:
        n = len(battles.models)
        lo = np.minimum(battles.first, battles.second)
        hi = np.maximum(battles.first, battles.second)
        unique, pair = np.unique(lo * n + hi, return_inverse=True)
        share_lo = np.where(battles.first == lo, battles.outcome, 1.0 - battles.outcome)
        w = battles.weight
        return cls(
            i=unique // n,
            j=unique % n,
            pair=pair,
            prompt=battles.prompt,
            first=w * share_lo,
            second=w * (1.0 - share_lo),
            tie=np.where(battles.outcome == 0.5, w, 0.0),
        )

    def _total(self, values: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
        """Shape (P,) over all battles, or (R, P) with each round's prompt draw counts (one bincount per round)."""
        if counts is None:
            return np.bincount(self.pair, weights=values, minlength=len(self.i))
        return np.array(
            [np.bincount(self.pair, weights=values * c[self.prompt], minlength=len(self.i)) for c in counts]
        )

    def wins_i(self, counts: np.ndarray | None) -> np.ndarray:
        return self._total(self.first, counts)

    def wins_j(self, counts: np.ndarray | None) -> np.ndarray:
        return self._total(self.second, counts)

    def tied(self, counts: np.ndarray | None) -> np.ndarray:
        return self._total(self.tie, counts)

    def decisive_i(self, counts: np.ndarray | None) -> np.ndarray:
        return self.wins_i(counts) - self.tied(counts) / 2

    def decisive_j(self, counts: np.ndarray | None) -> np.ndarray:
        return self.wins_j(counts) - self.tied(counts) / 2


def _in_chunks(counts: np.ndarray | None, fit: Any, size: int) -> np.ndarray | None:
    if counts is None:
        return None
    return np.concatenate([fit(counts[start : start + size]) for start in range(0, len(counts), size)])


def _referenced(scores: np.ndarray | None, reference: int | None) -> Any:
    """Scores shifted so that the baseline is 0, or so that their mean is 0."""
    if scores is None:
        return None
    shift = scores[..., reference] if reference is not None else scores.mean(axis=-1)
    return scores - np.expand_dims(shift, -1)


def _quantiles(boot: np.ndarray | None, confidence: float, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if boot is None or len(boot) == 0:
        return point.copy(), point.copy()
    tail = (1 - confidence) / 2
    return np.quantile(boot, tail, axis=0), np.quantile(boot, 1 - tail, axis=0)


def _win_probability(scores: np.ndarray, reference: int) -> np.ndarray:
    """``e^s / (e^s + e^s_ref)`` for every model (0.5 for the reference itself)."""
    return 1.0 / (1.0 + np.exp(np.expand_dims(scores[..., reference], -1) - scores))


def _rows(battles: Battles) -> list[dict[str, Any]]:
    """Each model's weighted battle, win, loss and tie counts and mean response length (characters)."""
    n, w = len(battles.models), battles.weight
    sides = np.concatenate([battles.first, battles.second])
    share = np.concatenate([battles.outcome, 1.0 - battles.outcome])
    weight = np.concatenate([w, w])
    played = np.bincount(sides, weights=weight, minlength=n)
    wins = np.bincount(sides, weights=weight * (share == 1.0), minlength=n)
    losses = np.bincount(sides, weights=weight * (share == 0.0), minlength=n)
    ties = np.bincount(sides, weights=weight * (share == 0.5), minlength=n)
    mean_length: list[float | None] = [None] * n
    if battles.length is not None:
        # one length per model and prompt: its response to that prompt, wherever it appears first
        prompts = np.concatenate([battles.prompt, battles.prompt])
        lengths = np.concatenate([battles.length[:, 0], battles.length[:, 1]])
        _, first_seen = np.unique(sides * len(battles.prompts) + prompts, return_index=True)
        totals = np.bincount(sides[first_seen], weights=lengths[first_seen], minlength=n)
        seen = np.bincount(sides[first_seen], minlength=n)
        mean_length = [float(totals[k] / seen[k]) if seen[k] else None for k in range(n)]
    return [
        {
            "model": name,
            "battles": float(played[k]),
            "wins": float(wins[k]),
            "losses": float(losses[k]),
            "ties": float(ties[k]),
            "mean_response_length": mean_length[k],
        }
        for k, name in enumerate(battles.models)
    ]


def _style_features(battles: Battles) -> np.ndarray:
    """Shape (B, 4): z-scored length and Markdown-density differences, first minus second response."""
    assert battles.length is not None and battles.markdown is not None
    a, b = battles.length[:, 0], battles.length[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        length = np.where(a + b > 0, (a - b) / (a + b), 0.0)
        density = battles.markdown / np.maximum(battles.length, 1.0)[:, :, None]
    markdown = (density[:, 0] - density[:, 1]) / (density[:, 0] + density[:, 1] + 1.0)
    features = np.column_stack([length, markdown])
    spread = features.std(axis=0, ddof=1) if len(features) > 1 else np.ones(features.shape[1])
    spread = np.where(spread > 0, spread, 1.0)  # a feature equal in every battle carries nothing: left at 0
    return (features - features.mean(axis=0)) / spread


def _style_control(
    battles: Battles,
    counts: np.ndarray | None,
    reference: int | None,
    confidence: float,
    rows: list[dict[str, Any]],
) -> dict[str, dict[str, float]]:
    n = len(battles.models)
    design = np.zeros((len(battles), n + len(STYLE_FEATURES)))
    design[np.arange(len(battles)), battles.first] = 1.0
    design[np.arange(len(battles)), battles.second] = -1.0
    design[:, n:] = _style_features(battles)
    won = battles.weight * battles.outcome
    lost = battles.weight * (1.0 - battles.outcome)
    point = fit_logistic(design, won, lost, n)[0]
    boot = None
    if counts is not None:
        per_battle = counts[:, battles.prompt]  # (R, B)
        boot = _in_chunks(per_battle, lambda c: fit_logistic(design, c * won, c * lost, n), 8)
    scores = _referenced(point[:n], reference)
    boot_scores = _referenced(boot[:, :n], reference) if boot is not None else None
    low, high = _quantiles(boot_scores, confidence, scores)
    for k, row in enumerate(rows):
        row.update(
            score_style_controlled=float(scores[k]),
            score_style_controlled_ci_lower=float(low[k]),
            score_style_controlled_ci_upper=float(high[k]),
        )
    coef_low, coef_high = _quantiles(boot[:, n:] if boot is not None else None, confidence, point[n:])
    return {
        name: {"coefficient": float(point[n + f]), "ci_lower": float(coef_low[f]), "ci_upper": float(coef_high[f])}
        for f, name in enumerate(STYLE_FEATURES)
    }


def _win_matrix(battles: Battles) -> dict[str, dict[str, dict[str, float]]]:
    n = len(battles.models)
    wins = np.zeros((n, n))
    total = np.zeros((n, n))
    np.add.at(wins, (battles.first, battles.second), battles.weight * battles.outcome)
    np.add.at(wins, (battles.second, battles.first), battles.weight * (1.0 - battles.outcome))
    np.add.at(total, (battles.first, battles.second), battles.weight)
    np.add.at(total, (battles.second, battles.first), battles.weight)
    matrix: dict[str, dict[str, dict[str, float]]] = {}
    for a, name in enumerate(battles.models):
        matrix[name] = {
            other: {
                "win_rate": float(wins[a, b] / total[a, b]),
                "wins": float(wins[a, b]),
                "battles": float(total[a, b]),
            }
            for b, other in enumerate(battles.models)
            if total[a, b] > 0
        }
    return matrix


def _separability(low: np.ndarray, high: np.ndarray) -> float | None:
    n = len(low)
    if n < 2:
        return None
    upper = np.triu_indices(n, k=1)
    apart = (low[:, None] > high[None, :]) | (low[None, :] > high[:, None])
    return float(apart[upper].mean())


def _notes(battles: Battles, pairs: _Pairs) -> list[str]:
    notes = []
    wins_i, wins_j = pairs.wins_i(None), pairs.wins_j(None)
    n = len(battles.models)
    won = np.zeros(n)
    lost = np.zeros(n)
    np.add.at(won, pairs.i, wins_i)
    np.add.at(won, pairs.j, wins_j)
    np.add.at(lost, pairs.i, wins_j)
    np.add.at(lost, pairs.j, wins_i)
    for k, name in enumerate(battles.models):
        if lost[k] == 0 and won[k] > 0:
            notes.append(f"{name!r} lost no battle: its score is bounded only by the fit's ridge (1e-6)")
        elif won[k] == 0 and lost[k] > 0:
            notes.append(f"{name!r} won no battle: its score is bounded only by the fit's ridge (1e-6)")
    compared = n * (n - 1) // 2
    if len(pairs.i) < compared:
        notes.append(
            f"{compared - len(pairs.i)} of {compared} model pairs never met: their order comes through other models"
        )
    return notes
