"""``autorater run`` never deletes or overwrites a file it reads: an input inside ``--output-dir`` is refused
before the run (issue 14: a dataset ``OUT/judgments.json`` was removed as a stale output of an earlier run)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from autorater_pipelines.cli import main

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

GECKO_QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "gecko_quickstart"
ROWS = [{"id": f"q{i}", "question": f"Q{i}?", "a": "x", "b": "yy"} for i in range(1, 4)]
VERDICT = '{"explanation": "fine", "choice": "A"}'


def _setup(tmp_path: Path, where: str) -> tuple[Path, Path, Path, Path]:
    """Dataset, replay file and params file, one of them (``where``) inside OUT; returns them and OUT."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    dataset = (out if where == "dataset" else tmp_path) / "judgments.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    replay = (out if where == "replay" else tmp_path) / "judgments.jsonl"
    replay.write_text(
        "".join(json.dumps({"id": r["id"], "flipped": f, "response": VERDICT}) + "\n" for r in ROWS for f in (0, 1)),
        encoding="utf-8",
    )
    params = (out / "sub" if where == "params" else tmp_path) / "metrics.json"
    params.parent.mkdir(exist_ok=True)
    params.write_text(
        json.dumps(
            {
                "evaluation_dataset": str(dataset),
                "task": "question_answering@001",
                "id_columns": ["id"],
                "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
                "response_column_a": "a",
                "response_column_b": "b",
                "autorater_model": f"replay/{replay}",
            }
        ),
        encoding="utf-8",
    )
    return dataset, replay, params, out


@pytest.mark.parametrize("where", ["dataset", "replay", "params"])
def test_an_input_inside_the_output_dir_is_refused_before_the_run_and_kept(tmp_path, capsys, where):
    dataset, replay, params, out = _setup(tmp_path, where)
    before = {p: p.read_bytes() for p in (dataset, replay, params)}
    listing = sorted(p.relative_to(out) for p in out.rglob("*"))

    code = main(["run", "autosxs", "--params", str(params), "--output-dir", str(out), "--quiet"])

    err = capsys.readouterr().err
    assert code == 2
    inside = {"dataset": dataset, "replay": replay, "params": params}[where]
    assert str(inside) in err and "inside the output directory" in err and str(out) in err
    assert "Traceback" not in err
    assert {p: p.read_bytes() for p in before} == before  # every input intact
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == listing  # nothing written or removed
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]


def test_a_relative_dataset_path_inside_the_output_dir_is_refused(tmp_path, capsys, monkeypatch):
    dataset, _, params, out = _setup(tmp_path, "dataset")
    monkeypatch.chdir(tmp_path)
    spec = json.loads(params.read_text(encoding="utf-8"))
    spec["evaluation_dataset"] = "out/judgments.json"
    params.write_text(json.dumps(spec), encoding="utf-8")

    code = main(["run", "autosxs", "--params", str(params), "--output-dir", "out", "--quiet"])

    assert code == 2
    assert "inside the output directory" in capsys.readouterr().err
    assert dataset.exists()


def test_a_gecko_media_file_inside_the_output_dir_is_refused(tmp_path, capsys):
    """The images the dataset names (relative to it) sit in OUT; the dataset and replays do not."""
    data = tmp_path / "data"
    shutil.copytree(GECKO_QUICKSTART, data)
    params = json.loads((data / "params.json").read_text(encoding="utf-8"))
    params.update(
        evaluation_dataset=str(data / "dataset.jsonl"),
        rubric_generation_model=f"replay/{data / 'rubric_replay.jsonl'}",
        validator_model=f"replay/{data / 'validator_replay.jsonl'}",
    )
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    out = data / "images"
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    code = main(["run", "gecko", "--params", str(params_path), "--output-dir", str(out), "--quiet"])

    err = capsys.readouterr().err
    assert code == 2
    assert re.search(rf"the run reads '{re.escape(str(out))}/\w+\.png', which is inside the output directory", err)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
