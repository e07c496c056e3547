import json
import logging

import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import (
    RubricError,
    keyword_coverage,
    normalize_supplied_rubric,
    parse_dependencies,
    parse_generated_rubric,
    parse_keywords,
    parse_supplied_rubrics,
)
from autorater_pipelines.gecko.rubrics import MAX_QUESTIONS_PER_RUBRIC, normalize_generated_rubric

IMAGE_RUBRIC = {
    "keywords": "{1}[Two] {2}[brown] {3}[dogs] on a {4}[sofa]",
    "qas": [
        {"keyword_id": 1, "question": "Are there two dogs?", "question_type": "counting", "answer": "yes"},
        {"keyword_id": 2, "question": "Are the dogs brown?", "question_type": "color", "answer": "Yes"},
        {"keyword_id": 3, "question": "Are there dogs?", "question_type": "animal", "answer": "yes"},
    ],
}


def test_keywords_markup_and_coverage():
    assert parse_keywords("A {1}[red] {2}[bicycle] at {10}[ sunset ]") == {1: "red", 2: "bicycle", 10: "sunset"}
    assert parse_keywords("no markup") == {}
    assert parse_keywords(None) == {}
    qas = [{"keyword_id": 1}, {"keyword_id": 1}, {"keyword_id": None}]
    assert keyword_coverage("{1}[a] {2}[b]", qas) == 0.5
    assert keyword_coverage("plain prompt", qas) is None


@pytest.mark.parametrize(
    ("value", "parents", "warned"),
    [
        (None, [], False),
        ("0", [], False),
        (0, [], False),
        ("", [], False),
        ("1,2", ["1", "2"], False),
        ("1, 2 ,3", ["1", "2", "3"], False),
        (2, ["2"], False),
        (2.0, ["2"], False),
        ([1, "q3"], ["1", "q3"], False),
        ("1, outside", ["1"], True),  # DSG TIFA160 tifa160_67 proposition 8
        ("1,1", ["1"], False),
    ],
)
def test_parse_dependencies(value, parents, warned):
    got, warnings = parse_dependencies(value)
    assert got == parents
    assert bool(warnings) == warned
    if warned:
        assert "'outside'" in warnings[0]


def test_generated_image_rubric_with_prose_fences_and_trailing_commas():
    text = "Sure! Here is the rubric:\n```json\n" + json.dumps(IMAGE_RUBRIC)[:-2] + ",],}\n```\nHope it helps."
    rubric = parse_generated_rubric(text, media_type="image")
    assert [qa["question_id"] for qa in rubric["qas"]] == ["q1", "q2", "q3"]
    assert all(qa["choices"] == ["yes", "no"] and qa["answer"] == "yes" for qa in rubric["qas"])
    assert [qa["keyword_id"] for qa in rubric["qas"]] == [1, 2, 3]
    assert keyword_coverage(rubric["keywords"], rubric["qas"]) == 0.75


def test_generated_question_type_outside_the_list_is_kept_as_other_with_a_warning():
    data = {
        "keywords": "{1}[a cat]",
        "qas": [{"keyword_id": 1, "question": "Is there a cat?", "question_type": "feline", "answer": "yes"}],
    }
    rubric = parse_generated_rubric(json.dumps(data), media_type="image")
    assert rubric["qas"][0]["question_type"] == "other"
    assert any("'feline'" in w and "'other'" in w for w in rubric["rubric_warnings"])


