"""Battles: judged samples between two models, the input of every ranking.

A battle is one judged sample (Arena-Hard's convention: both games of a pair count): ``winner`` ``A`` (the first
model, ``model_a``), ``B`` or ``TIE``, with a ``weight`` (a strong verdict ``A>>B`` counts as
``strong_verdict_weight`` battles, 3 by default, as Arena-Hard-Auto does). Responses, when given, feed the style
features (length in characters; Markdown headers, list items and bold spans, counted outside fenced code as in
FastChat / Arena-Hard-Auto's ``count_markdown_elements``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

__all__ = ["Battles", "WINNERS", "battles_from_records", "markdown_counts"]

WINNERS = {"A": 1.0, "B": 0.0, "TIE": 0.5}
"""A battle's ``winner`` → the first model's share of the win (a tie is half a win to each)."""

_CODE_BLOCK = re.compile(r"```[^`]*```")
_HEADERS = [re.compile(rf"^#{{{level}}}\s", re.M) for level in range(1, 7)]
_ORDERED = re.compile(r"^\s*\d+\.\s", re.M)
_UNORDERED = re.compile(r"^\s*[-*+]\s", re.M)
_BOLD = (re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__"))


def markdown_counts(text: str) -> tuple[int, int, int]:
    """``(headers, list items, bold spans)`` of ``text`` with fenced code blocks removed.

    Headers count ``#`` to ``######`` followed by whitespace at a line start; list items ``1.`` or ``-``/``*``/``+``
    after optional indentation; bold ``**…**`` and ``__…__`` within one line (FastChat's style-control counts).
    """
    text = _CODE_BLOCK.sub("", text)
    headers = sum(len(pattern.findall(text)) for pattern in _HEADERS)
    lists = len(_ORDERED.findall(text)) + len(_UNORDERED.findall(text))
    bold = sum(len(pattern.findall(text)) for pattern in _BOLD)
    return headers, lists, bold


@dataclasses.dataclass(frozen=True)
class Battles:
    """Battles as arrays (B battles, N models, P prompts).

    Attributes:
        models: The N model names, sorted; indices below point into it.
        prompts: The P prompt keys, in first-seen order.
        prompt: Shape (B,), int: each battle's prompt.
        first: Shape (B,), int: the model shown as ``model_a``.
        second: Shape (B,), int: the other model.
        outcome: Shape (B,), float: the first model's share of the win: 1, 0 or 0.5 (tie).
        weight: Shape (B,), float ≥ 0: how many battles this one counts as.
        length: Shape (B, 2), float, or None: response lengths in characters (first, second).
        markdown: Shape (B, 2, 3), float, or None: (headers, list items, bold) of each response.
    """

    models: tuple[str, ...]
    prompts: tuple[Any, ...]
    prompt: np.ndarray
    first: np.ndarray
    second: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray
    length: np.ndarray | None = None
    markdown: np.ndarray | None = None

    def __len__(self) -> int:
        """Number of battle records (each may weigh more than one battle)."""
        return int(self.first.shape[0])


def battles_from_records(records: Iterable[Mapping[str, Any]], *, source: str = "battles") -> Battles:
    """Battles from mappings with ``prompt_id``, ``model_a``, ``model_b``, ``winner`` (+ optional keys).

    Optional keys: ``weight`` (default 1), ``response_a`` and ``response_b`` (texts, for style features).
    Responses must be given for every record or for none (style features need both sides of every battle).

    Raises:
        ValueError: a record lacks a key, names the same model twice, has a ``winner`` other than ``A``, ``B`` or
            ``TIE``, a negative or non-numeric weight, or responses for only some records; the message names the
            record's position in ``source``.
    """
    rows = list(records)
    if not rows:
        raise ValueError(f"{source}: no battles to rank")
    names: set[str] = set()
    prompts: dict[Any, int] = {}
    with_text = None
    for number, row in enumerate(rows, start=1):
        for key in ("prompt_id", "model_a", "model_b", "winner"):
            if key not in row:
                raise ValueError(f"{source} record {number}: missing {key!r} (has {sorted(row)})")
        if str(row["model_a"]) == str(row["model_b"]):
            raise ValueError(f"{source} record {number}: model_a and model_b are both {row['model_a']!r}")
        if row["winner"] not in WINNERS:
            raise ValueError(f"{source} record {number}: winner must be one of {list(WINNERS)}, got {row['winner']!r}")
        weight = row.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not weight >= 0:
            raise ValueError(f"{source} record {number}: weight must be a number >= 0, got {weight!r}")
        has_text = "response_a" in row and "response_b" in row
        if with_text is None:
            with_text = has_text
        elif has_text != with_text:
            raise ValueError(
                f"{source} record {number}: response_a/response_b given for some battles only; give them for all "
                "(style control needs both responses of every battle) or for none"
            )
        names.update((str(row["model_a"]), str(row["model_b"])))
        prompts.setdefault(row["prompt_id"], len(prompts))
    models = tuple(sorted(names))
    index = {name: i for i, name in enumerate(models)}
    length = markdown = None
    if with_text:
        texts = [(str(row["response_a"] or ""), str(row["response_b"] or "")) for row in rows]
        length = np.array([[len(a), len(b)] for a, b in texts], dtype=float)
        markdown = np.array([[markdown_counts(a), markdown_counts(b)] for a, b in texts], dtype=float)
    return Battles(
        models=models,
        prompts=tuple(prompts),
        prompt=np.array([prompts[row["prompt_id"]] for row in rows], dtype=np.int64),
        first=np.array([index[str(row["model_a"])] for row in rows], dtype=np.int64),
        second=np.array([index[str(row["model_b"])] for row in rows], dtype=np.int64),
        outcome=np.array([WINNERS[row["winner"]] for row in rows], dtype=float),
        weight=np.array([float(row.get("weight", 1.0)) for row in rows], dtype=float),
        length=length,
        markdown=markdown,
    )
