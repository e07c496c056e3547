"""Figures as inline SVG, drawn here: bar charts with intervals, stacked histograms, count matrices, lines.

Why not a plotting library: the report step is a fresh process on every run, and importing matplotlib (with
numpy, its font manager and font cache) cost more CPU than the rest of a small run's report; the figures
are five simple chart types. Text stays ``<text>`` (searchable, drawn by the browser with its own fonts),
every value is written out (bar labels, cell counts), and the output is deterministic: the same data gives
the same bytes. Each chart is a :class:`Plot` (an area with linear scales) that callers fill with the
functions below, then :func:`figure` renders it into a :class:`FigureHTML`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from markupsafe import Markup, escape

__all__ = [
    "COLORS",
    "FigureHTML",
    "Plot",
    "Series",
    "bar_with_intervals",
    "figure",
    "forest",
    "heatmap",
    "histogram",
    "lines_with_intervals",
]

COLORS = {"A": "#1a73e8", "B": "#e8710a", "TIE": "#9aa0a6", "ERROR": "#d93025", "human": "#188038"}
"""Colours of the report: model A, model B, ties, errors, human labels (also used by the CSS)."""

_INK, _GRID, _FONT = "#202124", "#dadce0", 12
_CHAR_WIDTH = 7.0  # average width of a character of the 12 px sans-serif font, for margins


@dataclasses.dataclass(frozen=True)
class FigureHTML:
    """One rendered figure of the report.

    Attributes:
        id: HTML id of the ``<figure>`` element (tests look figures up by it).
        title: Heading shown above the figure.
        svg: The figure as inline SVG markup.
        caption: How to read the figure (plain text).
    """

    id: str
    title: str
    svg: Markup
    caption: str = ""


def _num(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def percent(value: float) -> str:
    """Tick label of a fraction: ``0.2`` → ``20%``."""
    return f"{value * 100:.0f}%"


def nice_ticks(high: float, most: int = 6, *, integer: bool = False) -> list[float]:
    """Ticks 0, step, 2·step … ≥ ``high`` with a step of 1, 2 or 5 × 10^k (at most ``most`` + 1 ticks).

    With ``integer`` (counts), the step is at least 1.
    """
    high = max(high, 1.0)
    step = 10 ** math.floor(math.log10(high / most))
    if integer:
        step = max(step, 1)
    for factor in (1, 2, 5, 10):
        if high / (step * factor) <= most:
            step *= factor
            break
    count = math.ceil(high / step - 1e-9)
    return [i * step for i in range(count + 1)]


class Plot:
    """A chart: a plot area within margins, linear scales ``x`` and ``y``, SVG elements in drawing order.

    Args:
        width: Width in px (the page scales the SVG down to its column).
        height: Height in px.
        x: Data range ``(low, high)`` shown from the left to the right edge of the area.
        y: Data range shown from the bottom to the top edge.
        margins: ``(left, right, top, bottom)`` in px, room for tick labels and axis labels.
    """

    def __init__(
        self,
        width: float,
        height: float,
        *,
        x: tuple[float, float] = (0.0, 1.0),
        y: tuple[float, float] = (0.0, 1.0),
        margins: tuple[float, float, float, float] = (48, 16, 10, 40),
    ) -> None:
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = margins
        self.x, self.y = x, y
        self.elements: list[str] = []

    def sx(self, value: float) -> float:
        """Horizontal pixel position of data value ``value``."""
        low, high = self.x
        return self.left + (value - low) / (high - low) * (self.width - self.left - self.right)

    def sy(self, value: float) -> float:
        """Vertical pixel position of data value ``value`` (up is larger)."""
        low, high = self.y
        return self.height - self.bottom - (value - low) / (high - low) * (self.height - self.top - self.bottom)

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: str, stroke: str | None = None) -> None:
        """A filled rectangle between data corners ``(x0, y0)`` and ``(x1, y1)``."""
        left, right = sorted((self.sx(x0), self.sx(x1)))
        top, bottom = sorted((self.sy(y0), self.sy(y1)))
        edge = f' stroke="{stroke}"' if stroke else ""
        self.elements.append(
            f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(right - left)}" height="{_num(bottom - top)}" '
            f'fill="{fill}"{edge}/>'
        )

    def segment(
        self, x0: float, y0: float, x1: float, y1: float, color: str = _INK, width: float = 1, dash: bool = False
    ) -> None:
        """A straight line between two data points."""
        self.pixel_segment(self.sx(x0), self.sy(y0), self.sx(x1), self.sy(y1), color, width, dash)

    def pixel_segment(
        self, x0: float, y0: float, x1: float, y1: float, color: str = _INK, width: float = 1, dash: bool = False
    ) -> None:
        """A straight line between two pixel positions."""
        style = ' stroke-dasharray="5 3"' if dash else ""
        self.elements.append(
            f'<line x1="{_num(x0)}" y1="{_num(y0)}" x2="{_num(x1)}" y2="{_num(y1)}" stroke="{color}" '
            f'stroke-width="{_num(width)}"{style}/>'
        )

    def text(
        self, px: float, py: float, content: str, *, anchor: str = "middle", color: str = _INK, rotate: bool = False
    ) -> None:
        """Text at pixel position ``(px, py)`` (vertically centred), escaped; newlines start new lines."""
        lines = content.split("\n")
        turn = f' transform="rotate(-90 {_num(px)} {_num(py)})"' if rotate else ""
        first = -(len(lines) - 1) * 0.6
        spans = "".join(
            f'<tspan x="{_num(px)}" dy="{_num(first if i == 0 else 1.2)}em">{escape(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        body = spans if len(lines) > 1 else str(escape(content))
        self.elements.append(
            f'<text x="{_num(px)}" y="{_num(py)}" text-anchor="{anchor}" dominant-baseline="central" '
            f'fill="{color}"{turn}>{body}</text>'
        )

    def x_axis(self, ticks: Iterable[tuple[float, str]], label: str = "", *, top: bool = False) -> None:
        """Tick labels (and a baseline unless ``top``) along the bottom, or the top, of the area."""
        edge = self.top if top else self.height - self.bottom
        if not top:
            self.pixel_segment(self.left, edge, self.width - self.right, edge)
        for value, text in ticks:
            self.text(self.sx(value), edge + (-10 if top else 12 + 7 * text.count("\n")), text)
        if label:
            self.text((self.left + self.width - self.right) / 2, 8 if top else self.height - 9, label)

    def y_axis(self, ticks: Iterable[tuple[float, str]], label: str = "") -> None:
        """Tick labels and a baseline along the left edge of the area."""
        self.pixel_segment(self.left, self.top, self.left, self.height - self.bottom)
        for value, text in ticks:
            self.text(self.left - 6, self.sy(value), text, anchor="end")
        if label:
            self.text(12, (self.top + self.height - self.bottom) / 2, label, rotate=True)

    def legend(self, items: Sequence[tuple[str, str]]) -> None:
        """Colour keys ``(label, colour)`` stacked in the top-left corner of the area."""
        for i, (label, color) in enumerate(items):
            py = self.top + 10 + 16 * i
            self.elements.append(
                f'<rect x="{_num(self.left + 8)}" y="{_num(py - 5)}" width="10" height="10" fill="{color}"/>'
            )
            self.text(self.left + 24, py, label, anchor="start")

    def svg(self, title: str) -> Markup:
        """The chart as one ``<svg>`` element labelled ``title`` for screen readers."""
        return Markup(
            f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}" '
            f'width="{_num(self.width)}" height="{_num(self.height)}" '
            f'viewBox="0 0 {_num(self.width)} {_num(self.height)}" font-family="DejaVu Sans, Arial, Helvetica, '
            f'sans-serif" font-size="{_FONT}">' + "".join(self.elements) + "</svg>"
        )


def figure(fig_id: str, title: str, caption: str, plot: Plot) -> FigureHTML:
    """Render ``plot`` as the figure ``fig_id`` of the page."""
    return FigureHTML(fig_id, title, plot.svg(title), caption)


def bar_with_intervals(
    labels: Sequence[str],
    values: Sequence[float | None],
    intervals: Sequence[tuple[float | None, float | None]],
    colors: Sequence[str],
    *,
    xlabel: str,
    reference: float | None = None,
) -> Plot:
    """Horizontal bars of fractions in [0, 1] with 95 % interval whiskers; each value is in its bar's label.

    Args:
        labels: One per bar, top to bottom.
        values: Fractions (None: no bar, ``n/a`` in the label).
        intervals: ``(low, high)`` per bar; a whisker is drawn where both are known.
        colors: Fill per bar.
        xlabel: Label of the horizontal axis.
        reference: Draw a light vertical line at this value (e.g. 0.5), behind the bars.
    """
    shown = [f"{label}  {'n/a' if v is None else f'{v:.1%}'}" for label, v in zip(labels, values, strict=True)]
    left = 16 + _CHAR_WIDTH * max((len(s) for s in shown), default=0)
    plot = Plot(560, 34 * len(labels) + 56, y=(-0.5, len(labels) - 0.5), margins=(left, 20, 8, 40))
    if reference is not None:
        plot.segment(reference, plot.y[0], reference, plot.y[1], _GRID)
    for i, (value, (low, high), color) in enumerate(zip(values, intervals, colors, strict=True)):
        row = len(labels) - 1 - i
        if value is not None:
            plot.rect(0.0, row - 0.3, value, row + 0.3, color)
        if value is not None and low is not None and high is not None:
            plot.segment(low, row, high, row, _INK, 1.2)
            for end in (low, high):
                plot.segment(end, row - 0.12, end, row + 0.12, _INK, 1.2)
        plot.text(plot.left - 6, plot.sy(row), shown[i], anchor="end")
    plot.x_axis([(t / 5, percent(t / 5)) for t in range(6)], xlabel)
    return plot


def _counts(values: Sequence[float], edges: Sequence[float]) -> list[int]:
    """Values per bin ``[edges[i], edges[i+1])``, the last bin closed; values outside are not counted."""
    counts = [0] * (len(edges) - 1)
    for value in values:
        if edges[0] <= value <= edges[-1]:
            index = next((i for i in range(len(counts)) if value < edges[i + 1]), len(counts) - 1)
            counts[index] += 1
    return counts


def histogram(
    stacks: Sequence[tuple[str, Sequence[float], str]],
    edges: Sequence[float],
    *,
    xlabel: str,
    marker: float | None = None,
) -> Plot:
    """Stacked histogram of values in ``[edges[0], edges[-1]]``: ``stacks`` = ``(label, values, colour)``.

    Args:
        stacks: Groups drawn on top of each other, bottom first; empty groups are left out.
        edges: Bin edges, increasing (bins ``[e0, e1)`` … ``[e(n-1), en]``).
        xlabel: Label of the horizontal axis.
        marker: Draw a dashed vertical line at this value (e.g. the mean).
    """
    present = [(label, list(values), color) for label, values, color in stacks if len(values)]
    counts = [_counts(values, edges) for _, values, _ in present]
    totals = [sum(column) for column in zip(*counts, strict=True)] if counts else [0]
    ticks = nice_ticks(max(totals), integer=True)
    plot = Plot(560, 280, x=(edges[0], edges[-1]), y=(0, ticks[-1]), margins=(56, 16, 10, 40))
    if not present:
        plot.text(plot.sx((edges[0] + edges[-1]) / 2), plot.sy(ticks[-1] / 2), "no values")
    base = [0] * (len(edges) - 1)
    for (_, _, color), column in zip(present, counts, strict=True):
        for i, count in enumerate(column):
            if count:
                plot.rect(edges[i], base[i], edges[i + 1], base[i] + count, color, stroke="#ffffff")
                base[i] += count
    if marker is not None:
        plot.segment(marker, 0, marker, ticks[-1], _INK, 1, dash=True)
    plot.x_axis([(e, f"{e:g}") for e in edges[:: max(1, (len(edges) - 1) // 5)]], xlabel)
    plot.y_axis([(t, f"{t:g}") for t in ticks], "rows")
    if len(present) > 1:
        plot.legend([(f"{label} ({len(values)})", color) for label, values, color in present])
    return plot


def _blue(share: float) -> str:
    """Colour of a matrix cell: from #f7fbff (0) to #08519c (1)."""
    low, high = (0xF7, 0xFB, 0xFF), (0x08, 0x51, 0x9C)
    return "#" + "".join(f"{round(a + (b - a) * share):02x}" for a, b in zip(low, high, strict=True))


