import time

import pytest

from autorater_pipelines.evaluation.json_extraction import (
    AmbiguousJSONError,
    JSONExtractionError,
    extract_json,
    extract_json_values,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure!\n```json\n{"a": [1, 2,],}\n```\nDone.', {"a": [1, 2]}),
        ('I think {"x": "}"} is right', {"x": "}"}),
        ('{"a": 1,}', {"a": 1}),
    ],
)
def test_extract_json_tolerates_prose_fences_and_trailing_commas(text, expected):
    assert extract_json(text) == expected


def test_extract_json_values_lists_every_object_in_order():
    assert extract_json_values('a {"n": 1} b {"n": 2} c') == [{"n": 1}, {"n": 2}]
    assert extract_json_values("[1, 2] and [3]", expect=list) == [[1, 2], [3]]


@pytest.mark.parametrize("text", ["", "   ", "no json here", "[" * 100_000, "{" * 100_000])
def test_no_json_raises_quickly(text):
    started = time.perf_counter()
    with pytest.raises(JSONExtractionError):
        extract_json(text)
    assert time.perf_counter() - started < 5  # bounded work, generous for a loaded machine


def test_more_than_64_braces_before_the_json_keep_the_verdict():
    # Found by the hostile trial: the extractor used to give up after 64 "{" positions.
    code = "int f() { return 1; }\n" * 200
    text = f"Here is code:\n{code}\nMy verdict: " + '{"choice": "B", "explanation": "x"}'
    assert extract_json_values(text) == [{"choice": "B", "explanation": "x"}]


def test_raw_newline_inside_a_string_is_tolerated():
    text = 'Answer: {"explanation": "line one\nline two", "choice": "A"}'
    assert extract_json(text) == {"explanation": "line one\nline two", "choice": "A"}
    assert extract_json('{"explanation": "tab\there", "choice": "B"}')["choice"] == "B"


@pytest.mark.parametrize(
    "text",
    [
        '{"choice": "A", "choice": "B"}',
        'Final: {"explanation": "e", "choice": "A", "choice": "B"}',
        '```json\n{"choice": "A",\n "choice": "B"}\n```',
    ],
)
def test_duplicate_keys_with_different_values_are_ambiguous(text):
    with pytest.raises(AmbiguousJSONError, match=r"key 'choice' appears more than once with different values"):
        extract_json_values(text)


def test_duplicate_keys_with_the_same_value_are_fine():
    assert extract_json('{"choice": "A", "choice": "A"}') == {"choice": "A"}


def test_prose_quotes_and_stray_braces_before_the_json():
    text = 'A 5" screen {he said "x} is small. {"choice": "A"} and } done'
    assert extract_json_values(text) == [{"choice": "A"}]


@pytest.mark.parametrize(
    "text",
    ['{"a": ' * 20_000 + "x", "{" * 200_000 + '{"choice": "A"', '{"a": "' + "{" * 100_000, "```" * 50_000],
)
def test_adversarial_texts_hold_no_json(text):
    # Work is linear in the text (timed in benchmarks/parsing_worst_case.py): a regression shows there.
    assert extract_json_values(text) == []


def test_values_outside_fences_follow_the_fenced_ones_when_asked():
    text = 'Example:\n```json\n{"choice": "A"}\n```\nAnswer: {"choice": "B"} and [1]'
    assert extract_json_values(text) == [{"choice": "A"}]
    assert extract_json_values(text, outside_fences=True) == [{"choice": "A"}, {"choice": "B"}]


@pytest.mark.parametrize("length", [10, 250, 1_000, 70_000])
def test_values_longer_than_the_decoding_window_are_read_whole(length):
    # issue 19 hostile trial: JSON is decoded in growing windows (linear time); a value of any length, a string
    # running past a window's end, a number or an escape cut by it, still reads as in the whole text
    explanation = "x\\u00e9 " * (length // 8 + 1)
    text = 'Sure: {"explanation": "' + explanation + '", "n": 123456789, "choice": "B"} {"a": "'
    assert extract_json_values(text) == [
        {"explanation": explanation.replace("\\u00e9", "\u00e9"), "n": 123456789, "choice": "B"}
    ]
