"""Verdict strength (Arena-Hard's ``[[A>>B]]`` … ``[[B>>A]]``): parsed in position terms, weighed in the arena."""

from __future__ import annotations

import html
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from autorater_pipelines import arena, autosxs
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise import JudgeSettings, parse_verdict_at, tasks
from autorater_pipelines.pairwise.strength import sample_strength

ARENA_HARD = JudgeSettings.parse({}).for_task(tasks.get_task("arena_hard"))

STRENGTHS = {"m0": 1.0, "m1": 0.4, "m2": -0.2, "m3": -0.6}

# (answer, position, strong); None = a parse error
PARSE_CASES = [
    ("Both are fine, A has the formula.\nMy final verdict is: [[A>>B]]", "A", True),
    ("My final verdict is: [[A>B]]", "A", False),
    ("My final verdict is tie: [[A=B]]", "TIE", False),
    ("My final verdict is: [[B>A]]", "B", False),
    ("B is far better. My final verdict is: [[B>>A]]", "B", True),
    ("I first thought [[A>B]], but on reflection: [[B>>A]]", "B", True),  # the concluding verdict decides
    ("my final verdict is: [[b>>a]]", "B", True),  # letter case
    ("My final verdict is: A>>B", None, None),  # no brackets
]


@pytest.mark.parametrize(("answer", "position", "strong"), PARSE_CASES)
def test_arena_hard_verdicts_are_read_in_position_terms_with_their_strength(answer, position, strong):
    if position is None:
        with pytest.raises(ValueError, match=r"not a key of verdict_map|found no match"):
            parse_verdict_at(answer, ARENA_HARD)
        return
    parsed = parse_verdict_at(answer, ARENA_HARD)
    assert parsed.position == position
    assert sample_strength(answer, parsed.span, ARENA_HARD.strong_verdicts) is strong


def test_a_label_outside_the_arena_hard_scale_names_the_labels_the_task_accepts():
    labels = re.escape("task 'arena_hard' accepts [[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]]")
    with pytest.raises(ValueError, match=rf"verdict 'A>>>B' is not one of the verdicts {labels}"):
        parse_verdict_at("My final verdict is: [[A>>>B]]", ARENA_HARD)


def test_a_label_outside_a_user_verdict_map_still_names_verdict_map():
    # The same pattern given by the user in autorater_parameters: the map is theirs, so the error names it.
    settings = JudgeSettings.parse(
        {"verdict_pattern": r"\[\[([AB<>=]+)\]\]", "verdict_map": {"A>B": "A", "B>A": "B"}}
    ).for_task(tasks.get_task("arena_hard"))
    with pytest.raises(ValueError, match=r"verdict 'A>>>B' is not a key of verdict_map \['A>B', 'B>A'\]"):
        parse_verdict_at("My final verdict is: [[A>>>B]]", settings)


def test_a_custom_verdict_map_may_name_strong_verdicts():
    settings = JudgeSettings.parse(
        {
            "verdict_pattern": r"Verdict: (much A|A|tie|B|much B)\b",
            "verdict_map": {"much A": "A>>B", "A": "A", "tie": "A=B", "B": "B>A", "much B": "B>>A"},
        }
    )
    assert settings.verdict_map == {"much A": "A", "A": "A", "tie": "TIE", "B": "B", "much B": "B"}
    assert settings.strong_verdicts == ["much A", "much B"]
    assert JudgeSettings.parse(settings.model_dump()) == settings  # the split survives a round trip
    parsed = parse_verdict_at("Verdict: much B", settings)
    assert (parsed.position, sample_strength("Verdict: much B", parsed.span, settings.strong_verdicts)) == ("B", True)
    assert (
        sample_strength("Verdict: A", parse_verdict_at("Verdict: A", settings).span, settings.strong_verdicts) is False
    )
    plain = JudgeSettings.parse(
        {"verdict_pattern": r"\[\[(A|B|C)\]\]", "verdict_map": {"A": "A", "B": "B", "C": "TIE"}}
    )
    assert plain.strong_verdicts == [] and sample_strength("[[A]]", (2, 3), plain.strong_verdicts) is None
    with pytest.raises(InputError, match=r"strong_verdicts \['tie'\] must be verdict_map keys that give A or B"):
        JudgeSettings.parse({**settings.model_dump(), "strong_verdicts": ["tie"]})
    with pytest.raises(InputError, match=r"or a strength label A>>B, A>B, A=B, B>A, B>>A"):
        JudgeSettings.parse({"verdict_pattern": r"\[\[(A|B)\]\]", "verdict_map": {"A": "A>>>B", "B": "B"}})


def test_the_arena_hard_prompt_asks_for_the_labelled_verdict_and_no_json():
    prompt = tasks.get_task("arena_hard@001").render_judge_prompt({"inference_instruction": "2+2?"}, "4", "5")
    assert prompt.endswith("My final verdict is: [[A>B]]\n")
    assert '- "A>>B": Response A is significantly better than Response B.' in prompt
    assert "JSON" not in prompt.split("## Your answer")[1]
    assert "arena_hard@001" in tasks.available_tasks()