def heatmap(
    matrix: Sequence[Sequence[int | None]], rows: Sequence[str], columns: Sequence[str], ylabel: str, xlabel: str
) -> Plot:
    """Count matrix with the count written in every cell (darker = more), column labels on top.

    The cell counts are the only numeric text of the figure, row by row; a ``None`` cell (no such pair, e.g. a
    model against itself) is left blank.
    """
    left = 40 + _CHAR_WIDTH * max(len(r) for r in rows)
    plot = Plot(
        90 * len(columns) + left,
        44 * len(rows) + 48,
        x=(-0.5, len(columns) - 0.5),
        y=(len(rows) - 0.5, -0.5),
        margins=(left, 8, 44, 4),
    )
    most = max((c for r in matrix for c in r if c is not None), default=0)
    for i, counts in enumerate(matrix):
        for j, count in enumerate(counts):
            if count is None:
                plot.rect(j - 0.5, i - 0.5, j + 0.5, i + 0.5, "#ffffff", stroke="#ffffff")
                continue
            plot.rect(j - 0.5, i - 0.5, j + 0.5, i + 0.5, _blue(count / max(1, most)), stroke="#ffffff")
            dark = most and count > most / 2
            plot.text(plot.sx(j), plot.sy(i), str(int(count)), color="#ffffff" if dark else _INK)
    plot.x_axis([(j, c) for j, c in enumerate(columns)], xlabel, top=True)
    for i, r in enumerate(rows):
        plot.text(plot.left - 6, plot.sy(i), r, anchor="end")
    plot.text(12, (plot.top + plot.height - plot.bottom) / 2, ylabel, rotate=True)
    return plot


