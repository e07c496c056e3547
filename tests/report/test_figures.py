"""The report's SVG figures: what they show is the data given, as text, and the same data gives the same bytes."""

from __future__ import annotations

import re

import pytest

from autorater_pipelines.report._figures import (
    Series,
    bar_with_intervals,
    figure,
    heatmap,
    histogram,
    lines_with_intervals,
)

EDGES = [i / 10 for i in range(11)]


def _texts(svg: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "\n", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg)]


def test_histogram_counts_values_per_bin_with_the_last_bin_closed() -> None:
    values = [0.0, 0.05, 0.1, 0.95, 1.0, 1.0, 1.5, -0.1]  # 1.5 and -0.1 are outside the edges: not counted
    svg = figure("fig-h", "h", "", histogram([("rows", values, "#123456")], EDGES, xlabel="score")).svg
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)" fill="#123456"', svg)]
    # bins [0, .1): 2, [.1, .2): 1, [.9, 1]: 3, drawn in bin order; 3 is the top tick
    assert len(heights) == 3
    assert heights[0] / heights[2] == pytest.approx(2 / 3, abs=1e-4)  # coordinates have two decimals
    assert heights[1] / heights[2] == pytest.approx(1 / 3, abs=1e-4)
    y_ticks = re.findall(r'text-anchor="end"[^>]*>([^<]+)</text>', svg)
    assert y_ticks == ["0", "1", "2", "3"]  # integer ticks on a count axis


def test_histogram_of_one_row_has_integer_ticks_only() -> None:
    svg = histogram([("rows", [0.95], "#000000")], EDGES, xlabel="x").svg("t")
    y_ticks = re.findall(r'text-anchor="end"[^>]*>([^<]+)</text>', svg)
    assert y_ticks == ["0", "1"]


def test_bar_labels_carry_the_values_and_missing_values_say_so() -> None:
    plot = bar_with_intervals(
        ["model A wins", "tie"], [0.5, None], [(0.3, 0.7), (None, None)], ["#1", "#2"], xlabel="share"
    )
    texts = _texts(plot.svg("Win rates"))
    assert "model A wins  50.0%" in texts and "tie  n/a" in texts
    assert texts[-7:] == ["0%", "20%", "40%", "60%", "80%", "100%", "share"]


def test_heatmap_writes_every_count_row_by_row() -> None:
    svg = heatmap([[3, 0, 1], [2, 5, 0]], ["A", "B"], ["A", "B", "TIE"], "human", "autorater").svg("m")
    assert [int(t) for t in _texts(svg) if t.isdigit()] == [3, 0, 1, 2, 5, 0]


def test_lines_leave_gaps_and_text_is_escaped() -> None:
    plot = lines_with_intervals(
        ["< 0.5\nn=3", "0.5–2\nn=0", "> 2\nn=1"],
        [Series("autorater", [0.25, None, 1.0], "#1a73e8", [(0.1, 0.5), None, (0.4, 1.0)])],
        xlabel="A ÷ B",
        ylabel="A chosen",
    )
    svg = plot.svg("Length <bias>")
    assert svg.count("<circle") == 2  # no point for the empty bin, and no line across it
    assert 'stroke="#1a73e8" stroke-width="1.5"' not in svg
    assert "&lt; 0.5" in svg and 'aria-label="Length &lt;bias&gt;"' in svg


def test_the_same_data_gives_the_same_bytes() -> None:
    def draw() -> str:
        return str(histogram([("A", [0.2, 0.9], "#1"), ("B", [0.5], "#2")], EDGES, xlabel="c", marker=0.5).svg("c"))

    assert draw() == draw()


def test_heatmap_leaves_a_none_cell_blank():
    svg = heatmap([[None, 7], [3, None]], ["a", "b"], ["a", "b"], "model", "opponent").svg("m")
    numbers = re.findall(r">(\d+)</text>", svg)
    assert numbers == ["7", "3"]