def test_generated_video_rubric_letters_become_choice_texts():
    data = {
        "keywords": "A {1}[red] kite",
        "qas": [
            {
                "keyword_id": 1,
                "question": "What color is the kite?",
                "question_type": "color",
                "choices": {"a": "green", "b": "red", "c": "yellow", "d": "black"},
                "answer": "b",
            },
            {"keyword_id": 1, "question": "Bad one", "choices": {"a": "x", "b": "y"}, "answer": "e"},
        ],
    }
    rubric = parse_generated_rubric(json.dumps(data), media_type="video")
    assert len(rubric["qas"]) == 1
    qa = rubric["qas"][0]
    assert qa["choices"] == ["green", "red", "yellow", "black"] and qa["answer"] == "red"
    assert any("dropped" in w and "'e'" in w for w in rubric["rubric_warnings"])


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I cannot help with that.", "unparseable_rubric"),
        ('{"keywords": "x", "qas": []}', "empty_rubric"),
        ('{"keywords": "x", "qas": [{"question": "", "answer": "yes"}]}', "empty_rubric"),
        ('{"keywords": "x"}', "invalid_rubric"),
        (None, "unparseable_rubric"),
    ],
)
def test_generated_rubric_failures_never_give_an_empty_rubric(text, kind):
    with pytest.raises(RubricError) as info:
        parse_generated_rubric(text, media_type="image")
    assert info.value.kind == kind


def test_supplied_rubric_keeps_own_question_types_and_ids():
    rubric = normalize_supplied_rubric(
        json.dumps(
            {
                "qas": [
                    {
                        "question_id": 1,
                        "question": "is this a surfer?",
                        "question_type": "animal/human",
                        "choices": ["yes", "no"],
                        "answer": "yes",
                    },
                    {
                        "question_id": 2,
                        "question": "what is it?",
                        "choices": ["surfer", "swimmer"],
                        "answer": "Surfer",
                        "dependencies": "1",
                    },
                    {"question": "is it sunny?", "answer": "no"},
                    {"question": "what text is shown?", "answer": "OPEN"},
                ]
            }
        )
    )
    qas = rubric["qas"]
    assert [qa["question_id"] for qa in qas] == ["1", "2", "q3", "q4"]
    assert qas[0]["question_type"] == "animal/human"
    assert qas[1]["answer"] == "surfer" and qas[1]["dependencies"] == ["1"]
    assert qas[2]["choices"] == ["yes", "no"] and qas[2]["question_type"] == "other"
    assert qas[3]["choices"] == [] and qas[3]["answer"] == "OPEN"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{not json", "rubric is not JSON"),
        ('{"questions": []}', "'qas' list"),
        ([], "no questions"),
        ([{"question": "q?", "choices": ["a", "b"], "answer": "c"}], "not one of the choices"),
        ([{"question": "q?"}], "no expected answer"),
        (
            [
                {"question_id": 1, "question": "a?", "answer": "yes"},
                {"question_id": "1", "question": "b?", "answer": "no"},
            ],
            "duplicate question_id",
        ),
        (["just text"], "not an object"),
    ],
)
def test_bad_supplied_rubrics(value, message):
    with pytest.raises(RubricError, match=message):
        normalize_supplied_rubric(value)


def test_parse_supplied_rubrics_routes_bad_rows_to_errors(caplog):
    rows = [
        {
            "id": 1,
            "rubric": [
                {"question_id": 1, "question": "a?", "answer": "yes"},
                {"question_id": 2, "question": "b?", "answer": "yes", "dependencies": "1, outside"},
            ],
        },
        {"id": 2, "rubric": "not json at all"},
        {"id": 3, "rubric": None},
    ]
    with caplog.at_level(logging.WARNING):
        result = parse_supplied_rubrics(rows, id_columns=["id"], rubrics_column="rubric")
    assert [r["id"] for r in result.rows] == [1]
    assert "rubric" not in result.rows[0]
    assert result.rows[0]["qas"][1]["dependencies"] == ["1"]
    assert "outside" in caplog.text
    assert [(e["id"], e["stage"], e["error_kind"]) for e in result.errors] == [
        (2, "rubrics", "invalid_rubric"),
        (3, "rubrics", "missing_rubric"),
    ]