def _label(winner: str, strong: bool, flipped: bool) -> str:
    """The judge's label in POSITION terms for a winner in model terms (a swapped sample shows model_a second)."""
    position = {"A": "B", "B": "A"}.get(winner, winner) if flipped else winner
    return {"A": "A>>B" if strong else "A>B", "B": "B>>A" if strong else "B>A", "TIE": "A=B"}[position]


def _write(directory: Path, prompts: int = 30, seed: int = 5) -> tuple[Path, Path, list[dict]]:
    """Dataset, replay (Arena-Hard answers drawn from BT with strong verdicts and ties), and the battles drawn.

    Every 40th answer is malformed (``[[A>>>B]]``): an ERROR sample, not a battle.
    """
    rng = np.random.default_rng(seed)
    names = sorted(STRENGTHS)
    rows, replay, drawn = [], [], []
    for p in range(prompts):
        pid = f"p{p:02d}"
        rows.append({"prompt_id": pid, "question": f"Q{p}?", **{f"resp_{m}": f"{m} answers {p}." for m in names}})
        for a, b in itertools.combinations(names, 2):
            p_a = 1.0 / (1.0 + np.exp(STRENGTHS[b] - STRENGTHS[a]))
            for sample_index, flipped in ((0, False), (1, True)):
                u, v, w = rng.random(3)
                winner = "TIE" if u < 0.15 else ("A" if v < p_a else "B")
                strong = winner != "TIE" and w < 0.4
                label = _label(winner, strong, flipped)
                if len(replay) % 40 == 39:
                    label = "A>>>B"
                else:
                    drawn.append({"a": a, "b": b, "winner": winner, "strong": strong})
                replay.append(
                    {
                        "prompt_id": pid,
                        "model_a": a,
                        "model_b": b,
                        "flipped": flipped,
                        "sample_index": sample_index,
                        "response": f"Comparing the two.\nMy final verdict is: [[{label}]]",
                    }
                )
    dataset, answers = directory / "dataset.jsonl", directory / "replay.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers.write_text("".join(json.dumps(r) + "\n" for r in replay))
    return dataset, answers, drawn


def _independent_fit(drawn: list[dict], strong_weight: float) -> dict[str, float]:
    """Weighted Bradley–Terry maximum likelihood (ties half a win each), mean 0, by scipy's BFGS."""
    names = sorted(STRENGTHS)
    index = {m: k for k, m in enumerate(names)}
    ii = np.array([index[d["a"]] for d in drawn])
    jj = np.array([index[d["b"]] for d in drawn])
    yy = np.array([{"A": 1.0, "B": 0.0, "TIE": 0.5}[d["winner"]] for d in drawn])
    ww = np.array([strong_weight if d["strong"] else 1.0 for d in drawn])

    def loss(free: np.ndarray) -> tuple[float, np.ndarray]:
        s = np.concatenate([[0.0], free])
        prob = 1.0 / (1.0 + np.exp(-(s[ii] - s[jj])))
        value = -np.sum(ww * (yy * np.log(prob) + (1 - yy) * np.log(1 - prob)))
        g = np.zeros(len(names))
        np.add.at(g, ii, -ww * (yy - prob))
        np.add.at(g, jj, ww * (yy - prob))
        return float(value), g[1:]

    result = optimize.minimize(loss, np.zeros(len(names) - 1), jac=True, method="BFGS", options={"gtol": 1e-10})
    s = np.concatenate([[0.0], result.x])
    return {m: float(s[k] - s.mean()) for k, m in enumerate(names)}


