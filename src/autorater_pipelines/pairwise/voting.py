"""Reading and voting over a pairwise judgment's samples: un-flipping, the vote, completeness and usage.

Each sample's verdict names a POSITION (``A`` = shown first, ``B`` = shown second, ``TIE``); it is mapped back
to model terms (``A`` = model A wherever it was shown) before the vote (:func:`combine_samples`). A pointwise
rubric's scores (:mod:`~autorater_pipelines.pairwise.pointwise`) are mapped back the same way.

Judgment row (one per example, JSON-compatible dict):
    id columns, every rendered autorater prompt parameter (``inference_instruction``,
    ``inference_context`` …), ``response_a``, ``response_b``, ``choice`` (``A``|``B``|``TIE``|``ERROR``),
    ``confidence`` (float in [0, 1]; None for ``ERROR``, and when log-probabilities came back but a
    verdict token could not be read), ``explanation``, ``samples`` (list of
    ``{sample_index, flipped, choice, explanation, raw_response, error, attempts, cached, note}``, plus
    ``strong`` (true for a strong verdict ``A>>B``/``B>>A``) when the judge settings have strong verdicts
    (:mod:`~autorater_pipelines.pairwise.strength`); ``attempts`` = network attempts of that call, 0 for cache
    hits and replays; ``note`` says when the verdicts found in one answer disagreed, or why log-probabilities
    gave no verdict probability),
    ``complete`` (False when the judged samples do not cover every presentation order scheduled, see
    :func:`row_completeness`) and ``incomplete_reason``, the human preference column when given,
    ``input_token_count`` and ``output_token_count`` (sums over samples).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autorater_pipelines.models import ModelOutput, ModelRequest, Usage
from autorater_pipelines.pairwise.answers import json_label, parse_verdict, parse_verdict_at
from autorater_pipelines.pairwise.confidence import VerdictProbability, row_confidence, verdict_probability
from autorater_pipelines.pairwise.pointwise import parse_scores
from autorater_pipelines.pairwise.preference import one_token_verdict
from autorater_pipelines.pairwise.settings import JudgeSettings
from autorater_pipelines.pairwise.strength import sample_strength
from autorater_pipelines.pairwise.verdicts import lookup_verdict

__all__ = [
    "CHOICES",
    "Sample",
    "combine_samples",
    "row_completeness",
    "to_sample",
    "total_usage",
    "unparseable_check",
]

CHOICES = ("A", "B", "TIE", "ERROR")
"""The closed set of judgment choices."""


def _unflip(position: str, flipped: bool) -> str:
    if not flipped or position == "TIE":
        return position
    return "B" if position == "A" else "A"


@dataclasses.dataclass(frozen=True)
class Sample:
    """One judged sample, verdict already mapped back to model terms."""

    sample_index: int
    flipped: bool
    choice: str  # A | B | TIE | ERROR, in model terms
    explanation: str
    raw_response: str | None
    error: str | None = None
    distribution: dict[str, float] | None = None
    attempts: int = 0
    cached: bool = False
    note: str | None = None
    scores: tuple[int, int] | None = None  # pointwise rubric: (model A's score, model B's score)
    confidence_reason: str | None = None  # logprobs were returned but the verdict token's could not be read
    strong: bool | None = None  # a strong verdict (A>>B); None when the settings have none (pairwise.strength)
    verdict_from_alternatives: bool = False  # a one-token answer read at its alternatives (pairwise.preference)

    def to_dict(self) -> dict[str, Any]:
        """JSON form stored in the judgment's ``samples`` list (with the scores under a pointwise rubric)."""
        out = {
            "sample_index": self.sample_index,
            "flipped": self.flipped,
            "choice": self.choice,
            "explanation": self.explanation,
            "raw_response": self.raw_response,
            "error": self.error,
            "attempts": self.attempts,
            "cached": self.cached,
            "note": "; ".join(n for n in (self.note, _confidence_note(self.confidence_reason)) if n) or None,
        }
        if self.scores is not None:
            out["response_a_score"], out["response_b_score"] = self.scores
        if self.strong is not None:
            out["strong"] = self.strong
        return out


