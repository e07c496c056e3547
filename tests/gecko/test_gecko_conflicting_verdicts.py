"""A validator reply that answers one question twice with different verdicts gives that question no verdict."""

import json

import pytest

from autorater_pipelines.gecko import Validator, parse_all_answers, score, validate
from autorater_pipelines.gecko.replies import parse_reply

QUESTIONS = [("q1", "Is there a cat?"), ("q2", "Is the cat black?")]


@pytest.mark.parametrize(
    "text, given",
    [
        # one tagged block, two Verdict lines: the first used to win
        ("<question>\nQuestion: Is there a cat?\nVerdict: yes\nVerdict: no\n</question>", "['yes', 'no']"),
        # a correction after the justification
        (
            "<question>\nQuestion: Is there a cat?\nVerdict: **Yes**\nJustification: a cat-shaped cloud.\n"
            "Final verdict: No\n</question>",
            "['Yes', 'No']",
        ),
        # the verdict on the next line, then another
        ("<question>Question: Is there a cat?\nVerdict:\n  no\nVerdict: yes</question>", "['no', 'yes']"),
        # no tags: a Verdict line that names no question after the question's block
        ("Question: Is there a cat?\nVerdict: yes\nVerdict: no", "['yes', 'no']"),
    ],
)
def test_two_verdicts_in_one_block_that_disagree_give_no_verdict(text, given):
    read = parse_reply(text, QUESTIONS[:1])
    assert read.answers == {}
    kind, reason = read.problems["q1"]
    assert kind == "ambiguous_answer"
    assert reason == f"one answer block with different verdicts {given}: no verdict taken"


def test_verdicts_that_agree_after_normalization_are_one_answer():
    text = "<question>\nQuestion: Is there a cat?\nVerdict: yes\nJustification: a tabby.\nFinal verdict: **Yes.**\n"
    assert parse_reply(text + "</question>", QUESTIONS[:1]).answers == {"q1": "yes"}


def test_a_stray_verdict_is_charged_to_its_question_not_handed_to_the_next():
    text = "Question: Is there a cat?\nVerdict: yes\nVerdict: no\nQuestion: Is the cat black?\nVerdict: yes"
    read = parse_reply(text, QUESTIONS)
    assert read.answers == {"q2": "yes"}
    assert read.problems["q1"][0] == "ambiguous_answer"


def test_bare_verdict_lines_are_still_read_by_order():
    assert parse_reply("Verdict: yes\nVerdict: no", QUESTIONS).answers == {"q1": "yes", "q2": "no"}


@pytest.mark.parametrize(
    "text",
    [
        # a draft code block and a corrected one: the first used to win
        '```json\n{"answers": [{"question_id": "q1", "answer": "yes"}]}\n```\nWait, looking again:\n'
        '```json\n{"answers": [{"question_id": "q1", "answer": "no"}]}\n```',
        # two answers for q1 in one object
        '{"answers": [{"question_id": "q1", "answer": "yes"}, {"question_id": "q1", "answer": "No"}]}',
        # a fenced answer and a different one in the prose after it
        '```json\n{"q1": "yes"}\n```\nOn reflection: {"q1": "no"}',
        # an answers object in prose, then a {question_id: answer} object
        'My answers: {"answers": [{"question_id": "q1", "answer": "yes"}]} and in short {"q1": "no"}',
    ],
)
def test_json_answers_that_disagree_give_no_verdict(text):
    read = parse_reply(text, QUESTIONS[:1])
    assert read.answers == {}
    assert read.problems["q1"][0] == "ambiguous_answer"
    assert "no verdict taken" in read.problems["q1"][1]
    assert parse_all_answers(text, ["q1"]) == {}


def test_json_answers_that_agree_in_two_blocks_are_one_answer():
    text = '```json\n{"q1": "yes"}\n```\n```json\n{"answers": [{"question_id": "q1", "answer": "Yes"}]}\n```'
    assert parse_reply(text, QUESTIONS[:1]).answers == {"q1": "yes"}


QAS = [
    {"question_id": "q1", "question": "Is there a cat?", "question_type": "animal", "choices": ["yes", "no"]}
    | {"answer": "yes", "dependencies": [], "keyword_id": None},
    {"question_id": "q2", "question": "Is the cat black?", "question_type": "color", "choices": ["yes", "no"]}
    | {"answer": "no", "dependencies": [], "keyword_id": None},
]


def test_validation_and_scoring_count_the_contradicted_question_as_unparseable(tmp_path):
    reply = (
        "<question>\nQuestion: Is there a cat?\nVerdict: yes\nVerdict: no\n</question>\n"
        "<question>\nQuestion: Is the cat black?\nVerdict: no\n</question>"
    )
    replay = tmp_path / "v.jsonl"
    replay.write_text(json.dumps({"id": "r0", "response": reply}) + "\n")
    rows = [{"id": "r0", "image": "gs://bucket/cat.png", "keywords": None, "qas": QAS, "rubric_warnings": []}]
    result = validate(
        rows,
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=Validator.of(
            model=f"replay/{replay}",
            parameters={"progress": False, "cache_dir": "off"},
            prompt_template="{image}\n{rubrics}\nAnswer as <question>Question: …\nVerdict: …</question>",
        ),
    )
    (row,) = result.rows
    assert row["answers"]["q1"][0]["error"]["kind"] == "ambiguous_answer"
    assert row["answers"]["q2"][0]["verdict"] == "no"
    scored = score(result.rows, id_columns=["id"])
    (only,) = scored.results
    by_id = {qa["question_id"]: qa for qa in only["qa_results"]}
    assert by_id["q1"]["status"] == "unparseable" and by_id["q1"]["score"] is None
    assert by_id["q1"]["error"]["kind"] == "ambiguous_answer"
    assert only["final_score"] == 1.0  # q2 alone (unparseable_answer_policy=skip)
    assert scored.metrics["parse_failures"] == 1


def test_an_item_whose_answer_and_verdict_fields_disagree_gives_no_verdict():
    text = '{"answers": [{"question_id": "q1", "answer": "yes", "verdict": "no"}]}'
    assert parse_reply(text, QUESTIONS[:1]).problems["q1"][0] == "ambiguous_answer"
    agree = '{"answers": [{"question_id": "q1", "answer": "yes", "verdict": "Yes"}]}'
    assert parse_reply(agree, QUESTIONS[:1]).answers == {"q1": "yes"}
