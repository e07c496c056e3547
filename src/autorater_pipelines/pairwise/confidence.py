"""A row's confidence, and the verdict probability it is read from with log-probabilities.

One meaning, with or without log-probabilities (:func:`row_confidence`): a row's ``confidence`` is the judge's
support for the row's choice — the mean, over the samples that voted, of the probability each sample gives that
choice. With log-probabilities a sample's probabilities are those of its verdict token (below); without them a
sample gives probability 1 to its own verdict and 0 to the others, so the confidence is the vote share. A ``TIE``
that comes from a split vote (``A``×1, ``B``×1) therefore has a low confidence on both paths — 0 without
log-probabilities, the samples' mean probability of ``TIE`` with them — since no sample judged the responses
equal; a unanimous ``TIE`` has 1 (or its mean probability).

With ``logprobs`` set, a judge's answer comes with one log-probability per generated token and its top
alternatives. The verdict's probability is read at the token where the verdict parser found the verdict
it used — the ``verdict_pattern`` match chosen by ``verdict_match`` (``unique``: the last of the agreeing
matches), or the ``choice`` value of the JSON answer — never at some other A/B-like token: a judge that
writes ``[[A]]`` and then "because B is worse" is confident about A, not about B.

That token is found by character position: the tokens, concatenated, must spell the answer text from its
start, or from its end, up to and including the verdict. The token must hold the whole verdict (``[[A`` holds ``A``;
``S`` + ``AME`` split ``SAME`` over two tokens). Each alternative of that token is read in the same frame
(``[[B`` → ``B``) and looked up like the verdict itself; the probabilities of alternatives that name a
position are summed per position and renormalized. When the token cannot be located, or has no
alternatives, the sample gets no probability and a reason (``VerdictProbability.reason``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

__all__ = ["VerdictProbability", "json_choice_span", "row_confidence", "verdict_probability"]

Label = Callable[[str], "str | None"]
"""Maps verdict text (a match, or an alternative token read in the same frame) to ``A``/``B``/``TIE`` or None."""

_CHOICE_VALUE = re.compile(r'"choice"\s*:\s*"((?:[^"\\\n]|\\.)*)"')
_DECORATION = r"[\s*_`'\"\[\]().:]*"
_CORE = re.compile(rf"^{_DECORATION}(?:(?:response|output|model)[\s_]*)?{_DECORATION}(.*?){_DECORATION}$", re.I | re.S)


class VerdictProbability(NamedTuple):
    """Probability of each POSITION at the verdict token, or why there is none."""

    distribution: dict[str, float] | None
    """``{position: probability}`` (``A`` = shown first, ``B``, ``TIE``) summing to 1, or None."""
    reason: str | None
    """Why ``distribution`` is None although log-probabilities were returned (None otherwise)."""


def json_choice_span(text: str, label: Label, position: str) -> tuple[int, int] | None:
    """Where, in ``text``, the verdict of a JSON answer is written: the last ``"choice"`` value naming ``position``.

    The span covers the label itself (``B`` in ``"choice": "Response B"``), without quotes, emphasis or
    a ``Response``/``Model`` prefix. None when no such value is written plainly (escapes in it, or none found).
    """
    for match in reversed(list(_CHOICE_VALUE.finditer(text))):
        raw = match.group(1)
        if "\\" in raw:
            continue
        try:
            value = json.loads(f'"{raw}"')
        except json.JSONDecodeError:
            continue
        if label(value) != position:
            continue
        core = _CORE.match(raw)
        if core is None or not core.group(1):
            return None
        return match.start(1) + core.start(1), match.start(1) + core.end(1)
    return None


def _offsets(tokens: Sequence[str], text: str, start: int, end: int) -> list[int] | None:
    """Where each token starts in ``text``, counted from the start of the answer or from its end.

    The count is used from the side whose tokens spell the text exactly up to and including the verdict: a
    token elsewhere that is not the text (a character split over two tokens shows as ``\ufffd``; a provider
    that strips the answer) does not matter. None when neither side spells the text up to the verdict.
    """
    forward, total = [], 0
    for token in tokens:
        forward.append(total)
        total += len(token)
    backward = [offset + len(text) - total for offset in forward]
    for offsets, from_start in ((forward, True), (backward, False)):
        covering = [i for i, (o, t) in enumerate(zip(offsets, tokens, strict=True)) if o < end and o + len(t) > start]
        if not covering:
            continue
        checked = range(covering[-1] + 1) if from_start else range(covering[0], len(tokens))
        if all(0 <= offsets[i] and text[offsets[i] : offsets[i] + len(tokens[i])] == tokens[i] for i in checked):
            return offsets
    return None


def _frame(alternative: str, prefix: str, suffix: str) -> str | None:
    """The part of an alternative token that stands where the verdict stands in the chosen token."""
    value, prefix, suffix = alternative.strip(), prefix.strip(), suffix.strip()
    if len(value) < len(prefix) + len(suffix) or not (value.startswith(prefix) and value.endswith(suffix)):
        return None
    return value[len(prefix) : len(value) - len(suffix)]


def verdict_probability(
    logprobs: Sequence[Any] | None, text: str, span: tuple[int, int] | None, label: Label
) -> VerdictProbability:
    """Probability of each position at the token holding ``text[span[0]:span[1]]`` (module docstring).

    Args:
        logprobs: ``ModelOutput.logprobs`` (``token``, ``logprob`` in natural log, ``top`` alternatives).
        text: The raw answer text the verdict was parsed from.
        span: ``(start, end)`` of the verdict the parser used, or None when it could not say.
        label: Verdict text → ``A``/``B``/``TIE`` (None for text that names no position).

    Returns:
        ``VerdictProbability(None, None)`` when no log-probabilities were returned; otherwise a distribution,
        or None with the reason it could not be read.
    """
    if logprobs is None:
        return VerdictProbability(None, None)
    if not logprobs:
        return VerdictProbability(None, "the log-probabilities came without any token (an empty list)")
    if span is None:
        return VerdictProbability(None, "the position of the verdict in the answer is unknown")
    tokens = [str(t.token) for t in logprobs]
    start, end = span
    offsets = _offsets(tokens, text, start, end)
    if offsets is None:
        return VerdictProbability(
            None,
            f"the {len(tokens)} log-probability tokens do not spell the answer text around the verdict, so the "
            "verdict token is unknown",
        )
    covering = [i for i, (o, t) in enumerate(zip(offsets, tokens, strict=True)) if o < end and o + len(t) > start]
    if len(covering) != 1:
        parts = [tokens[i] for i in covering]
        return VerdictProbability(
            None,
            f"the verdict {text[start:end]!r} is not one token (tokens {parts!r}), so no token carries its probability",
        )
    index = covering[0]
    chosen = logprobs[index]
    low = offsets[index]
    prefix, suffix = chosen.token[: start - low], chosen.token[end - low :]
    if not chosen.top:
        return VerdictProbability(None, f"the verdict token {chosen.token!r} came without alternatives (top logprobs)")
    # log-probabilities per named position, normalised by log-sum-exp: no overflow (a logprob of 800), no
    # underflow (two alternatives at -1e308 are equally likely, not both impossible)
    named_logprobs: dict[str, list[float]] = {}
    seen: set[str] = set()
    for alternative, logprob in ((chosen.token, chosen.logprob), *tuple(chosen.top)):
        if alternative in seen:
            continue
        seen.add(alternative)
        middle = _frame(alternative, prefix, suffix)
        named = label(middle) if middle else None
        value = float(logprob)
        if named is not None and not math.isnan(value) and value != -math.inf:
            named_logprobs.setdefault(named, []).append(value)
    if not named_logprobs:
        return VerdictProbability(None, f"no alternative of the verdict token {chosen.token!r} names a verdict")
    peak = max(v for values in named_logprobs.values() for v in values)
    if not math.isfinite(peak):
        return VerdictProbability(None, f"the verdict token {chosen.token!r} has a non-finite log-probability {peak}")
    mass = {k: math.fsum(math.exp(v - peak) for v in values) for k, values in named_logprobs.items()}
    total = math.fsum(mass.values())
    return VerdictProbability({k: v / total for k, v in mass.items()}, None)


def row_confidence(choice: str, samples: Sequence[tuple[str, Mapping[str, float] | None]]) -> float | None:
    """The confidence of a row whose vote gave ``choice`` (module docstring: one meaning on both paths).

    Args:
        choice: The row's choice, ``A``/``B``/``TIE`` in model terms.
        samples: Per voting sample (choice ``ERROR`` excluded): its verdict in model terms and its verdict
            distribution in model terms (:class:`VerdictProbability`, un-flipped), or None without
            log-probabilities.

    Returns:
        In [0, 1]: the mean over ``samples`` of the probability each gives ``choice`` (its distribution's, else 1
        when its verdict is ``choice`` and 0 when not); None without samples. E.g. ``A``×1 + ``B``×1 → ``TIE``
        with 0.0; ``A``, ``A``, ``B`` → ``A`` with 0.667; ``A`` with P(A) 0.9 twice → 0.9.
    """
    if not samples:
        return None
    support = [
        float(distribution.get(choice, 0.0)) if distribution else float(verdict == choice)
        for verdict, distribution in samples
    ]
    return sum(support) / len(support)