def to_sample(
    request: ModelRequest, output: ModelOutput, settings: JudgeSettings, score_scale: Sequence[int] = ()
) -> Sample:
    """Turn one model output into a :class:`Sample` (a failed call or parse gives choice ``ERROR``).

    With ``score_scale`` (a pointwise rubric) the output holds one score per response (:func:`parse_scores`):
    the higher score wins, equal scores are ``TIE``, and both scores are kept in model terms.
    """
    flipped = bool(request.key.get("flipped"))
    calls: dict[str, Any] = {"attempts": output.attempts, "cached": output.cached}
    if not output.ok:
        kind = output.error.kind.value if output.error else "unknown"
        message = output.error.message if output.error else "no text returned"
        return Sample(request.sample_index, flipped, "ERROR", "", output.text, f"{kind}: {message}", **calls)
    if score_scale:
        try:
            first, second, explanation = parse_scores(output.text, score_scale)
        except ValueError as exc:
            return Sample(request.sample_index, flipped, "ERROR", "", output.text, f"parse_error: {exc}", **calls)
        position = "A" if first > second else "B" if second > first else "TIE"
        scores = (second, first) if flipped else (first, second)
        return Sample(
            request.sample_index,
            flipped,
            _unflip(position, flipped),
            explanation,
            output.text,
            scores=scores,
            **calls,
        )
    cut = f"truncated at {output.usage.output_tokens or 'the limit of'} tokens (finish reason: length)"
    try:
        parsed = parse_verdict_at(output.text, settings)
    except ValueError as exc:
        read = one_token_verdict(output, settings, _label(settings))
        if read is not None:
            return _from_alternatives(request, output, read, str(exc), calls)
        if output.finish_reason == "max_tokens":  # the answer was cut off: say so rather than "no verdict"
            return Sample(request.sample_index, flipped, "ERROR", "", output.text, f"{cut}: {exc}", **calls)
        return Sample(request.sample_index, flipped, "ERROR", "", output.text, f"parse_error: {exc}", **calls)
    if (
        output.finish_reason == "max_tokens"
        and settings.verdict_pattern is not None
        and settings.verdict_match != "first"
    ):
        # The concluding verdict comes last: in a cut-off answer a match is a draft from the reasoning.
        why = f"{cut}: the concluding verdict is missing (verdict_match={settings.verdict_match}); a verdict_pattern"
        error = f"{why} match in the unfinished reasoning is not taken"
        return Sample(request.sample_index, flipped, "ERROR", "", output.text, error, **calls)
    probability = verdict_probability(output.logprobs, output.text or "", parsed.span, _label(settings))
    if output.logprobs_problem is not None:  # returned but malformed (models._logprobs): the vote stands
        probability = VerdictProbability(
            None, f"the answer's log-probabilities are malformed: {output.logprobs_problem}"
        )
    distribution = None
    if probability.distribution is not None:
        distribution = {_unflip(k, flipped): v for k, v in probability.distribution.items()}
    strong = sample_strength(output.text, parsed.span, settings.strong_verdicts)
    return Sample(
        request.sample_index,
        flipped,
        _unflip(parsed.position, flipped),
        parsed.explanation,
        output.text,
        distribution=distribution,
        note=parsed.note,
        confidence_reason=probability.reason,
        strong=strong if strong is None or parsed.position != "TIE" else False,
        **calls,
    )


def _from_alternatives(
    request: ModelRequest, output: ModelOutput, read: dict[str, float], why: str, calls: dict[str, Any]
) -> Sample:
    """The sample of a one-token answer that is no verdict, voting by its alternatives (``one_token_verdict``)."""
    flipped = bool(request.key.get("flipped"))
    ranked = sorted(read.items(), key=lambda kv: -kv[1])
    position = "TIE" if len(ranked) > 1 and ranked[0][1] == ranked[1][1] else ranked[0][0]
    shown = ", ".join(f"P({k})={v:.3g}" for k, v in ranked)
    note = f"the one-token answer {output.text!r} is no verdict ({why}); voted by its alternatives: {shown}"
    return Sample(
        request.sample_index,
        flipped,
        _unflip(position, flipped),
        "",
        output.text,
        distribution={_unflip(k, flipped): v for k, v in read.items()},
        note=note,
        verdict_from_alternatives=True,
        **calls,
    )


def _label(settings: JudgeSettings) -> Callable[[str], str | None]:
    return json_label if settings.verdict_pattern is None else _map_label(settings.verdict_map)


def _map_label(verdict_map: Mapping[str, str]) -> Callable[[str], str | None]:
    def label(text: str) -> str | None:
        return lookup_verdict(text, verdict_map)

    return label


