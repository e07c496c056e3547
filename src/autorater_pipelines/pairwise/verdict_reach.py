r"""What a ``verdict_pattern`` can give: checked before any model call, so a pattern that cannot work is refused.

The verdict of a match is the text of the pattern's first group, or the whole match when it has no group
(:mod:`autorater_pipelines.pairwise.verdicts`). That text is looked up in ``verdict_map`` (case- and
space-insensitively). So, from the pattern alone:

- a verdict that can be empty (``()``, ``(A?)``, a pattern ``""``) would read a verdict in any answer: refused
  (:func:`check_verdict_not_empty`, with the pattern);
- a ``verdict_map`` key that the verdict's sub-pattern (the first group's text, or the whole pattern) does not
  match in full can never be found (``AB`` with ``{"A": "A"}``: the verdict is ``AB``), and a map whose found
  keys never give ``A`` or never give ``B`` makes every sample of one order an ERROR or the same verdict:
  both refused before the run (:func:`check_verdict_map_reachable`, from ``validate_run`` and the judging
  step). A tie value is optional: forced-choice judges (LLMBar's ``Output (a)``/``Output (b)``) have none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from autorater_pipelines.errors import InputError

__all__ = ["check_verdict_map_reachable", "check_verdict_not_empty", "verdict_subpattern"]

_SRC = "autorater_parameters"
_GLOBAL_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))+")
_EXAMPLE = 'e.g. \'\\[\\[(A|B|C)\\]\\]\' with {"A": "A", "B": "B", "C": "TIE"}'


def verdict_subpattern(pattern: str) -> tuple[str, bool]:
    """The part of ``pattern`` that matches the verdict, and whether it is a group (else the whole pattern).

    The first capturing group (``(...)``, ``(?P<name>...)``, ``(?<name>...)``) is found by reading the pattern
    once: escapes and character classes are skipped, non-capturing and flag groups (``(?:``, ``(?i:``) are not
    the verdict. Global flags at the start (``(?i)``) are kept in front of the group's text.
    """
    depth_at_open: int | None = None
    depth, i, start = 0, 0, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _class_end(pattern, i)
            continue
        if char == "(":
            depth += 1
            if depth_at_open is None and _capturing(pattern, i):
                depth_at_open, start = depth, _group_body(pattern, i)
        elif char == ")":
            if depth == depth_at_open:
                flags = _GLOBAL_FLAGS.match(pattern)
                return (flags.group() if flags else "") + pattern[start:i], True
            depth -= 1
        i += 1
    return pattern, False


def _capturing(pattern: str, i: int) -> bool:
    if not pattern.startswith("(?", i):
        return True
    return pattern.startswith(("(?P<", "(?<"), i) and not pattern.startswith(("(?<=", "(?<!"), i)


def _group_body(pattern: str, i: int) -> int:
    """Where the body of the capturing group opened at ``i`` starts (after ``(?P<name>``)."""
    if pattern.startswith("(?", i):
        return pattern.index(">", i) + 1
    return i + 1


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opened at ``i`` (``[]a]`` and ``[^]a]`` hold a ``]``)."""
    j = i + 1
    if pattern.startswith("^", j):
        j += 1
    if pattern.startswith("]", j):
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _compiled(pattern: str) -> tuple[re.Pattern[str] | None, str, bool]:
    sub, grouped = verdict_subpattern(pattern)
    try:
        return re.compile(sub, re.IGNORECASE), sub, grouped
    except re.error:  # not expected for a pattern that compiled; then nothing can be said about it
        return None, sub, grouped


def _what(pattern: str, sub: str, grouped: bool) -> str:
    if grouped:
        return f"the text of its first group, {sub!r}"
    return f"its whole match, {pattern!r} (it has no group)"


def check_verdict_not_empty(pattern: str) -> None:
    """Refuse a ``verdict_pattern`` whose verdict can be the empty string.

    Raises:
        InputError: the verdict's sub-pattern matches ``""``; the message quotes it.
    """
    compiled, sub, grouped = _compiled(pattern)
    if compiled is not None and compiled.fullmatch(""):
        raise InputError(
            f"verdict_pattern {pattern!r} can find an empty verdict: the verdict is {_what(pattern, sub, grouped)}, "
            f"which matches the empty string, so any answer would give one; make it match the verdict token only, "
            f"{_EXAMPLE}",
            source=_SRC,
        )


def check_verdict_map_reachable(pattern: str, verdict_map: Mapping[str, str]) -> None:
    """Refuse ``verdict_map`` keys the pattern can never find, and a map whose findable keys miss ``A`` or ``B``.

    A key is findable when the verdict's sub-pattern matches it in full (letter case ignored, as in the lookup).

    Raises:
        InputError: the keys that can never be found, or the positions (``A``, ``B``) no findable key gives.
    """
    compiled, sub, grouped = _compiled(pattern)
    if compiled is None:
        return
    dead = [k for k in verdict_map if not (compiled.fullmatch(k) or compiled.fullmatch(k.strip()))]
    if dead:
        raise InputError(
            f"verdict_map keys {dead} can never be found by verdict_pattern {pattern!r}: the verdict is "
            f"{_what(pattern, sub, grouped)}, which must match a key in full; put the verdict in the pattern's "
            f"first group and map each text it can match, {_EXAMPLE}",
            source=_SRC,
        )
    missing = [p for p in ("A", "B") if p not in verdict_map.values()]
    if missing:
        raise InputError(
            f"verdict_map {dict(verdict_map)} never gives {' or '.join(missing)}: the judge could never prefer the "
            f"response shown {' or '.join({'A': 'first', 'B': 'second'}[p] for p in missing)}; map a verdict "
            f"that verdict_pattern {pattern!r} finds to each of A (shown first) and B (shown second), {_EXAMPLE}",
            source=_SRC,
        )
