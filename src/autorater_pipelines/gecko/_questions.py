"""Scoring one rubric question: its samples' answers resolved to choices, the vote, the verdict and the score.

The rules (exact match, split votes, logprob weighting, unparseable and missing answers) are in
:mod:`autorater_pipelines.gecko.rubric_scoring`, which scores rows and datasets with :func:`score_question`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.gecko.answer_matching import normalize, resolve
from autorater_pipelines.gecko.replies import MISSING as MISSING_QUESTION
from autorater_pipelines.models import ErrorKind

__all__ = ["CALL_ERROR_KINDS", "NOT_ANSWERED_KINDS", "NO_CHOICE", "score_question"]

CALL_ERROR_KINDS = frozenset(k.value for k in ErrorKind)
NOT_ANSWERED_KINDS = CALL_ERROR_KINDS | {MISSING_QUESTION, "not_answered"}
"""Sample error kinds that mean the question got no answer at all (missing), not an unreadable one (unparseable)."""


def _first_error(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    return next((dict(s["error"]) for s in samples if s.get("error")), None)


NO_CHOICE = "(no choice)"
"""The vote of a sample whose answer names no choice, under ``unparseable_answer_policy="zero"``."""


def score_question(
    qa: Mapping[str, Any], samples: Sequence[Mapping[str, Any]], weighting: bool, no_choice_votes: bool = False
) -> dict[str, Any]:
    """One question's ``qa_results`` entry: its samples' votes, verdict and score (rules in :mod:`.scoring`)."""
    result = _question_result(qa, samples)
    answered = [s for s in samples if s.get("verdict") is not None and not s.get("error")]
    if not answered and all((s.get("error") or {}).get("kind") in NOT_ANSWERED_KINDS for s in samples):
        result.update(
            status="missing",
            error=_first_error(samples) or {"kind": "not_answered", "message": "no validator sample"},
        )
        return result
    choices = result["choices"]
    parsed = _parsed_answers(answered, choices)
    result["unparseable_samples"] = len(answered) - len(parsed)
    if not parsed:
        shown = [s.get("verdict") for s in answered]
        result["error"] = (
            _first_error(samples)
            if not shown
            else {
                "kind": "unparseable_verdict",
                "message": f"answer(s) {shown!r} name none of the choices {choices!r}",
            }
        )
        return result
    _count_votes(result, parsed, no_choice_votes)
    if weighting:
        probs = [s["choice_probs"] for s in answered if s.get("choice_probs")]
        if probs:
            result["probability"] = sum(p.get(result["expected"], 0.0) for p in probs) / len(probs)
            result["score"] = result["probability"]
        else:
            result["logprob_fallback"] = True
    return result


def _question_result(qa: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A question's entry before scoring (status ``unparseable``), its expected answer resolved to a choice."""
    choices = list(qa.get("choices") or [])
    expected = qa.get("answer")
    expected_index = resolve(expected, choices) if choices else None
    if expected_index is not None:
        expected = choices[expected_index]  # e.g. "b" or "b) a boat" -> "a boat"
    result = {
        "question_id": qa["question_id"],
        "question": qa.get("question"),
        "question_type": qa.get("question_type") or "other",
        "choices": choices,
        "expected": expected,
        "verdict": None,
        "score": None,
        "status": "unparseable",
        "raw": next((s.get("verdict") for s in samples if s.get("verdict") is not None), None),
        "votes": {},
        "dependencies": list(qa.get("dependencies") or []),
        "keyword_id": qa.get("keyword_id"),
        "error": None,
    }
    if qa.get("importance") is not None:  # a Vertex rubric's importance (gecko.vertex_rubrics)
        result["importance"] = qa["importance"]
    return result


def _parsed_answers(answered: Sequence[Mapping[str, Any]], choices: Sequence[str]) -> list[str]:
    """The choice each answered sample names (free-form questions: its normalized text); none for the others."""
    parsed: list[str] = []
    for sample in answered:
        if choices:
            idx = resolve(sample["verdict"], choices)
            if idx is not None:
                parsed.append(choices[idx])
        elif normalize(sample["verdict"]):
            parsed.append(normalize(sample["verdict"]))
    return parsed


def _count_votes(result: dict[str, Any], parsed: list[str], no_choice_votes: bool) -> None:
    """Set the verdict (most frequent answer) and exact-match score of ``result`` from its samples' answers."""
    expected = result["expected"]
    votes = Counter(parsed)
    if no_choice_votes and result["unparseable_samples"]:  # zero policy: an answer naming no choice is a wrong vote
        votes[NO_CHOICE] = result["unparseable_samples"]
        parsed = parsed + [NO_CHOICE] * result["unparseable_samples"]
    ranked = votes.most_common()
    verdict = ranked[0][0]
    exact = 1.0 if normalize(verdict) == normalize(expected) else 0.0
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        # A split vote has no single verdict: the score is the chance that a verdict drawn among the tied
        # winners is the expected answer, 1/k when it is one of the k winners (yes×1, no×1 → 0.5), else 0 (a
        # runner-up's votes earn nothing, as in an undivided vote) — never whichever sample came first.
        tied = sorted(choice for choice, count in ranked if count == ranked[0][1])
        exact = 1.0 / len(tied) if any(normalize(c) == normalize(expected) for c in tied) else 0.0
        verdict = " | ".join(tied)
        result["tied_vote"] = True
    result.update(verdict=verdict, score=exact, status="scored", votes=dict(votes), exact_score=exact)
