"""The arena leaderboard against independent fits, known strengths and hand-counted tables.

The independent Bradley–Terry fit below is written from the likelihood alone (scipy ``minimize`` over
battle-level rows, ties as two half-weight rows, one model pinned at 0, no ridge); scikit-learn's
``LogisticRegression`` (Chatbot Arena's own method) is a second, different check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from autorater_pipelines.arena import battles_from_records, markdown_counts, rank_models

NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
TRUE = np.array([1.2, 0.6, 0.1, -0.2, -0.7, -1.0])


def synthetic(seed: int, prompts: int = 200, tie_band: float = 0.0, length_bias: float = 0.0) -> list[dict]:
    """All pairs of the six models on every prompt in both orders; winners drawn from BT(TRUE) (+ length bias)."""
    rng = np.random.default_rng(seed)
    records = []
    for prompt in range(prompts):
        lengths = rng.integers(20, 400, size=len(NAMES))
        for a in range(len(NAMES)):
            for b in range(len(NAMES)):
                if a == b:
                    continue
                logit = TRUE[a] - TRUE[b] + length_bias * (lengths[a] - lengths[b]) / (lengths[a] + lengths[b])
                p = 1 / (1 + math.exp(-logit))
                u = rng.random()
                winner = "TIE" if abs(u - p) < tie_band else ("A" if u < p else "B")
                records.append(
                    {
                        "prompt_id": f"p{prompt}",
                        "model_a": NAMES[a],
                        "model_b": NAMES[b],
                        "winner": winner,
                        "response_a": "w" * int(lengths[a]),
                        "response_b": "w" * int(lengths[b]),
                    }
                )
    return records


def independent_fit(records: list[dict], names: list[str]) -> np.ndarray:
    """Plain BT maximum likelihood (no ridge) with ``names[0]`` at 0; returns scores with mean 0."""
    index = {n: i for i, n in enumerate(names)}
    a = np.array([index[r["model_a"]] for r in records])
    b = np.array([index[r["model_b"]] for r in records])
    y = np.array([{"A": 1.0, "B": 0.0, "TIE": 0.5}[r["winner"]] for r in records])
    w = np.array([float(r.get("weight", 1.0)) for r in records])

    def nll(free: np.ndarray) -> tuple[float, np.ndarray]:
        s = np.concatenate([[0.0], free])
        d = s[a] - s[b]
        value = np.sum(w * (y * np.logaddexp(0, -d) + (1 - y) * np.logaddexp(0, d)))
        g_d = w * (1 / (1 + np.exp(-d)) - y)
        grad = np.zeros(len(names))
        np.add.at(grad, a, g_d)
        np.add.at(grad, b, -g_d)
        return float(value), grad[1:]

    result = minimize(nll, np.zeros(len(names) - 1), jac=True, method="BFGS", options={"gtol": 1e-10})
    s = np.concatenate([[0.0], result.x])
    return s - s.mean()


def scores(ranking, key: str = "score") -> np.ndarray:
    by_model = {row["model"]: row[key] for row in ranking.leaderboard}
    return np.array([by_model[name] for name in NAMES])


def test_scores_equal_an_independent_maximum_likelihood_fit_to_1e_4() -> None:
    records = synthetic(seed=1, tie_band=0.05)
    ranking = rank_models(battles_from_records(records), bootstrap_rounds=0)
    expected = independent_fit(records, NAMES)
    np.testing.assert_allclose(scores(ranking), expected, atol=1e-4)
    assert [row["model"] for row in ranking.leaderboard] == NAMES  # the hidden order is recovered


def test_scores_equal_chatbot_arenas_logistic_regression() -> None:
    from sklearn.linear_model import LogisticRegression

    records = synthetic(seed=2, prompts=60, tie_band=0.05)
    index = {n: i for i, n in enumerate(NAMES)}
    rows, labels, weights = [], [], []
    for r in records:  # a tie = one half-weight win for each side
        x = np.zeros(len(NAMES))
        x[index[r["model_a"]]], x[index[r["model_b"]]] = 1.0, -1.0
        share = {"A": 1.0, "B": 0.0, "TIE": 0.5}[r["winner"]]
        for label, weight in ((1, share), (0, 1 - share)):
            if weight:
                rows.append(x)
                labels.append(label)
                weights.append(weight)
    model = LogisticRegression(fit_intercept=False, C=1e6, tol=1e-12, max_iter=10000)
    model.fit(np.array(rows), np.array(labels), sample_weight=np.array(weights))
    expected = model.coef_[0] - model.coef_[0].mean()
    ranking = rank_models(battles_from_records(records), bootstrap_rounds=0)
    np.testing.assert_allclose(scores(ranking), expected, atol=1e-4)


def test_a_baseline_scores_zero_and_the_win_rate_against_it_follows_from_the_scores() -> None:
    records = synthetic(seed=3, prompts=80)
    ranking = rank_models(battles_from_records(records), baseline="charlie", bootstrap_rounds=50, seed=4)
    rows = {row["model"]: row for row in ranking.leaderboard}
    assert rows["charlie"]["score"] == 0.0
    assert rows["charlie"]["score_ci_lower"] == rows["charlie"]["score_ci_upper"] == 0.0
    assert rows["charlie"]["win_rate_vs_baseline"] == pytest.approx(0.5)
    expected = independent_fit(records, NAMES)
    for k, name in enumerate(NAMES):
        difference = expected[k] - expected[NAMES.index("charlie")]
        assert rows[name]["score"] == pytest.approx(difference, abs=1e-4)
        assert rows[name]["win_rate_vs_baseline"] == pytest.approx(1 / (1 + math.exp(-difference)), abs=1e-4)
        assert rows[name]["elo"] == pytest.approx(1000 + 400 / math.log(10) * rows[name]["score"])
        low, high = rows[name]["win_rate_vs_baseline_ci_lower"], rows[name]["win_rate_vs_baseline_ci_upper"]
        assert low <= rows[name]["win_rate_vs_baseline"] <= high
    assert ranking.computed_over["score_reference"] == "baseline 'charlie' = 0"


def test_the_same_seed_gives_identical_intervals_and_another_seed_others() -> None:
    battles = battles_from_records(synthetic(seed=5, prompts=50))
    first = rank_models(battles, bootstrap_rounds=100, seed=7)
    again = rank_models(battles, bootstrap_rounds=100, seed=7)
    other = rank_models(battles, bootstrap_rounds=100, seed=8)
    assert first.leaderboard == again.leaderboard
    assert scores(first, "score_ci_lower").tolist() != scores(other, "score_ci_lower").tolist()
    np.testing.assert_array_equal(scores(first), scores(other))  # the point estimate does not depend on the seed


def test_95_percent_intervals_cover_the_true_strengths_about_95_percent_of_the_time() -> None:
    covered = total = 0
    truth = TRUE - TRUE.mean()
    for seed in range(12):
        ranking = rank_models(battles_from_records(synthetic(seed=100 + seed, prompts=40)), bootstrap_rounds=200)
        low, high = scores(ranking, "score_ci_lower"), scores(ranking, "score_ci_upper")
        covered += int(np.sum((low <= truth) & (truth <= high)))
        total += len(NAMES)
    assert 0.85 <= covered / total <= 1.0, f"{covered} of {total} intervals cover the true strength"


def test_ranks_and_separability_follow_from_the_intervals() -> None:
    ranking = rank_models(battles_from_records(synthetic(seed=9, prompts=15)), bootstrap_rounds=100, seed=1)
    rows = ranking.leaderboard
    low = {r["model"]: r["score_ci_lower"] for r in rows}
    high = {r["model"]: r["score_ci_upper"] for r in rows}
    overlapping = 0
    for r in rows:
        better = [o for o in rows if o["model"] != r["model"] and low[o["model"]] > high[r["model"]]]
        could_be_better = [o for o in rows if o["model"] != r["model"] and high[o["model"]] > low[r["model"]]]
        assert r["rank_upper"] == 1 + len(better)
        assert r["rank_lower"] == 1 + len(could_be_better)
        assert r["rank_upper"] <= r["rank"] <= r["rank_lower"]
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            overlapping += not (low[a["model"]] > high[b["model"]] or low[b["model"]] > high[a["model"]])
    assert ranking.separability == pytest.approx(1 - overlapping / 15)
    assert 0 < ranking.separability < 1  # 15 prompts: some neighbours overlap, the extremes do not


def test_counts_and_win_matrix_by_hand() -> None:
    records = [
        {"prompt_id": 1, "model_a": "x", "model_b": "y", "winner": "A"},
        {"prompt_id": 1, "model_a": "y", "model_b": "x", "winner": "TIE"},
        {"prompt_id": 2, "model_a": "x", "model_b": "z", "winner": "B", "weight": 3},
        {"prompt_id": 2, "model_a": "z", "model_b": "y", "winner": "B"},
    ]
    ranking = rank_models(battles_from_records(records), bootstrap_rounds=0)
    rows = {r["model"]: r for r in ranking.leaderboard}
    assert (rows["x"]["battles"], rows["x"]["wins"], rows["x"]["losses"], rows["x"]["ties"]) == (5, 1, 3, 1)
    assert (rows["y"]["battles"], rows["y"]["wins"], rows["y"]["losses"], rows["y"]["ties"]) == (3, 1, 1, 1)
    assert (rows["z"]["battles"], rows["z"]["wins"], rows["z"]["losses"], rows["z"]["ties"]) == (4, 3, 1, 0)
    assert ranking.win_matrix["x"]["y"] == {"win_rate": 0.75, "wins": 1.5, "battles": 2.0}
    assert ranking.win_matrix["z"]["x"] == {"win_rate": 1.0, "wins": 3.0, "battles": 3.0}
    assert "z" not in ranking.win_matrix["z"]
    assert ranking.computed_over["battles"] == 6.0 and ranking.computed_over["battle_records"] == 4
    assert ranking.notes == []


def test_a_model_that_never_lost_is_finite_and_said() -> None:
    records = [{"prompt_id": p, "model_a": "top", "model_b": "low", "winner": "A"} for p in range(5)]
    records += [{"prompt_id": p, "model_a": "low", "model_b": "mid", "winner": "TIE"} for p in range(5)]
    ranking = rank_models(battles_from_records(records), bootstrap_rounds=20)
    assert all(math.isfinite(r["score"]) for r in ranking.leaderboard)
    assert ranking.leaderboard[0]["model"] == "top"
    assert any("'top' lost no battle" in note for note in ranking.notes)
    assert any("1 of 3 model pairs never met" in note for note in ranking.notes)


def test_rao_kupper_equals_an_independent_fit_of_its_likelihood() -> None:
    records = synthetic(seed=11, prompts=40, tie_band=0.12)
    ranking = rank_models(battles_from_records(records), bootstrap_rounds=0, ties="rao_kupper")
    index = {n: i for i, n in enumerate(NAMES)}
    a = np.array([index[r["model_a"]] for r in records])
    b = np.array([index[r["model_b"]] for r in records])
    outcome = np.array([r["winner"] for r in records])

    def nll(params: np.ndarray) -> float:
        s = np.concatenate([[0.0], params[:-1]])
        theta = 1 + math.exp(params[-1])
        pi_a, pi_b = np.exp(s[a]), np.exp(s[b])
        p_a = pi_a / (pi_a + theta * pi_b)
        p_b = pi_b / (pi_b + theta * pi_a)
        p = np.where(outcome == "A", p_a, np.where(outcome == "B", p_b, 1 - p_a - p_b))
        return float(-np.log(p).sum())

    result = minimize(nll, np.zeros(len(NAMES)), method="Nelder-Mead", options={"maxiter": 40000, "xatol": 1e-9})
    result = minimize(nll, result.x, method="BFGS", options={"gtol": 1e-9})
    s = np.concatenate([[0.0], result.x[:-1]])
    np.testing.assert_allclose(scores(ranking), s - s.mean(), atol=1e-3)
    assert ranking.tie_parameter == pytest.approx(1 + math.exp(result.x[-1]), abs=1e-3)
    booted = rank_models(battles_from_records(records), bootstrap_rounds=30, ties="rao_kupper", seed=3)
    np.testing.assert_array_equal(scores(booted), scores(ranking))
    assert all(r["score_ci_lower"] < r["score"] < r["score_ci_upper"] for r in booted.leaderboard)


def test_style_control_separates_a_length_preference_from_strength() -> None:
    records = synthetic(seed=12, prompts=150, length_bias=3.0)
    battles = battles_from_records(records)
    plain = rank_models(battles, bootstrap_rounds=30)
    controlled = rank_models(battles, bootstrap_rounds=30, style_control=True)
    truth = TRUE - TRUE.mean()
    error_plain = np.abs(scores(plain) - truth).max()
    error_controlled = np.abs(scores(controlled, "score_style_controlled") - truth).max()
    assert error_controlled < error_plain / 2  # measured: 0.10 against 0.30
    length = controlled.style["length"]
    assert length["ci_lower"] > 0 and length["coefficient"] > 0  # longer answers win beyond strength
    for row in controlled.leaderboard:
        assert row["score_style_controlled_ci_lower"] <= row["score_style_controlled"]
        assert row["score_style_controlled"] <= row["score_style_controlled_ci_upper"]
    assert plain.style is None and "score_style_controlled" not in plain.leaderboard[0]


def test_markdown_counts_leave_code_out() -> None:
    text = "# Title\n## Sub\n#not a header\n- a\n* b\n  3. c\n**bold** and __also__\n```\n# in code\n- x\n**y**\n```\n"
    assert markdown_counts(text) == (2, 3, 2)


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([], "no battles to rank"),
        ([{"prompt_id": 1, "model_a": "x", "model_b": "y"}], r"record 1: missing 'winner'"),
        ([{"prompt_id": 1, "model_a": "x", "model_b": "x", "winner": "A"}], "both 'x'"),
        (
            [{"prompt_id": 1, "model_a": "x", "model_b": "y", "winner": "A>B"}],
            r"winner must be one of \['A', 'B', 'TIE'\]",
        ),
        ([{"prompt_id": 1, "model_a": "x", "model_b": "y", "winner": "A", "weight": -1}], "weight must be a number"),
        (
            [
                {"prompt_id": 1, "model_a": "x", "model_b": "y", "winner": "A", "response_a": "", "response_b": ""},
                {"prompt_id": 2, "model_a": "x", "model_b": "y", "winner": "A"},
            ],
            "record 2: response_a/response_b given for some battles only",
        ),
    ],
)
def test_bad_battles_are_refused_naming_the_record(records: list[dict], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        battles_from_records(records)


def test_bad_options_are_refused() -> None:
    battles = battles_from_records([{"prompt_id": 1, "model_a": "x", "model_b": "y", "winner": "A"}])
    with pytest.raises(ValueError, match=r"baseline 'z' is not one of the ranked models \['x', 'y'\]"):
        rank_models(battles, baseline="z")
    with pytest.raises(ValueError, match="ties must be one of"):
        rank_models(battles, ties="davidson")
    with pytest.raises(ValueError, match="bootstrap_rounds must be between 0 and 10000"):
        rank_models(battles, bootstrap_rounds=-1)
    with pytest.raises(ValueError, match="style_control needs the responses"):
        rank_models(battles, style_control=True)
