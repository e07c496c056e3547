"""Position order you choose, identical responses, position and length bias as numbers (issue 22, items 3–5).

Judges here are scripted on the emulator over real HTTP; expected figures are worked out by hand in comments.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.autosxs.bias import bias_metrics
from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise import JudgeSettings, tasks
from autorater_pipelines.pairwise.order import balanced_orders
from autorater_pipelines.pairwise.settings import check_verdict_settings
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge, responses_in_prompt

REPO = Path(__file__).resolve().parents[2]
QA = {
    "task": "question_answering@001",
    "id_columns": ["id"],
    "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
    "response_column_a": "a",
    "response_column_b": "b",
}
QUIET = {"progress": False, "cache_dir": "off"}


def _frame(n: int = 6) -> pd.DataFrame:
    # Model A's answers are longer on even rows, model B's on odd rows.
    return pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(n)],
            "question": [f"Question {i}?" for i in range(n)],
            "a": [("long answer " * 3 if i % 2 == 0 else "short") + f" a{i}" for i in range(n)],
            "b": [("short" if i % 2 == 0 else "long answer " * 3) + f" b{i}" for i in range(n)],
        }
    )


def _first_shown_judge(request):
    """Always chooses the response shown first (a maximally position-biased judge)."""
    assert responses_in_prompt(request.prompt_text), "not a judge prompt"
    return json.dumps({"explanation": "The first one.", "choice": "A"})


def _run(df, judge, **autorater):
    with ModelEmulator(judge) as emulator:
        judgments, metrics = autosxs.evaluate(
            df,
            **QA,
            autorater_model="gemini-2.0-flash",
            autorater_parameters={"base_url": emulator.url, **QUIET, **autorater},
        )
        # The last word of the response shown first: "a3" = model A's answer to row 3.
        shown_first = sorted(responses_in_prompt(r.prompt_text)["A"].split()[-1] for r in emulator.requests)
        return judgments, metrics, emulator.call_count, shown_first


def _by_hand(ids: list[str], seed: int) -> list[bool]:
    """The documented rule: rank rows by sha256 of the JSON ``[str(seed), id]``, swap the first ⌊n/2⌋."""
    keys = [hashlib.sha256(json.dumps([str(seed), i]).encode()).hexdigest() for i in ids]
    first_half = sorted(range(len(ids)), key=keys.__getitem__)[: len(ids) // 2]
    return [i in first_half for i in range(len(ids))]


def test_balanced_orders_swap_exactly_half_the_rows_by_a_seeded_permutation():
    ids = [[f"q{i}"] for i in range(7)]
    orders = balanced_orders(ids, 0)
    assert sum(orders) == 3  # ⌊7/2⌋
    assert orders == _by_hand([f"q{i}" for i in range(7)], 0)
    assert balanced_orders(ids, 0) == orders  # the seed reproduces the orders
    assert balanced_orders(ids, 5) == _by_hand([f"q{i}" for i in range(7)], 5) != orders
    assert balanced_orders(list(reversed(ids)), 0) == list(reversed(orders))  # the ids decide, not the file order
    assert balanced_orders([], 0) == [] and balanced_orders([["x"]], 0) == [False]


def test_flip_random_judges_each_row_once_in_half_the_calls_and_the_seed_reproduces_the_orders():
    df = _frame(6)
    both, both_metrics, both_calls, _ = _run(df, _first_shown_judge)
    assert both_calls == 12 and both_metrics["position_consistency"] == 0.0  # A first → A; B first → B: a TIE
    judgments, metrics, calls, shown_first = _run(df, _first_shown_judge, flip="random", seed=3)
    assert calls == 6  # half the calls of flip true
    expected = _by_hand([f"q{i}" for i in range(6)], 3)
    assert sum(expected) == 3
    assert judgments["flipped"].tolist() == expected
    assert [[s["flipped"] for s in row] for row in judgments["samples"]] == [[f] for f in expected]
    # The judge saw model B's answer first on exactly the swapped rows, and chose it: choice B there, A elsewhere.
    assert shown_first == sorted(f"{'b' if flipped else 'a'}{i}" for i, flipped in enumerate(expected))
    assert judgments["choice"].tolist() == ["B" if f else "A" for f in expected]
    assert metrics["autorater_model_a_win_rate"] == 0.5 and metrics["position_consistency"] is None
    # Every decisive sample chose the first-shown response: 6/6, Wilson lower bound n/(n + z²) = 6/9.841459 = 0.609666.
    assert metrics["first_position_rate"] == 1.0 and metrics["first_position_count"] == 6
    assert metrics["first_position_rate_ci_lower"] == pytest.approx(0.609666, abs=1e-5)
    assert metrics["first_position_rate_ci_upper"] == pytest.approx(1.0)
    again, *_ = _run(df, _first_shown_judge, flip="random", seed=3)
    assert again["flipped"].tolist() == expected
    other, *_ = _run(df, _first_shown_judge, flip="random", seed=4)
    assert other["flipped"].tolist() == _by_hand([f"q{i}" for i in range(6)], 4) != expected


def test_flip_random_with_two_samples_keeps_both_in_the_rows_order():
    judgments, _, calls, _ = _run(_frame(4), _first_shown_judge, flip="random", sampling_count=2)
    assert calls == 8
    assert judgments["flipped"].sum() == 2
    orders = zip(judgments["samples"], judgments["flipped"], strict=True)
    assert all([s["flipped"] for s in row] == [f, f] for row, f in orders)
    assert judgments["complete"].all()


def test_flip_false_shows_model_a_first_on_every_sample():
    judgments, metrics, calls, _ = _run(_frame(4), _first_shown_judge, flip=False, sampling_count=1)
    assert calls == 4 and judgments["choice"].tolist() == ["A"] * 4 and "flipped" not in judgments.columns
    assert metrics["first_position_rate"] == 1.0 and metrics["decisive_sample_count"] == 4
    # Model A was shown first on every sample: the rate is model A's share, not position bias.
    assert (
        metrics["first_position_rate_note"]
        == "model A was always shown first: this is model A's share, not position bias"
    )


def test_flip_column_reproduces_a_recorded_order(tmp_path):
    df = _frame(4).assign(order=[True, False, "true", "FALSE"])
    with ModelEmulator(_first_shown_judge) as emulator:
        judgments, _ = autosxs.evaluate(
            df,
            **QA,
            autorater_model="gemini-2.0-flash",
            autorater_parameters={"base_url": emulator.url, **QUIET, "flip_column": "order"},
        )
        assert emulator.call_count == 4  # one sample per row unless sampling_count is given
    assert judgments["flipped"].tolist() == [True, False, True, False]
    assert judgments["choice"].tolist() == ["B", "A", "B", "A"]  # the first shown always wins


@pytest.mark.parametrize("value", ["yes", None, 1])
def test_a_bad_flip_column_value_names_the_file_row_and_column(tmp_path, value):
    rows = [{"id": "q0", "question": "Q?", "a": "x", "b": "y", "order": False}]
    rows.append({"id": "q1", "question": "Q?", "a": "x", "b": "y", "order": value})
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    message = rf"data\.jsonl line 2, column 'order': flip_column value {value!r} is not a boolean"
    with pytest.raises(InputError, match=message):
        autosxs.prepare_examples(evaluation_dataset=str(data), **QA, autorater_parameters={"flip_column": "order"})


def test_a_missing_flip_column_is_named(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Q?", "a": "x", "b": "y"}) + "\n")
    with pytest.raises(InputError, match=r"autorater_parameters\.flip_column.*'order'"):
        autosxs.prepare_examples(evaluation_dataset=str(data), **QA, autorater_parameters={"flip_column": "order"})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"flip": "sometimes"}, r"flip must be true, false or \"random\", got 'sometimes'"),
        ({"flip_column": "order", "flip": True}, r"flip_column 'order' gives each row's order.*remove flip"),
        ({"flip_column": 3}, r"flip_column must be the name of a boolean dataset column, got 3"),
        ({"identical_responses": "skip"}, r"identical_responses"),
        ({"position_calibration": "balanced", "flip": False}, r"needs flip true and sampling_count >= 2"),
        ({"position_calibration": "balanced", "sampling_count": 1}, r"got flip True, sampling_count 1"),
        (
            {"position_calibration": "balanced", "flip_column": "o", "sampling_count": 2},
            r"got flip_column 'o', sampling_count 2",
        ),
    ],
)
def test_bad_order_settings_are_input_errors(params, message):
    with pytest.raises(InputError, match=message):
        JudgeSettings.parse(params)


def test_order_settings_defaults():
    assert JudgeSettings.parse({}).flip is True and JudgeSettings.parse({}).sampling_count == 2
    assert JudgeSettings.parse({"flip": "RANDOM"}).flip == "random"
    assert JudgeSettings.parse({"flip": "random"}).sampling_count == 1
    assert JudgeSettings.parse({"flip": "random", "sampling_count": 3}).sampling_count == 3
    assert JudgeSettings.parse({"flip_column": "o"}).sampling_count == 1
    assert JudgeSettings.parse({"flip": "false"}).flip is False
    task = tasks.get_task("question_answering@001")
    with pytest.raises(InputError, match=r"position_calibration 'balanced' .* no pointwise score rubric"):
        check_verdict_settings(task, JudgeSettings.parse({"position_calibration": "balanced"}))


def test_identical_responses_are_a_tie_without_a_call():
    df = _frame(4)
    df.loc[2, "b"] = df.loc[2, "a"]
    df.loc[3, "a"] = df.loc[3, "b"]
    judged, judged_metrics, judged_calls, _ = _run(df, length_judge)
    assert judged_calls == 8 and judged_metrics["identical_response_count"] == 0  # default: the judge is asked
    judgments, metrics, calls, _ = _run(df, length_judge, identical_responses="tie")
    assert calls == 4  # rows 0 and 1, both orders; rows 2 and 3 make no call
    assert judgments["choice"].tolist() == ["A", "B", "TIE", "TIE"]
    row = judgments.iloc[2]
    assert (row["confidence"], list(row["samples"]), row["identical_responses"], row["complete"]) == (
        1.0,
        [],
        True,
        True,
    )
    assert row["input_token_count"] == 0 and "identical" in row["explanation"]
    assert metrics["identical_response_count"] == 2 and metrics["judged_count"] == 4
    assert metrics["autorater_tie_rate"] == 0.5 and metrics["autorater_model_a_win_rate"] == 0.25


def test_bias_metrics_by_hand():
    def sample(choice, flipped):
        return {"choice": choice, "flipped": flipped}

    rows = [
        # samples: A shown first chose A (first); B shown first chose A (second) → 1 of 2 first
        {"choice": "A", "response_a": "xxxx", "response_b": "x", "samples": [sample("A", False), sample("A", True)]},
        # A first chose B (second); B first chose B (first) → 1 of 2; the shorter response (B) won
        {"choice": "B", "response_a": "xxxx", "response_b": "x", "samples": [sample("B", False), sample("B", True)]},
        # A first chose A (first); a TIE sample is not decisive → 1 of 1; choice TIE: no length verdict
        {"choice": "TIE", "response_a": "xx", "response_b": "x", "samples": [sample("A", False), sample("TIE", True)]},
        # equal lengths: no length verdict; an ERROR sample is not decisive
        {"choice": "A", "response_a": "ab", "response_b": "cd", "samples": [sample("ERROR", False)]},
    ]
    out = bias_metrics(rows, rows)
    # first position: 3 of 5 decisive samples. Wilson, z = 1.959964, z² = 3.841459: centre (0.6 + z²/10) /
    # (1 + z²/5) = 0.984146 / 1.768292 = 0.556552, half-width z·sqrt(0.6·0.4/5 + z²/100) / (1 + z²/5) = 1.959964 ·
    # 0.293963 / 1.768292 = 0.325827 → [0.230724, 0.882379].
    assert (out["first_position_count"], out["decisive_sample_count"], out["first_position_rate"]) == (3, 5, 0.6)
    assert "first_position_rate_note" not in out  # both orders were judged
    assert out["first_position_rate_ci_lower"] == pytest.approx(0.230724, abs=1e-5)
    assert out["first_position_rate_ci_upper"] == pytest.approx(0.882379, abs=1e-5)
    # longer response: rows 1 (A, longer, won) and 2 (B, shorter, won) → 1 of 2
    assert (out["longer_response_win_count"], out["unequal_length_decisive_count"]) == (1, 2)
    assert out["longer_response_win_rate"] == 0.5
    assert out["identical_response_count"] == 0 and out["position_calibration"] == "none"
    assert bias_metrics([], [])["first_position_rate"] is None


def _translation_task() -> dict:
    params = json.loads((REPO / "examples" / "autosxs_docs" / "custom_task_translation.json").read_text())
    definition = copy.deepcopy(params["experimental_args"]["custom_task_definition"])
    definition["few_shot_examples_config"]["dataset"] = str(REPO / "examples/autosxs_docs/translation_few_shots.jsonl")
    return {
        "task": params["task"],
        "id_columns": params["id_columns"],
        "autorater_prompt_parameters": params["autorater_prompt_parameters"],
        "response_column_a": params["response_column_a"],
        "response_column_b": params["response_column_b"],
        "experimental_args": {"custom_task_definition": definition},
    }


def test_balanced_position_calibration_averages_the_scores_over_both_orders():
    spec = _translation_task()
    df = pd.read_json(REPO / "examples" / "autosxs_docs" / "translation.jsonl", lines=True)

    def judge(request):
        # Position-biased scores: the response shown first gets 2 more than the one shown second deserves.
        blocks = responses_in_prompt(request.prompt_text)
        model_a_first = blocks["A"] in set(df["model_a_response"])
        a, b = (5, 2) if model_a_first else (3, 4)  # (first, second): A first → A 5, B 2; B first → B 3, A 4
        return json.dumps({"explanation": "scored", "response_a_score": a, "response_b_score": b})

    # Vote: A first → A wins (5 > 2); B first → B is first with 3 < 4, so A wins too: A. Calibrated: model A
    # (5 + 4) / 2 = 4.5, model B (2 + 3) / 2 = 2.5 → A, unchanged. Scripted differently below to change the vote.
    with ModelEmulator(judge) as emulator:
        judgments, metrics = autosxs.evaluate(
            df,
            **spec,
            autorater_model="gemini-2.0-flash",
            autorater_parameters={"base_url": emulator.url, **QUIET, "position_calibration": "balanced"},
        )
    assert judgments["choice"].tolist() == ["A"] * 3 and judgments["uncalibrated_choice"].tolist() == ["A"] * 3
    assert judgments["response_a_score"].tolist() == [4.5] * 3 and judgments["response_b_score"].tolist() == [2.5] * 3
    assert metrics["position_calibration"] == "balanced" and metrics["position_calibration_changed_count"] == 0

    def first_wins(request):
        # The first shown gets 5, the second 4: A first → model A 5, B 4 (A); B first → model B 5, A 4 (B): the
        # vote is a TIE. Model A's second-shown score is 3 on the first row: calibrated A (5 + 3) / 2 = 4.0 vs
        # B (4 + 5) / 2 = 4.5 → B; on the other rows A 4.5 vs B 4.5 → TIE.
        blocks = responses_in_prompt(request.prompt_text)
        model_a_first = blocks["A"] in set(df["model_a_response"])
        second = 3 if not model_a_first and blocks["B"] == df["model_a_response"][0] else 4
        return json.dumps({"explanation": "scored", "response_a_score": 5, "response_b_score": second})

    with ModelEmulator(first_wins) as emulator:
        judgments, metrics = autosxs.evaluate(
            df,
            **spec,
            autorater_model="gemini-2.0-flash",
            autorater_parameters={"base_url": emulator.url, **QUIET, "position_calibration": "balanced"},
        )
    assert judgments["uncalibrated_choice"].tolist() == ["TIE"] * 3
    assert judgments["choice"].tolist() == ["B", "TIE", "TIE"]
    assert (judgments["response_a_score"][0], judgments["response_b_score"][0]) == (4.0, 4.5)
    assert judgments["explanation"][0].startswith("Balanced position calibration: mean scores over both orders A 4,")
    assert metrics["position_calibration_changed_count"] == 1


def _arena_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(4)],
            "question": [f"Question {i}?" for i in range(4)],
            "m1": ["a" * (10 + i) for i in range(4)],
            "m2": ["b" * (20 + i) for i in range(4)],
            "m3": ["c" * (30 + i) for i in range(4)],
        }
    )


ARENA = {
    "task": "question_answering@001",
    "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
    "response_columns": {"m1": "m1", "m2": "m2", "m3": "m3"},
    "id_columns": ["pid"],
    "bootstrap_rounds": 0,
    "autorater_model": "gemini-2.0-flash",
}


def test_arena_pairs_with_flip_random_are_judged_once_half_of_them_swapped():
    from autorater_pipelines import arena

    df = _arena_frame()
    spec = {
        "task": "question_answering@001",
        "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
        "response_columns": {"m1": "m1", "m2": "m2", "m3": "m3"},
        "id_columns": ["pid"],
        "bootstrap_rounds": 0,
        "autorater_model": "gemini-2.0-flash",
    }
    with ModelEmulator(length_judge) as emulator:
        leaderboard, judgments, _ = arena.evaluate(
            df, **spec, autorater_parameters={"base_url": emulator.url, **QUIET, "flip": "random"}
        )
        assert emulator.call_count == 12  # 3 pairs × 4 prompts, one order each (flip true: 24)
    assert judgments["flipped"].sum() == 6  # ⌊12/2⌋
    assert judgments["choice"].tolist() == ["B"] * 12  # the longer (m2 over m1, m3 over both) wins in either order
    assert leaderboard["model"].tolist() == ["m3", "m2", "m1"]
    with pytest.raises(InputError, match=r"flip_column 'order' gives the recorded order of an AutoSxS row"):
        arena.evaluate(df, **spec, autorater_parameters={"flip_column": "order"})


def test_the_bias_figures_are_in_the_report_the_console_metrics_and_the_bigquery_schema(tmp_path):
    from autorater_pipelines import io
    from autorater_pipelines.autosxs.export import JUDGMENTS_BIGQUERY_FIELDS
    from autorater_pipelines.report import write_report

    df = _frame(4)
    df.loc[3, "a"] = df.loc[3, "b"]
    judgments, metrics, _, _ = _run(df, _first_shown_judge, flip="random", identical_responses="tie")
    rows = judgments.to_dict("records")
    io.write_jsonl(str(tmp_path / "judgments.jsonl"), rows)
    io.write_json(str(tmp_path / "metrics.json"), metrics)
    page = Path(write_report(str(tmp_path))).read_text()
    # 3 rows judged (q3 is identical), each sample chose the first shown: 3/3, Wilson lower 3/(3 + z²) = 3/6.841459 = 0.438503.
    assert metrics["first_position_rate"] == 1.0 and metrics["decisive_sample_count"] == 3
    assert metrics["first_position_rate_ci_lower"] == pytest.approx(3 / (3 + 1.959964**2), abs=1e-6)
    cell = r'data-key="first_position_rate" data-value="1.0">100.0%</td><td class="interval">95% CI 43.9%–100.0%'
    assert re.search(cell, page)
    assert re.search(r'data-key="identical_response_count" data-value="1">1<', page)
    assert re.search(r'data-key="longer_response_win_rate" data-value="[\d.]+"', page)
    console = autosxs.console_metrics(metrics)
    assert console["first_position_rate"] == 1.0 and console["identical_response_count"] == 1
    assert "longer_response_win_rate_ci_lower" in console
    assert {k: JUDGMENTS_BIGQUERY_FIELDS[k]["type"] for k in ("flipped", "identical_responses")} == {
        "flipped": "BOOLEAN",
        "identical_responses": "BOOLEAN",
    }


def test_arena_identical_responses_are_one_tie_battle_without_a_call():
    from autorater_pipelines import arena

    df = _arena_frame()
    df.loc[0, "m2"] = df.loc[0, "m1"]  # p0: m1 and m2 answered the same
    with ModelEmulator(length_judge) as emulator:
        leaderboard, judgments, metrics = arena.evaluate(
            df, **ARENA, autorater_parameters={"base_url": emulator.url, **QUIET, "identical_responses": "tie"}
        )
        assert emulator.call_count == 22  # 11 of the 12 pairs, both orders
    tie = judgments[(judgments["pid"] == "p0") & (judgments["model_a"] == "m1") & (judgments["model_b"] == "m2")]
    assert tie["choice"].tolist() == ["TIE"] and list(tie["samples"].iloc[0]) == []
    assert (metrics["identical_pair_count"], metrics["unjudged_pair_count"], metrics["sample_count"]) == (1, 0, 22)
    # By hand, the longer always wins: m1 vs m2 = 2 tie battles (p0: as many as a judged pair's 2 samples) + 3
    # prompts × 2 samples lost; m1 vs m3 and m2 vs m3 = 4 prompts × 2 samples lost. m1: 16 battles, 0 won, 14 lost,
    # 2 ties; m2: 16, 6, 8, 2; m3: 16, 16, 0, 0.
    assert metrics["identical_battle_weight"] == 2
    counts = leaderboard.set_index("model")[["battles", "wins", "losses", "ties"]].to_dict("index")
    assert counts == {
        "m1": {"battles": 16.0, "wins": 0.0, "losses": 14.0, "ties": 2.0},
        "m2": {"battles": 16.0, "wins": 6.0, "losses": 8.0, "ties": 2.0},
        "m3": {"battles": 16.0, "wins": 16.0, "losses": 0.0, "ties": 0.0},
    }
