"""Free-text and JSON verdicts as judges write them in practice: the verdict read is the judge's, or none.

Each case is an answer shape seen from chat judges. ``None`` = no verdict (a parse error, counted as an
error sample): acceptable for an answer that does not name one verdict; a wrong verdict is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.pairwise import JudgeSettings, parse_verdict_at, parse_verdict_note
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import responses_in_prompt

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

FASTCHAT = {"verdict_pattern": r"\[\[(A|B|C)\]\]", "verdict_map": {"A": "A", "B": "B", "C": "TIE"}}
LABELLED = {"verdict_pattern": r"Verdict: (A|B|tie)\b", "verdict_map": {"A": "A", "B": "B", "tie": "TIE"}}
BARE = {"verdict_pattern": r"\b(A|B)\b", "verdict_map": {"A": "A", "B": "B"}}
JSON: dict[str, Any] = {}
FIRST = {**FASTCHAT, "verdict_match": "first"}
UNIQUE = {**FASTCHAT, "verdict_match": "unique"}

CASES = [
    # quoted example verdicts (the judge repeating the answer format) around the real one
    (FASTCHAT, 'The format is "[[A]]" if A is better. Overall [[B]]. I would not write "[[A]]" here.', "B"),
    (FASTCHAT, '[[B]]\n\nNote: the prompt asks for "[[A]]", "[[B]]" or "[[C]]".', "B"),
    (FASTCHAT, "Options: \u201c[[A]]\u201d or \u201c[[B]]\u201d. Mine: [[A]]", "A"),
    (LABELLED, 'Answer with "Verdict: A" or "Verdict: B".\nVerdict: B', "B"),
    (LABELLED, 'Verdict: B\n(The other option, "Verdict: A", would be wrong.)', "B"),
    (FASTCHAT, 'My verdict: "[[A]]"', "A"),  # only quoted matches: they are the verdict
    # verdicts inside code fences
    (FASTCHAT, "Reasoning...\n```\n[[B]]\n```", "B"),
    (FASTCHAT, "Use this format:\n```\n[[A]]\n```\nActual verdict: [[B]]", "B"),
    (JSON, 'Thinking...\n```json\n{"choice": "B", "explanation": "shorter"}\n```', "B"),
    # verdicts in code (inline or fenced) are mentions, like quoted ones, under every verdict_match
    (FIRST, "The format is `[[A]]`. My verdict: [[B]]", "B"),
    (UNIQUE, "The format is `[[A]]`. My verdict: [[B]]", "B"),
    (FIRST, "Use this format:\n```\n[[A]]\n```\nActual verdict: [[B]]", "B"),
    (UNIQUE, "Format:\n~~~text\n[[A]] or [[B]]\n~~~\n[[B]]", "B"),
    (FIRST, "Write ``[[A]]`` (with `` ` `` quotes) or not. [[B]]", "B"),
    (FIRST, "Only `[[A]]`", "A"),  # only matches in code: they are the verdict
    (FIRST, "An unclosed fence:\n```\n[[B]]", "B"),
    (FIRST, "A stray ` backtick, then [[A]].\n\nLater, `[[B]]` quoted", "A"),  # no code span across paragraphs
    (UNIQUE, "Verdict `[[A]]`.\n\nIn short: [[B]] ` stray", "B"),
    # an example answer in a fence and the judge's own answer in prose that disagree: never the example
    (
        JSON,
        'Format:\n```json\n{"choice": "A", "explanation": "..."}\n```\nMine: {"choice": "B", "explanation": "x"}',
        None,
    ),
    (
        JSON,
        'Format:\n```json\n{"choice": "B", "explanation": "..."}\n```\nMine: {"choice": "B", "explanation": "x"}',
        "B",
    ),
    # a verdict qualified in words
    (LABELLED, "Verdict: A (not B)", "A"),
    (JSON, '{"choice": "A (not B)", "explanation": "x"}', None),
    # slash lists name no verdict
    (FASTCHAT, "Final verdict: [[A/B]]", None),
    (LABELLED, "Verdict: A/B", None),
    (LABELLED, "Verdict: B/A, hard to say", None),
    (JSON, '{"choice": "A/B", "explanation": "x"}', None),
    (JSON, '{"choice": "A or B", "explanation": "x"}', None),
    # verdicts offered as alternatives name none
    (LABELLED, "Verdict: A or B", None),
    (LABELLED, "Verdict: B vs A", None),
    (LABELLED, "Verdict: B or tie", None),
    (FASTCHAT, "[[A]] or [[B]]", None),
    (FASTCHAT, "[[A]]/[[B]]", None),
    (FASTCHAT, "Either [[A]] or [[B]] would do. Final: [[B]]", "B"),
    (FASTCHAT, "[[A]], [[B]], [[C]]: I choose [[C]]", "TIE"),
    (LABELLED, "Verdict: A, because B is short", "A"),
    (LABELLED, "Verdict: A orange", "A"),
    # letter case
    (FASTCHAT, 'Output "[[A]]" if A is better. My verdict: [[b]]', "B"),
    (FASTCHAT, "[[c]]", "TIE"),
    (LABELLED, "verdict: b", None),  # folded only inside tight context: see the next case
    (LABELLED, "Verdict: B\nMy verdict: a close call, really.", "B"),
    (BARE, "I think a response is needed. B", "B"),  # a bare-letter pattern stays case-sensitive: "a" is no verdict
    (JSON, '{"choice": "b", "explanation": "x"}', "B"),
    # trailing punctuation
    (LABELLED, "Verdict: B.", "B"),
    (FASTCHAT, "[[A]].", "A"),
    (JSON, '{"choice": "Response B.", "explanation": "x"}', "B"),
    # Markdown bold
    (LABELLED, "**Verdict:** **B**", "B"),
    (LABELLED, "Verdict: **B**", "B"),
    (LABELLED, "Tentative Verdict: A, but on reflection **Verdict:** B", "B"),
    (FASTCHAT, "**[[B]]**", "B"),
    (JSON, '{"choice": "**B**", "explanation": "x"}', "B"),
    # letters inside longer words or grades are not verdicts
    (LABELLED, "Verdict: Bold claims aside, A", None),
]


@pytest.mark.parametrize("params, text, expected", CASES, ids=[c[1][:40] for c in CASES])
def test_the_verdict_read_is_the_judges_or_none(params, text, expected):
    settings = JudgeSettings.parse(params or None)
    try:
        position = parse_verdict_note(text, settings)[0]
    except ValueError:
        position = None
    assert position == expected


def test_left_out_quoted_matches_are_named_in_the_note():
    text = '[[B]]\n\nNote: the prompt asks for "[[A]]" or "[[B]]".'
    _, _, note = parse_verdict_note(text, JudgeSettings.parse(FASTCHAT))
    assert note == (
        "verdict_pattern matched 3 verdicts that disagree ('B' → B, 'A' → A (quoted, left out), "
        "'B' → B (quoted, left out)); verdict_match=last took B"
    )


def test_the_span_of_a_verdict_behind_emphasis_is_in_the_original_text():
    text = "**Verdict:** **B** because A rambles"
    parsed = parse_verdict_at(text, JudgeSettings.parse(LABELLED))
    assert parsed.position == "B" and parsed.span is not None
    assert text[parsed.span[0] : parsed.span[1]] == "B"
    assert parsed.span[0] == text.index("B")


def test_alternatives_are_named_in_the_error():
    with pytest.raises(ValueError, match=r"no verdict: the matches are offered as alternatives \('A' → A \(an alt"):
        parse_verdict_note("[[A]] or [[B]]", JudgeSettings.parse(FASTCHAT))


def test_unique_ignores_quoted_format_mentions():
    text = 'Reply "[[A]]" or "[[B]]". [[B]]'
    settings = JudgeSettings.parse({**FASTCHAT, "verdict_match": "unique"})
    assert parse_verdict_note(text, settings)[0] == "B"


def test_a_judge_echoing_the_format_after_its_verdict_is_read_right_end_to_end(tmp_path: Path):
    """Through the OpenAI emulator: samples keep the judge's verdict and the note names the left-out mention."""
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps({"id": "r0", "question": "2+2?", "a": "4", "b": "5"}) + "\n")
    examples = autosxs.prepare_examples(
        evaluation_dataset=str(dataset),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )

    def judge(request: Any) -> str:  # prefers the response that says 4, wherever it is shown
        verdict = "A" if responses_in_prompt(request.prompt_text)["A"].strip() == "4" else "B"
        other = "B" if verdict == "A" else "A"
        return f'**Verdict:** **{verdict}**\n\n(As instructed I answer "Verdict: A" or "Verdict: B", not "Verdict: {other}".)'

    with ModelEmulator(judge) as emu:
        judgments, _, _ = autosxs.judge_examples(
            examples=examples,
            task="question_answering@001",
            id_columns=["id"],
            autorater_model="openai/judge",
            autorater_parameters={
                "base_url": emu.url + "/v1",
                "cache_dir": "off",
                "progress": False,
                "max_retries": 0,
                **LABELLED,
            },
        )
    (row,) = judgments
    assert [s["choice"] for s in row["samples"]] == ["A", "A"]  # model A both times, shown first and second
    assert row["choice"] == "A" and row["confidence"] == 1.0
    assert all("(quoted, left out)" in s["note"] for s in row["samples"])
