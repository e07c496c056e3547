"""Tolerant extraction of JSON objects from model text.

Models asked for JSON still wrap it in prose, code fences, leave trailing commas, or write a raw line
break inside a string. This module finds JSON objects or arrays in such text. It never guesses values:
text with no parseable JSON raises :class:`JSONExtractionError`, and an object that repeats a key with
different values (``{"choice": "A", "choice": "B"}``, which ``json.loads`` silently resolves to the last)
raises :class:`AmbiguousJSONError`.

Work is linear in the length of the text: candidate starts are tried left to right with the C JSON
decoder, a start inside a value already found is skipped, and every attempt is charged the characters
the decoder read; the scan stops once it has read :data:`WORK_FACTOR` times the text (never reached by
prose: a ``{`` that does not start JSON costs a character or two). Nesting too deep for the decoder
counts as "not JSON".
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, NamedTuple

from autorater_pipelines.unencodable import has_surrogate_escape, replace_unencodable

__all__ = [
    "WORK_FACTOR",
    "AmbiguousJSONError",
    "JSONExtractionError",
    "Truncated",
    "extract_json",
    "extract_json_values",
    "is_placeholder",
    "salvage_truncated_object",
]

logger = logging.getLogger(__name__)

WORK_FACTOR = 8
"""The scan reads at most this many times the text's length (plus a constant) across all attempts."""

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_OBJECT_START = re.compile(r"\{\s*[\"}]")  # a JSON object starts with a key or is empty
_DEEP = 1000  # characters charged for an attempt that ended in RecursionError


class JSONExtractionError(ValueError):
    """The text holds no parseable JSON object or array."""


class AmbiguousJSONError(JSONExtractionError):
    """A JSON object repeats a key with different values: which one the model meant is unknown."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value and value[key] != item:
            raise AmbiguousJSONError(
                f"ambiguous JSON: key {key!r} appears more than once with different values "
                f"({value[key]!r} and {item!r})"
            )
        value[key] = item
    return value


# strict=False: raw control characters (a line break typed inside a string) are accepted.
_DECODER = json.JSONDecoder(strict=False, object_pairs_hook=_pairs)


def _loads(snippet: str) -> Any:
    try:
        return _DECODER.decode(snippet)
    except json.JSONDecodeError:
        return _DECODER.decode(_TRAILING_COMMA.sub(r"\1", snippet))


def _fenced(text: str) -> list[str]:
    """The contents of Markdown code fences (```json … ```), split in one pass."""
    pieces = text.split("```")
    blocks = []
    for block in pieces[1:-1:2]:  # odd pieces lie between an opening and a closing fence
        first, _, rest = block.partition("\n")
        blocks.append(rest if first.strip().lower() in ("json", "") else block)
    return blocks


def _trailing_comma_at(text: str, position: int) -> bool:
    """True when the decoder stopped at a ``}``/``]`` right after a comma (a trailing comma)."""
    if position >= len(text) or text[position] not in "}]":
        return False
    index = position - 1
    while index >= 0 and text[index].isspace():
        index -= 1
    return index >= 0 and text[index] == ","


_WINDOW = 256  # characters decoded first; grown 4x while an error may come from the window's end


def _raw_decode(text: str, start: int) -> tuple[Any, int]:
    """``_DECODER.raw_decode(text, start)``, in windows of the text.

    The decoder's error computes its line and column by counting from the start of the text it was given, so
    decoding at every candidate of a long text directly is quadratic (issue 19: 512 KB of ``{"choice": "A",
    "explanation": "`` took 2.3 s). A window of the text gives the same value (an object or array complete in
    it is complete in the text) and the same error unless the error may come from the window's end (a string
    not terminated in it, or an error in its last characters): then the window grows 4x.
    """
    window = _WINDOW
    while True:
        end = min(len(text), start + window)
        try:
            value, stop = _DECODER.raw_decode(text[start:end], 0)
            return value, start + stop
        except json.JSONDecodeError as exc:
            suspect = exc.msg.startswith("Unterminated string") or exc.pos >= end - start - 8
            if end == len(text) or not suspect:
                raise _Failed(start + exc.pos) from None
        window *= 4


class _Failed(Exception):
    """No JSON value at the start: ``pos`` is where the decoder stopped, in the whole text."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


