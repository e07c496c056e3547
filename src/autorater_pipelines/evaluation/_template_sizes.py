"""How large a value is, and how large the result of an amplifying call would be, computed before the call.

Used by :mod:`autorater_pipelines.evaluation.templates`: a call that can build far more than it is given (``join``
with a long separator, ``replace`` of a frequent character by a long text, ``expandtabs``, ``translate``,
``indent``, ``wordwrap``, ``sum`` of lists, ``slice``/``batch`` into many lists, ``lipsum``) is refused *before* it
allocates, so neither memory nor time is spent on a result the limits would refuse anyway. Each estimator takes the
call's own arguments and returns an upper bound in characters (items, for lists), or raises :class:`TypeError` /
:class:`ValueError` for arguments the call itself would refuse (the call then runs and raises its own error).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["FILTER_SIZES", "MATERIALIZED", "METHOD_SIZES", "lipsum_size", "materialized", "size"]

_CONTAINERS = (list, tuple, set, frozenset, dict)


def size(value: Any) -> int:
    """Characters (and items) ``value`` holds, nested lists, tuples, sets and dicts included.

    A shared object counts each time it appears (``str()`` writes it each time); a container inside itself
    counts once. About the length of ``str(value)``, without building it: strings count their characters,
    containers their items plus their contents, other objects 0.
    """
    if isinstance(value, (str, bytes, bytearray)):
        return len(value)
    if not isinstance(value, _CONTAINERS):
        return 0
    known: dict[int, int] = {}
    return _container_size(value, known, set())


def _container_size(value: Any, known: dict[int, int], open_: set[int]) -> int:
    key = id(value)
    if key in known:
        return known[key]
    if key in open_:  # a list that contains itself prints as [...]
        return 0
    open_.add(key)
    items: Iterable[Any] = (x for pair in value.items() for x in pair) if isinstance(value, dict) else value
    total = len(value)
    for item in items:
        if isinstance(item, (str, bytes, bytearray)):
            total += len(item)
        elif isinstance(item, _CONTAINERS):
            total += _container_size(item, known, open_)
    open_.discard(key)
    known[key] = total
    return total


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def materialized(value: Any, step: Callable[[], None]) -> Any:
    """``value`` as a sized sequence (a generator is read into a list, one ``step`` per item); sized values as is."""
    if isinstance(value, (str, bytes, bytearray, list, tuple, range, set, frozenset, dict)):
        return value
    items = []
    for item in value:
        step()
        items.append(item)
    return items


def _items_size(items: Any) -> int:
    total = 0
    for item in items:
        if isinstance(item, (str, bytes, bytearray)):
            total += len(item)
        elif isinstance(item, (int, float)):
            total += len(str(item))
        else:
            total += size(item) + 2
    return total


def _join(separator: Any, items: Any) -> int:
    """``separator.join(items)``: every item once and the separator between each two."""
    count = len(items)
    return _items_size(items) + max(count - 1, 0) * len(separator)


def _replace(text: Any, old: Any, new: Any, count: Any = None) -> int:
    if not isinstance(text, (str, bytes, bytearray)):
        text, old, new = _text(text), _text(old), _text(new)
    occurrences = text.count(old)  # '' occurs len + 1 times, as replace inserts it
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        occurrences = min(occurrences, count)
    return len(text) + occurrences * max(len(new) - len(old), 0)


def _expandtabs(text: Any, tabsize: Any = 8) -> int:
    return len(text) + text.count("\t" if isinstance(text, str) else b"\t") * max(int(tabsize), 0)


def _translate(text: str, table: Any) -> int:
    values: Iterable[Any] = ()
    if isinstance(table, Mapping):
        values = table.values()
    elif isinstance(table, _CONTAINERS):
        values = table
    longest = max((len(v) for v in values if isinstance(v, str)), default=1)
    return len(text) * max(longest, 1)


def _indent(text: Any, width: Any = 4, first: Any = False, blank: Any = False) -> int:
    text = _text(text)
    pad = len(width) if isinstance(width, str) else int(width)
    return len(text) + (text.count("\n") + 1) * max(pad, 0)


def _wordwrap(
    text: Any,
    width: Any = 79,
    break_long_words: Any = True,
    wrapstring: Any = None,
    break_on_hyphens: Any = True,
) -> int:
    text = _text(text)
    breaks = len(text) // max(int(width), 1) + sum(1 for ch in text if ch.isspace()) + 1
    return len(text) + breaks * len(_text(wrapstring) if wrapstring is not None else "\n")


def _sum(items: Any, attribute: Any = None, start: Any = 0) -> int:
    return size(start) + sum(size(item) for item in items)


def _longest_lipsum_word() -> int:
    from jinja2.constants import LOREM_IPSUM_WORDS

    return max(len(word) for word in LOREM_IPSUM_WORDS.split()) + 2  # the word, a space, a comma or full stop


_LONGEST_LIPSUM_WORD = _longest_lipsum_word()


def lipsum_size(n: Any = 5, html: Any = True, min: Any = 20, max: Any = 100) -> int:  # noqa: A002 - jinja's names
    """Upper bound of ``lipsum(n, html, min, max)``'s characters: ``n`` paragraphs of at most ``max`` words."""
    return int(n) * (int(max) * _LONGEST_LIPSUM_WORD + 12)  # + <p></p> and the paragraphs' separator


FILTER_SIZES: dict[str, Callable[..., int]] = {
    "join": lambda value, d="", attribute=None: _join(_text(d), value),
    "replace": _replace,
    "indent": _indent,
    "wordwrap": _wordwrap,
    "sum": _sum,
    "slice": lambda value, slices, fill_with=None: len(value) + int(slices),
    "batch": lambda value, linecount, fill_with=None: 2 * len(value) + int(linecount),
}
"""Filter name → bound of its result, from the filter's arguments (after any context argument)."""

METHOD_SIZES: dict[str, Callable[..., int]] = {
    "join": _join,
    "replace": _replace,
    "expandtabs": _expandtabs,
    "translate": _translate,
}
"""``str``/``bytes`` method name → bound of its result, from the string and the method's arguments."""

MATERIALIZED = frozenset({"join", "sum", "slice", "batch"})
"""Calls whose iterable argument is read into a list first, so its size is known before the call."""
