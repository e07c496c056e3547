"""AutoSxS report content: the numbers on the page are metrics.json's, figures present, data escaped, offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_helpers import autosxs_run, metric_value, parse_numbers, quickstart_params

from autorater_pipelines import io
from autorater_pipelines.report import (
    confusion_matrix,
    length_bias,
    load_outputs,
    render_report,
    write_artifact_report,
    write_report,
)

FIGURES = ("fig-win-rates", "fig-confidence", "fig-position", "fig-length-bias")
HEADLINE_KEYS = {
    "evaluation_count",
    "judged_count",
    "error_count",
    "autorater_model_a_win_rate",
    "autorater_model_b_win_rate",
    "autorater_tie_rate",
    "autorater_model_a_win_rate_ties_as_half",
    "mean_confidence",
    "position_consistency",
}
HUMAN_KEYS = {
    "accuracy",
    "precision",
    "recall",
    "f1_score",
    "cohens_kappa",
    "alignment_count",
    "true_positive_count",
    "false_positive_count",
    "true_negative_count",
    "false_negative_count",
    "human_preference_model_a_win_rate",
    "human_preference_model_b_win_rate",
    "original_order_accuracy",
    "swapped_order_accuracy",
    "both_orders_correct_count",
}


def _check_numbers(page: str, metrics: dict, required: set[str]) -> dict:
    numbers = parse_numbers(page).numbers
    assert required <= set(numbers), f"missing from the page: {sorted(required - set(numbers))}"
    for key, shown in numbers.items():
        for value, text in shown:
            assert value == metric_value(metrics, key), key
            if isinstance(value, float) and text.endswith("%"):
                assert text == f"{value:.1%}", key
    return numbers


def _figure_svgs(page: str) -> dict[str, str]:
    return dict(re.findall(r'<figure id="([\w-]+)">.*?(<svg .*?</svg>)', page, flags=re.S))


def test_quickstart_report_shows_metrics_json(quickstart_out, copy_out):
    out = copy_out(quickstart_out)
    write_report(str(out))
    page = (out / "report.html").read_text()
    metrics = json.loads((quickstart_out / "metrics.json").read_text())
    numbers = _check_numbers(page, metrics, HEADLINE_KEYS | HUMAN_KEYS)
    assert numbers["error_count"][0] == (1, "1")
    assert numbers["autorater_model_a_win_rate"][0] == (0.4, "40.0%")
    assert set(_figure_svgs(page)) == {*FIGURES, "fig-confusion"}
    # every judgment is in the table, each with its samples; the error row is flagged
    assert page.count('<tbody class="item"') == 6
    assert re.search(r'data-flags="error">\s*<tr><td>q6</td>', page)
    assert "not_recorded: no recording" in page  # the error message is listed


def test_llmbar_acceptance_report_equals_metrics_json(llmbar_out, tmp_path):
    page = Path(write_report(str(llmbar_out), str(tmp_path / "report.html"))).read_text()
    metrics = json.loads((llmbar_out / "metrics.json").read_text())
    numbers = _check_numbers(page, metrics, HEADLINE_KEYS | HUMAN_KEYS)
    # the published figures of this run (README "Reproducing LLMBar MT-Bench")
    assert numbers["original_order_accuracy"][0][1] == "79.5%"
    assert numbers["swapped_order_accuracy"][0][1] == "82.5%"
    assert numbers["both_orders_correct_count"][0][1] == "149"
    assert numbers["position_consistency"][0][1] == "87.0%"
    assert "174 of 200 rows judged in both orders" in page
    assert numbers["autorater_tie_rate"][0][1] == "13.0%"  # 26 TIE rows
    figures = _figure_svgs(page)
    assert set(figures) == {*FIGURES, "fig-confusion"}
    # the confusion matrix figure shows the metrics' counts: human A/B (rows) × autorater A/B/TIE (columns)
    cells = [int(t) for t in re.findall(r"<text[^>]*>(\d+)</text>", figures["fig-confusion"])]
    m = metrics
    assert cells == [
        m["true_positive_count"],
        m["false_negative_count"],
        13,
        m["false_positive_count"],
        m["true_negative_count"],
        13,
    ]
    assert 13 + 13 == m["autorater_tie_on_human_labeled_count"]
    assert page.count('<tbody class="item"') == 200
    assert page.count('data-flags="tie"') == 26


def test_confusion_matrix_block_equals_alignment_counts(llmbar_out):
    outputs = load_outputs(str(llmbar_out))
    (a_a, a_b, a_tie), (b_a, b_b, b_tie), _ = confusion_matrix(outputs.rows, "human_preference")
    m = outputs.metrics
    assert (a_a, a_b, b_a, b_b) == (
        m["true_positive_count"],
        m["false_negative_count"],
        m["false_positive_count"],
        m["true_negative_count"],
    )
    assert a_tie + b_tie == m["autorater_tie_on_human_labeled_count"]


def test_length_bias_counts_the_longer_response():
    rows = [
        {"response_a": "x" * 30, "response_b": "x" * 10, "choice": "A", "h": "A"},  # ratio 3: A longer, chosen
        {
            "response_a": "x" * 30,
            "response_b": "x" * 10,
            "choice": "B",
            "h": "B",
        },  # longer not chosen (nor by the human)
        {"response_a": "x" * 10, "response_b": "x" * 10, "choice": "B", "h": "B"},  # equal: not counted
        {"response_a": "x" * 5, "response_b": "x" * 20, "choice": "TIE", "h": "B"},  # ratio 0.25, tie
        {"response_a": "x" * 5, "response_b": "x" * 20, "choice": "ERROR", "h": "B"},
    ]
    lb = length_bias(rows, "h")
    assert (lb["longer_chosen"], lb["longer_chosen_n"]) == (0.5, 2)
    assert (lb["human_longer_chosen"], lb["human_longer_chosen_n"]) == (0.75, 4)
    by_label = {b["label"]: b for b in lb["bins"]}
    assert by_label["> 2"]["judged"] == 2 and by_label["> 2"]["a_share"] == 0.5
    assert by_label["0.83–1.2"]["b"] == 1 and by_label["< 0.5"]["tie"] == 1 and by_label["< 0.5"]["judged"] == 1
    assert by_label["< 0.5"]["a_share"] is None and by_label["< 0.5"]["human_a_share"] == 0.0


def test_data_is_escaped_and_the_page_loads_nothing(tmp_path):
    evil = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    params = quickstart_params(tmp_path, responses={"q1": {"answer_model_a": evil}, "q2": {"question": evil}})
    out = autosxs_run(tmp_path / "out", params)
    page = render_report(load_outputs(str(out)))
    assert evil not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    # self-contained: no external script, style, image, font or frame
    assert not re.search(r"<(script|img|iframe|link|source|video)[^>]+(src|href)=\"(https?:)?//", page)
    assert "@import" not in page and "url(http" not in page
    assert page.count("<script>") == 2  # the error hook in <head> and the page script, both inline


def test_control_characters_a_model_wrote_are_shown_as_control_pictures_not_written_raw(tmp_path):
    # A raw NUL is a parse error in HTML; an escape sequence would be invisible. Both are shown as U+24xx.
    written = "before\x00after \x1b[31mred\x7f\tend"
    params = quickstart_params(tmp_path, responses={"q1": {"answer_model_a": written}})
    out = autosxs_run(tmp_path / "out", params)
    page = render_report(load_outputs(str(out)))
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", page)
    assert "before\u2400after \u241b[31mred\u2421\tend" in page


def test_past_max_rows_flagged_rows_are_kept(llmbar_out):
    # 51 flagged rows: 25 where the autorater chose the model the human did not, 26 ties
    page = render_report(load_outputs(str(llmbar_out)), max_rows=60)
    assert page.count('<tbody class="item"') == 60
    assert page.count('data-flags="tie"') == 26 and page.count('data-flags="disagree"') == 25
    assert "Showing 60 of 200 rows" in page
    page = render_report(load_outputs(str(llmbar_out)), max_rows=30)
    assert page.count('<tbody class="item"') == 30 and page.count('data-flags=""') == 0


def test_artifact_report_from_kfp_style_paths(quickstart_out, tmp_path):
    # KFP artifacts have arbitrary file names: the component passes paths, not a directory
    for name in ("judgments.jsonl", "metrics.json", "error_messages.jsonl"):
        (tmp_path / name.replace(".", "_")).write_bytes((quickstart_out / name).read_bytes())
    built = write_artifact_report(
        "autosxs",
        rows_path=str(tmp_path / "judgments_jsonl"),
        metrics_path=str(tmp_path / "metrics_json"),
        errors_path=str(tmp_path / "error_messages_jsonl"),
        output_path=str(tmp_path / "report" / "index.html"),
    )
    assert (tmp_path / "report" / "index.html").read_text().startswith("<!DOCTYPE html>")
    assert built.categories == ("A", "B", "TIE")
    rows = io.read_jsonl(str(quickstart_out / "judgments.jsonl"))
    assert built.matrix == confusion_matrix(rows, "human_preference")
    assert built.matrix[0][0] == built.outputs.metrics["true_positive_count"]


def test_without_human_labels_no_alignment_and_no_confusion_matrix(tmp_path):
    params = quickstart_params(tmp_path)
    params["human_preference_column"] = ""
    out = autosxs_run(tmp_path / "out", params)
    page = render_report(load_outputs(str(out)))
    assert "fig-confusion" not in page and "Agreement with human labels" not in page
    built = write_artifact_report(
        "autosxs", rows_path=str(out / "judgments.jsonl"), output_path=str(tmp_path / "r.html")
    )
    assert built.categories == () and built.outputs.metrics_computed


@pytest.mark.parametrize("name", ["metrics.json", "error_messages.jsonl"])
def test_optional_files_may_be_absent(quickstart_out, copy_out, name):
    out = copy_out(quickstart_out)
    expected = json.loads((out / "metrics.json").read_text())
    (out / name).unlink()
    outputs = load_outputs(str(out))
    if name == "metrics.json":
        assert outputs.metrics_computed and outputs.metrics == expected
        assert "metrics.json was not found" in render_report(outputs)
    else:
        assert outputs.errors == [] and "No errors." in render_report(outputs)


class _Cards(__import__("html.parser").parser.HTMLParser):
    """label → (number shown, data-key, "before re-scoring" text, its data-original) of the headline cards."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, dict] = {}
        self._card: dict | None = None
        self._field: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and attrs.get("class") == "card":
            self._card = {"label": "", "num": "", "key": None, "original": "", "original_value": None}
        elif self._card is not None and tag == "span":
            cls = attrs.get("class")
            self._field = {"label": "label", "num": "num", "original": "original"}.get(cls)
            if cls == "num":
                self._card["key"] = attrs.get("data-key")
            if cls == "original":
                self._card["original_value"] = json.loads(attrs["data-original"])

    def handle_data(self, data):
        if self._card is not None and self._field:
            self._card[self._field] += data

    def handle_endtag(self, tag):
        if tag == "span":
            self._field = None
        elif tag == "div" and self._card is not None:
            self.cards[self._card["label"]] = self._card
            self._card = None


