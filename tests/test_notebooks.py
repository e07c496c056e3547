"""The example notebooks run top to bottom in a real Jupyter kernel (nbclient + ipykernel), as a user runs them.

A Jupyter kernel runs its own asyncio event loop, so this also checks that the DataFrame APIs work inside one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient", reason="nbclient is in the [test] extra")
nbformat = pytest.importorskip("nbformat", reason="nbformat is in the [test] extra")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def _run(path: Path, cwd: Path = EXAMPLES):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return notebook


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def test_there_are_example_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["notebook_quickstart.ipynb"]


# Jupyter starts the kernel in the notebook's folder; nbclient, papermill and IDE runners may start it in the
# repository root.
@pytest.mark.parametrize("cwd", [EXAMPLES, EXAMPLES.parent], ids=["from-examples", "from-repository-root"])
def test_notebook_quickstart_runs_and_reproduces_both_examples(cwd):
    notebook = _run(EXAMPLES / "notebook_quickstart.ipynb", cwd)
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    printed = "\n".join(_text(c) for c in notebook.cells if c.cell_type == "code")
    # The Vertex sample's coffee prompts: 1.0 and 0.5, mean 0.75; AutoSxS quickstart: 3 of 6 rows for model A.
    assert "final_score [1.0, 0.5] mean 0.75" in printed
    assert "parse failures 0 - mean question score over" in printed
    assert "<question>is there toast?<choices>yes,no" in printed
    assert "choices ['A', 'B', 'TIE', 'TIE', 'A', 'A']" in printed and "model A win rate 0.5" in printed
    # Tables render as HTML in the notebook.
    assert any("text/html" in o.get("data", {}) for c in notebook.cells for o in c.get("outputs", []))
