"""The Python examples of the docs run as written (issue 25: the README's DataFrame snippet raised InputError once
its placeholders were filled).

docs/notebooks.md holds two: the offline one (recorded models, run from the repository root) must print what the
page shows after it; the real-model one (``gemini-2.5-flash`` with a project) runs against the project's Gemini /
Vertex AI protocol emulator through ``$GOOGLE_VERTEX_BASE_URL``, as a user's run goes to Vertex AI. docs/arena.md's
ranking example must print the leaderboard the page shows.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from doc_pages import DOCS, REPO, blocks, fenced, page_id, pages

from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

NOTEBOOKS = DOCS / "notebooks.md"
ARENA = DOCS / "arena.md"


def _run(code: str, page: Path = NOTEBOOKS) -> tuple[str, dict]:
    """Run a block as a script; return what it printed and its variables."""
    out, namespace = io.StringIO(), {"__name__": "__docs__"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(page), "exec"), namespace)
    return out.getvalue(), namespace


def _code_and_shown(page: Path) -> tuple[str, str]:
    """The page's first Python block and the ``text`` block right after it (what the page says it prints)."""
    sequence = fenced(page)
    first = next(i for i, (lang, _) in enumerate(sequence) if lang == "python")
    assert sequence[first + 1][0] == "text", f"{page_id(page)}: no output shown after the example"
    return sequence[first][1], sequence[first + 1][1]


def test_every_python_block_of_the_docs_is_run_here():
    """A Python example added to another page needs a test of its own: this one runs those of notebooks.md."""
    with_python = {page_id(p): len(blocks(p, "python")) for p in pages() if blocks(p, "python")}
    assert with_python == {"docs/notebooks.md": 2, "docs/arena.md": 1}


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the page says: run it from the repository root
    monkeypatch.setenv("AUTORATER_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("GOOGLE_VERTEX_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def test_the_offline_dataframe_example_prints_what_the_page_shows(isolated):
    code, shown = _code_and_shown(NOTEBOOKS)
    assert "replay/examples/quickstart/replay.jsonl" in code and "task=" in code
    assert _run(code)[0] == shown


def test_the_real_model_dataframe_example_runs_against_vertex_ai(isolated, monkeypatch):
    code = blocks(NOTEBOOKS, "python")[1]
    assert 'autorater_model="gemini-2.5-flash"' in code and 'task="summarization@001"' in code
    with ModelEmulator(responder=length_judge) as emulator:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", emulator.url)
        printed, variables = _run(code)
        calls = [(r.protocol, r.model, r.path) for r in emulator.requests]
    # 2 rows x 2 samples (both presentation orders), to Vertex AI's gemini-2.5-flash in the page's project.
    assert len(calls) == 4 and {c[0] for c in calls} == {"vertex"}
    assert all(
        "gemini-2.5-flash" in model and "/projects/my-project/locations/us-central1/" in path
        for _, model, path in calls
    )
    # The length judge prefers the longer summary: A for tides, B for photosynthesis.
    judgments = variables["judgments"]
    assert dict(zip(judgments["id"], judgments["choice"], strict=True)) == {"tides": "A", "photosynthesis": "B"}
    assert variables["sxs_metrics"]["autorater_model_a_win_rate"] == 0.5
    assert "model A win rate 0.5" in printed


def test_the_arena_example_prints_the_leaderboard_the_page_shows(isolated):
    code, shown = _code_and_shown(ARENA)
    printed, variables = _run(code, ARENA)
    assert printed == shown
    assert [row["model"] for row in variables["ranking"].leaderboard] == ["tuned-v2", "tuned-v1", "base"]
