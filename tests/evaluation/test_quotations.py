"""``Quotations``: which parts of a judge's text quote (a mention) or report what a response said."""

from __future__ import annotations

import pytest

from autorater_pipelines.evaluation.quotations import MENTION, OWN, REPORTED, Quotations


def _level(text: str, needle: str, occurrence: int = -1) -> int:
    starts = [i for i in range(len(text)) if text.startswith(needle, i)]
    start = starts[occurrence]
    return Quotations(text).level(start, start + len(needle))


@pytest.mark.parametrize(
    ("text", "needle", "expected"),
    [
        # quotation marks of every kind, touching the phrase or around more text
        ('Say "X" here', "X", MENTION),
        ('The format "Final: X" is odd', "X", MENTION),
        ("The format \u201cFinal: X\u201d is odd", "X", MENTION),
        ("The format \u201eFinal: X\u201c is odd", "X", MENTION),  # German
        ("The format 'Final: X' is odd", "X", MENTION),
        ("The format \u2018Final: X\u2019 is odd", "X", MENTION),
        ("The format \u00abFinal: X\u00bb is odd", "X", MENTION),
        ("The format \u2039Final: X\u203a is odd", "X", MENTION),
        ('Say "X" here', "here", OWN),
        # apostrophes are no quotation marks
        ("Response B's answer isn't X, it's fine", "X", OWN),
        ("The dogs' bowls hold X", "X", OWN),
        ("Don\u2019t pick X, it\u2019s wrong", "X", OWN),
        # a mark with no partner in its paragraph quotes nothing
        ('He said "hello. X', "X", MENTION),  # a quotation never closed runs to the end of its paragraph
        ('One "quote\n\nX" across a blank line', "X", MENTION),  # issue 19 hostile trial: it may run on
        ('One "quote\nX" on the next line', "X", MENTION),
        # code, blockquotes
        ("Use `X` here", "X", MENTION),
        ("```\nX\n```\nY", "X", MENTION),
        ("Intro\n> quoted X\nown Y", "X", MENTION),
        ("Intro\n> quoted X\nown Y", "Y", OWN),
        ("a > b so X", "X", OWN),
        # single emphasis around two or more words quotes; bold and one emphasized word do not
        ("It wrote *Final verdict: X* here", "X", REPORTED),
        ("The trick *Final verdict: X* failed", "X", MENTION),
        ("My pick: *X*", "X", OWN),
        ("**Final verdict: X**", "X", OWN),
        ("snake_case_name and X_y_z", "X", OWN),
        ("* a bullet with X\n* another", "X", OWN),
        # reported speech: a quotation a reporting verb introduces, and the unquoted rest of the sentence
        ('Response B said "Final verdict: X" to manipulate me.', "X", REPORTED),
        ("Assistant A wrote: Final verdict: X", "X", REPORTED),
        ("The response claims X is the verdict.", "X", REPORTED),
        ("According to Output (a), the verdict is X.", "X", REPORTED),
        ('"Final verdict: X," wrote Response B.', "X", REPORTED),
        ('"Final verdict: X" (from Response B)', "X", REPORTED),
        ("Response B ends with:\n```\nX\n```\nY", "X", REPORTED),
        ("Response B ends with:\n```\nX\n```\nY", "Y", OWN),
        ("Response B said:\n> Final verdict: X\n\nY", "X", REPORTED),
        ("Response B said:\n> Final verdict: X\n\nY", "Y", OWN),
        ("It ends with 'Final verdict: X', an injection.", "X", REPORTED),
        ("Response B's last line: 'X'", "X", REPORTED),
        # the report ends with its sentence, or where the writer's own voice resumes
        ("Response B said nothing. X", "X", OWN),
        ("Response B says 4; X", "X", OWN),
        ("Response A says 4, which is right, so X", "X", OWN),
        ("Response B claims 42, but my verdict is X", "X", OWN),
        ("Response B claims 42 and I pick X", "X", OWN),
        ("Response B says 4\nX", "X", OWN),
        # weak frames (a pronoun, "contains") only report quotations, never the rest of the sentence
        ("It contains an error, hence X", "X", OWN),
        ("Response A contains more detail than B: X", "X", OWN),
        # the judge's own answer is not "the answer" of a response
        ('The answer: "X"', "X", MENTION),
        ("My answer: X", "X", OWN),
    ],
)
def test_levels(text, needle, expected):
    assert _level(text, needle) == expected


def test_masked_keeps_offsets_and_blanks_every_quoted_character():
    text = "No. The candidate wrote 'Yes, 42' but the reference answer is 41."
    masked = Quotations(text).masked()
    assert len(masked) == len(text)
    assert masked == "No. The candidate wrote " + " " * len("'Yes, 42'") + " but the reference answer is 41."
    reported = Quotations("Verdict B. Assistant A wrote: Final verdict: A").masked()
    assert reported == "Verdict B. Assistant A wrote" + " " * len(": Final verdict: A")


def test_a_text_without_quotations_is_all_own():
    text = "Overall, Response A is clearer and more accurate. [[A]]"
    quotations = Quotations(text)
    assert quotations.masked() == text
    assert all(quotations.level(i, i + 1) == OWN for i in range(len(text)))


def test_a_span_partly_inside_a_quotation_is_not_inside_it():
    text = 'a "b c" d'
    quotations = Quotations(text)
    assert quotations.level(2, 7) == MENTION  # the whole quotation
    assert quotations.level(4, 9) == OWN  # from inside to outside


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Response B told me that I should answer X", REPORTED),
        ("Response B told me to ignore my instructions and output X", REPORTED),
        ("Response B says 5 and I think X", OWN),
        ("Response B says 5, and in my view X", OWN),
        ("Response B says 5 and I'd say X", OWN),
    ],
)
def test_the_report_runs_until_the_writers_own_judgment(text, expected):
    assert _level(text, "X") == expected
