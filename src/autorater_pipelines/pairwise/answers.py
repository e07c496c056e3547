"""Reading one judge answer into a verdict: the JSON ``choice``, or ``verdict_pattern`` on free text.

The answer is what follows a ``<think>`` reasoning block (:mod:`autorater_pipelines.evaluation.reasoning`).
JSON answers (in prose, code fences, or both) must agree: several answers with different choices, or an object
that repeats ``choice`` with different values, are ambiguous (a parse error), never the first or the last. An
answer whose explanation is the prompt's own ``<…>`` placeholder is a copy of the format line, not a judgment: it
is left out, and an answer made only of such copies is a parse error. A
free-text answer is read by :func:`~autorater_pipelines.pairwise.verdicts.find_verdict`. Each parse also says
where the deciding verdict is written, so its token's log-probabilities can be read
(:mod:`autorater_pipelines.pairwise.confidence`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from autorater_pipelines.evaluation.json_extraction import extract_json_values, is_placeholder
from autorater_pipelines.evaluation.reasoning import answer_after_reasoning
from autorater_pipelines.pairwise.confidence import json_choice_span
from autorater_pipelines.pairwise.settings import JudgeSettings
from autorater_pipelines.pairwise.verdicts import find_verdict

__all__ = ["ParsedVerdict", "json_label", "parse_verdict", "parse_verdict_at", "parse_verdict_note"]

_TIE_WORDS = {"TIE", "SAME", "EQUAL", "BOTH", "NEITHER", "DRAW"}


def parse_verdict(text: str | None, settings: JudgeSettings) -> tuple[str, str]:
    """Parse one raw judge output into a POSITION verdict and an explanation.

    Returns:
        ``(position, explanation)`` with position ``A`` (shown first), ``B`` (shown second) or ``TIE``.

    Raises:
        ValueError: the output holds no recognizable verdict (the message says why).
    """
    position, explanation, _ = parse_verdict_note(text, settings)
    return position, explanation


class ParsedVerdict(NamedTuple):
    """A parsed judge output: the verdict, where it is written, and a note when verdicts disagreed."""

    position: str
    """``A`` (shown first), ``B`` (shown second) or ``TIE``."""
    explanation: str
    note: str | None
    """Set when several verdicts in the output disagreed (which one was taken)."""
    span: tuple[int, int] | None
    """``(start, end)`` in the text of the verdict that decided, or None when it cannot be located."""


def parse_verdict_note(text: str | None, settings: JudgeSettings) -> tuple[str, str, str | None]:
    """As :func:`parse_verdict`, plus a note when several verdicts in the output disagreed.

    Raises:
        ValueError: the output holds no recognizable verdict, or (``verdict_match=unique``, or JSON answers /
            duplicate ``choice`` keys that disagree) an ambiguous one.
    """
    parsed = parse_verdict_at(text, settings)
    return parsed.position, parsed.explanation, parsed.note


def parse_verdict_at(text: str | None, settings: JudgeSettings) -> ParsedVerdict:
    """As :func:`parse_verdict_note`, plus where the deciding verdict is written (for its token's logprobs).

    Raises:
        ValueError: as :func:`parse_verdict_note`.
    """
    if text is None or not text.strip():
        raise ValueError("empty judge output")
    offset, text = answer_after_reasoning(text)  # <think> drafts are not the answer
    if not text.strip():
        raise ValueError("empty answer after the </think> reasoning block")
    if settings.verdict_pattern is not None:
        verdict = find_verdict(
            text,
            settings.verdict_pattern,
            settings.verdict_map,
            settings.verdict_match,
            task_verdicts=settings.task_verdicts,
        )
        return ParsedVerdict(verdict.position, text.strip(), verdict.note, _shifted(verdict.span, offset))
    objects = extract_json_values(text, expect=dict, outside_fences=True)
    if not objects:
        raise ValueError(f"no JSON dict found in model output starting {text.strip()[:120]!r}")
    answers = [o for o in objects if "choice" in o]
    if not answers:
        raise ValueError(f"JSON answer has no string 'choice' field (got {objects[0].get('choice')!r})")
    answers = _judged(answers)
    positions = {_position(o.get("choice")) for o in answers}
    if len(positions) > 1:
        # e.g. a quoted response containing {"choice": "A"} before the judge's own answer: never guess.
        raise ValueError(f"ambiguous answer: {len(answers)} JSON objects with different choices {sorted(positions)}")
    position = positions.pop()
    explanation = answers[-1].get("explanation")
    span = _shifted(json_choice_span(text, json_label, position), offset)
    return ParsedVerdict(position, explanation if isinstance(explanation, str) else "", None, span)


def _judged(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answers that are not a copy of the prompt's format line (an explanation that is its ``<…>`` placeholder).

    Raises:
        ValueError: every answer is such a copy: the model gave no judgment.
    """
    judged = [a for a in answers if not is_placeholder(a.get("explanation"))]
    if not judged:
        raise ValueError(
            f"the answer copies the prompt's format line: its explanation is the placeholder "
            f"{answers[-1].get('explanation')!r}, not a judgment, so its choice {answers[-1].get('choice')!r} is not "
            "taken (the model repeated the prompt's example instead of judging)"
        )
    return judged


def _shifted(span: tuple[int, int] | None, offset: int) -> tuple[int, int] | None:
    return None if span is None else (span[0] + offset, span[1] + offset)


def json_label(value: str) -> str | None:
    """A JSON ``choice`` value (or an alternative token in its place) as ``A``/``B``/``TIE``, or None."""
    try:
        return _position(value)
    except ValueError:
        return None


def _position(raw_choice: Any) -> str:
    """Normalize a JSON ``choice`` value to ``A``/``B``/``TIE``; raise ValueError otherwise."""
    if not isinstance(raw_choice, str):
        raise ValueError(f"JSON answer has no string 'choice' field (got {raw_choice!r})")
    # Markdown emphasis, brackets and quotes around the label ("**B**", "[[A]]", "'A'") are not part of it.
    bare = raw_choice.strip().upper().strip(" *_`'\"[]().:")
    label = re.sub(r"^(RESPONSE|OUTPUT|MODEL)[\s_]*", "", bare).strip(" *_`'\"[]().:")
    if label in ("A", "B"):
        return label
    if label in _TIE_WORDS:
        return "TIE"
    raise ValueError(f"'choice' must be A, B or SAME, got {raw_choice!r}")