def _params(dataset: Path, replay: Path) -> dict:
    return {
        "evaluation_dataset": str(dataset),
        "task": "arena_hard",
        "id_columns": ["prompt_id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
        "response_columns": {m: f"resp_{m}" for m in STRENGTHS},
        "autorater_model": f"replay/{replay}",
        "bootstrap_rounds": 20,
    }


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.pipeline
def test_strong_verdicts_weigh_three_battles_and_rescore_with_weight_1_refits_with_no_call(tmp_path, capsys):
    dataset, replay, drawn = _write(tmp_path)
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(_params(dataset, replay)))
    out = tmp_path / "out"
    assert main(["run", "arena", "--params", str(params_path), "--output-dir", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    replay.unlink()  # from here on, a model call could not be answered
    judgments = _read_jsonl(out / "judgments.jsonl")
    samples = [s for j in judgments for s in j["samples"]]
    flipped_strong = [s for s in samples if s["flipped"] and "[[A>>B]]" in s["raw_response"]]
    assert flipped_strong and all(s["choice"] == "B" and s["strong"] is True for s in flipped_strong)
    plain = [s for s in samples if any(f"[[{label}]]" in s["raw_response"] for label in ("A>B", "A=B", "B>A"))]
    assert plain and all(s["strong"] is False for s in plain)
    malformed = [s for s in samples if "A>>>B" in s["raw_response"]]
    assert malformed and all(s["choice"] == "ERROR" and "'A>>>B'" in s["error"] for s in malformed)

    metrics = json.loads((out / "metrics.json").read_text())
    strong = sum(d["strong"] for d in drawn)
    assert metrics["strong_verdict_count"] == strong and metrics["error_sample_count"] == len(malformed)
    assert metrics["battle_count"] == len(drawn) + 2 * strong  # a strong verdict is 3 battles
    line = f"  {strong} strong verdicts (A>>B, B>>A) count 3 battles each: {len(drawn) + 2 * strong} battles weighted\n"
    assert line in printed
    page = (out / "report.html").read_text()
    battles = f"({len(drawn)} from {len(samples)} samples, both presentation orders; {len(malformed)} ERROR samples"
    assert battles in page and f"{html.escape(line.strip())}.</p>" in page  # the CLI's sentence, in the report
    weighted = _independent_fit(drawn, 3.0)
    board = {r["model"]: r for r in _read_jsonl(out / "leaderboard.jsonl")}
    assert {m: board[m]["score"] for m in STRENGTHS} == pytest.approx(weighted, abs=1e-4)
    plain = _independent_fit(drawn, 1.0)
    assert max(abs(weighted[m] - plain[m]) for m in STRENGTHS) > 0.01  # the weight moves the scores

    assert main(["rescore", str(out), "--params", '{"strong_verdict_weight": 1}']) == 0
    assert "with no model calls" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["rescore_options"]["model_calls"] == 0 and metrics["battle_count"] == len(drawn)
    page = (out / "report.html").read_text()
    assert (
        f"{strong} strong verdicts (A&gt;&gt;B, B&gt;&gt;A) count 1 battle each: {len(drawn)} battles weighted" in page
    )
    board = {r["model"]: r for r in _read_jsonl(out / "leaderboard.jsonl")}
    assert {m: board[m]["score"] for m in STRENGTHS} == pytest.approx(plain, abs=1e-4)


def test_autosxs_counts_a_strong_verdict_as_a_plain_win(tmp_path):
    rows = [{"id": i, "q": f"Q{i}?", "a": f"a{i}", "b": f"b{i}"} for i in range(4)]
    labels = ["A>>B", "A>B", "B>>A", "A=B"]  # sample 0 (shown in order) of row i; sample 1 agrees, swapped
    swapped = {"A>>B": "B>>A", "A>B": "B>A", "B>>A": "A>>B", "A=B": "A=B"}
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps(
                {
                    "id": i,
                    "flipped": flipped,
                    "sample_index": int(flipped),
                    "response": f"My final verdict is: [[{swapped[labels[i]] if flipped else labels[i]}]]",
                }
            )
            + "\n"
            for i in range(4)
            for flipped in (False, True)
        )
    )
    judgments, metrics = autosxs.evaluate(
        pd.DataFrame(rows),
        task="arena_hard",
        autorater_prompt_parameters={"inference_instruction": {"column": "q"}},
        response_column_a="a",
        response_column_b="b",
        id_columns=["id"],
        autorater_model=f"replay/{replay}",
        progress=False,
    )
    assert list(judgments["choice"]) == ["A", "A", "B", "TIE"]
    # 2 wins of A (one strong), 1 of B (strong), 1 tie: the same rates as plain verdicts
    assert metrics["autorater_model_a_win_rate"] == 0.5 and metrics["autorater_model_b_win_rate"] == 0.25
    assert [[s["strong"] for s in row] for row in judgments["samples"]] == [
        [True] * 2,
        [False] * 2,
        [True] * 2,
        [False] * 2,
    ]


def test_the_dataframe_api_weighs_a_custom_map_s_strong_verdicts(tmp_path):
    """A custom ``verdict_map`` with strength labels on a JSON-less judge: strong samples weigh 3 in the arena."""
    rows = [{"id": i, "q": f"Q{i}?", "x": f"x{i}", "y": f"y{i}"} for i in range(6)]
    replay = tmp_path / "replay.jsonl"
    # x beats y on every prompt, strongly on prompts 0-2: 6 strong samples (weight 3) + 6 plain ones.
    replay.write_text(
        "".join(
            json.dumps(
                {
                    "id": i,
                    "model_a": "x",
                    "model_b": "y",
                    "flipped": flipped,
                    "sample_index": int(flipped),
                    "response": f"Verdict: {('much ' if i < 3 else '') + ('B' if flipped else 'A')}",
                }
            )
            + "\n"
            for i in range(6)
            for flipped in (False, True)
        )
    )
    leaderboard, _, metrics = arena.evaluate(
        pd.DataFrame(rows),
        task="question_answering",
        autorater_prompt_parameters={"inference_instruction": {"column": "q"}},
        response_columns={"x": "x", "y": "y"},
        id_columns=["id"],
        autorater_model=f"replay/{replay}",
        autorater_parameters={
            "verdict_pattern": r"Verdict: (much A|much B|A|B)\b",
            "verdict_map": {"much A": "A>>B", "much B": "B>>A", "A": "A", "B": "B"},
        },
        bootstrap_rounds=0,
        progress=False,
    )
    assert metrics["strong_verdict_count"] == 6 and metrics["battle_count"] == 6 * 3 + 6
    assert dict(zip(leaderboard["model"], leaderboard["wins"], strict=True)) == {"x": 24.0, "y": 0.0}