def _decode_at(text: str, start: int) -> tuple[Any, int, int]:
    """Decode one JSON value at ``start``: ``(value or None, end of the value, characters read)``."""
    try:
        value, end = _raw_decode(text, start)
        return value, end, end - start
    except RecursionError:
        return None, start + 1, _DEEP
    except _Failed as exc:
        read = max(1, exc.pos - start)
        if not _trailing_comma_at(text, exc.pos):
            return None, start + 1, read
    cleaned = _TRAILING_COMMA.sub(r"\1", text[start:])
    try:
        value, end = _DECODER.raw_decode(cleaned, 0)
    except (json.JSONDecodeError, RecursionError):
        return None, start + 1, read + len(cleaned)
    removed = len(text) - start - len(cleaned)
    return value, start + end + removed, read + len(cleaned)  # end: approximate, past the value


def extract_json_values(text: str | None, *, expect: type = dict, outside_fences: bool = False) -> list[Any]:
    r"""Every JSON value of type ``expect`` found in ``text``, in order of appearance.

    Tries the whole text first (if it is one JSON value of that type, only it is returned), then the
    contents of Markdown code fences (every fenced value of that type, in order), then JSON values
    starting at successive ``{``/``[`` positions (non-overlapping; linear work, see the module docstring).
    With ``outside_fences``, values written outside the fences follow the fenced ones (an example in a
    fence and the answer in prose are both seen, so a caller can refuse answers that disagree).

    A string the JSON spells as a lone UTF-16 surrogate escape (``"\ud800"``: valid JSON, but no UTF-8 file can
    hold it) comes back with U+FFFD in its place, and a warning is logged (:mod:`autorater_pipelines.unencodable`).

    Raises:
        AmbiguousJSONError: a JSON object in the text repeats a key with different values.
    """
    values = _extract_values(text, expect, outside_fences)
    if values and text is not None and has_surrogate_escape(text):
        values = _repaired(values, text)
    return values


def _repaired(value: Any, text: str) -> Any:
    """``value`` decoded from ``text`` with lone surrogates replaced by U+FFFD (a warning when there were any)."""
    fixed, count = replace_unencodable(value)
    if count:
        logger.warning(
            "a model answer's JSON holds %d lone UTF-16 surrogate escape(s) such as \\ud800 (valid JSON that no UTF-8 "
            "file can hold): replaced by U+FFFD; the answer starts %r",
            count,
            text.strip()[:80],
        )
    return fixed


def _extract_values(text: str | None, expect: type, outside_fences: bool) -> list[Any]:
    if not text or not text.strip():
        return []
    stripped = text.strip()
    try:
        whole = _loads(stripped)
        if isinstance(whole, expect):
            return [whole]
    except (json.JSONDecodeError, RecursionError):
        pass
    fenced_values = []
    for block in _fenced(text):
        try:
            fenced = _loads(block.strip())
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(fenced, expect):
            fenced_values.append(fenced)
    if fenced_values:
        # Every fenced answer, not only the first: a judge that corrects itself in a second block must
        # not be read silently from its draft (callers refuse answers that disagree).
        if outside_fences:
            return fenced_values + _scan("\n".join(text.split("```")[0::2]), expect)
        return fenced_values
    return _scan(text, expect)


