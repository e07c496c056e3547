"""Validator replies in the Vertex AI Gecko sample's block format, next to our JSON answers."""

import pytest

from autorater_pipelines.gecko.answer_matching import normalize
from autorater_pipelines.gecko.replies import ReplyError, normalize_question, parse_blocks, parse_reply

QUESTIONS = [("q1", "Is there a cup of coffee?"), ("q2", "Is the coffee steaming?"), ("q3", "Is there a croissant?")]

BLOG_REPLY = """<question>
Question: Is there a cup of coffee?
Verdict: yes
</question>
<question>
Question: Is the coffee steaming?
Verdict: yes
</question>
<question>
Question: Is there a croissant?
Verdict: no
</question>"""


def test_blog_blocks_are_read_in_order_with_the_echo_checked():
    read = parse_reply(BLOG_REPLY, QUESTIONS)
    assert read.format == "blocks"
    assert read.answers == {"q1": "yes", "q2": "yes", "q3": "no"}
    assert read.problems == {}


def test_plain_verdict_lines_markdown_and_a_verdict_on_the_next_line():
    text = "Here is what I see.\nVerdict: yes\n**Verdict:** No\nVerdict:\n  yes\n"
    assert parse_reply(text, QUESTIONS).answers == {"q1": "yes", "q2": "No", "q3": "yes"}
    text = "Question: Is there a cup of coffee? Verdict: yes\nQuestion: Is the coffee steaming?\nVerdict: no"
    read = parse_reply(text, QUESTIONS[:2])
    assert read.answers == {"q1": "yes", "q2": "no"}


def test_blocks_naming_question_ids_are_matched_by_id_in_any_order():
    text = (
        '<question id="q3">Question: Is there a croissant?\nVerdict: no</question>\n'
        "<question>Question ID: q1\nQuestion: Is there a cup of coffee?\nVerdict: yes</question>\n"
        "<question>Question: [q2] Is the coffee steaming?\nVerdict: yes</question>"
    )
    assert parse_reply(text, QUESTIONS).answers == {"q1": "yes", "q2": "yes", "q3": "no"}


def test_reordered_blocks_are_matched_by_their_echo_never_by_position():
    text = (
        "<question>Question: Is there a croissant?\nVerdict: no</question>"
        "<question>Question: is there a CUP of coffee\nVerdict: yes</question>"
        "<question>Question: Is the coffee steaming?\nVerdict: yes</question>"
    )
    assert parse_reply(text, QUESTIONS).answers == {"q1": "yes", "q2": "yes", "q3": "no"}


def test_an_echo_of_another_question_leaves_that_question_unanswered():
    text = (
        "<question>Question: Is there a cup of coffee?\nVerdict: yes</question>"
        "<question>Question: Is there a plate?\nVerdict: yes</question>"
        "<question>Question: Is there a croissant?\nVerdict: no</question>"
    )
    read = parse_reply(text, QUESTIONS)
    assert read.answers == {"q1": "yes", "q3": "no"}
    kind, reason = read.problems["q2"]
    assert kind == "unmatched_answer" and "'Is there a plate?'" in reason


def test_a_count_mismatch_never_hands_a_verdict_to_the_wrong_question():
    # Two blocks for three questions: only blocks whose echo names exactly one question are used.
    text = (
        "<question>Question: Is the coffee steaming?\nVerdict: no</question>"
        "<question>Verdict: yes</question>"  # no echo: cannot be placed
    )
    read = parse_reply(text, QUESTIONS)
    assert read.answers == {"q2": "no"}
    assert set(read.problems) == {"q1", "q3"}
    kind, reason = read.problems["q1"]
    assert kind == "unmatched_answer" and "2 block(s) for 3 question(s)" in reason
    # Plain verdict lines without echoes and the wrong count: nothing is guessed.
    read = parse_reply("Verdict: yes\nVerdict: no", QUESTIONS)
    assert read.answers == {} and set(read.problems) == {"q1", "q2", "q3"}


def test_duplicate_question_texts_do_not_collide():
    questions = [("q1", "Is there a dog?"), ("q2", "Is the dog brown?"), ("q3", "Is there a dog?")]
    text = (
        "<question>Question: Is there a dog?\nVerdict: yes</question>"
        "<question>Question: Is the dog brown?\nVerdict: no</question>"
        "<question>Question: Is there a dog?\nVerdict: no</question>"
    )
    # By order, each copy keeps its own verdict (the Vertex sample's dict keyed by text keeps only the last).
    assert parse_reply(text, questions).answers == {"q1": "yes", "q2": "no", "q3": "no"}
    # With a block missing, an echo shared by two questions identifies neither.
    read = parse_reply(text.rsplit("<question>", 1)[0], questions)
    assert read.answers == {"q2": "no"} and set(read.problems) == {"q1", "q3"}


