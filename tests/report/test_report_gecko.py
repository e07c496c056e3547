"""Gecko report content: metrics.json's numbers, figures, per-row drill-down with media, failures and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from report_helpers import metric_value, parse_numbers

from autorater_pipelines.report import load_outputs, render_report, write_report
from autorater_pipelines.report._gecko import keywords_html, media_view

HEADLINE_KEYS = {
    "mean_final_score",
    "stdev_final_score",
    "rows_scored",
    "rows_unscored",
    "questions_scored",
    "parse_failures",
    "missing_answers",
    "masked_questions",
}


def _numbers_equal_metrics(page: str, metrics: dict) -> dict:
    numbers = parse_numbers(page).numbers
    types = {f"accuracy_by_question_type.{t}" for t in metrics["accuracy_by_question_type"]}
    assert HEADLINE_KEYS | types <= set(numbers), sorted(HEADLINE_KEYS | types - set(numbers))
    for key, shown in numbers.items():
        for value, _ in shown:
            assert value == metric_value(metrics, key), key
    return numbers


def test_tifa_acceptance_report(tifa_out, tmp_path):
    page = Path(write_report(str(tifa_out), str(tmp_path / "report.html"))).read_text()
    metrics = json.loads((tifa_out / "metrics.json").read_text())
    numbers = _numbers_equal_metrics(page, metrics)
    # TIFA's published figures for its sample: mean 0.8125, per-image 1.0 and 0.625, counting 1/3
    assert numbers["mean_final_score"][0][1] == "0.8125"
    assert numbers["accuracy_by_question_type.counting"][0][1] == "33.3%"
    assert ">1.0000</span>" in page and ">0.6250</span>" in page
    assert set(re.findall(r'<figure id="([\w-]+)">', page)) == {"fig-final-score", "fig-question-types"}
    # both real JPEGs are embedded as thumbnails, so the page shows them offline
    assert len(re.findall(r'<img class="thumb" src="data:image/jpeg;base64,', page)) == 2
    # every question with expected answer, verdict and score
    assert page.count("<tr class=") == 19
    assert "how many dogs are in the picture?" in page


def test_mixed_outputs_show_masking_failures_and_errors(mixed_gecko_out):
    outputs = load_outputs(str(mixed_gecko_out))
    page = render_report(outputs)
    _numbers_equal_metrics(page, outputs.metrics)
    # keyword markup, escaped prompt text
    assert '<mark class="kw" title="keyword 2"><sup>2</sup>car</mark>' in page
    assert "A red &lt;b&gt;car&lt;/b&gt; next to a tree" in page and "<b>car</b>" not in page
    # local image embedded; gs:// media linked, never loaded
    assert page.count('<img class="thumb" src="data:image/jpeg;base64,') == 2
    assert '<a href="https://storage.cloud.google.com/bucket/images/two dogs.png">' in page
    assert '<img src="https://' not in page
    # masked, unparseable and missing questions, each with its reason
    assert "masked by 1" in page
    assert "it is hard to say" in page and "name none of the choices" in page
    assert re.search(r"<td>r3</td><td>2: Is the bird blue\?</td><td>missing</td>", page)
    # the invalid-rubric row and the scored-as-zero row are listed as errors
    assert "invalid_rubric" in page and "scored_zero" in page and "[&#34;2&#34;]" in page  # question_ids as JSON
    pattern = (
        r'<details class="gecko-row item" data-flags="([a-z ]*)">\s*<summary>(?:<img [^>]*>)?<span class="ids">(\w+)'
    )
    flags = {row: flag for flag, row in re.findall(pattern, page)}
    assert flags == {"r1": "wrong", "r2": "failed wrong", "r3": "failed wrong"}


def test_gecko_quickstart_keywords_and_thumbnails(gecko_quickstart_out):
    page = render_report(load_outputs(str(gecko_quickstart_out)))
    assert page.count('<img class="thumb" src="data:image/jpeg;base64,') == 3
    assert page.count('<mark class="kw"') > 3
    assert "Keyword coverage" in page
    # a replay validator skips the probe: said neutrally, the setting apart; an empty group_by is "(none)"
    assert "Media probe: skipped — a replay validator reads no media (setting <code>media_probe</code>: error)" in page
    assert "Media probe (error)" not in page
    assert "group_by = (none)" in page and "= False" not in page and "dependency_masking = false" in page


def test_keywords_html_escapes_text():
    assert str(keywords_html("a {1}[<red>] & {2}[car]")) == (
        'a <mark class="kw" title="keyword 1"><sup>1</sup>&lt;red&gt;</mark> &amp; '
        '<mark class="kw" title="keyword 2"><sup>2</sup>car</mark>'
    )
    assert str(keywords_html(None)) == ""


def test_media_view_kinds(tmp_path):
    assert media_view("gs://b/v.mp4", base_dirs=[])["href"] == "https://storage.cloud.google.com/b/v.mp4"
    assert media_view("https://x.test/a.png", base_dirs=[])["thumbnail"] is None
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypisom" + b"\x00" * 12)
    view = media_view("clip.mp4", base_dirs=[str(tmp_path)])
    assert view["thumbnail"] is None and view["href"] == f"file://{video}" and "video/mp4" in view["note"]
    missing = media_view("nowhere.png", base_dirs=[str(tmp_path)])
    assert missing["thumbnail"] is None and "cannot read media file" in missing["note"]
    contents = {"contents": [{"parts": [{"file_data": {"file_uri": "gs://b/i.jpg", "mime_type": "image/jpeg"}}]}]}
    assert media_view(json.dumps(contents), base_dirs=[])["text"] == "gs://b/i.jpg"


def test_past_max_rows_flagged_rows_are_kept_first(tifa_out, tmp_path):
    # Five copies of TIFA's two rows: coco_301091 answers everything right, drawbench_52 has wrong answers.
    results = [json.loads(line) for line in (tifa_out / "results.jsonl").read_text().splitlines() if line.strip()]
    many = [{**r, "id": f"{r['id']}-{n}"} for n in range(5) for r in results]
    out = tmp_path / "many"
    out.mkdir()
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in many))
    for name in ("metrics.json", "error_messages.jsonl"):
        (out / name).write_bytes((tifa_out / name).read_bytes())
    flagged = [r["id"] for r in many if any(q["score"] < 1 for q in r["qa_results"])]
    assert len(flagged) == 5 and many[0]["id"] not in flagged  # the flagged rows come second, fourth, …
    page = render_report(load_outputs(str(out)), max_rows=5)
    shown = re.findall(r'<details class="gecko-row item" data-flags="([^"]*)"', page)
    assert shown == ["wrong"] * 5
    assert "Showing 5 of 10 rows: every row with a wrong or failed answer first (5 of 5 shown)" in page
    page = render_report(load_outputs(str(out)), max_rows=7)
    assert re.findall(r'data-flags="([^"]*)"', page).count("") == 2
