"""The position-order line ``autorater run autosxs`` prints when the rows are not judged in both orders."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.pairwise.order import ORDER_KEY

__all__ = ["position_order_line", "print_position_order"]


def position_order_line(params: Mapping[str, Any], judgments: Sequence[Mapping[str, Any]]) -> str | None:
    """``position order: flip "random" (seed 7): 3 of 6 rows shown swapped; …``; None for ``flip: true``.

    Args:
        params: The run's parameters (``autorater_parameters``' ``flip``, ``flip_column``, ``seed``).
        judgments: The judgment rows (``flipped``: true = model B's response shown first).
    """
    judge = params.get("autorater_parameters") or {}
    flip, column = judge.get("flip", True), judge.get("flip_column")
    swapped = sum(bool(r.get(ORDER_KEY)) for r in judgments)
    shown = f"{swapped} of {len(judgments)} rows shown swapped (model B's response first)"
    why = "; no row judged in both orders, so no position consistency"
    if column not in (None, ""):
        return f"  position order: flip_column {column!r}: {shown}{why}"
    if str(flip).lower() == "random":
        return f'  position order: flip "random" (seed {judge.get("seed", 0)}): {shown}{why}'
    if flip is False or str(flip).lower() == "false":
        return f"  position order: flip false: model A's response shown first in every row{why}"
    return None


def print_position_order(params: Mapping[str, Any], out_dir: str) -> None:
    """Print :func:`position_order_line` from ``OUT/judgments.jsonl`` (nothing without it or for ``flip: true``)."""
    path = os.path.join(out_dir, "judgments.jsonl")
    if not os.path.isfile(path):
        return
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    line = position_order_line(params, rows)
    if line:
        print(line)
