"""Bradley–Terry fits of weighted battles, vectorised over bootstrap rounds (numpy only).

A battle is one judged sample between two models: the first model won (1), lost (0) or tied (½ a win each).
Bradley–Terry: ``P(i beats j) = σ(s_i − s_j)`` with log-strengths ``s`` on the natural-log scale. The fit
maximises the weighted log-likelihood by Newton's method, with a ridge of ``1e-6 · ½‖s‖²`` (Chatbot Arena fits
the same model with scikit-learn's ``LogisticRegression(C=1e6)``; the ridge keeps a model that won or lost every
battle finite and changes no other score by more than ~1e-6) and the sum of the scores held at 0 (the
likelihood depends on differences only). Callers shift the scores to their reference (mean 0, or a baseline at 0).

Sources: Bradley & Terry 1952; Chatbot Arena / Arena-Hard-Auto v2 (``compute_mle_elo``, ``utils/math_utils.py``):
logistic regression over ±1 model indicators, ties as half a win to each side, style features as extra columns.
Rao & Kupper 1967 for the tie model ``P(i beats j) = π_i / (π_i + θ π_j)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RIDGE", "fit_logistic", "fit_pairs", "fit_rao_kupper"]

RIDGE = 1e-6
"""L2 penalty on the log-likelihood sum (Chatbot Arena's ``C=1e6``)."""

_MAX_ITERATIONS = 200
_TOLERANCE = 1e-10
_MAX_STEP = 4.0
"""Largest Newton step per coordinate (log-strength units): keeps a near-separated fit from overshooting."""


def fit_pairs(
    index_i: np.ndarray, index_j: np.ndarray, wins_i: np.ndarray, wins_j: np.ndarray, n_models: int
) -> np.ndarray:
    """Scores of ``n_models`` from pair totals, for R rounds at once.

    Args:
        index_i: Shape (P,), int: first model of each pair.
        index_j: Shape (P,), int: second model of each pair (≠ ``index_i``).
        wins_i: Shape (R, P) or (P,): weighted wins of the first model (ties counted half).
        wins_j: Same shape: weighted wins of the second model.
        n_models: Number of models (a model with no battle scores 0).

    Returns:
        Shape (R, n_models) (or (n_models,) for 1-D input): log-strengths with mean 0.
    """
    one_round = np.ndim(wins_i) == 1
    design = np.zeros((len(index_i), n_models))
    design[np.arange(len(index_i)), index_i] = 1.0
    design[np.arange(len(index_i)), index_j] = -1.0
    scores = fit_logistic(design, wins_i, wins_j, n_models)
    return scores[0] if one_round else scores


def fit_logistic(design: np.ndarray, wins_first: np.ndarray, wins_second: np.ndarray, n_models: int) -> np.ndarray:
    """Coefficients of the weighted logistic model ``P(first wins) = σ(x · β)`` for R rounds at once.

    Newton's method on ``Σ w₁ log σ(xβ) + w₂ log σ(−xβ) − RIDGE/2 ‖β‖² − ½ (Σ_models β)²``: strictly concave; the
    last term only picks the solution whose model scores sum to 0, which the likelihood cannot tell apart.

    Args:
        design: Shape (B, D): one row per battle (or pair): its first ``n_models`` columns +1 for the first model,
            −1 for the second; then any covariates (style features).
        wins_first: Shape (R, B) or (B,): weight counted as a win of the first model (ties half).
        wins_second: Same shape: weight counted as a win of the second model.
        n_models: How many leading columns of ``design`` are model indicators.

    Returns:
        Shape (R, D): coefficients; the model columns' coefficients sum to 0.
    """
    design = np.asarray(design, dtype=float)
    w_first = np.atleast_2d(np.asarray(wins_first, dtype=float))
    w_second = np.atleast_2d(np.asarray(wins_second, dtype=float))
    n_rounds, n_cols = w_first.shape[0], design.shape[1]
    centre = np.zeros(n_cols)
    centre[:n_models] = 1.0
    penalty = np.eye(n_cols) * RIDGE + np.outer(centre, centre)
    total = w_first + w_second
    beta = np.zeros((n_rounds, n_cols))
    active = np.arange(n_rounds)
    for _ in range(_MAX_ITERATIONS):
        b = beta[active]
        p = _sigmoid(b @ design.T)  # (r, B)
        gradient = (w_first[active] - total[active] * p) @ design - b @ penalty
        curvature = total[active] * p * (1.0 - p)
        hessian = (curvature[:, None, :] * design.T[None]) @ design + penalty  # X^T diag(c) X per round (BLAS)
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        largest = np.abs(step).max(axis=1)
        step *= np.minimum(1.0, _MAX_STEP / np.maximum(largest, 1e-300))[:, None]
        beta[active] = b + step
        active = active[largest >= _TOLERANCE]
        if active.size == 0:
            break
    return beta


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def fit_rao_kupper(
    index_i: np.ndarray,
    index_j: np.ndarray,
    wins_i: np.ndarray,
    wins_j: np.ndarray,
    ties: np.ndarray,
    n_models: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Rao–Kupper maximum likelihood for R rounds at once: ``P(i beats j) = π_i / (π_i + θ π_j)``.

    With ``d = s_i − s_j`` and ``t = log θ > 0``: ``P(i wins) = σ(d − t)``, ``P(j wins) = σ(−d − t)`` and
    ``P(tie) = 1 − P(i wins) − P(j wins) = (θ² − 1) / ((1 + θe^{−d})(1 + θe^{d}))`` (Rao & Kupper 1967; Arena-Hard's
    ``rk`` loss). Newton's method on ``(s, t)`` with the analytic Hessian, the same ridge and centring as
    :func:`fit_logistic`, and ``t`` kept above 0.

    Args:
        index_i: Shape (P,): first model of each pair.
        index_j: Shape (P,): second model.
        wins_i: Shape (R, P) or (P,): weighted wins of the first model (ties not included).
        wins_j: Same shape: weighted wins of the second model.
        ties: Same shape: weighted ties (whole battles, not halved).
        n_models: Number of models.

    Returns:
        ``(scores, theta)``: log-strengths ``log π`` with mean 0, shape (R, n_models), and θ > 1, shape (R,)
        (without the R axis for 1-D input).
    """
    one_round = np.ndim(wins_i) == 1
    w_i, w_j, w_t = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (wins_i, wins_j, ties))
    n_rounds, n_pairs = w_i.shape
    design = np.zeros((n_pairs, n_models))
    design[np.arange(n_pairs), index_i] = 1.0
    design[np.arange(n_pairs), index_j] = -1.0
    penalty = np.eye(n_models) * RIDGE + np.ones((n_models, n_models))
    s = np.zeros((n_rounds, n_models))
    t = np.full(n_rounds, np.log(1.5))
    active = np.arange(n_rounds)
    for _ in range(_MAX_ITERATIONS):
        sa, ta = s[active], t[active]
        d = sa @ design.T
        u = _sigmoid(ta[:, None] - d)  # = 1 − P(i wins) in the no-tie sense: d/dd of log σ(d − t)
        v = _sigmoid(ta[:, None] + d)
        a, b, c = w_i[active] + w_t[active], w_j[active] + w_t[active], w_t[active]
        uu, vv = u * (1 - u), v * (1 - v)
        expm = -np.expm1(-2 * ta)  # 1 − e^{−2t}
        g_d = a * u - b * v
        g_t = -(a * u + b * v).sum(axis=1) + c.sum(axis=1) * 2 / expm
        h_dd = a * uu + b * vv  # minus the second derivatives
        h_dt = -(a * uu - b * vv)
        h_tt = (a * uu + b * vv).sum(axis=1) + c.sum(axis=1) * 4 * np.exp(-2 * ta) / expm**2
        gradient = np.concatenate([g_d @ design - sa @ penalty, g_t[:, None]], axis=1)
        hessian = np.zeros((len(active), n_models + 1, n_models + 1))
        hessian[:, :n_models, :n_models] = (h_dd[:, None, :] * design.T[None]) @ design + penalty
        cross = h_dt @ design
        hessian[:, :n_models, n_models] = cross
        hessian[:, n_models, :n_models] = cross
        hessian[:, n_models, n_models] = h_tt
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        largest = np.abs(step).max(axis=1)
        step *= np.minimum(1.0, _MAX_STEP / np.maximum(largest, 1e-300))[:, None]
        new_t = ta + step[:, n_models]
        t[active] = np.where(new_t > 0, new_t, ta / 2)  # θ stays above 1
        s[active] = sa + step[:, :n_models]
        active = active[largest >= _TOLERANCE]
        if active.size == 0:
            break
    s -= s.mean(axis=1, keepdims=True)
    theta = np.exp(t)
    return (s[0], theta[0]) if one_round else (s, theta)