def test_unknown_ids_and_conflicting_blocks_are_reasons_not_answers():
    text = (
        '<question id="q9">Question: Is there a cup of coffee?\nVerdict: yes</question>'
        '<question id="q2">Verdict: yes</question><question id="q2">Verdict: no</question>'
    )
    read = parse_reply(text, QUESTIONS[:2])
    assert read.answers == {}
    assert "'q9', which was not asked" in read.problems["q1"][1]
    assert read.problems["q2"][0] == "ambiguous_answer" and "different verdicts" in read.problems["q2"][1]


def test_unclosed_tags_and_choices_in_the_echo():
    text = "<question>Question: Is there a cup of coffee?<choices>yes,no\nVerdict: yes\n<question>Verdict: no"
    assert [b.echo for b in parse_blocks(text)] == ["Is there a cup of coffee?", None]
    assert parse_reply(text, QUESTIONS[:2]).answers == {"q1": "yes", "q2": "no"}


def test_json_answers_are_still_read_and_other_text_is_an_error():
    read = parse_reply('{"answers": [{"question_id": "q2", "answer": "no"}]}', QUESTIONS[:2])
    assert read.format == "json" and read.answers == {"q2": "no"}
    assert read.problems["q1"][0] == "missing_question"
    with pytest.raises(ReplyError, match="'<question> … Verdict: …' blocks"):
        parse_reply("I cannot see any image.", QUESTIONS)


def test_normalize_question():
    assert normalize_question("  Is the  coffee STEAMING ? ") == normalize_question("is the coffee steaming")
    assert normalize_question("Is there a dog?") != normalize_question("Is there a dot?")


def test_a_json_reply_whose_justification_says_verdict_is_read_as_json():
    """Break-it trial: "My initial verdict: no" inside a JSON justification turned a yes into a no."""
    two = [("q1", "Is there a circle?"), ("q2", "Is the circle red?")]
    text = (
        '{"answers": [{"question_id": "q1", "answer": "yes", "justification": "My initial verdict: no, but the '
        'circle is clearly visible."}, {"question_id": "q2", "answer": "no", "justification": "It is blue."}]}'
    )
    read = parse_reply(text, two)
    assert read.format == "json"
    assert read.answers == {"q1": "yes", "q2": "no"}


def test_a_block_whose_id_contradicts_its_echoed_question_gets_no_verdict():
    """Break-it trial: a block naming q2 but repeating q1's question must not give q2 that verdict."""
    two = [("q1", "Is there a circle?"), ("q2", "Is the circle red?")]
    text = '<question id="q2"> Question: Is there a circle? Verdict: yes </question>'
    read = parse_reply(text, two)
    assert "q2" not in read.answers
    assert "repeats the question" in read.problems["q2"][1]


def test_a_quoted_example_verdict_in_a_preamble_is_not_an_answer():
    text = (
        'I will answer each question with "Verdict: no" or "Verdict: yes" as asked.\n\n'
        "Is there a cup of coffee?\nVerdict: yes\n\nIs the coffee steaming?\nVerdict: no\n\n"
        "Is there a croissant?\nVerdict: yes"
    )
    read = parse_reply(text, QUESTIONS)
    assert read.answers == {"q1": "yes", "q2": "no", "q3": "yes"} and read.problems == {}
    # A reply whose only verdict is quoted still answers.
    assert normalize(parse_reply('"Verdict: yes"', QUESTIONS[:1]).answers["q1"]) == "yes"


def test_unanswered_questions_are_missing_unless_an_answer_could_not_be_placed():
    # JSON answers to q1 only: q2 and q3 are not answered at all.
    read = parse_reply('{"answers": [{"question_id": "q1", "answer": "yes"}]}', QUESTIONS)
    assert {q: k for q, (k, _) in read.problems.items()} == {"q2": "missing_question", "q3": "missing_question"}
    # An answer under an id that was not asked may be meant for q2: unmatched, never missing nor guessed.
    read = parse_reply(
        '{"answers": [{"question_id": "q1", "answer": "yes"}, {"question_id": 7, "answer": "no"}]}', QUESTIONS
    )
    kind, reason = read.problems["q2"]
    assert kind == "unmatched_answer" and "['7'] that were not asked" in reason
    # Blocks that each echo another question: the question left over is missing.
    text = "<question>Question: Is there a cup of coffee?\nVerdict: yes</question>"
    read = parse_reply(text, QUESTIONS)
    assert read.answers == {"q1": "yes"}
    assert {q: k for q, (k, _) in read.problems.items()} == {"q2": "missing_question", "q3": "missing_question"}
    # {"answers": {id: answer}} is read like the list form.
    assert parse_reply('{"answers": {"q1": "no", "q2": "yes"}}', QUESTIONS[:2]).answers == {"q1": "no", "q2": "yes"}


def test_two_verdict_lines_under_one_untagged_question_make_only_that_question_ambiguous():
    text = (
        "Is there a cup of coffee?\nVerdict: yes\nVerdict: no\n\n"
        "Is the coffee steaming?\nVerdict: yes\n\nIs there a croissant?\nVerdict: no"
    )
    read = parse_reply(text, QUESTIONS)
    assert read.answers == {"q2": "yes", "q3": "no"}  # was: the whole row unparseable (4 blocks for 3 questions)
    assert read.problems["q1"][0] == "ambiguous_answer"
