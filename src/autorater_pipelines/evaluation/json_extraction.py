"""Tolerant extraction of JSON objects from model text.

Models asked for JSON still wrap it in prose, code fences, or leave trailing commas. This module
finds JSON objects or arrays in such text. It never guesses values: text with no parseable JSON raises
:class:`JSONExtractionError`. Work is bounded: at most :data:`MAX_STARTS` candidate start positions are
tried, each with the C JSON decoder, and nesting too deep for the decoder counts as "not JSON".
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_STARTS", "JSONExtractionError", "extract_json", "extract_json_values"]

MAX_STARTS = 64
"""Maximum number of ``{``/``[`` positions tried as the start of a JSON value in one text."""

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_DECODER = json.JSONDecoder()


class JSONExtractionError(ValueError):
    """The text holds no parseable JSON object or array."""


def _loads(snippet: str) -> Any:
    try:
        return json.loads(snippet)
    except json.JSONDecodeError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", snippet))


def _decode_at(text: str, start: int) -> tuple[Any, int] | None:
    """Decode one JSON value starting at ``start``; also retry with trailing commas removed."""
    for candidate in (text, None):
        try:
            if candidate is not None:
                return _DECODER.raw_decode(candidate, start)
            cleaned = _TRAILING_COMMA.sub(r"\1", text[start:])
            value, end = _DECODER.raw_decode(cleaned, 0)
            return value, start + end  # approximate end in the original text
        except (json.JSONDecodeError, RecursionError):
            continue
    return None


def extract_json_values(text: str | None, *, expect: type = dict) -> list[Any]:
    """Every JSON value of type ``expect`` found in ``text``, in order of appearance.

    Tries the whole text first (if it is one JSON value of that type, only it is returned), then the
    contents of Markdown code fences, then JSON values starting at successive ``{``/``[`` positions
    (non-overlapping, at most :data:`MAX_STARTS` attempts).
    """
    if not text or not text.strip():
        return []
    stripped = text.strip()
    try:
        whole = _loads(stripped)
        if isinstance(whole, expect):
            return [whole]
    except (json.JSONDecodeError, RecursionError):
        pass
    for match in _FENCE.finditer(text):
        try:
            fenced = _loads(match.group(1).strip())
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(fenced, expect):
            return [fenced]
    found: list[Any] = []
    position, attempts = 0, 0
    opener = "{" if expect is dict else "["
    while attempts < MAX_STARTS:
        start = text.find(opener, position)
        if start < 0:
            break
        attempts += 1
        decoded = _decode_at(text, start)
        if decoded is None:
            position = start + 1
            continue
        value, end = decoded
        if isinstance(value, expect):
            found.append(value)
        position = max(end, start + 1)
    return found


def extract_json(text: str | None, *, expect: type = dict) -> Any:
    """Return the first JSON value of type ``expect`` (dict or list) found in ``text``.

    Raises:
        JSONExtractionError: no such value is present; the message quotes the start of the text.
    """
    if not text or not text.strip():
        raise JSONExtractionError(f"empty model output: expected a JSON {expect.__name__}")
    values = extract_json_values(text, expect=expect)
    if values:
        return values[0]
    snippet = text.strip()[:120]
    raise JSONExtractionError(f"no JSON {expect.__name__} found in model output starting {snippet!r}")