def _confidence_note(reason: str | None) -> str | None:
    return None if reason is None else f"no verdict probability: {reason}"


def combine_samples(samples: Sequence[Sample]) -> tuple[str, float | None, str]:
    """Vote over samples: ``(choice, confidence, explanation)``.

    Rules: samples with choice ``ERROR`` do not vote. The label with strictly the most votes wins;
    when no label has strictly the most votes (e.g. one ``A`` and one ``B``) the choice is ``TIE``.
    No valid sample gives ``ERROR`` with confidence None.

    Confidence: the mean probability the voting samples give the chosen label — a sample's verdict-token
    probability with logprobs, else 1 for its own verdict (the vote share); one meaning on both paths, so a
    ``TIE`` from a split vote (``A``×1, ``B``×1) has 0 without logprobs and its mean P(TIE) with them
    (:func:`~autorater_pipelines.pairwise.confidence.row_confidence`). None when log-probabilities were
    returned but a voting sample's verdict token could not be read (the sample's ``note`` says why).
    """
    valid = [s for s in samples if s.choice != "ERROR"]
    if not valid:
        return "ERROR", None, "; ".join(s.error or "error" for s in samples)
    counts = collections.Counter(s.choice for s in valid)
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        choice = "TIE"
    else:
        choice = ranked[0][0]
    confidence: float | None
    if any(s.confidence_reason for s in valid):
        confidence = None
    else:
        confidence = row_confidence(choice, [(s.choice, s.distribution) for s in valid])
    agreeing = [s for s in valid if s.choice == choice]
    if agreeing:
        explanation = agreeing[0].explanation
    else:
        split = ", ".join(f"{label}×{count}" for label, count in sorted(counts.items()))
        explanation = f"Samples disagreed ({split}); counted as TIE. First sample: {valid[0].explanation}"
    return choice, None if confidence is None else round(confidence, 6), explanation


def unparseable_check(
    settings: JudgeSettings, temperature: float | None, score_scale: Sequence[int] = ()
) -> Callable[[ModelOutput], bool] | None:
    """The ``reask`` test of ``Model.generate_each`` for ``retry_unparseable``, or None when it is off.

    ``retry_unparseable`` None (the default) is on unless ``temperature`` is 0: a greedy judge would give
    the same unparseable answer again, a sampling one (temperature > 0, or the provider's default) may not.
    With ``score_scale`` (a pointwise rubric) an answer is parseable when it holds scores on that scale.
    """
    retry = settings.retry_unparseable
    if retry is None:
        retry = temperature is None or temperature > 0
    if not retry:
        return None

    def reask(output: ModelOutput) -> bool:
        try:
            if score_scale:
                parse_scores(output.text, score_scale)
            else:
                parse_verdict(output.text, settings)
        except ValueError:
            return True
        return False

    return reask


def row_completeness(samples: Sequence[Sample]) -> tuple[bool, str | None]:
    """Tell whether a row's samples cover every presentation order they were scheduled in.

    With ``flip`` on, a row is judged in both orders so that position bias cancels out; a row whose every
    original-order (or every swapped-order) sample failed was judged from one order only, which undoes the
    position-swap correction. Such a row is not complete: its vote is kept for inspection, but metrics leave
    it out by default (:func:`autorater_pipelines.autosxs.metrics.pairwise_metrics`). A re-run completes it
    (answered samples come from the response cache).

    Returns:
        ``(complete, reason)``; ``reason`` is None for a complete row and says which order is missing and why
        otherwise. A row with no judged sample at all is not complete (its choice is ``ERROR``).
    """
    planned = {s.flipped for s in samples}
    judged = {s.flipped for s in samples if s.choice != "ERROR"}
    if not judged:
        return False, "no sample could be judged"
    missing = planned - judged
    if not missing:
        return True, None
    lost = "swapped" if True in missing else "original"
    kept = "original" if lost == "swapped" else "swapped"
    error = next((s.error for s in samples if s.flipped in missing and s.error), "no answer")
    return False, f"judged in the {kept} order only: every {lost}-order sample failed ({error})"


def total_usage(outputs: Sequence[ModelOutput]) -> Usage:
    """Sum of the token usage of ``outputs``."""
    usage = Usage()
    for output in outputs:
        usage = usage + output.usage
    return usage
