"""Matching a judge's answer to a question's choices: normalized exact match, never substring.

The public Gecko sample scores by substring (``"a"`` matches ``"b) a boat"``, ``"no"`` matches
``"not sure"``); here an answer resolves to a choice only when, after normalization (case, outer
whitespace, quotes, Markdown emphasis and trailing punctuation removed), it

1. equals the choice text, or
2. is the choice's letter (``b``, ``(b)``, ``b)``, ``b.``) — multiple-choice questions only, or
3. starts with the letter followed by ``)``/``.``/``:`` (``b) a boat``) and the rest does not name a
   different choice, or
4. starts with the whole choice text followed by a non-word character (``Yes, there is …``,
   ``no bus``); the longest such choice wins. ``not sure`` does not start with the word ``no``. An answer
   that lists another choice as an alternative (``yes/no``, ``Yes or no``, ``red | blue``, ``Yes/No: yes``)
   or is two choices in a row (``Yes. No.``, ``yes, no``) names none, and so does an answer that later gives
   another choice as an answer of its own (``yes, but actually no``; not ``Yes, there is no dog`` nor
   ``Yes (not no)``): it is ambiguous, never its first word. Text in a quotation (quotation marks of any kind,
   code, reported speech: :mod:`autorater_pipelines.evaluation.quotations`) is left out, so a quoted question
   (``"Is there no dog?" yes``) is not the answer and a leading verdict with the other one only quoted is the
   leading one (``No. The candidate wrote 'Yes, 42' but the reference answer is 41.`` is ``no``).

Anything else is unparseable, which the scorer counts and reports instead of scoring 0.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.quotations import QUOTATION_MARKS, Quotations

__all__ = [
    "YES_NO",
    "choice_label",
    "choice_probabilities",
    "is_yes_no",
    "normalize",
    "parse_choices",
    "resolve",
]

YES_NO: tuple[str, str] = ("yes", "no")
_STRIP = string.whitespace + "\"'`*.,;:!?()[]{}"
_PREFIX = re.compile(r"^(?:(?:final )?answer\s*:|verdict\s*:|the answer is\b)\s*")
_ARTICLES = frozenset({"a", "an", "the"})
_NUMBER_WORDS = {
    word: str(number)
    for number, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
}
_LETTER_ONLY = re.compile(r"^\(?([a-z])\)?[.:)]?$")
_LETTER_LEAD = re.compile(r"^\(?([a-z])[).:]\s*(.+)$")
_LETTER_PREFIXED_CHOICE = re.compile(r"^\(?([a-zA-Z])[).:]\s+(.+)$")
_ALTERNATIVE = re.compile(r"^\s*(?:/|\||\bor\b|\band/or\b|\bvs\b\.?)\s*")
_SEPARATOR = re.compile(r"^\s*[,.;]?\s*")


def normalize(text: Any) -> str:
    """Lower-case, NFKC-normalize and trim an answer for comparison.

    Removes outer whitespace, quotes, Markdown ``*``/backticks, brackets and punctuation, a leading
    ``answer:`` label, and collapses inner whitespace. ``True``/``False`` become ``yes``/``no``; number
    words from ``zero`` to ``twenty`` become digits (``three`` = ``3``) and a leading article is dropped
    (``a red apple`` = ``red apple``) when more words follow.
    """
    if isinstance(text, bool):
        return "yes" if text else "no"
    if text is None:
        return ""
    value = unicodedata.normalize("NFKC", str(text)).lower().replace("**", "")
    value = " ".join(value.split()).strip(_STRIP)
    value = _PREFIX.sub("", value).strip(_STRIP)
    words = [_NUMBER_WORDS.get(word, word) for word in value.split(" ")]
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]  # "a boat" is "boat"; a lone "a" stays a choice letter
    return " ".join(words)


def parse_choices(choices: Any) -> tuple[str, ...]:
    """Return a question's choices as a tuple of texts.

    Accepts a list of strings, a ``{"a": "red", "b": "blue"}`` mapping (ordered by key), or a list
    whose items all carry consecutive letter prefixes (``"a) red"``), which are stripped. None or an
    empty list gives ``()`` (a free-form question).

    Raises:
        ValueError: ``choices`` is not a list/mapping of strings, or has duplicates after normalization.

    """
    if choices is None or (isinstance(choices, (list, tuple, dict)) and not choices):
        return ()
    if isinstance(choices, Mapping):
        items = [str(choices[k]) for k in sorted(choices, key=lambda k: str(k).lower())]
    elif isinstance(choices, (list, tuple)):
        if not all(isinstance(c, (str, int, float)) and not isinstance(c, bool) for c in choices):
            raise ValueError(f"choices must be strings, got {choices!r}")
        items = [str(c).strip() for c in choices]
        matches = [_LETTER_PREFIXED_CHOICE.match(c) for c in items]
        letters = [m.group(1).lower() if m else None for m in matches]
        if len(items) > 1 and letters == list(string.ascii_lowercase[: len(items)]):
            items = [m.group(2).strip() for m in matches if m]
    else:
        raise ValueError(f"choices must be a list or a mapping, got {type(choices).__name__}: {choices!r}")
    normalized = [normalize(c) for c in items]
    if any(not c for c in normalized):
        raise ValueError(f"choices must not be blank, got {choices!r}")
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"choices are not distinct after normalization: {choices!r}")
    return tuple(items)


def is_yes_no(choices: Sequence[str]) -> bool:
    """Tell whether the choices are exactly yes and no (any order or case)."""
    return sorted(normalize(c) for c in choices) == ["no", "yes"]


def choice_label(choices: Sequence[str], index: int) -> str:
    """Label the judge is asked to answer with: the word for yes/no, else the letter ``a``, ``b`` …."""
    return normalize(choices[index]) if is_yes_no(choices) else string.ascii_lowercase[index]


def resolve(answer: Any, choices: Sequence[str]) -> int | None:
    """Return the index of the choice ``answer`` names, or None when it names none (or two).

    Args:
        answer: The judge's answer text (or a rubric's expected answer).
        choices: Choice texts from :func:`parse_choices`; must be non-empty.

    Returns:
        0-based index into ``choices``, or None when unparseable. Rules in the module docstring.

    """
    value = normalize(answer)
    if not value or not choices:
        return None
    norm = [normalize(c) for c in choices]
    if not isinstance(answer, str):
        return _named(value, norm, choices, None)
    # Quoted text is not the answer: a quoted question before it ('"Is there no dog?" yes'), the other verdict
    # quoted after it ("No. The candidate wrote 'Yes, 42' …"). An answer that is itself quoted ('"no"',
    # "'Yes', there is a dog") is read as written when the text outside quotations names no choice.
    text = unicodedata.normalize("NFKC", answer)
    outside = normalize(Quotations(text).masked())
    found = _named(outside, norm, choices, outside) if outside else None
    if found is None and _QUOTATION_FIRST.match(text):
        found = _named(normalize(_MARKS.sub(" ", text)), norm, choices, outside)
    return found


_MARKS = re.compile(f"[{re.escape(QUOTATION_MARKS)}]")
_QUOTATION_FIRST = re.compile(f"[\\s*_]*[{re.escape(QUOTATION_MARKS)}>]")


def _named(value: str, norm: Sequence[str], choices: Sequence[str], outside: str | None) -> int | None:
    """The choice a normalized answer names (module docstring); ``outside``: its text outside quotations."""
    if value in norm:
        return norm.index(value)
    lettered = not is_yes_no(choices) and len(choices) <= 26
    if lettered:
        m = _LETTER_ONLY.match(value)
        if m and _letter_index(m.group(1)) < len(choices):
            return _letter_index(m.group(1))
        m = _LETTER_LEAD.match(value)
        if m and _letter_index(m.group(1)) < len(choices):
            idx = _letter_index(m.group(1))
            rest = normalize(m.group(2))
            named = norm.index(rest) if rest in norm else None
            return idx if named in (None, idx) else None
    best: int | None = None
    for i, choice in enumerate(norm):
        if re.match(re.escape(choice) + r"(?!\w)", value) and (best is None or len(choice) > len(norm[best])):
            best = i
    if best is not None and _names_another(value[len(norm[best]) :], norm, best):
        return None
    if best is not None and outside is not None and _mentions_another(outside, norm, best):
        return None
    return best


def _mentions_another(text: str, norm: Sequence[str], best: int) -> bool:
    """Whether the answer's text outside quotations (normalized) also gives another choice as an answer of its own.

    An occurrence counts when it stands alone — at the end or before punctuation (``yes, but actually no``,
    ``red; on second look blue``) — and is not negated (``Yes (not no)``); a choice word used inside a phrase
    (``Yes, there is no dog``, ``yes, no doubt``, ``red with a blue stripe``) or inside the chosen choice's own
    text (``red`` in ``dark red``) does not.
    """
    own = [m.span() for m in re.finditer(r"(?<!\w)" + re.escape(norm[best]) + r"(?!\w)", text)]
    for i, choice in enumerate(norm):
        if i == best:
            continue
        for m in re.finditer(r"(?<!\w)(?<!\bnot )" + re.escape(choice) + r"(?=\s*(?:$|[^\w\s]))", text):
            if not any(a <= m.start() and m.end() <= b for a, b in own):
                return True
    return False


def _names_another(rest: str, norm: Sequence[str], best: int) -> bool:
    """Whether the text after the choice offers another choice (``/no``, `` or no``) or is one (``. no``)."""
    alternative = _ALTERNATIVE.match(rest)
    if alternative:
        after = rest[alternative.end() :]
        if any(i != best and re.match(re.escape(c) + r"(?!\w)", after) for i, c in enumerate(norm)):
            return True
    listed = rest[_SEPARATOR.match(rest).end() :].strip(_STRIP)  # type: ignore[union-attr]
    return listed in norm and norm.index(listed) != best


def _letter_index(letter: str) -> int:
    return string.ascii_lowercase.index(letter)


def choice_probabilities(
    logprobs: Sequence[Any] | None, choices: Sequence[str], answer: Any = None
) -> dict[str, float] | None:
    """Probability of each choice from the first answer token's log-probabilities.

    The first generated token that is not whitespace or punctuation is taken as the answer token;
    its top alternatives (and itself) are matched to choice labels (:func:`choice_label`) or choice
    texts by normalized equality; matched probability mass is renormalized over the choices. With
    ``answer``, the answer token must name the choice the whole answer resolves to (:func:`resolve`): the
    article in ``a cat`` is not the letter of choice (a), so its probability is not that choice's.

    Args:
        logprobs: ``ModelOutput.logprobs``: items with ``token``, ``logprob`` (natural log) and
            ``top`` (``((token, logprob), …)``).
        choices: Choice texts.
        answer: The answer text the verdict is read from, when known.

    Returns:
        ``{choice text: probability}`` summing to 1, or None when no logprobs were returned, no
        alternative names a choice, or the answer token is not the answer's choice.

    """
    if not logprobs or not choices:
        return None
    first = next((t for t in logprobs if normalize(t.token)), None)
    if first is None:
        return None
    names = {choice_label(choices, i): i for i in range(len(choices))}
    names.update({normalize(c): i for i, c in enumerate(choices)})
    if answer is not None and names.get(normalize(first.token)) != resolve(answer, choices):
        return None
    mass = [0.0] * len(choices)
    seen: set[str] = set()
    for token, logprob in ((first.token, first.logprob), *tuple(first.top or ())):
        if token in seen:
            continue
        seen.add(token)
        idx = names.get(normalize(token))
        if idx is not None:
            mass[idx] += math.exp(logprob)
    total = sum(mass)
    if total <= 0:
        return None
    return {choices[i]: mass[i] / total for i in range(len(choices))}
