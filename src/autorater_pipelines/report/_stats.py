"""Numbers shown in the report: one :class:`Stat` per figure, tied to its ``metrics.json`` key.

Every number taken from ``metrics.json`` carries its key and exact value into the HTML
(``data-key``/``data-value`` attributes), so a test — or a reader — can check the page against the
file. Numbers the report derives itself (e.g. the length-bias figures) have no key.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

__all__ = ["Stat", "flagged_first", "fmt", "metric"]

Format = Literal["pct", "count", "float", "score"]


def fmt(value: Any, kind: Format = "pct") -> str:
    """Format a value for display: ``pct`` 43.5%, ``count`` 1,234, ``float`` 0.713, ``score`` 0.8125."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "pct":
        return f"{value:.1%}"
    if kind == "count":
        return f"{int(value):,}"
    if kind == "float":
        return f"{value:.3f}"
    return f"{value:.4f}"


@dataclasses.dataclass(frozen=True)
class Stat:
    """One labelled number.

    Attributes:
        label: What the number is.
        text: The number as shown.
        key: Its ``metrics.json`` key, or None for numbers the report derives.
        value: The exact value (JSON text in the HTML) when ``key`` is set.
        interval: The 95 % interval as shown ("36.8%–50.4%"), or "".
        note: Extra text shown after the number (e.g. "174 of 200 rows").
    """

    label: str
    text: str
    key: str | None = None
    value: Any = None
    interval: str = ""
    note: str = ""

    @property
    def value_json(self) -> str:
        """The exact value as JSON (for the ``data-value`` attribute)."""
        return json.dumps(self.value)


def metric(metrics: Mapping[str, Any], key: str, label: str, kind: Format = "pct", note: str = "") -> Stat:
    """A :class:`Stat` for ``metrics[key]``, with its ``_ci_lower``/``_ci_upper`` interval when present."""
    value = metrics.get(key)
    low, high = metrics.get(f"{key}_ci_lower"), metrics.get(f"{key}_ci_upper")
    interval = f"{fmt(low, kind)}–{fmt(high, kind)}" if low is not None and high is not None else ""
    return Stat(label, fmt(value, kind), key=key, value=value, interval=interval, note=note)


def flagged_first(flagged: Sequence[bool], max_rows: int) -> list[int]:
    """Indices of the rows a report table shows: all, or past ``max_rows`` every flagged row first, then the others.

    The selection keeps file order; both reports use this rule.
    """
    if len(flagged) <= max_rows:
        return list(range(len(flagged)))
    chosen = [i for i, f in enumerate(flagged) if f][:max_rows]
    rest = [i for i, f in enumerate(flagged) if not f][: max_rows - len(chosen)]
    return sorted(chosen + rest)
