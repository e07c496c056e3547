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

__all__ = ["Stat", "flagged_first", "fmt", "metric", "original_metrics"]

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
        original: After ``autorater rescore`` changed this number: the run's own value as shown, with its
            interval ("43.5% (95% CI 36.8%–50.4%)"), from ``rescore_options.original``; else "".
        original_value: That value exactly (JSON text in the HTML), or None.
    """

    label: str
    text: str
    key: str | None = None
    value: Any = None
    interval: str = ""
    note: str = ""
    original: str = ""
    original_value: Any = None

    @property
    def value_json(self) -> str:
        """The exact value as JSON (for the ``data-value`` attribute)."""
        return json.dumps(self.value)

    @property
    def original_json(self) -> str:
        """The run's own value as JSON (for the ``data-original`` attribute)."""
        return json.dumps(self.original_value)


def metric(metrics: Mapping[str, Any], key: str, label: str, kind: Format = "pct", note: str = "") -> Stat:
    """A :class:`Stat` for ``metrics[key]``, with its ``_ci_lower``/``_ci_upper`` interval when present.

    When a re-scoring changed the value, the run's own value (``rescore_options.original``) comes with it.
    """
    value = metrics.get(key)
    stat = Stat(label, fmt(value, kind), key=key, value=value, interval=_interval(metrics, key, kind), note=note)
    original = original_metrics(metrics)
    if key in original:
        before = _interval({**metrics, **original}, key, kind)
        shown = fmt(original[key], kind) + (f" (95% CI {before})" if before else "")
        stat = dataclasses.replace(stat, original=shown, original_value=original[key])
    return stat


def _interval(metrics: Mapping[str, Any], key: str, kind: Format) -> str:
    low, high = metrics.get(f"{key}_ci_lower"), metrics.get(f"{key}_ci_upper")
    return f"{fmt(low, kind)}–{fmt(high, kind)}" if low is not None and high is not None else ""


def original_metrics(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    """The run's own values of the metrics a re-scoring changed (``rescore_options.original``), else {}."""
    options = metrics.get("rescore_options")
    original = options.get("original") if isinstance(options, Mapping) else None
    return original if isinstance(original, Mapping) else {}


def flagged_first(flagged: Sequence[bool], max_rows: int) -> list[int]:
    """Indices of the rows a report table shows: all, or past ``max_rows`` every flagged row first, then the others.

    The selection keeps file order; both reports use this rule.
    """
    if len(flagged) <= max_rows:
        return list(range(len(flagged)))
    chosen = [i for i, f in enumerate(flagged) if f][:max_rows]
    rest = [i for i, f in enumerate(flagged) if not f][: max_rows - len(chosen)]
    return sorted(chosen + rest)
