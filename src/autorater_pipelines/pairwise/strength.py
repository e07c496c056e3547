r"""Verdict strength: Arena-Hard's five-label scale ``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A``.

A judge may say how much better a response is. Arena-Hard-Auto's judge ends with ``My final verdict is:
[[A>B]]``: ``A>>B`` (the response shown first is much better), ``A>B`` (slightly better), ``A=B`` (a tie),
``B>A``, ``B>>A``. The labels name POSITIONS, as every verdict does; :func:`~autorater_pipelines.pairwise.voting.
to_sample` maps the position back to the model (a flipped sample's ``A>>B`` is a strong win of model B) and
keeps the strength in the sample (``strong``: true for ``A>>B``/``B>>A``, false for any other verdict; absent
when the judge settings have no strong verdict). The arena counts a strong sample as ``strong_verdict_weight``
battles (:mod:`autorater_pipelines.arena.leaderboard`); AutoSxS reads the choice only, so there a strong verdict
is a plain win.

Where strong verdicts come from:

- a ``verdict_map`` value may be one of the five labels instead of ``A``/``B``/``TIE``
  (``{"A>>B": "A>>B", "A>B": "A>B", ...}``, or ``{"much better": "A>>B"}``): the judge settings keep its position
  in ``verdict_map`` and list the key in ``strong_verdicts`` (:func:`split_strength`);
- a task with a free-text verdict format (the built-in ``arena_hard`` task) gives its own ``verdict_pattern`` and
  ``verdict_map`` when ``autorater_parameters`` set none (:func:`task_settings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autorater_pipelines.pairwise.verdicts import lookup_verdict

if TYPE_CHECKING:
    from autorater_pipelines.pairwise.tasks._definition import TaskDefinition

__all__ = [
    "ARENA_HARD_VERDICT_MAP",
    "ARENA_HARD_VERDICT_PATTERN",
    "STRENGTH_LABELS",
    "sample_strength",
    "split_strength",
    "task_verdict_labels",
]

STRENGTH_LABELS: dict[str, tuple[str, bool]] = {
    "A>>B": ("A", True),
    "A>B": ("A", False),
    "A=B": ("TIE", False),
    "B>A": ("B", False),
    "B>>A": ("B", True),
}
"""Arena-Hard's verdict label → ``(position, strong)``; positions as shown (``A`` = the response shown first)."""

ARENA_HARD_VERDICT_PATTERN = r"\[\[([AB<>=]+)\]\]"
"""Arena-Hard-Auto's verdict pattern: a label in double brackets (``[[A>B]]``); a label not in the map, such as
``[[A>>>B]]``, is a parse error naming it."""

ARENA_HARD_VERDICT_MAP: dict[str, str] = {label: label for label in STRENGTH_LABELS}
"""The five labels, each mapped to itself (``split_strength`` turns it into positions and strong keys)."""


def split_strength(verdict_map: Mapping[Any, Any]) -> tuple[dict[Any, Any], list[str]]:
    """``verdict_map`` with every strength label replaced by its position, and the keys whose label is strong.

    Values other than the five labels (``A``, ``B``, ``TIE``, or anything invalid) are left for the caller's
    check; labels are read with surrounding spaces ignored and in any case (``a>>b``).

    Returns:
        ``(positions, strong_keys)``: e.g. ``{"A>>B": "A>>B", "A=B": "A=B"}`` → ``({"A>>B": "A", "A=B": "TIE"},
        ["A>>B"])``.
    """
    positions: dict[Any, Any] = {}
    strong: list[str] = []
    for key, value in verdict_map.items():
        label = STRENGTH_LABELS.get(str(value).strip().upper()) if isinstance(value, str) else None
        if label is None:
            positions[key] = value
            continue
        positions[key] = label[0]
        if label[1]:
            strong.append(str(key))
    return positions, strong


def task_verdict_labels(task: TaskDefinition) -> str:
    """The verdicts a task with its own verdict format accepts, as the judge writes them.

    ``[[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]]`` for Arena-Hard's pattern (a label in double brackets);
    the ``verdict_map`` keys, quoted, for any other pattern.
    """
    if task.verdict_pattern == ARENA_HARD_VERDICT_PATTERN:
        return ", ".join(f"[[{key}]]" for key in task.verdict_map)
    return ", ".join(repr(key) for key in task.verdict_map)


def sample_strength(text: str | None, span: tuple[int, int] | None, strong_verdicts: Sequence[str]) -> bool | None:
    """Whether the deciding verdict of an answer is strong; None when there is no strong verdict to find.

    Args:
        text: The judge's answer.
        span: Where the deciding verdict token is in ``text`` (:class:`~autorater_pipelines.pairwise.answers.
            ParsedVerdict`'s ``span``).
        strong_verdicts: The ``verdict_map`` keys that are strong (the judge settings' ``strong_verdicts``),
            looked up as ``verdict_map`` keys are (case- and space-insensitively).
    """
    if not strong_verdicts:
        return None
    if text is None or span is None:
        return False
    strong = dict.fromkeys(strong_verdicts, "strong")
    return lookup_verdict(text[span[0] : span[1]], strong) is not None
