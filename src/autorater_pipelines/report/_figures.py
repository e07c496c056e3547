"""Figures as inline SVG with matplotlib's object API (no pyplot: no global state, no display needed).

Text stays text in the SVG (``svg.fonttype: none``), so numbers in a figure are searchable and the
browser draws them with its own fonts. Each figure gets its own ``svg.hashsalt``, so the ids of
clip paths and markers are unique when several figures share one HTML page, and the output is
deterministic (no date in the metadata).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import matplotlib
import numpy as np
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

__all__ = ["COLORS", "FigureHTML", "bar_with_intervals", "heatmap", "histogram", "new_figure"]

COLORS = {"A": "#1a73e8", "B": "#e8710a", "TIE": "#9aa0a6", "ERROR": "#d93025", "human": "#188038"}
"""Colours of the report: model A, model B, ties, errors, human labels (also used by the CSS)."""

_RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "sans-serif"],
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
}


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


@contextlib.contextmanager
def new_figure(
    fig_id: str, title: str, caption: str, *, size: tuple[float, float] = (6.4, 3.2), out: list[FigureHTML]
) -> Iterator[Figure]:
    """Create a figure, let the caller draw on it, then append it to ``out`` as inline SVG.

    Args:
        fig_id: HTML id of the figure (also its SVG hash salt).
        title: Heading shown above the figure.
        caption: How to read the figure.
        size: Width and height in inches (the SVG scales to the page width).
        out: List the rendered figure is appended to.
    """
    rc: Any = {**_RC, "svg.hashsalt": fig_id}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=size, layout="constrained")
        yield fig
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = text.replace("<svg ", f'<svg role="img" aria-label="{Markup.escape(title)}" ', 1)
    out.append(FigureHTML(fig_id, title, Markup(text), caption))


def bar_with_intervals(
    ax: Axes,
    labels: Sequence[str],
    values: Sequence[float | None],
    intervals: Sequence[tuple[float | None, float | None]],
    colors: Sequence[str],
) -> None:
    """Horizontal bars of fractions with 95 % interval whiskers; each value is written in its bar's label."""
    y = np.arange(len(labels))[::-1]
    ax.barh(y, [v if v is not None else 0.0 for v in values], color=colors, height=0.6)
    for yi, value, (low, high) in zip(y, values, intervals, strict=True):
        if value is not None and low is not None and high is not None:
            ax.errorbar(value, yi, xerr=[[value - low], [high - value]], fmt="none", ecolor="#202124", capsize=4)
    shown = ["n/a" if v is None else f"{v:.1%}" for v in values]
    ax.set_yticks(y, [f"{label}  {text}" for label, text in zip(labels, shown, strict=True)])
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))


def histogram(ax: Axes, stacks: Sequence[tuple[str, Sequence[float], str]], bins: Iterable[float], xlabel: str) -> None:
    """Stacked histogram of values in [0, 1]: ``stacks`` = ``(label, values, colour)``."""
    present = [(label, list(values), color) for label, values, color in stacks if len(values)]
    if not present:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        return
    ax.hist(
        [v for _, v, _ in present],
        bins=list(bins),
        stacked=True,
        color=[c for _, _, c in present],
        label=[f"{label} ({len(v)})" for label, v, _ in present],
        edgecolor="white",
    )
    ax.set_xlabel(xlabel)
    ax.set_ylabel("rows")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if len(present) > 1:
        ax.legend(frameon=False, loc="upper left")


def heatmap(
    ax: Axes, matrix: np.ndarray, rows: Sequence[str], columns: Sequence[str], ylabel: str, xlabel: str
) -> None:
    """Count matrix with the count written in every cell (darker = more)."""
    ax.imshow(matrix, cmap="Blues", vmin=0, vmax=max(1, int(matrix.max())), aspect="auto")
    for (i, j), count in np.ndenumerate(matrix):
        dark = matrix.max() and count > matrix.max() / 2
        ax.text(j, i, str(int(count)), ha="center", va="center", color="white" if dark else "#202124")
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
