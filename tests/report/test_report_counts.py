"""Every figure of the AutoSxS report counts the rows metrics.json counts (issue 14): a run with an ERROR row
and rows judged in one presentation order only, each figure recomputed here from judgments.jsonl."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_helpers import autosxs_run, parse_numbers, quickstart_params

from autorater_pipelines import io
from autorater_pipelines.report import write_artifact_report, write_report

# Bins of len(response_a) / len(response_b), as the report documents them: [low, high), the middle one closed.
BINS = [(0.0, 0.5), (0.5, 1 / 1.2), (1 / 1.2, 1.2), (1.2, 2.0), (2.0, float("inf"))]


def _bin(len_a: int, len_b: int) -> int:
    ratio = len_a / len_b if len_b else float("inf")
    for i, (low, high) in enumerate(BINS):
        if low <= ratio < high or (i == 2 and ratio == high):
            return i
    return len(BINS) - 1


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory) -> tuple[Path, list[dict], dict, str]:
    """Quickstart with q6 unrecorded (ERROR) and q2, q4 recorded in one order only; its report's text."""
    tmp = tmp_path_factory.mktemp("one-order")
    params = quickstart_params(tmp, drop_replay_ids=("q6",), drop_replay_keys=(("q2", True), ("q4", False)))
    out = autosxs_run(tmp / "out", params)
    write_report(str(out))
    rows = io.read_jsonl(str(out / "judgments.jsonl"))
    metrics = json.loads((out / "metrics.json").read_text())
    return out, rows, metrics, (out / "report.html").read_text(encoding="utf-8")


def _counted(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["choice"] in ("A", "B", "TIE") and r.get("complete") is not False]


def test_the_run_has_the_rows_this_file_is_about(mixed_run):
    _, rows, metrics, _ = mixed_run
    assert [r["question_id"] for r in rows if r["choice"] == "ERROR"] == ["q6"]
    assert sorted(r["question_id"] for r in rows if r.get("complete") is False and r["choice"] != "ERROR") == [
        "q2",
        "q4",
    ]
    assert metrics["judged_count"] == len(_counted(rows)) == 3
    assert metrics["one_order_only_count"] == 2 and metrics["one_order_only_excluded"] is True


def test_header_shows_the_excluded_rows_and_every_headline_count(mixed_run):
    _, _, metrics, page = mixed_run
    numbers = parse_numbers(page).numbers
    for key in ("evaluation_count", "judged_count", "error_count", "one_order_only_count"):
        assert numbers[key][0][0] == metrics[key], key
    assert numbers["one_order_only_count"][0][1] == "2"
    assert "Judged in one order only" in page and "left out of the rates" in page


def test_filter_tabs_count_what_the_header_counts(mixed_run):
    _, rows, metrics, page = mixed_run
    tabs = dict(re.findall(r'data-filter="([\w-]+)"[^>]*>[^<(]*\((\d+)\)', page))
    assert int(tabs["all"]) == metrics["evaluation_count"] == 6
    assert int(tabs["error"]) == metrics["error_count"] == 1  # was 3: rows with any failed sample
    assert int(tabs["one-order"]) == metrics["one_order_only_count"]
    ties = sum(r["choice"] == "TIE" for r in _counted(rows))
    assert int(tabs["tie"]) == ties == round(metrics["autorater_tie_rate"] * metrics["judged_count"])
    disagree = sum(
        r["human_preference"] in ("A", "B", "TIE")
        and r["choice"] in ("A", "B")
        and r["choice"] != r["human_preference"]
        for r in _counted(rows)
    )
    assert int(tabs["disagree"]) == disagree


def test_length_table_counts_the_rows_in_the_rates_for_autorater_and_humans(mixed_run):
    _, rows, metrics, page = mixed_run
    expected = [{"judged": 0, "A": 0, "B": 0, "TIE": 0, "hA": 0, "hB": 0} for _ in BINS]
    for r in _counted(rows):
        b = expected[_bin(len(r["response_a"]), len(r["response_b"]))]
        b["judged"] += 1
        b[r["choice"]] += 1
        if r["human_preference"] in ("A", "B"):
            b["h" + r["human_preference"]] += 1
    table = page[page.index('id="length-bins"') : page.index("</table>", page.index('id="length-bins"'))]
    shown = [re.findall(r"<td>([^<]*)</td>", tr)[1:] for tr in re.findall(r"<tr><td>.*?</tr>", table)]
    assert len(shown) == len(BINS)
    for cells, b in zip(shown, expected, strict=True):
        assert [int(c) for c in cells[:4]] == [b["judged"], b["A"], b["B"], b["TIE"]]
        human = b["hA"] / (b["hA"] + b["hB"]) if b["hA"] + b["hB"] else None
        assert cells[5] == ("n/a" if human is None else f"{100 * human:.1f}%")
    assert sum(b["judged"] for b in expected) == metrics["judged_count"]
    assert f"Over the {metrics['judged_count']} rows counted in the win rates" in page
    assert "2 rows judged in one order only left out" in page


def test_confidence_counts_the_rows_in_the_rates(mixed_run):
    _, rows, metrics, page = mixed_run
    confidences = [r["confidence"] for r in _counted(rows) if r.get("confidence") is not None]
    ones = sum(c >= 1 for c in confidences)
    note = f"of {len(confidences)} rows with a confidence, among the {metrics['judged_count']} counted in the rates"
    shown = re.search(
        r'<td>Rows with confidence 1</td><td class="num">(\d+)</td>.*?<td class="note">([^<]*)</td>', page
    )
    assert shown and (int(shown.group(1)), shown.group(2)) == (ones, note)  # was "11 of 11" with 7 counted
    assert len(confidences) < len([r for r in rows if r.get("confidence") is not None])  # some were left out
    mean = sum(confidences) / len(confidences)
    assert parse_numbers(page).numbers["mean_confidence"][0][0] == pytest.approx(mean)


def test_logged_confusion_matrix_counts_the_rows_in_the_alignment_metrics(mixed_run, tmp_path):
    out, rows, metrics, _ = mixed_run
    built = write_artifact_report(
        "autosxs",
        rows_path=str(out / "judgments.jsonl"),
        output_path=str(tmp_path / "report.html"),
        metrics_path=str(out / "metrics.json"),
    )
    cats = list(built.categories)
    expected = [[0] * len(cats) for _ in cats]
    for r in _counted(rows):
        if r["human_preference"] in cats:
            expected[cats.index(r["human_preference"])][cats.index(r["choice"])] += 1
    assert built.matrix == expected
    a, b = cats.index("A"), cats.index("B")
    assert [built.matrix[a][a], built.matrix[b][a], built.matrix[b][b], built.matrix[a][b]] == [
        metrics["true_positive_count"],
        metrics["false_positive_count"],
        metrics["true_negative_count"],
        metrics["false_negative_count"],
    ]
