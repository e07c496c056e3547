"""The reports in a real browser: headless Chromium (Debian's package) renders them with no script error.

No DevTools protocol: the page registers an error hook first, which writes any script error into
``#js-errors`` and ``body[data-js-errors]``; its last script sets ``body[data-ready="1"]`` and, opened
with ``#selftest``, clicks through every filter and records the rows each one shows. ``--dump-dom``
prints the DOM after the page has loaded, so all of this can be read back.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autorater_pipelines.report import write_report

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install -y chromium; .ci/run does it)"
)


def _chromium(tmp_path: Path, *args: str) -> str:
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _open(tmp_path: Path, page: Path) -> tuple[str, dict]:
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri() + "#selftest")
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body))
    return dom, attrs


def _expected_counts(page: str, group: str, filters: list[str]) -> dict[str, int]:
    start = page.index(f'data-group="{group}"', page.index(f'<div class="filters" data-group="{group}"') + 10)
    flags = re.findall(r'class="[^"]*item[^"]*" data-flags="([a-z ]*)"', page[start:])
    return {f: len(flags) if f == "all" else sum(f in fl.split() for fl in flags) for f in filters}


def _check_renders(tmp_path: Path, out: Path, figures: int, group: str, filters: list[str]) -> Path:
    report = Path(write_report(str(out), str(tmp_path / f"{out.parent.name}.html")))
    dom, attrs = _open(tmp_path, report)
    assert attrs.get("data-ready") == "1", "the page script did not finish"
    assert "data-js-errors" not in attrs, re.search(r'<div id="js-errors"[^>]*>(.*?)</div>', dom, re.S).group(1)
    assert int(attrs["data-figures"]) == figures
    assert len(re.findall(r"<figure id=\"fig-[\w-]+\"><h3>[^<]+</h3><svg ", dom)) == figures
    selftest = json.loads(attrs["data-selftest"].replace("&quot;", '"'))
    assert selftest == {group: _expected_counts(report.read_text(), group, filters)}
    assert re.search(r'<span class="shown">(\d+) of \1 shown</span>', dom)  # back to "all" after the self-test
    return report


def test_autosxs_report_renders_in_chromium(quickstart_out, tmp_path):
    _check_renders(tmp_path, quickstart_out, 5, "judgments", ["all", "disagree", "error", "one-order", "tie"])


def test_llmbar_report_renders_in_chromium(llmbar_out, tmp_path):
    report = _check_renders(tmp_path, llmbar_out, 5, "judgments", ["all", "disagree", "error", "one-order", "tie"])
    shot = tmp_path / "llmbar.png"
    _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", report.as_uri())
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one


def test_gecko_reports_render_in_chromium(mixed_gecko_out, tifa_out, tmp_path):
    _check_renders(tmp_path, mixed_gecko_out, 2, "rows", ["all", "wrong", "failed", "warning"])
    _check_renders(tmp_path, tifa_out, 2, "rows", ["all", "wrong", "failed", "warning"])


def test_script_errors_are_detected(quickstart_out, tmp_path):
    """The check above is not vacuous: a failing script shows up in the DOM."""
    page = Path(write_report(str(quickstart_out), str(tmp_path / "broken.html")))
    text = page.read_text()
    last = text.rindex("<script>")
    page.write_text(text[:last] + "<script>undefinedFunction();</script>" + text[last:])
    dom, attrs = _open(tmp_path, page)
    assert attrs.get("data-js-errors") == "1"
    assert "undefinedFunction is not defined" in dom
    assert attrs.get("data-ready") == "1"  # the page's own script still ran