def _cards(page: str) -> dict[str, dict]:
    parser = _Cards()
    parser.feed(page)
    return parser.cards


def test_a_report_rescored_with_ties_as_half_labels_the_scores_and_shows_the_original_rates(quickstart_out, copy_out):
    # Found by the newcomer trial: after rescore, the cards read A 50 % + B 50 % + tie 13 % under the old
    # labels, and the run's own win rates were gone from the page.
    from autorater_pipelines.report import rescore, write_rescore

    out = copy_out(quickstart_out)
    before = json.loads((out / "metrics.json").read_text())
    write_rescore(rescore(str(out), {"ties_as_half": True}), str(out))
    after = json.loads((out / "metrics.json").read_text())
    write_report(str(out))
    cards = _cards((out / "report.html").read_text())
    a, b = cards["Model A score, ties as ½"], cards["Model B score, ties as ½"]
    assert "Model A win rate" not in cards and "Model B win rate" not in cards
    assert (a["key"], a["num"]) == ("autorater_model_a_win_rate", f"{after['autorater_model_a_win_rate']:.1%}")
    assert a["original_value"] == before["autorater_model_a_win_rate"] != after["autorater_model_a_win_rate"]
    assert a["original"].startswith(f"before re-scoring: {before['autorater_model_a_win_rate']:.1%} (95% CI ")
    assert b["original_value"] == before["autorater_model_b_win_rate"]
    tie = cards["Tie rate"]
    assert tie["num"] == f"{before['autorater_tie_rate']:.1%}" and tie["original"] == ""  # unchanged: no note
    # the quickstart without q6: 2 A, 1 B, 2 ties of 5 judged rows → 40 % / 20 % / 40 %; as scores
    # (win 1, tie ½) A (2 + 1) / 5 = 60 % and B (1 + 1) / 5 = 40 %
    assert [before[f"autorater_{k}"] for k in ("model_a_win_rate", "model_b_win_rate", "tie_rate")] == [0.4, 0.2, 0.4]
    assert (a["num"], b["num"]) == ("60.0%", "40.0%")
    # a report of the run itself has no "before re-scoring" note
    write_report(str(quickstart_out), str(out / "own.html"))
    assert all(not c["original"] for c in _cards((out / "own.html").read_text()).values())


def test_a_sample_shown_b_first_says_its_choice_was_mapped_back(quickstart_out):
    page = render_report(load_outputs(str(quickstart_out)))
    judgments = io.read_jsonl(str(quickstart_out / "judgments.jsonl"))
    flipped = [s for j in judgments for s in j["samples"] if s["flipped"] and s["choice"] in ("A", "B")]
    unflipped = [s for j in judgments for s in j["samples"] if not s["flipped"] and s["choice"] in ("A", "B")]
    assert flipped and unflipped
    notes = re.findall(r'<div class="muted mapped">([^<]*)</div>', page)
    assert len(notes) == len(flipped)  # one per B-first sample with a model choice, none for A-first samples
    sample = next(s for s in flipped if s["choice"] == "A")
    assert json.loads(sample["raw_response"])["choice"] == "B"  # the judge named the second position
    assert "mapped back: the raw answer names position B (shown second), which was model A" in notes
