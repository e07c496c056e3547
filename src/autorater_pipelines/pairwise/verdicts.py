r"""Free-text verdicts: ``verdict_pattern`` matched in linear time, ``verdict_match`` picks among matches.

A judge that quotes ``[[A]]`` while reasoning and concludes ``[[B]]`` means B (FastChat #3921 recorded
it as A by taking the first match). So every match of the pattern is found, and ``verdict_match``
decides: ``last`` (default: the concluding verdict), ``first``, or ``unique`` (every match must name the
same position, else the sample is a parse error). Matches that disagree are always reported in the
sample's ``note``.

A match counts only as a whole word: ``GRADE: ([A-C])`` does not read ``GRADE: CI`` as ``C`` (a verdict
token that starts or ends with a letter or digit may not continue into another one), and not as one of a
slash list: ``Verdict: A/B`` names no verdict, nor do ``Verdict: A or B``, ``[[A]] or [[B]]``, ``between [[A]]
and [[B]]`` and ``neither [[A]] nor [[B]]`` (verdicts offered as alternatives, joined by ``or``, ``and``,
``nor``, ``vs``, ``/``, ``|`` or a comma, are left out). A match denied or set against another (``not [[A]]``,
``[[B]] over [[A]]``, ``better than [[A]]``, ``rather than [[A]]``) is left out too, and so is one the judge
refuses to give (``I will not write [[A]]``, ``I refuse to output "[[A]]"``). Two verdicts in one comparison
give the winner the words between them name (``[[A]] beats [[B]]``, ``[[A]] > [[B]]``: A; ``[[A]] is worse than
[[B]]``: B), never the loser; a comparison naming no winner (``[[A]] is longer than [[B]]``) gives neither. The
answer format copied (``[[A]] if assistant A is better, [[B]] if assistant B is better, and [[C]] for a tie``)
names no verdict. When nothing else names a verdict the answer is a parse error, never one of the alternatives.

What judges write around a verdict is read as they mean it
(:mod:`autorater_pipelines.evaluation.quotations`, shared with Gecko):

- a match inside a quotation — quotation marks of any kind around it or around a longer phrase
  (``"[[A]]"``, ``the format 'Verdict: A'``, curly quotes, guillemets), inline code or a fenced block, a
  ``>`` blockquote, ``*emphasis*`` around several words — is a mention (the judge repeating the answer
  format) and is left out, under every ``verdict_match``, when the answer has a match of the judge's own
  (``[[B]] … the format asks for "[[A]]"`` is B, also under ``first`` and ``unique``); when every match is
  such a mention, they are read (``My verdict: "[[A]]"`` is A);
- a match in what the judge reports a response said (``Response B said "Final verdict: [[A]]"``,
  ``Assistant A wrote: [[A]]``, ``the response claims [[A]] …``) is never the verdict: a prompt injection
  the judge quotes cannot decide the sample; an answer with nothing else is a parse error;
- Markdown emphasis does not hide a verdict: the pattern also runs on the text without ``*``
  (``**Verdict:** **B**`` matches ``Verdict: (A|B)``); bold, and emphasis on one word (``*[[B]]*``), are
  emphasis, not a quotation;
- a match that differs only in letter case counts when the pattern matched non-space text right before and
  right after the verdict (``[[b]]`` for ``\[\[(A|B|C)\]\]``, looked up case-insensitively in ``verdict_map``);
  otherwise the pattern stays case-sensitive, so the article in "my verdict: a close call" or a bare-letter
  pattern such as ``\b(A|B)\b`` never reads "a" as verdict A.

Patterns run on RE2 (``google-re2``), whose matching time is linear in the text: no pattern can
backtrack catastrophically (``(a+)+$`` on a long answer takes microseconds). RE2 has no lookaround or
backreferences; a pattern that needs them is refused with that reason.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, NamedTuple

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.parameters import to_choice
from autorater_pipelines.evaluation.quotations import MENTION, OWN, REPORTED, Quotations

__all__ = [
    "MAX_PATTERN_LENGTH",
    "VERDICT_MATCHES",
    "Verdict",
    "VerdictPattern",
    "check_verdict_map_keys",
    "check_verdict_match",
    "compile_verdict_pattern",
    "find_verdict",
    "lookup_verdict",
    "normalize_preference",
    "preference_label",
]

VERDICT_MATCHES = ("last", "first", "unique")
"""Values of ``verdict_match``; the first is the default."""

MAX_PATTERN_LENGTH = 1000
"""Longest ``verdict_pattern`` accepted, in characters."""

_LISTED = 8  # matches quoted in a note or an error message


class VerdictPattern:
    """A compiled ``verdict_pattern`` (RE2): ``pattern`` is the text, ``groups`` the number of groups."""

    def __init__(self, pattern: str) -> None:
        import re2  # type: ignore[import-untyped]

        options = re2.Options()
        options.log_errors = False  # RE2 would print parse errors on stderr
        self.pattern = pattern
        source = _PYTHON_END.sub(r"\1\\z", pattern)
        self._compiled = re2.compile(source, options)
        options.case_sensitive = False
        self._folded = re2.compile(source, options)
        self.groups = int(self._compiled.groups)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        """JSON schema of a field holding one (``autorater params``, the docs' parameter reference): its text."""
        return {"type": "string"}

    def __repr__(self) -> str:
        return f"VerdictPattern({self.pattern!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VerdictPattern) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def tokens(self, text: str) -> list[Match]:
        """Every whole-word match in reading order, as in the module docstring; the first group, or the whole match."""
        candidates: list[tuple[int, int, int, str, tuple[int, int]]] = []  # start, pass, end, token, whole
        plain, origin = _without_emphasis(text)
        passes: list[tuple[str, list[int] | None, bool]] = [(text, None, False), (text, None, True)]
        if origin is not None:
            passes += [(plain, origin, False), (plain, origin, True)]
        for number, (source, where, folded) in enumerate(passes):
            for match in (self._folded if folded else self._compiled).finditer(source):
                token = match.group(1 if self.groups else 0)
                if token is None:
                    continue
                start, end = match.span(1 if self.groups else 0)
                if (folded and not _enclosed(source, match.span(0), start, end)) or not _whole(
                    source, token, start, end
                ):
                    continue
                whole = match.span(0)
                if where is not None:
                    start, end = _original(where, start, end, len(text))
                    whole = _original(where, whole[0], whole[1], len(text))
                candidates.append((start, number, end, token, whole))
        found: list[Match] = []
        quotations = Quotations(text) if candidates else None
        for start, _, end, token, whole in sorted(candidates):
            if found and start < max(found[-1].end, found[-1].start + 1):
                continue  # the same verdict, found by an earlier pass (or overlapping one already taken)
            level = quotations.level(*whole) if quotations is not None else OWN
            found.append(Match(token, start, end, level, *whole))
        return found


class Match(NamedTuple):
    """One verdict match: the verdict text and its span in the original text."""

    token: str
    start: int
    end: int
    level: int
    """:data:`~autorater_pipelines.evaluation.quotations.OWN` (the judge's words), ``MENTION`` (in a quotation,
    code or a blockquote: ``"[[A]]"``) or ``REPORTED`` (what a response said: ``Response B said "[[A]]"``)."""
    whole_start: int
    """Where the whole match (``[[A]]``, not only ``A``) starts."""
    whole_end: int


_ALTERNATIVE = re.compile(r"\s*(?:,\s*)?(?:\band/or\b|\bor\b|\band\b|\bnor\b|\bvs\b\.?|\bversus\b|/|\||,)\s*", re.I)
_NEXT_WORD = re.compile(r"[\w-]+")
_LIST_ITEMS = re.compile(r"(?:\s*(?:,|\bor\b|/|\|)\s*\w+\b){2,}(?=\s*(?:[,.;)\n]|$))")
_DENIED = re.compile(r"\b(?:not|neither|nor|never|than|over|instead of|rather than)[\s*_\"'\u201c\u2018(]*\Z", re.I)
_DENIED_WINDOW = 16  # characters before a match searched for a word that denies it
_REFUSED = re.compile(  # "I will not write [[A]]", "I refuse to output "[[A]]"", "I would never pick [[A]]"
    r"(?:\b(?:not|never)|n['\u2019]t|\brefuse[sd]?\s+to)\s+(?:\w+\s+){0,2}?(?:say|write|output|pick|choose|select|"
    r"give|answer|print|return|declare|prefer|vote(?:\s+for)?|go\s+with)[\s*_\"'\u201c\u2018(:]*\Z",
    re.I,
)
_REFUSED_WINDOW = 48
# Two verdicts in one comparison: the winner is named by the words between them; an unknown comparison names none.
_FIRST_WINS = re.compile(
    r"\s*(?:(?:is|are|was|seems?)\s+)?(?:(?:much|far|clearly|slightly|a\s+bit)\s+)?(?:beats?|>+|outperforms?|"
    r"wins?\s+(?:over|against)|trumps?|(?:better|stronger|superior|preferable|preferred)\s+(?:than|to|over)|"
    r"over|ahead\s+of|rather\s+than|instead\s+of|≻)\s*",
    re.I,
)
_SECOND_WINS = re.compile(
    r"\s*(?:(?:is|are|was|seems?)\s+)?(?:(?:much|far|clearly|slightly|a\s+bit)\s+)?(?:<+|loses?\s+to|"
    r"(?:worse|weaker|inferior|poorer)\s+(?:than|to)|(?:beaten|outperformed|outclassed)\s+by|behind|"
    r"falls?\s+short\s+of|less\s+\w+\s+than|≺)\s*",
    re.I,
)
_COMPARED = re.compile(r"[^.!?;\n]{0,60}", re.I)
_COMPARISON_WORD = re.compile(r"\bthan\b|\bover\b|\s(?:[<>]{1,2}|[≻≺])\s|\b(?:beats?|loses?|outperforms?|to)\b", re.I)
_FORMAT_OPTION = re.compile(  # the answer format copied: "[[A]] if assistant A is better, …, and [[C]] for a tie"
    r"[\s\"'\u201d\u2019*]*(?:(?:if|when|in\s+case)\s+(?:the\s+)?(?:(?:assistant|response|model|output|candidate|"
    r"answer|first|second|both|neither)\b|(?-i:[A-D])\b|they\s+are\b|it\s+is\s+a\s+tie\b)"
    r"|(?:means|indicates|denotes|stands\s+for)\b|=)",
    re.I,
)
_FORMAT_TIE = re.compile(r"[\s\"'\u201d\u2019*]*for\s+(?:a\s+)?(?:tie|draw)\b", re.I)


def _alternatives(text: str, matches: list[Match], verdict_map: Mapping[str, str]) -> dict[int, str]:
    """Matches that name no verdict, with why: offered as alternatives, or denied.

    Alternatives: ``[[A]] or [[B]]``, ``[[A]]/[[B]]``, ``Verdict: A or B``, ``between [[A]] and [[B]]``. Denied:
    ``not [[A]]``, ``neither [[A]] nor [[B]]``, ``[[B]] over [[A]]``, ``better than [[A]]``.
    """
    listed: dict[int, str] = {}
    positions = [lookup_verdict(m.token, verdict_map) for m in matches]
    for i, m in enumerate(matches):
        if i + 1 < len(matches) and positions[i] != positions[i + 1]:
            gap = (m.whole_end, matches[i + 1].whole_start)
            if _ALTERNATIVE.fullmatch(text, *gap) and text[gap[0] : gap[1]].strip():  # a separator, not only spaces
                listed.setdefault(i, _ALTERNATIVE_REMARK)
                listed.setdefault(i + 1, _ALTERNATIVE_REMARK)
        after = _ALTERNATIVE.match(text, m.end)
        word = _NEXT_WORD.match(text, after.end()) if after and text[m.end : after.end()].strip(" ,") else None
        if word and lookup_verdict(word.group(), verdict_map) not in (None, positions[i]):
            listed.setdefault(i, _ALTERNATIVE_REMARK)
        items = _LIST_ITEMS.match(text, m.end)  # "ANSWER: A, B, C, D": the options restated
        if items and all(len(w) == len(m.token) for w in re.findall(r"\w+", items.group())):
            listed.setdefault(i, _ALTERNATIVE_REMARK)
        if _DENIED.search(text, max(0, m.whole_start - _DENIED_WINDOW), m.whole_start) or _REFUSED.search(
            text, max(0, m.whole_start - _REFUSED_WINDOW), m.whole_start
        ):
            listed.setdefault(i, _DENIED_REMARK)
        if _FORMAT_OPTION.match(text, m.whole_end) or (
            i > 0 and listed.get(i - 1) == _FORMAT_REMARK and _FORMAT_TIE.match(text, m.whole_end)
        ):
            listed[i] = _FORMAT_REMARK
    for i in range(len(matches) - 1):  # "[[A]] beats [[B]]", "[[A]] is worse than [[B]]"
        if positions[i] == positions[i + 1] or matches[i].level != matches[i + 1].level:
            continue
        start, end = matches[i].whole_end, matches[i + 1].whole_start
        if (
            _COMPARED.fullmatch(text, start, end) is None
            or not _COMPARISON_WORD.search(text, start, end)
            or _ALTERNATIVE.fullmatch(text, start, end)
        ):
            continue
        if _FIRST_WINS.fullmatch(text, start, end):
            listed.setdefault(i + 1, _LOSER_REMARK)
        elif _SECOND_WINS.fullmatch(text, start, end):
            listed[i] = _LOSER_REMARK
            if listed.get(i + 1) == _DENIED_REMARK:  # "worse than [[B]]": B is the winner, not denied
                del listed[i + 1]
        else:
            listed[i] = listed[i + 1] = " (in a comparison that names no winner, left out)"
    return listed


_ALTERNATIVE_REMARK = " (an alternative, left out)"
_DENIED_REMARK = " (denied or contrasted, left out)"
_FORMAT_REMARK = " (an option of the answer format, left out)"
_LOSER_REMARK = " (the loser of a comparison, left out)"


def _original(where: list[int], start: int, end: int, length: int) -> tuple[int, int]:
    """A span of the text without emphasis, mapped back to the original text."""
    first = where[start] if start < len(where) else length
    return first, (where[end - 1] + 1 if end > start else first)


def _enclosed(text: str, whole: tuple[int, int], start: int, end: int) -> bool:
    """Whether the pattern matched non-space text right before and right after the verdict (``[[b]]``, ``(b)``)."""
    return whole[0] < start and end < whole[1] and not text[start - 1].isspace() and not text[end].isspace()


def _whole(text: str, token: str, start: int, end: int) -> bool:
    """A whole word, not part of a longer one (``CI``) nor of a slash list (``A/B``)."""
    if token and _word(token[-1]) and end < len(text):
        if _word(text[end]) or (text[end] in "/|" and end + 1 < len(text) and _word(text[end + 1])):
            return False
    if token and _word(token[0]) and start > 0:
        if _word(text[start - 1]) or (text[start - 1] in "/|" and start > 1 and _word(text[start - 2])):
            return False
    return True


def _without_emphasis(text: str) -> tuple[str, list[int] | None]:
    """``text`` without Markdown ``*`` and format characters (U+200B …); the original index of each kept character.

    The index list is None when nothing was removed.
    """
    if "*" not in text and text.isascii():
        return text, None
    origin = [i for i, char in enumerate(text) if char != "*" and unicodedata.category(char) != "Cf"]
    if len(origin) == len(text):
        return text, None
    return "".join(text[i] for i in origin), origin


_PYTHON_END = re.compile(r"((?:^|[^\\])(?:\\\\)*)\\Z")
"""Python's end-of-text ``\\Z`` (not after an escaping backslash): RE2 spells it ``\\z``."""


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def compile_verdict_pattern(value: Any, *, source: str = "autorater_parameters") -> VerdictPattern:
    """Compile ``verdict_pattern`` with RE2.

    Raises:
        InputError: not a string, longer than :data:`MAX_PATTERN_LENGTH`, not a valid regex, or using syntax
            RE2 does not run (lookaround, backreferences); the message quotes the pattern.
    """
    if not isinstance(value, str):
        raise InputError(f"verdict_pattern must be a string (a regex), got {value!r}", source=source)
    if len(value) > MAX_PATTERN_LENGTH:
        raise InputError(
            f"verdict_pattern is {len(value)} characters long, more than {MAX_PATTERN_LENGTH}: "
            f"{value[:60]!r}...; match the verdict token only, e.g. '\\[\\[(A|B|C)\\]\\]'",
            source=source,
        )
    try:
        re.compile(value)
    except re.error as exc:
        raise InputError(f"verdict_pattern {value!r} is not a valid regex: {exc}", source=source) from None
    try:
        return VerdictPattern(value)
    except Exception as exc:  # noqa: BLE001 - re2.error, or a pattern too large for RE2's memory budget
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InputError(
            f"verdict_pattern {value!r} cannot be matched in linear time ({reason}): lookaround "
            "((?=...), (?!...), (?<=...)), backreferences (\\1) and possessive or atomic groups are not "
            "supported; match the verdict token itself, e.g. 'Verdict: (A|B|tie)\\b'",
            source=source,
        ) from None


def check_verdict_match(value: Any, *, source: str = "autorater_parameters") -> str:
    """``verdict_match`` lower-cased (None or empty = ``last``).

    Raises:
        InputError: not one of :data:`VERDICT_MATCHES`.
    """
    if value is None or value == "":
        return VERDICT_MATCHES[0]
    label = to_choice(value, VERDICT_MATCHES)
    if label not in VERDICT_MATCHES:
        raise InputError(
            f"verdict_match must be one of {list(VERDICT_MATCHES)} (last: the concluding verdict; first; unique: "
            f"every match must agree), got {value!r}",
            source=source,
        )
    return str(label)


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A parsed free-text verdict."""

    position: str
    """``A`` (shown first), ``B`` (shown second) or ``TIE``."""
    note: str | None = None
    """Set when the matches disagreed: what was found and which one was taken."""
    span: tuple[int, int] | None = None
    """``(start, end)`` of the match that decided (``unique``: the last match) in the text."""


_PREFERENCE_ALIASES = {"A": "A", "MODEL_A": "A", "B": "B", "MODEL_B": "B", "TIE": "TIE", "SAME": "TIE"}
"""Preference labels; ``SAME`` is the tie of Google's AutoSxS rubric."""


def preference_label(value: Any) -> str | None:
    """``A``, ``B`` or ``TIE`` for a written preference (a human label or a few-shot example's choice); None if none.

    Accepts ``A``/``B``/``TIE``/``SAME``, ``Model A``/``Model B`` (Google's judgments table) and
    ``model_a``/``model_b``, case-insensitive; surrounding spaces are ignored and a space, ``_`` or ``-`` between
    ``model`` and the letter are the same. None, NaN and anything else give None.
    """
    if value is None or (isinstance(value, float) and value != value):
        return None
    return _PREFERENCE_ALIASES.get(re.sub(r"[\s_-]+", "_", str(value).strip().upper()))


def lookup_verdict(found: str, verdict_map: Mapping[str, str]) -> str | None:
    """The position ``verdict_map`` gives the matched text (exactly, else case- and space-insensitively), or None."""
    position = verdict_map.get(found)
    if position is None:
        lowered = {_lookup_key(k): v for k, v in verdict_map.items()}
        position = lowered.get(_lookup_key(found))
    return position


def _lookup_key(key: Any) -> str:
    return str(key).strip().lower()


def check_verdict_map_keys(verdict_map: Mapping[Any, Any]) -> None:
    """Refuse ``verdict_map`` keys that :func:`lookup_verdict` could read either way.

    A match is looked up exactly, else ignoring case and surrounding spaces; keys equal that way but mapping to
    different verdicts (values compared case- and space-insensitively) make some spelling of the match ambiguous:
    ``{"A>B": "A", "a>b": "B"}`` would read ``A>b`` as either. Keys that are every spelling of it are kept:
    AlpacaEval's ``{"m": "A", "M": "B"}`` (a match is always one of them exactly).

    Raises:
        ValueError: naming two such keys and their values.
    """
    groups: dict[str, list[Any]] = {}
    for key in verdict_map:
        groups.setdefault(_lookup_key(key), []).append(key)
    for folded, keys in groups.items():
        labels = {str(verdict_map[k]).strip().upper() for k in keys}
        exact = {str(k) for k in keys if str(k) == str(k).strip()}
        if len(labels) > 1 and len(exact) < 2 ** sum(c.lower() != c.upper() for c in folded):
            first = keys[0]
            other = next(
                k for k in keys if str(verdict_map[k]).strip().upper() != str(verdict_map[first]).strip().upper()
            )
            raise ValueError(
                f"verdict_map keys {first!r} and {other!r} are the same verdict (a match is looked up ignoring case "
                f"and surrounding spaces when it is no key exactly) but map to {verdict_map[first]!r} and "
                f"{verdict_map[other]!r}: keep one of them"
            )


def find_verdict(
    text: str,
    pattern: VerdictPattern,
    verdict_map: Mapping[str, str],
    match: str = "last",
    *,
    task_verdicts: str | None = None,
) -> Verdict:
    """Find the verdict in ``text``: every whole-word match of ``pattern``, chosen by ``match``.

    ``task_verdicts`` (``task 'arena_hard' accepts [[A>>B]], …``) is set when the pattern and map are a task's
    own rather than the user's: a verdict outside the map is then reported as outside the task's verdicts.

    Matches offered as alternatives (``[[A]] or [[B]]``, ``between [[A]] and [[B]]``) or denied (``not [[A]]``)
    are left out; quoted matches (mentions of the answer format) are left out when one of the judge's own exists;
    matches in what the judge reports a response said are never taken (module docstring).

    Raises:
        ValueError: no match; only alternatives or reported matches; the chosen match is not a key of
            ``verdict_map``; or, with ``unique``, matches that name different positions or are not in the map
            (the message lists them).
    """
    every = pattern.tokens(text)
    if not every:
        raise ValueError(f"verdict_pattern {pattern.pattern!r} found no match")
    remarks = _alternatives(text, every, verdict_map)
    kept = [m for i, m in enumerate(every) if i not in remarks]
    # The judge's own words first; quotations and code (mentions of the answer format) only when nothing else
    # names a verdict; what a response said (reported speech) never.
    used = [m for m in kept if m.level == OWN] or [m for m in kept if m.level == MENTION]
    for i, m in enumerate(every):
        if i not in remarks and m.level == REPORTED:
            remarks[i] = " (quoted from a response, left out)"
        elif i not in remarks and m.level == MENTION and used and used[0].level == OWN:
            remarks[i] = " (quoted, left out)"
    listing = _listing(every, verdict_map, remarks)
    if not used:
        if any(m.level == REPORTED for m in kept):
            raise ValueError(
                f"no verdict of the judge's own: every match is in text it reports from a response or is offered "
                f"as an alternative ({listing})"
            )
        if all(remark == _ALTERNATIVE_REMARK for remark in remarks.values()):
            raise ValueError(f"no verdict: the matches are offered as alternatives ({listing})")
        raise ValueError(f"no verdict: every match is offered as an alternative or denied ({listing})")
    positions = [lookup_verdict(m.token, verdict_map) for m in used]
    chosen = {"first": 0, "last": len(used) - 1}.get(match)
    distinct = sorted({p for p in positions if p is not None})
    if chosen is None:  # unique
        if len(distinct) != 1 or None in positions:
            raise ValueError(f"ambiguous verdict (verdict_match=unique): {len(used)} matches disagree: {listing}")
        return Verdict(distinct[0], span=(used[-1].start, used[-1].end))
    position = positions[chosen]
    if position is None:
        if task_verdicts:
            raise ValueError(
                f"verdict {used[chosen].token!r} is not one of the verdicts {task_verdicts} (the judge wrote a "
                "label outside the task's scale)"
            )
        raise ValueError(f"verdict {used[chosen].token!r} is not a key of verdict_map {sorted(verdict_map)}")
    note = None
    if len({lookup_verdict(m.token, verdict_map) for m in every}) > 1:
        note = (
            f"verdict_pattern matched {len(every)} verdicts that disagree ({listing}); "
            f"verdict_match={match} took {position}"
        )
    return Verdict(position, note, (used[chosen].start, used[chosen].end))


def _listing(matches: list[Match], verdict_map: Mapping[str, str], remarks: Mapping[int, str]) -> str:
    shown = []
    for i, m in enumerate(matches[:_LISTED]):
        position = lookup_verdict(m.token, verdict_map) or "not in verdict_map"
        shown.append(f"{m.token!r} → {position}{remarks.get(i, '')}")
    return ", ".join(shown) + (f", … {len(matches) - _LISTED} more" if len(matches) > _LISTED else "")


def normalize_preference(value: Any, *, column: str, location: str) -> str:
    """Normalize a human preference label to ``A``, ``B`` or ``TIE``.

    Accepts ``A``/``B``/``TIE`` (``SAME``, the tie of Google's rubric, is ``TIE``), ``Model A``/``Model B`` (the
    choice values of Google's judgments table) and ``model_a``/``model_b``, case-insensitive; surrounding spaces
    are ignored and a space, ``_`` or ``-`` between ``model`` and the letter are the same.

    Raises:
        InputError: any other value, including empty and NaN, naming the row and column.
    """
    label = preference_label(value)
    if label is None:
        raise InputError(
            f"human preference {value!r} is not one of A, B, TIE (Model A/Model B, model_a/model_b and SAME "
            "accepted, any case); "
            "fix the label or drop human_preference_column",
            source=location,
            column=column,
        )
    return label