class Series(NamedTuple):
    """One line of :func:`lines_with_intervals`."""

    label: str
    values: Sequence[float | None]
    """One fraction per category; None leaves a gap."""
    color: str
    intervals: Sequence[tuple[float, float] | None] | None = None
    """Whisker per category (None: no whisker)."""
    dashed: bool = False
    """Dashed line and square markers (else solid with round markers)."""


def lines_with_intervals(categories: Sequence[str], series: Sequence[Series], *, xlabel: str, ylabel: str) -> Plot:
    """Fractions per category as points joined by lines, with optional interval whiskers, over 0–100 %.

    Args:
        categories: x-axis labels (may hold a newline).
        series: The lines, drawn in order (a legend when there are several).
        xlabel: Label of the horizontal axis.
        ylabel: Label of the vertical axis.
    """
    plot = Plot(560, 300, x=(-0.5, len(categories) - 0.5), margins=(60, 16, 10, 56))
    plot.segment(plot.x[0], 0.5, plot.x[1], 0.5, _GRID)
    for _, values, color, intervals, dashed in series:
        points = [(i, v) for i, v in enumerate(values) if v is not None]
        for (i0, v0), (i1, v1) in zip(points, points[1:], strict=False):
            if i1 == i0 + 1:
                plot.segment(i0, v0, i1, v1, color, 1.5, dash=dashed)
        for i, value in points:
            interval = intervals[i] if intervals else None
            if interval:
                plot.segment(i, interval[0], i, interval[1], color, 1.2)
                for end in interval:
                    plot.segment(i - 0.06, end, i + 0.06, end, color, 1.2)
            px, py = plot.sx(i), plot.sy(value)
            shape = (
                f'<rect x="{_num(px - 4)}" y="{_num(py - 4)}" width="8" height="8" fill="{color}"/>'
                if dashed
                else f'<circle cx="{_num(px)}" cy="{_num(py)}" r="4" fill="{color}"/>'
            )
            plot.elements.append(shape)
    plot.x_axis([(i, c) for i, c in enumerate(categories)], xlabel)
    plot.y_axis([(t / 5, percent(t / 5)) for t in range(6)], ylabel)
    if len(series) > 1:
        plot.legend([(line.label, line.color) for line in series])
    return plot


