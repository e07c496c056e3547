"""``autorater run``: the findings of "Numbers you can trust" (issue 14) where they were seen, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.cli import main

pytestmark = [pytest.mark.pipeline, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

VERDICT = '{"explanation": "fine", "choice": "%s"}'


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _params(tmp_path: Path, dataset: Path, replay: Path, **overrides: Any) -> dict[str, Any]:
    params = {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
        "response_column_a": "a",
        "response_column_b": "b",
        "autorater_model": f"replay/{replay}",
    }
    params.update(overrides)
    return params


def _run(params: dict[str, Any], tmp_path: Path, name: str = "out", *extra: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    out = tmp_path / name
    argv = ["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet", *extra]
    return main(argv), out


def _replay(tmp_path: Path, choices: dict[str, tuple[str, str]]) -> Path:
    """Replay file: row id → (position verdict in the original order, in the swapped order)."""
    rows = [
        {"id": row_id, "flipped": flipped, "response": VERDICT % pair[flipped]}
        for row_id, pair in choices.items()
        for flipped in (False, True)
    ]
    return _write_jsonl(tmp_path / "replay.jsonl", rows)


def test_csv_with_an_empty_cell_is_read_like_jsonl_and_the_row_count_is_printed_and_recorded(tmp_path, capsys):
    """One empty CSV cell used to refuse the whole dataset while the same row in JSONL was accepted."""
    dataset = tmp_path / "data.csv"
    dataset.write_text("id,question,a,b\nq1,Q1?,x,yy\nq2,Q2?,x,\nq3,Q3?,x,yy\nq4,Q4?,x,yy\n", encoding="utf-8")
    replay = _replay(tmp_path, {f"q{i}": ("A", "B") for i in range(1, 5)})
    code, out = _run(_params(tmp_path, dataset, replay), tmp_path)
    printed = capsys.readouterr().out
    assert code == 0
    assert "read 4 data row(s) from evaluation_dataset" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["dataset_rows_read"] == 4 and metrics["evaluation_count"] == 4
    judgments = {j["id"]: j for j in _read_jsonl(out / "judgments.jsonl")}
    assert judgments["q2"]["response_b"] == "" and judgments["q2"]["choice"] == "A"


def test_csv_stray_quote_in_the_last_column_is_refused_naming_file_and_line(tmp_path, capsys):
    """A stray quote used to swallow the rest of the file: "1 examples, 1 judged, 0 with errors", exit 0."""
    dataset = tmp_path / "data.csv"
    dataset.write_text('id,question,a,b\nq1,Q1?,x,yy\nq2,Q2?,x,"yy\nq3,Q3?,x,yy\nq4,Q4?,x,yy\n', encoding="utf-8")
    replay = _replay(tmp_path, {f"q{i}": ("A", "B") for i in range(1, 5)})
    code, out = _run(_params(tmp_path, dataset, replay), tmp_path)
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert f"{dataset}, row 3: a quoted value opens" in err and "Traceback" not in err
