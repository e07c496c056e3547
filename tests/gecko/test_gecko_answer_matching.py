import math

import pytest

from autorater_pipelines.gecko.answer_matching import (
    choice_label,
    choice_probabilities,
    normalize,
    parse_choices,
    resolve,
)
from autorater_pipelines.models import TokenLogprob

YN = ("yes", "no")
BOATS = ("a car", "a boat", "a plane", "a train")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("yes", 0),
        ("Yes.", 0),
        ("  YES  ", 0),
        ("**Yes**", 0),
        ('"no"', 1),
        ("Yes, there is a cat.", 0),
        ("no bus", 1),
        ("Answer: no", 1),
        ("not sure", None),
        ("nope", None),
        ("I think yes", None),
        ("", None),
        (None, None),
        (True, 0),
        (False, 1),
    ],
)
def test_yes_no_answers_resolve_by_normalized_exact_match(answer, expected):
    assert resolve(answer, YN) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("b", 1),
        ("(b)", 1),
        ("B)", 1),
        ("b.", 1),
        ("b) a boat", 1),
        ("a boat", 1),
        ("A Boat.", 1),
        ("e", None),  # no fifth option
        ("b) a plane", None),  # letter and text disagree
        ("boat", 1),  # articles are normalized: "a boat" is "boat"
        ("oat", None),  # a substring of a choice is not a match
    ],
)
def test_multiple_choice_answers(answer, expected):
    assert resolve(answer, BOATS) == expected


def test_a_does_not_match_b_a_boat_the_public_sample_bug():
    # The Gecko sample matched expected "a" inside the verdict "b) a boat" by substring.
    assert resolve("b) a boat", BOATS) != resolve("a", BOATS)
    assert resolve("a", BOATS) == 0


def test_longest_choice_wins_on_prefix():
    choices = ("red", "red and blue")
    assert resolve("red and blue, mostly", choices) == 1
    assert resolve("red, clearly", choices) == 0


def test_numbers_do_not_prefix_match():
    assert resolve("30", ("3", "4")) is None
    assert resolve("3 cats", ("3", "4")) == 0


def test_parse_choices_shapes():
    assert parse_choices(None) == ()
    assert parse_choices([]) == ()
    assert parse_choices({"b": "blue", "a": "red"}) == ("red", "blue")
    assert parse_choices(["a) red", "b) blue"]) == ("red", "blue")
    assert parse_choices(["1", "2"]) == ("1", "2")
    assert parse_choices([1, 2]) == ("1", "2")
    with pytest.raises(ValueError, match="not distinct"):
        parse_choices(["Red", "red"])
    with pytest.raises(ValueError, match="must be strings"):
        parse_choices([{"x": 1}])


def test_labels():
    assert [choice_label(YN, i) for i in range(2)] == ["yes", "no"]
    assert [choice_label(BOATS, i) for i in range(4)] == list("abcd")
    assert normalize("  The answer is   YES! ") == "yes"


def test_choice_probabilities_from_first_answer_token():
    lp = (
        TokenLogprob(token=" ", logprob=0.0),
        TokenLogprob(
            token="Yes",
            logprob=math.log(0.6),
            top=(("Yes", math.log(0.6)), ("yes", math.log(0.2)), ("No", math.log(0.1)), ("Maybe", math.log(0.1))),
        ),
    )
    probs = choice_probabilities(lp, list(YN))
    assert probs["yes"] == pytest.approx(0.8 / 0.9)
    assert probs["no"] == pytest.approx(0.1 / 0.9)
    letters = (TokenLogprob(token="b", logprob=math.log(0.5), top=(("b", math.log(0.5)), ("c", math.log(0.5)))),)
    assert choice_probabilities(letters, list(BOATS)) == pytest.approx(
        {"a car": 0.0, "a boat": 0.5, "a plane": 0.5, "a train": 0.0}
    )
    assert choice_probabilities(None, list(YN)) is None
    assert choice_probabilities((TokenLogprob(token="Maybe", logprob=-0.1),), list(YN)) is None


@pytest.mark.parametrize(
    "answer, choices",
    [
        # an answer that offers another choice as an alternative names none (each read as the first before)
        ("yes/no", YN),
        ("Yes or no", YN),
        ("Yes | No", YN),
        ("Yes/No: yes", YN),
        ("Yes.\nNo.", YN),
        ("yes, no", YN),
        ("red/blue", ["red", "blue", "green"]),
        ("red or blue", ["red", "blue", "green"]),
    ],
)
def test_an_answer_listing_two_choices_names_none(answer, choices):
    assert resolve(answer, choices) is None


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Yes (not no)", 0),
        ("Yes, there is no dog", 0),
        ("No. No cat is visible.", 1),
        ("Yes, no doubt", 0),
        ("`no`", 1),
        ("**Yes.**", 0),
        ("```\nno\n```", 1),
    ],
)
def test_a_choice_followed_by_prose_that_mentions_another_is_still_read(answer, expected):
    assert resolve(answer, list(YN)) == expected


def test_the_article_a_is_not_the_probability_of_choice_a():
    """Answer "a cat" to choices (a) a dog / (b) a cat: the first token "a" is the article, not the letter."""
    animals = ["a dog", "a cat"]
    lp = (
        TokenLogprob(token="a", logprob=math.log(0.9), top=(("a", math.log(0.9)), ("b", math.log(0.1)))),
        TokenLogprob(token=" cat", logprob=math.log(0.6), top=((" cat", math.log(0.6)), (" dog", math.log(0.4)))),
    )
    assert resolve("a cat", animals) == 1
    assert choice_probabilities(lp, animals, "a cat") is None  # it gave (a) a dog 0.9 before
    letter = (TokenLogprob(token="b", logprob=math.log(0.8), top=(("b", math.log(0.8)), ("a", math.log(0.2)))),)
    assert choice_probabilities(letter, animals, "b") == pytest.approx({"a cat": 0.8, "a dog": 0.2})


@pytest.mark.parametrize(
    "answer",
    ["yes, but actually no", "Yes. Wait, no!", "YES... no", "no, on second look yes", "Yes; however the answer is no."],
)
def test_an_answer_giving_both_yes_and_no_is_ambiguous_not_its_first_word(answer):
    assert resolve(answer, list(YN)) is None


def test_quoted_text_is_not_part_of_the_answer():
    assert resolve('"Is there no dog?" yes', list(YN)) == 0
    assert resolve('Yes - the question "is it red or blue?" asks about colour', ["red", "blue", "yes"]) == 2
    assert resolve("red; on second look blue", ["red", "blue"]) is None
    assert resolve("red with a blue stripe", ["red", "blue"]) == 0
    assert resolve("dark red", ["red", "dark red"]) == 1
