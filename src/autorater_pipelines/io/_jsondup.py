"""JSON objects with a key written twice are refused: ``json.loads`` would silently keep the last value.

:func:`unique_keys` is an ``object_pairs_hook`` that raises :class:`DuplicateKeyError`; it costs one dict per
object, as the default. Only when a duplicate is found, :func:`duplicate_key_line` parses the text again (with
the pure-Python scanner, which reports where each object starts and ends) to name the line of the second key.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from typing import Any

__all__ = ["DuplicateKeyError", "duplicate_key_line", "duplicate_key_message", "unique_keys"]


class DuplicateKeyError(ValueError):
    """A JSON object holds ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object as a dict, or :class:`DuplicateKeyError` for a key written twice."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return value


def duplicate_key_message(key: str) -> str:
    """The message for a key written twice (the caller names the file and line)."""
    return f"has the key {key!r} twice in one object; write each key once (JSON readers would keep only the last)"


def duplicate_key_line(text: str, key: str) -> int | None:
    """The 1-based line of the second ``key`` in the first object of ``text`` that holds it twice, or None."""
    spans: list[tuple[int, int]] = []
    found: list[tuple[int, int]] = []

    json_object = getattr(json.decoder, "JSONObject")  # noqa: B009 - not in the type stubs

    def parse_object(
        s_and_end: tuple[str, int], strict: bool, scan_once: Any, hook: Any, pairs_hook: Any, memo: Any
    ) -> tuple[dict[str, Any], int]:
        start = s_and_end[1]
        pairs, end = json_object(s_and_end, strict, scan_once, None, list, memo)
        if not found and [k for k, _ in pairs].count(key) > 1:
            found.append((start, end))
        spans.append((start, end))
        return dict(pairs), end

    decoder = json.JSONDecoder(parse_constant=lambda _: None)
    setattr(decoder, "parse_object", parse_object)  # noqa: B010 - the pure-Python scanner calls it
    setattr(decoder, "scan_once", getattr(json.scanner, "py_make_scanner")(decoder))  # noqa: B009, B010
    try:
        decoder.decode(text)
    except (ValueError, RecursionError):
        pass
    if not found:
        return None
    start, end = found[0]
    inner = [(a, b) for a, b in spans if start < a and b <= end]
    token = re.compile(r"(?<!\\)" + re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:")
    hits = [m.start() for m in token.finditer(text, start, end) if not any(a <= m.start() < b for a, b in inner)]
    position = hits[1] if len(hits) > 1 else start
    return text.count("\n", 0, position) + 1
