"""Length-controlled win rate against a baseline: an independent GLM fit, the warning, the bootstrap errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autorater_pipelines.arena import battles_from_records, length_controlled_win_rates


def against_baseline(seed: int, strength: float, length_bias: float, n: int = 400) -> list[dict]:
    """Model ``cand`` against ``base`` on n prompts, ``cand`` answering longer; winners from a logistic model."""
    rng = np.random.default_rng(seed)
    records = []
    for prompt in range(n):
        mine, theirs = int(rng.integers(100, 900)), int(rng.integers(50, 500))
        x = math.tanh((mine - theirs) / 300)
        p = 1 / (1 + math.exp(-(strength + length_bias * x)))
        first = rng.random() < 0.5  # shown first or second
        won = rng.random() < p
        records.append(
            {
                "prompt_id": prompt,
                "model_a": "cand" if first else "base",
                "model_b": "base" if first else "cand",
                "winner": ("A" if won == first else "B"),
                "response_a": "c" * (mine if first else theirs),
                "response_b": "c" * (theirs if first else mine),
            }
        )
    return records


def test_the_fit_equals_an_independent_logistic_regression_and_the_warning_fires() -> None:
    from sklearn.linear_model import LogisticRegression

    records = against_baseline(seed=1, strength=0.0, length_bias=2.0)
    result = length_controlled_win_rates(battles_from_records(records), "base", bootstrap_rounds=50, seed=2)
    cand = result["models"]["cand"]
    delta = np.array(
        [(len(r["response_a"]) - len(r["response_b"])) * (1 if r["model_a"] == "cand" else -1) for r in records]
    )
    x = np.tanh(delta / delta.std(ddof=1))
    y = np.array([(r["winner"] == "A") == (r["model_a"] == "cand") for r in records], dtype=int)
    glm = LogisticRegression(C=1e9, tol=1e-12, max_iter=10000).fit(x[:, None], y)
    assert cand["length_controlled_win_rate"] == pytest.approx(1 / (1 + math.exp(-glm.intercept_[0])), abs=1e-4)
    assert cand["length_coefficient"] == pytest.approx(glm.coef_[0][0], abs=1e-3)
    assert cand["win_rate"] == pytest.approx(y.mean())
    assert cand["win_rate"] > 0.6 and abs(cand["length_controlled_win_rate"] - 0.5) < 0.08  # true strength: 0
    assert 0 < cand["length_controlled_win_rate_standard_error"] < 0.1
    assert 0 < cand["win_rate_standard_error"] < 0.1
    assert cand["battles"] == 400
    assert result["warnings"] and "'cand': length control moves its win rate" in result["warnings"][0]
    assert result["instruction_difficulty"].startswith("left out")


def test_no_length_effect_no_warning() -> None:
    records = against_baseline(seed=3, strength=0.8, length_bias=0.0)
    result = length_controlled_win_rates(battles_from_records(records), "base", bootstrap_rounds=20)
    cand = result["models"]["cand"]
    assert abs(cand["length_controlled_win_rate"] - cand["win_rate"]) < 0.05
    assert result["warnings"] == []
    assert "base" not in result["models"]


def test_refusals() -> None:
    bare = battles_from_records([{"prompt_id": 1, "model_a": "x", "model_b": "y", "winner": "A"}])
    with pytest.raises(ValueError, match="needs the responses of every battle"):
        length_controlled_win_rates(bare, "x")
    with_text = battles_from_records(against_baseline(seed=4, strength=0.0, length_bias=0.0, n=5))
    with pytest.raises(ValueError, match=r"baseline 'nobody' is not one of the ranked models \['base', 'cand'\]"):
        length_controlled_win_rates(with_text, "nobody")
