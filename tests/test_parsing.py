import time

import pytest

from autorater_pipelines.evaluation.json_extraction import JSONExtractionError, extract_json, extract_json_values


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