def _scan(text: str, expect: type) -> list[Any]:
    found: list[Any] = []
    budget = WORK_FACTOR * len(text) + 10_000
    position = 0
    while budget > 0:
        if expect is dict:
            match = _OBJECT_START.search(text, position)
            start = match.start() if match else -1
        else:
            start = text.find("[", position)
        if start < 0:
            break
        value, end, read = _decode_at(text, start)
        budget -= read
        if value is not None and isinstance(value, expect):
            found.append(value)
            position = max(end, start + 1)
        else:
            position = start + 1 if value is None else max(end, start + 1)
    return found


_PLACEHOLDER = re.compile(r"\s*<[^<>]{1,500}>\s*")


def is_placeholder(value: Any) -> bool:
    """Whether a JSON value is a prompt's placeholder copied as is: one ``<…>`` and nothing else.

    A model that copies the format line of its prompt (``{"explanation": "<compare the responses …>", "choice":
    "B"}``, or the schema instruction's ``"<string>"``) has given no judgment. Text with markup inside
    (``"<b>A</b> is better"``) is not a placeholder.
    """
    return isinstance(value, str) and _PLACEHOLDER.fullmatch(value) is not None


def extract_json(text: str | None, *, expect: type = dict) -> Any:
    """Return the first JSON value of type ``expect`` (dict or list) found in ``text``.

    Raises:
        JSONExtractionError: no such value is present; the message quotes the start of the text.
        AmbiguousJSONError: a JSON object in the text repeats a key with different values.
    """
    if not text or not text.strip():
        raise JSONExtractionError(f"empty model output: expected a JSON {expect.__name__}")
    values = extract_json_values(text, expect=expect)
    if values:
        return values[0]
    snippet = text.strip()[:120]
    raise JSONExtractionError(f"no JSON {expect.__name__} found in model output starting {snippet!r}")


class Truncated(NamedTuple):
    """The complete part of a JSON object whose text ends before the object does."""

    value: dict[str, Any]
    """Every member that was complete; a list member cut off keeps its complete items."""
    cut_member: str | None
    """The member whose value was cut off (its complete items, if a list, are in ``value``), or None."""


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n,":
        position += 1
    return position


def _complete_items(text: str, position: int) -> list[Any]:
    """The complete items of a JSON array starting at ``text[position] == "["`` that is cut off."""
    items: list[Any] = []
    position += 1
    while True:
        position = _skip_space(text, position)
        try:
            item, position = _DECODER.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            return items
        items.append(item)


def salvage_truncated_object(text: str | None) -> Truncated | None:
    """Read what is complete of a JSON object cut off before its end (a reply stopped at max tokens).

    ``{"keywords": "…", "qas": [{…}, {…}, {"question": "Is th`` gives ``{"keywords": "…", "qas": [{…}, {…}]}``
    with ``cut_member="qas"``: members and list items that were finished are kept, the unfinished one is
    dropped (never completed by guessing).

    Returns:
        None when ``text`` holds no ``{``, when the first object is complete (nothing was cut off), or when
        not even one member is complete. Lone surrogate escapes are replaced as in :func:`extract_json_values`.
    """
    found = _salvage(text)
    if found is not None and text is not None and has_surrogate_escape(text):
        found = Truncated(_repaired(found.value, text), found.cut_member)
    return found


def _salvage(text: str | None) -> Truncated | None:
    start = (text or "").find("{")
    if text is None or start < 0:
        return None
    value: dict[str, Any] = {}
    position = start + 1
    while True:
        position = _skip_space(text, position)
        if position >= len(text):
            return Truncated(value, None) if value else None
        if text[position] == "}":
            return None  # the object is complete
        try:
            key, position = _DECODER.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            return Truncated(value, None) if value else None
        position = _skip_space(text, position)
        if not isinstance(key, str) or position >= len(text) or text[position] != ":":
            return Truncated(value, None) if value else None
        position = _skip_space(text, position + 1)
        try:
            value[key], position = _DECODER.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            if position < len(text) and text[position] == "[":
                value[key] = _complete_items(text, position)
            return Truncated(value, key) if value else None
