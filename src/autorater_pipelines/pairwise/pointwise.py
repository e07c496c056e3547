"""Pointwise judging: a custom task's score rubric is a scale, and the judge scores each response on it.

The judge answers ``{"explanation", "response_a_score", "response_b_score"}`` (scores of the responses in
the positions shown); :func:`autorater_pipelines.pairwise.voting.to_sample` maps them back to the models, the
higher score wins and equal scores are a tie. A judgment keeps each model's mean score (:func:`mean_scores`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autorater_pipelines.evaluation.json_extraction import extract_json_values, is_placeholder

__all__ = ["mean_scores", "parse_scores"]


def _score_value(value: Any, scale: Sequence[int], key: str) -> int:
    number = value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        number = int(value.strip())
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    if isinstance(number, bool) or not isinstance(number, int) or number not in scale:
        raise ValueError(f"'{key}' must be an integer from {min(scale)} to {max(scale)}, got {value!r}")
    return number


def parse_scores(text: str | None, scale: Sequence[int]) -> tuple[int, int, str]:
    """Parse a pointwise judge output ``{"explanation", "response_a_score", "response_b_score"}``.

    Returns:
        ``(score of the response shown first, score of the one shown second, explanation)``.

    Raises:
        ValueError: no JSON object with both scores, a score off ``scale``, several answers that disagree, or only
            copies of the prompt's format line (an explanation that is its ``<…>`` placeholder).
    """
    if text is None or not text.strip():
        raise ValueError("empty judge output")
    objects = extract_json_values(text, expect=dict, outside_fences=True)
    answers = [o for o in objects if "response_a_score" in o and "response_b_score" in o]
    if not answers:
        raise ValueError(f"no JSON object with response_a_score and response_b_score in {text.strip()[:120]!r}")
    judged = [o for o in answers if not is_placeholder(o.get("explanation"))]
    if not judged:
        raise ValueError(
            f"the answer copies the prompt's format line: its explanation is the placeholder "
            f"{answers[-1].get('explanation')!r}, not a judgment, so its scores are not taken"
        )
    answers = judged
    scores = {
        (
            _score_value(o["response_a_score"], scale, "response_a_score"),
            _score_value(o["response_b_score"], scale, "response_b_score"),
        )
        for o in answers
    }
    if len(scores) > 1:
        raise ValueError(f"ambiguous answer: {len(answers)} JSON objects with different scores {sorted(scores)}")
    first, second = scores.pop()
    explanation = answers[-1].get("explanation")
    return first, second, explanation if isinstance(explanation, str) else ""


def mean_scores(samples: Sequence[Any]) -> dict[str, float | None]:
    """``{"response_a_score", "response_b_score"}``: each model's mean score over the samples that scored it."""
    scored = [s.scores for s in samples if s.scores is not None]
    if not scored:
        return {"response_a_score": None, "response_b_score": None}
    return {
        "response_a_score": round(sum(a for a, _ in scored) / len(scored), 6),
        "response_b_score": round(sum(b for _, b in scored) / len(scored), 6),
    }
