"""A validator's leading verdict word, with the other word only inside a quotation, is the leading one.

Issue 19: "No. The candidate wrote 'Yes, 42' but the reference answer is 41." was unparseable (the question left
the score), though its verdict is the leading "No" and "Yes" is inside quotes.
"""

import json

import pytest

from autorater_pipelines.gecko import Validator, score, validate
from autorater_pipelines.gecko.answer_matching import resolve
from autorater_pipelines.gecko.replies import ReplyError, parse_reply

YN = ["yes", "no"]
ANSWER = "No. The candidate wrote 'Yes, 42' but the reference answer is 41."


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (ANSWER, "no"),
        ('No. The candidate wrote "Yes, 42" but the reference answer is 41.', "no"),
        ("No. The candidate wrote \u2018Yes, 42\u2019 but the reference answer is 41.", "no"),
        ("No. The candidate wrote \u201cYes, 42\u201d but the reference answer is 41.", "no"),
        ("No. The candidate wrote \u00abYes, 42\u00bb but the reference answer is 41.", "no"),
        ("No, the label `yes` is wrong.", "no"),
        ("No. The candidate wrote Yes, 42.", "no"),  # reported speech, unquoted
        ("Yes. The caption says \u201cno dog\u201d, but there is one.", "yes"),
        ("Yes, the dog's tail says 'no entry'.", "yes"),  # an apostrophe is no quotation mark
        # the verdict itself quoted: read as written when nothing outside the quotation names a choice
        ("'Yes', there is a dog.", "yes"),
        ('"no"', "no"),
        # the other word outside quotes: still ambiguous, never the first word
        ("No. The candidate wrote 'Yes, 42'. Yes, it is right.", None),
        ("yes, but actually no", None),
        ("'Yes' or 'no'?", None),
    ],
)
def test_the_leading_verdict_is_read_when_the_other_one_is_only_quoted(answer, expected):
    index = resolve(answer, YN)
    assert (None if index is None else YN[index]) == expected


QUESTIONS = [("q1", "Is the answer 42?")]
QAS = [
    {"question_id": "q1", "question": "Is the answer 42?", "question_type": "other", "choices": ["yes", "no"]}
    | {"answer": "no", "dependencies": [], "keyword_id": None}
]


@pytest.mark.parametrize(
    "reply",
    [
        f"<question>\nQuestion: Is the answer 42?\nVerdict: {ANSWER}\n</question>",
        json.dumps({"answers": [{"question_id": "q1", "answer": ANSWER}]}),
    ],
    ids=["blocks", "json"],
)
def test_a_reply_quoting_the_other_verdict_is_scored_end_to_end(reply, tmp_path):
    assert resolve(parse_reply(reply, QUESTIONS).answers["q1"], YN) == 1
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
    scored = score(result.rows, id_columns=["id"])
    (only,) = scored.results
    (qa,) = only["qa_results"]
    assert (qa["status"], qa["verdict"], qa["score"]) == ("scored", "no", 1.0)
    assert scored.metrics["parse_failures"] == 0


def test_a_verdict_label_a_reply_reports_from_someone_else_is_not_an_answer():
    text = 'The candidate wrote "Verdict: yes", which I do not trust.\n\nIs the answer 42?\nVerdict: no'
    assert parse_reply(text, QUESTIONS).answers == {"q1": "no"}
    with pytest.raises(ReplyError, match=r"^no JSON answers found in model output starting 'The candidate wrote"):
        parse_reply('The candidate wrote "Verdict: yes".', QUESTIONS)
