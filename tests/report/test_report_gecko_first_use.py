"""Gecko report for a first use: rubric warnings, inline thumbnails, intervals per question type, a group breakdown.

Found by the newcomer trial: the 30 rubric warnings ``run`` printed for DSG were not in ``report.html``, images showed
only after opening each row, a question type with one question showed 0 % or 100 % with no interval, and nothing
broke the scores down by the image model.
"""

from __future__ import annotations

import html.parser
import json
from pathlib import Path

import pytest
from report_helpers import gecko_run, metric_value, mixed_gecko_params, parse_numbers

from autorater_pipelines import gecko, io
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.report import load_outputs, render_report, write_report


class _Page(html.parser.HTMLParser):
    """Scripts, images (and whether inside a row's <summary>), event-handler attributes, tables by class."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.handlers: list[str] = []
        self.images: list[tuple[str, bool]] = []
        self.summary = 0
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.stat_rows: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.handlers += [k for k in attrs if k.startswith("on")]
        if tag == "script":
            self.scripts += 1
        elif tag == "summary":
            self.summary += 1
        elif tag == "img":
            self.images.append((attrs.get("src") or "", self.summary > 0))
        elif tag == "table":
            self._table = attrs.get("class")
            self.tables.setdefault(self._table or "", [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag == "summary":
            self.summary -= 1
        elif tag == "td" and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            if self._row:  # header rows have no <td>
                self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


def _page(text: str) -> _Page:
    parser = _Page()
    parser.feed(text)
    return parser


def _with_columns(tmp: Path, **columns) -> dict:
    """mixed_gecko_params with extra dataset columns (id → value per column)."""
    params = mixed_gecko_params(tmp)
    rows = io.read_jsonl(params["evaluation_dataset"])
    for name, values in columns.items():
        for row in rows:
            row[name] = values[row["id"]]
    io.write_jsonl(params["evaluation_dataset"], rows)
    return params


def test_rubric_warnings_are_listed_in_the_report(tmp_path):
    params = mixed_gecko_params(tmp_path)
    rows = io.read_jsonl(params["evaluation_dataset"])
    rows[2]["rubric"]["qas"][1]["dependencies"] = ["2"]  # r3's question 2 depends on itself: a rubric warning
    rows[1]["rubric"]["qas"][0]["dependencies"] = ["1"]  # and r2's question 1
    io.write_jsonl(params["evaluation_dataset"], rows)
    out = gecko_run(tmp_path / "out", params)
    results = {r["id"]: r for r in io.read_jsonl(str(out / "results.jsonl"))}
    expected = [(rid, w) for rid in ("r2", "r3") for w in results[rid]["rubric_warnings"]]
    assert [w for _, w in expected] == [
        "question 1: ignored dependency '1' on itself",
        "question 2: ignored dependency '2' on itself",
    ]
    page = Path(write_report(str(out))).read_text()
    assert [tuple(r) for r in _page(page).tables["rubric-warnings"]] == expected
    assert 'Rubric warnings <span class="muted">(2 in 2 rows)</span>' in page
    assert 'data-filter="warning" aria-pressed="false">Rubric warnings (2)' in page


def test_images_are_inline_thumbnails_in_each_row_line_and_no_script_comes_from_the_data(tmp_path):
    params = mixed_gecko_params(tmp_path)
    rows = io.read_jsonl(params["evaluation_dataset"])
    svg = tmp_path / "evil.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>')
    rows[2]["image"] = str(svg)  # an SVG with a script is never embedded
    rows[0]["prompt"] = "<script>alert(3)</script><img src=x onerror=alert(4)>"
    rows[0]["id"] = "<img src=y onerror=alert(5)>"
    io.write_jsonl(params["evaluation_dataset"], rows)
    out = gecko_run(tmp_path / "out", params)
    page = _page(Path(write_report(str(out))).read_text())
    assert page.scripts == 2  # the page's own error hook and report.js; none from the data
    assert page.handlers == []
    # r1's PNG, re-encoded as a JPEG thumbnail, in its row's summary line (seen without opening the row)
    assert page.images == [(page.images[0][0], True)]
    assert page.images[0][0].startswith("data:image/jpeg;base64,")


def test_question_type_bars_have_intervals_and_one_question_is_not_certain(mixed_gecko_out):
    metrics = json.loads((mixed_gecko_out / "metrics.json").read_text())
    # counting has one question, answered wrongly: 0 %, with Wilson's 0 %–79.3 %, not a certain 0 %
    assert metrics["questions_by_question_type"]["counting"] == 1
    assert metrics["accuracy_by_question_type"]["counting"] == 0.0
    low, high = metrics["accuracy_by_question_type_ci_lower"], metrics["accuracy_by_question_type_ci_upper"]
    assert (low["counting"], round(high["counting"], 4)) == (0.0, 0.7935)
    assert set(low) == set(high) == set(metrics["accuracy_by_question_type"])
    page = render_report(load_outputs(str(mixed_gecko_out)))
    stats = {r[0]: r for r in _page(page).tables["stats"] if len(r) == 4}
    assert stats["counting"][1:3] == ["0.0%", "95% CI 0.0%–79.3%"]
    for qtype in metrics["accuracy_by_question_type"]:
        assert stats[qtype][2] == f"95% CI {low[qtype]:.1%}–{high[qtype]:.1%}", qtype
    figure = page.split('<figure id="fig-question-types">', 1)[1].split("</figure>", 1)[0]
    assert figure.count("<line") >= 3 * len(metrics["accuracy_by_question_type"])  # a whisker and 2 caps per bar


def test_scoring_group_by_puts_a_breakdown_in_metrics_json_and_the_report(tmp_path):
    params = _with_columns(tmp_path, t2i_model={"r1": "sd1", "r2": "sd2", "r3": "sd1", "r4": "sd2"})
    params["scoring"] = {**params["scoring"], "group_by": "t2i_model"}
    out = gecko_run(tmp_path / "out", params)
    metrics = json.loads((out / "metrics.json").read_text())
    results = io.read_jsonl(str(out / "results.jsonl"))
    groups = metrics["final_score_by_group"]
    assert groups["column"] == "t2i_model" and list(groups["groups"]) == ["sd1", "sd2"]
    for name, group in groups["groups"].items():
        finals = [r["final_score"] for r in results if r["t2i_model"] == name]
        assert group["rows"] == len(finals)  # r4 (an invalid rubric) is not scored
        assert group["mean_final_score"] == pytest.approx(sum(finals) / len(finals))
        assert group["ci_lower"] <= group["mean_final_score"] <= group["ci_upper"]
    assert groups["groups"]["sd2"]["rows"] == 1 and groups["groups"]["sd2"]["ci_upper"] < 1  # n = 1: Wilson
    page = Path(write_report(str(out))).read_text()
    numbers = parse_numbers(page).numbers
    for name in ("sd1", "sd2"):
        key = f"final_score_by_group.groups.{name}.mean_final_score"
        assert numbers[key][0][0] == metric_value(metrics, key)
    assert '<figure id="fig-groups">' in page and "By t2i_model" in page


def test_report_group_by_breaks_down_a_run_without_it_and_refuses_an_unknown_column(tmp_path, capsys):
    params = _with_columns(tmp_path, t2i_model={"r1": "sd1", "r2": "sd2", "r3": "sd1", "r4": "sd2"})
    out = gecko_run(tmp_path / "out", params)
    assert "final_score_by_group" not in json.loads((out / "metrics.json").read_text())
    assert main(["report", str(out), "--group-by", "t2i_model"]) == 0
    page = (out / "report.html").read_text()
    results = io.read_jsonl(str(out / "results.jsonl"))
    shown = parse_numbers(page).numbers["final_score_by_group.groups.sd1.mean_final_score"][0][0]
    sd1 = [r["final_score"] for r in results if r["t2i_model"] == "sd1"]
    assert shown == pytest.approx(sum(sd1) / len(sd1))
    assert main(["report", str(out), "--group-by", "nope"]) == 2
    assert "error: --group-by: group_by 'nope' is not a column of results.jsonl" in capsys.readouterr().err


def test_a_group_by_column_missing_from_the_dataset_is_refused_before_any_model_call(tmp_path):
    params = mixed_gecko_params(tmp_path)
    params["scoring"] = {**params["scoring"], "group_by": "t2i_model"}
    with pytest.raises(InputError, match=r"scoring.group_by 't2i_model' is not a column of data row 1; columns: "):
        gecko.validate_run(params)