def forest(
    labels: Sequence[str], values: Sequence[float], intervals: Sequence[tuple[float, float]], *, xlabel: str
) -> Plot:
    """Points with interval whiskers on a free scale (a forest plot), one row per label, top to bottom.

    Args:
        labels: One per row (e.g. model names, best first).
        values: The point estimates.
        intervals: ``(low, high)`` per row.
        xlabel: Label of the horizontal axis.
    """
    ends = [v for pair in intervals for v in pair] + list(values) or [0.0]
    low, high = min(ends), max(ends)
    pad = (high - low) * 0.08 or 0.5
    left = 16 + _CHAR_WIDTH * max((len(s) for s in labels), default=0)
    plot = Plot(
        560, 30 * len(labels) + 56, x=(low - pad, high + pad), y=(-0.5, len(labels) - 0.5), margins=(left, 20, 8, 40)
    )
    if low - pad < 0 < high + pad:
        plot.segment(0.0, plot.y[0], 0.0, plot.y[1], _GRID)
    for i, (label, value, (lo, hi)) in enumerate(zip(labels, values, intervals, strict=True)):
        row = len(labels) - 1 - i
        plot.segment(lo, row, hi, row, _INK, 1.2)
        for end in (lo, hi):
            plot.segment(end, row - 0.15, end, row + 0.15, _INK, 1.2)
        plot.rect(value - pad * 0.06, row - 0.18, value + pad * 0.06, row + 0.18, COLORS["A"])
        plot.text(plot.left - 6, plot.sy(row), label, anchor="end")
    step = (high + pad - (low - pad)) / 5
    plot.x_axis([(low - pad + step * t, f"{low - pad + step * t:.2f}") for t in range(6)], xlabel)
    return plot
