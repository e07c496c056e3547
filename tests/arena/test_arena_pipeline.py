"""``autorater run arena``: the compiled template in the KFP local runner, on a synthetic set with hidden strengths."""

from __future__ import annotations

import collections
import contextlib
import io
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from arena_synthetic import STRENGTHS, arena_params, write_arena
from scipy import optimize

from autorater_pipelines.arena.leaderboard import leaderboard_from_judgments
from autorater_pipelines.arena.params import RankingOptions
from autorater_pipelines.cli import main


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _run(pipeline: str, params: dict, tmp_path: Path, name: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / name
    return main(["run", pipeline, "--params", str(params_path), "--output-dir", str(out), "--quiet"]), out


def _independent_fit(replay: list[dict]) -> dict[str, float]:
    """Bradley–Terry maximum likelihood of the replayed battles (ties half), by scipy's BFGS on the log-likelihood.

    Battles are read from the replay file (the judge's answers, un-flipped here), not from the run's outputs.
    """
    names = sorted(STRENGTHS)
    index = {m: i for i, m in enumerate(names)}
    i, j, y = [], [], []
    for line in replay:
        choice = json.loads(line["response"])["choice"]
        if line["flipped"]:
            choice = {"A": "B", "B": "A"}.get(choice, choice)
        i.append(index[line["model_a"]])
        j.append(index[line["model_b"]])
        y.append({"A": 1.0, "B": 0.0, "TIE": 0.5}[choice])
    ii, jj, yy = np.array(i), np.array(j), np.array(y)

    def loss(free: np.ndarray) -> tuple[float, np.ndarray]:
        s = np.concatenate([[0.0], free])
        d = s[ii] - s[jj]
        p = 1.0 / (1.0 + np.exp(-d))
        value = -np.sum(yy * np.log(p) + (1 - yy) * np.log(1 - p))
        g = np.zeros(len(names))
        np.add.at(g, ii, -(yy - p))
        np.add.at(g, jj, yy - p)
        return float(value), g[1:]

    result = optimize.minimize(loss, np.zeros(len(names) - 1), jac=True, method="BFGS", options={"gtol": 1e-10})
    s = np.concatenate([[0.0], result.x])
    return {m: float(s[k] - s.mean()) for k, m in enumerate(names)}


@pytest.fixture(scope="module")
def all_pairs(tmp_path_factory) -> tuple[Path, Path, str]:
    """One run of 6 models × 200 prompts, all pairs, both orders (6,000 judge calls, replayed); what it printed."""
    tmp = tmp_path_factory.mktemp("arena")
    dataset, replay = write_arena(tmp)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code, out = _run("arena", arena_params(dataset, replay), tmp, "all")
    assert code == 0
    return out, replay, printed.getvalue()


@pytest.mark.pipeline
def test_run_recovers_the_hidden_order_and_matches_an_independent_fit(all_pairs):
    out, replay, printed = all_pairs
    assert sorted(p.name for p in out.iterdir()) == [
        ".autorater-outputs.json",
        "error_messages.jsonl",
        "judgments.jsonl",
        "leaderboard.jsonl",
        "metrics.json",
        "report.html",
    ]
    board = _read_jsonl(out / "leaderboard.jsonl")
    assert [r["model"] for r in board] == list(STRENGTHS)  # best first, as the hidden strengths
    assert [r["rank"] for r in board] == [1, 2, 3, 4, 5, 6]
    expected = _independent_fit(_read_jsonl(replay))
    scores = {r["model"]: r["score"] for r in board}
    for a, b in itertools.combinations(STRENGTHS, 2):
        assert scores[a] - scores[b] == pytest.approx(expected[a] - expected[b], abs=1e-4)
    assert sum(scores.values()) == pytest.approx(0.0, abs=1e-9)  # no baseline: centred at mean 0
    truth = {m: s - np.mean(list(STRENGTHS.values())) for m, s in STRENGTHS.items()}
    for r in board:  # 95 % intervals cover the (centred) true strengths
        assert r["score_ci_lower"] <= truth[r["model"]] <= r["score_ci_upper"], r
        assert r["elo"] == pytest.approx(1000 + 400 / np.log(10) * r["score"])
        assert r["battles"] == 5 * 200 * 2 and r["wins"] + r["losses"] + r["ties"] == r["battles"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["pair_count"] == 15 * 200 and metrics["sample_count"] == 6000
    assert metrics["battle_sample_count"] == 6000 and metrics["error_sample_count"] == 0
    assert metrics["computed_over"]["prompts"] == 200 and metrics["computed_over"]["bootstrap_rounds"] == 100
    assert metrics["win_matrix"]["m0"]["m5"]["battles"] == 400
    assert 0 < metrics["separability"] <= 1
    judgments = _read_jsonl(out / "judgments.jsonl")
    assert all(j["model_a"] < j["model_b"] for j in judgments)
    assert (
        "6,000 judge calls: 3,000 pairs (15 model pairs of 6 models × 200 prompts, pairing 'all') × 2 samples, both orders"
        in printed
    )
    assert "read 200 data row(s)" in printed
    assert (
        "Arena: 6 models, 3000 judged pairs, 6000 battle samples of 6000 (0 ERROR samples are not battles), 6000 battles weighted"
        in printed
    )


@pytest.mark.pipeline
def test_same_seed_same_intervals_other_seed_others(all_pairs):
    out, _, _ = all_pairs
    judgments = _read_jsonl(out / "judgments.jsonl")
    board = _read_jsonl(out / "leaderboard.jsonl")
    again, _ = leaderboard_from_judgments(judgments, ["prompt_id"], RankingOptions(seed=0))
    assert [(r["model"], r["score_ci_lower"], r["score_ci_upper"]) for r in again] == [
        (r["model"], r["score_ci_lower"], r["score_ci_upper"]) for r in board
    ]
    other, _ = leaderboard_from_judgments(judgments, ["prompt_id"], RankingOptions(seed=7))
    assert [r["score_ci_lower"] for r in other] != [r["score_ci_lower"] for r in board]
    assert [r["score"] for r in other] == [r["score"] for r in board]  # the point fit uses every battle


@pytest.mark.pipeline
def test_pairing_baseline_judges_every_model_against_the_baseline(tmp_path):
    dataset, replay = write_arena(tmp_path, prompts=60)
    code, out = _run("arena", arena_params(dataset, replay, pairing="baseline", baseline="m3"), tmp_path, "base")
    assert code == 0
    judgments = _read_jsonl(out / "judgments.jsonl")
    assert len(judgments) == 5 * 60 and all("m3" in (j["model_a"], j["model_b"]) for j in judgments)
    board = {r["model"]: r for r in _read_jsonl(out / "leaderboard.jsonl")}
    assert board["m3"]["score"] == 0.0 and board["m3"]["win_rate_vs_baseline"] == pytest.approx(0.5)
    assert board["m0"]["win_rate_vs_baseline"] > 0.7 > 0.3 > board["m5"]["win_rate_vs_baseline"]
    assert [r["model"] for r in _read_jsonl(out / "leaderboard.jsonl")] == list(STRENGTHS)
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["length_controlled"]["models"]) == set(STRENGTHS) - {"m3"}


@pytest.mark.pipeline
def test_pairing_sampled_draws_seeded_opponents_for_every_model(tmp_path):
    dataset, replay = write_arena(tmp_path, prompts=60)
    params = arena_params(dataset, replay, pairing="sampled", opponents_per_prompt=1, seed=5)
    code, out = _run("arena", params, tmp_path, "sampled")
    assert code == 0
    per_prompt = collections.defaultdict(set)
    for j in _read_jsonl(out / "judgments.jsonl"):
        per_prompt[j["prompt_id"]].add((j["model_a"], j["model_b"]))
    assert len(per_prompt) == 60
    for pairs in per_prompt.values():
        assert 3 <= len(pairs) <= 6  # each of 6 models drew one opponent; a pair drawn from both sides counts once
        assert {m for pair in pairs for m in pair} == set(STRENGTHS)
    assert len({frozenset(p) for p in per_prompt.values()}) > 10  # the draws differ between prompts
    code, again = _run("arena", params, tmp_path, "sampled-again")
    assert code == 0
    assert (again / "judgments.jsonl").read_text() == (out / "judgments.jsonl").read_text()


@pytest.mark.pipeline
def test_two_model_arena_counts_as_autosxs_on_the_same_judgments(tmp_path):
    dataset, replay = write_arena(tmp_path, prompts=80, tie_share=0.2, pairs=[("m1", "m4")])
    code, arena = _run("arena", arena_params(dataset, replay, models=["m1", "m4"]), tmp_path, "arena")
    assert code == 0
    plain = tmp_path / "autosxs-replay.jsonl"  # the same answers, keyed as AutoSxS keys them (no model names)
    plain.write_text(
        "".join(
            json.dumps({k: v for k, v in line.items() if k not in ("model_a", "model_b")}) + "\n"
            for line in _read_jsonl(replay)
        )
    )
    autosxs_params = {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["prompt_id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
        "response_column_a": "resp_m1",
        "response_column_b": "resp_m4",
        "autorater_model": f"replay/{plain}",
        "autorater_parameters": {"sampling_count": 2, "flip": True},
    }
    code, sxs = _run("autosxs", autosxs_params, tmp_path, "autosxs")
    assert code == 0
    arena_rows = {j["prompt_id"]: j for j in _read_jsonl(arena / "judgments.jsonl")}
    sxs_rows = {j["prompt_id"]: j for j in _read_jsonl(sxs / "judgments.jsonl")}
    assert {k: j["choice"] for k, j in arena_rows.items()} == {k: j["choice"] for k, j in sxs_rows.items()}
    samples = collections.Counter(s["choice"] for j in sxs_rows.values() for s in j["samples"])
    assert samples["TIE"] > 0  # the set has ties
    board = {r["model"]: r for r in _read_jsonl(arena / "leaderboard.jsonl")}
    assert (board["m1"]["wins"], board["m1"]["losses"], board["m1"]["ties"]) == (
        samples["A"],
        samples["B"],
        samples["TIE"],
    )
    assert (board["m4"]["wins"], board["m4"]["losses"]) == (samples["B"], samples["A"])
