"""Hostile trial: enum-like options are read in any case with surrounding spaces; verdict_map keys that collide."""

from __future__ import annotations

import pytest

from autorater_pipelines.arena.params import ArenaParams
from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.parameters import to_choice
from autorater_pipelines.pairwise.panel import check_panel_vote
from autorater_pipelines.pairwise.settings import AutoraterParameters, JudgeSettings

PATTERN = r"\[\[(A>B|a>b|B|b)\]\]"


@pytest.mark.parametrize(
    ("key", "given", "expected"),
    [
        ("identical_responses", "TIE", "tie"),
        ("identical_responses", " Judge ", "judge"),
        ("position_calibration", "NONE", "none"),
        ("flip", "RANDOM", "random"),
        ("flip", " Random\t", "random"),
        ("flip", " FALSE ", False),
        ("preference", "Probability ", "probability"),
        ("preference", "DISCRETE", "discrete"),
    ],
)
def test_enum_like_options_ignore_case_and_surrounding_spaces(key, given, expected):
    assert getattr(AutoraterParameters.parse({key: given}), key) == expected


def test_verdict_match_and_panel_vote_ignore_case_and_surrounding_spaces():
    settings = JudgeSettings.parse({"verdict_pattern": PATTERN, "verdict_map": {"B": "B"}, "verdict_match": " FIRST"})
    assert settings.verdict_match == "first"
    assert check_panel_vote(" Mean ") == "mean"


def test_arena_choices_ignore_surrounding_spaces():
    params = ArenaParams.parse(
        {
            "evaluation_dataset": "d.jsonl",
            "task": "question_answering",
            "id_columns": ["id"],
            "autorater_prompt_parameters": {"inference_instruction": "q"},
            "response_columns": {"m0": "a", "m1": "b"},
            "ties": " Rao_Kupper ",
            "pairing": "ALL",
            "autorater_parameters": {"identical_responses": "TIE"},
        },
        source="parameters",
    )
    assert (params.ties, params.pairing) == ("rao_kupper", "all")


@pytest.mark.parametrize(
    ("key", "given", "message"),
    [
        ("identical_responses", "ties", r"identical_responses input should be 'judge' or 'tie', got 'ties'"),
        ("identical_responses", 1, r"identical_responses input should be 'judge' or 'tie', got 1"),
        ("position_calibration", "Balance", r"position_calibration input should be 'none' or 'balanced'"),
        ("flip", "randomly", r"flip must be true, false or \"random\", got 'randomly'"),
        ("preference", "prob", r"preference 'prob' is not a preference mode"),
    ],
)
def test_other_spellings_are_still_refused_with_the_value(key, given, message):
    with pytest.raises(InputError, match=message):
        AutoraterParameters.parse({key: given})


def test_to_choice_returns_the_choice_or_the_value_unchanged():
    assert to_choice("  TIE\n", ("judge", "tie")) == "tie"
    assert to_choice("tied", ("judge", "tie")) == "tied"
    assert to_choice(None, ("judge", "tie")) is None


@pytest.mark.parametrize(
    ("verdict_map", "keys"),
    [
        ({"A>B": "A", "a>b": "B"}, r"'A>B' and 'a>b'.*'A' and 'B'"),
        ({"B": "B", " b ": "TIE"}, r"'B' and ' b '.*'B' and 'TIE'"),
        ({"A>B": "A>>B", "a>b": "A"}, r"'A>B' and 'a>b'.*'A>>B' and 'A'"),  # the same position, not the same strength
    ],
)
def test_verdict_map_keys_that_collide_case_insensitively_with_different_values_are_refused(verdict_map, keys):
    with pytest.raises(InputError, match=rf"verdict_map keys {keys}: keep one of them"):
        JudgeSettings.parse({"verdict_pattern": PATTERN, "verdict_map": verdict_map})


def test_keys_that_are_every_spelling_of_a_verdict_are_kept():
    # AlpacaEval's one-token answer: "m" and "M" are both keys, so a match is always one of them exactly.
    settings = JudgeSettings.parse({"verdict_pattern": "(m|M)", "verdict_map": {"m": "A", "M": "B"}})
    assert settings.verdict_map == {"m": "A", "M": "B"}


def test_verdict_map_keys_that_collide_with_the_same_value_are_accepted():
    settings = JudgeSettings.parse({"verdict_pattern": PATTERN, "verdict_map": {"B": "B", "b": " b", "A>B": "A"}})
    assert settings.verdict_map == {"B": "B", "b": "B", "A>B": "A"}
