"""Tolerant extraction of JSON objects from model text.

Models asked for JSON still wrap it in prose, code fences, or leave trailing commas. This module
finds the first JSON object or array in such text. It never guesses values: text with no parseable
JSON raises :class:`JSONExtractionError`.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JSONExtractionError", "extract_json"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class JSONExtractionError(ValueError):
    """The text holds no parseable JSON object or array."""


def _candidates(text: str) -> list[str]:
    out = [m.group(1) for m in _FENCE.finditer(text)]
    out.append(text)
    return out


def _balanced_spans(text: str):
    """Yield substrings that start at '{' or '[' and end at the matching bracket (string-aware)."""
    for start, ch in enumerate(text):
        if ch not in "{[":
            continue
        stack: list[str] = []
        in_str = False
        escaped = False
        for end in range(start, len(text)):
            c = text[end]
            if in_str:
                if escaped:
                    escaped = False
                elif c == "\\":
                    escaped = True
                elif c == '"':
                    in_str = False
                continue
            if c == '"':
                in_str = True
            elif c in "{[":
                stack.append("}" if c == "{" else "]")
            elif c in "}]":
                if not stack or stack.pop() != c:
                    break
                if not stack:
                    yield text[start : end + 1]
                    break


def _loads(snippet: str) -> Any:
    try:
        return json.loads(snippet)
    except json.JSONDecodeError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", snippet))


def extract_json(text: str | None, *, expect: type = dict) -> Any:
    """Return the first JSON value of type ``expect`` (dict or list) found in ``text``.

    Tries, in order: the whole text, the contents of Markdown code fences, then every balanced
    ``{...}``/``[...]`` span; each also with trailing commas removed.

    Raises:
        JSONExtractionError: no such value is present; the message quotes the start of the text.
    """
    if not text or not text.strip():
        raise JSONExtractionError("empty model output: expected a JSON object")
    for candidate in _candidates(text):
        candidate = candidate.strip()
        try:
            value = _loads(candidate)
            if isinstance(value, expect):
                return value
        except json.JSONDecodeError:
            pass
        for span in _balanced_spans(candidate):
            try:
                value = _loads(span)
            except json.JSONDecodeError:
                continue
            if isinstance(value, expect):
                return value
    snippet = text.strip()[:120]
    raise JSONExtractionError(f"no JSON {expect.__name__} found in model output starting {snippet!r}")
