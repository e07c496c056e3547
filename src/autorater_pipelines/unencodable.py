r"""Text that JSON allows but UTF-8 cannot hold: lone UTF-16 surrogates, replaced on the way in.

JSON may spell any UTF-16 code unit as an escape, so ``"\ud800"`` is valid JSON; ``json.loads`` turns it into a
Python string holding the lone surrogate U+D800, which no UTF-8 writer can encode (``UnicodeEncodeError:
surrogates not allowed``). Surrogates U+D800–U+DFFF are the only code points a Python string can hold that UTF-8
cannot (a correct pair, ``"\ud83d\ude00"``, decodes to one character and is kept).

Such text is repaired where it enters the package — a model's answer (:class:`autorater_pipelines.models.
ModelOutput`), JSON parsed out of an answer (:mod:`autorater_pipelines.evaluation.json_extraction`), a line of a
JSON/JSONL file (datasets, ``report``/``rescore`` inputs, ``replay/`` recordings) and a DataFrame row — by
:func:`replace_unencodable`: each lone surrogate becomes U+FFFD (the Unicode replacement character), and the caller
logs a warning with where and how many. Writers therefore never meet it; :func:`autorater_pipelines.io.
to_jsonable`'s ``dumps`` still repairs (and warns about) anything that got past, rather than lose a finished result.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "has_surrogate_escape", "replaced_note", "replace_unencodable"]

REPLACEMENT = "\ufffd"
"""What a lone surrogate is replaced with: U+FFFD REPLACEMENT CHARACTER."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # a surrogate written as a JSON escape (pairs included)


def replaced_note(text: str) -> str:
    """A sentence to add to a message showing ``text`` when it holds U+FFFD (else ``""``).

    Two values that differed only in lone surrogates are the same once replaced (two ids read as one id, for
    example); the note says where the U+FFFD came from, so the user can fix the data.
    """
    if REPLACEMENT not in text:
        return ""
    return (
        f" ({REPLACEMENT!r} U+FFFD stands for a lone UTF-16 surrogate in the data, which UTF-8 cannot hold and is "
        "replaced on reading: values that differed only in such characters are the same; fix the text in the data)"
    )


def has_surrogate_escape(json_text: str) -> bool:
    r"""True when JSON text spells a UTF-16 surrogate as an escape (``\ud800``…``\udfff``), paired or not.

    A fast test (one regular-expression scan) that tells a caller whether the decoded value needs
    :func:`replace_unencodable` at all.
    """
    return _ESCAPE.search(json_text) is not None


def replace_unencodable(value: Any) -> tuple[Any, int]:
    """Replace every lone surrogate in a string, or in the strings (keys too) of nested dicts, lists and tuples.

    Args:
        value: A string, or a JSON-like value (dict / list / tuple of such values); other types pass unchanged.

    Returns:
        ``(value, count)``: the value with each lone surrogate replaced by U+FFFD, and how many were replaced.
        When ``count`` is 0 the value returned is the one given (not a copy).
    """
    if not _contains(value):  # the common case, checked without building anything
        return value, 0
    if isinstance(value, str):
        fixed, count = _SURROGATE.subn(REPLACEMENT, value)
        return fixed, count
    if isinstance(value, dict):
        total = 0
        items = []
        for key, item in value.items():
            new_key, a = replace_unencodable(key)
            new_item, b = replace_unencodable(item)
            total += a + b
            items.append((new_key, new_item))
        return (dict(items), total) if total else (value, 0)
    if isinstance(value, (list, tuple)):
        total = 0
        converted = []
        for item in value:
            new_item, count = replace_unencodable(item)
            total += count
            converted.append(new_item)
        if not total:
            return value, 0
        return (tuple(converted) if isinstance(value, tuple) else converted), total
    return value, 0


def _contains(value: Any) -> bool:
    """True when a string in ``value`` (nested dicts, lists, tuples; keys too) holds a lone surrogate."""
    if isinstance(value, str):
        return not value.isascii() and _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        for key, item in value.items():
            if _contains(key) or (item is not None and _contains(item)):
                return True
        return False
    if isinstance(value, (list, tuple)):
        for item in value:
            if _contains(item):
                return True
    return False