def test_parse_supplied_rubrics_checks_columns_and_ids():
    with pytest.raises(InputError, match="column 'rubric' .rubrics_column. is not in the dataset"):
        parse_supplied_rubrics([{"id": 1}], id_columns=["id"], rubrics_column="rubric")
    with pytest.raises(InputError, match="duplicate id"):
        parse_supplied_rubrics([{"id": 1, "r": []}, {"id": 1, "r": []}], id_columns=["id"], rubrics_column="r")
    with pytest.raises(InputError, match="id_columns must be a non-empty list"):
        parse_supplied_rubrics([{"id": 1, "r": []}], id_columns="id", rubrics_column="r")


def test_supplied_question_types_are_kept_verbatim():
    rubric = normalize_supplied_rubric([{"question": "q?", "answer": "yes", "question_type": " Entity/Whole "}])
    assert rubric["qas"][0]["question_type"] == "Entity/Whole"


def test_a_truncated_generated_rubric_keeps_its_complete_questions():
    # Found by the hostile trial: a reply cut off at max tokens lost every question with "no JSON dict found".
    full = {
        "keywords": "A {1}[red] {2}[circle] on a {3}[white background]",
        "qas": [
            {"keyword_id": 1, "question": "Is the shape red?", "question_type": "color", "answer": "yes"},
            {"keyword_id": 2, "question": "Is there a circle?", "question_type": "shape", "answer": "yes"},
            {"keyword_id": 3, "question": "Is the background white?", "question_type": "color", "answer": "yes"},
        ],
    }
    text = json.dumps(full)
    cut = text[: text.index("Is the background") + 6]  # stops inside the third question
    rubric = parse_generated_rubric("Here you go:\n```json\n" + cut, media_type="image")
    assert [q["question"] for q in rubric["qas"]] == ["Is the shape red?", "Is there a circle?"]
    assert rubric["keywords"] == full["keywords"]
    assert any("cut off" in w and "kept its 2 complete question(s)" in w for w in rubric["rubric_warnings"])


def test_a_rubric_cut_off_before_any_complete_question_says_so():
    with pytest.raises(RubricError, match=r"the reply was cut off before its JSON ended .* raise it") as info:
        parse_generated_rubric('{"keywords": "A {1}[red] circle", "qas": [{"question": "Is it', media_type="image")
    assert info.value.kind == "unparseable_rubric"


def test_a_generated_rubric_asking_the_same_question_twice_is_refused():
    generated = {
        "keywords": "a {1}[cat]",
        "qas": [{"question": "Is there a cat?", "answer": "yes"}, {"question": "is there a CAT", "answer": "no"}],
    }
    with pytest.raises(
        RubricError, match=r"generated rubric asks the same question twice: q2 repeats q1 \('is there a CAT'\)"
    ):
        normalize_generated_rubric(generated, media_type="image")
    # Supplied (ground truth) rubrics may ask it once per entity, as DSG TIFA160 does for two women: kept, noted.
    supplied = [{"question": "Is there a woman?", "answer": "yes"}, {"question": "Is there a woman?", "answer": "yes"}]
    rubric = normalize_supplied_rubric(supplied)
    assert [q["question_id"] for q in rubric["qas"]] == ["q1", "q2"]
    note = "question q2 repeats q1 ('Is there a woman?'): same text, kept and scored on its own"
    assert note in rubric["rubric_warnings"]


def test_questions_per_rubric_are_bounded():
    qas = [{"question": f"Is there thing {i}?", "answer": "yes"} for i in range(MAX_QUESTIONS_PER_RUBRIC + 1)]
    assert MAX_QUESTIONS_PER_RUBRIC == 100
    with pytest.raises(RubricError, match="101 questions, more than the limit of 100 per rubric"):
        normalize_supplied_rubric(qas)
    with pytest.raises(RubricError, match="generated rubric has 101 questions"):
        normalize_generated_rubric({"keywords": "x", "qas": qas}, media_type="image")
    assert len(normalize_supplied_rubric(qas[:100])["qas"]) == 100
