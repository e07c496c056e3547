"""Gecko resumes like AutoSxS: a re-run repeats no finished model call (response cache, by default under a
``gs://`` pipeline root on Vertex AI), counted by the Gemini emulator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.gecko_script import scripted_gecko_model

REPO = Path(__file__).resolve().parents[2]
QUICKSTART_PARAMS = "examples/gecko_quickstart/params.json"
IMAGE_RUBRIC = {
    "keywords": "A {1}[red] {2}[bicycle] leaning on a {3}[wall]",
    "qas": [
        {"keyword_id": 1, "question": "Is the bicycle red?", "question_type": "color", "answer": "yes"},
        {"keyword_id": 2, "question": "Is there a bicycle?", "question_type": "object", "answer": "yes"},
    ],
}
QUICKSTART_ROWS = 3


def _emulated_quickstart(url: str, **settings: object) -> dict:
    """The quickstart's parameters with both models on the Gemini emulator (Vertex AI protocol)."""
    params = json.loads((REPO / QUICKSTART_PARAMS).read_text())
    model = {"base_url": url, "progress": False, **settings}
    params.update(
        evaluation_dataset=str(REPO / params["evaluation_dataset"]),
        rubric_generation_model="gemini-2.5-flash",
        rubric_generation_parameters=model,
        validator_model="gemini-2.5-flash",
        validator_parameters={**params["validator_parameters"], **model},
        project="test-project",
        location="us-central1",
    )
    return params


@pytest.mark.pipeline
def test_second_cli_run_of_the_quickstart_makes_no_model_call(tmp_path, monkeypatch):
    """``autorater run gecko --params`` twice: the second run is served from the response cache."""
    monkeypatch.chdir(REPO)
    with ModelEmulator(responder=scripted_gecko_model(IMAGE_RUBRIC)) as emulator:
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(_emulated_quickstart(emulator.url)))
        argv = ["run", "gecko", "--params", str(params_path), "--quiet", "--output-dir"]
        assert main([*argv, str(tmp_path / "first")]) == 0
        first = emulator.stats()["calls"]
        assert first == 2 * QUICKSTART_ROWS  # one rubric and one validator call per row
        assert main([*argv, str(tmp_path / "second")]) == 0
        assert emulator.stats()["calls"] == first, "the second run must make no model call"
    results = [(tmp_path / run / "results.jsonl").read_text() for run in ("first", "second")]
    assert results[0] == results[1] and results[0].count("\n") == QUICKSTART_ROWS


# The model-calling Gecko steps as their components call them, each in a fresh process as a KFP task runs.
_STEP = """
import json, sys
from autorater_pipelines.gecko import steps
step, p, folder, root = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
common = dict(id_columns=p["id_columns"], media_type=p["media_type"], project=p["project"], location=p["location"])
if step == "rubrics":
    steps.rubrics_for_rows(
        rows_path=f"{folder}/rows.jsonl", prompt_column=p["prompt_column"], rubrics_column="",
        rubric_generation_model=p["rubric_generation_model"],
        rubric_generation_parameters=p["rubric_generation_parameters"], rubrics_path=f"{folder}/rubrics.jsonl",
        errors_path=f"{folder}/rubric_errors.jsonl", pipeline_root=root, **common,
    )
else:
    steps.validate_media(
        rubrics_path=f"{folder}/rubrics.jsonl", media_column=p["media_column"], validator_model=p["validator_model"],
        validator_parameters=p["validator_parameters"], validations_path=f"{folder}/validations.jsonl",
        errors_path=f"{folder}/validation_errors.jsonl", pipeline_root=root, **common,
    )
"""


def test_model_calling_steps_get_the_pipeline_root_placeholder():
    """Both model-calling Gecko tasks receive ``{{$.pipeline_root}}`` (Vertex AI resolves it to the job's root)."""
    import yaml

    spec = yaml.safe_load((REPO / "compiled" / "gecko.yaml").read_text())
    tasks = spec["root"]["dag"]["tasks"]
    for name in ("prepare-gecko-rubrics", "validate-gecko-media"):
        value = tasks[name]["inputs"]["parameters"]["pipeline_root"]
        assert value == {"runtimeValue": {"constant": "{{$.pipeline_root}}"}}, name


def test_response_cache_defaults_to_the_gcs_pipeline_root(tmp_path, monkeypatch, bucket):
    """On Vertex AI each task's container starts empty: the cache must live under the ``gs://`` pipeline root.

    The KFP local runner makes every pipeline root an absolute local path, so the two model-calling steps run here
    as their components call them, each run in a fresh process with a ``gs://`` root (Cloud Storage emulator), no
    ``cache_dir``, no ``$AUTORATER_CACHE_DIR`` and another ``$HOME``: the local default cache cannot serve the second.
    """
    from autorater_pipelines.gecko import steps

    gcs_bucket, folder = bucket
    root = f"{folder}/root"
    monkeypatch.delenv("AUTORATER_CACHE_DIR")
    with ModelEmulator(responder=scripted_gecko_model(IMAGE_RUBRIC)) as emulator:
        params = _emulated_quickstart(emulator.url)
        counts, validations = [], []
        for run in ("first", "second"):
            work = tmp_path / run
            work.mkdir()
            steps.check_run(params, str(work / "rows.jsonl"))
            env = {**os.environ, "HOME": str(tmp_path / f"home-{run}")}  # no AUTORATER_CACHE_DIR: deleted above
            for step in ("rubrics", "validation"):
                command = [sys.executable, "-c", _STEP, step, json.dumps(params), str(work), root]
                subprocess.run(command, env=env, check=True, timeout=300)
                counts.append(emulator.stats()["calls"])
            validations.append([json.loads(line) for line in (work / "validations.jsonl").read_text().splitlines()])
    # One rubric call, then one validator call per row in the first run; none in the second.
    assert counts == [3, 6, 6, 6], "the second run must be served from <pipeline root>/autorater-cache"
    assert len(validations[1]) == QUICKSTART_ROWS and validations[0] == validations[1]
    prefix = root.split("/", 3)[3] + "/autorater-cache/segments/"
    assert list(gcs_bucket.client.list_blobs(gcs_bucket.name, prefix=prefix)), "no cache segment under the root"
    assert not (tmp_path / "home-first" / ".cache").exists(), "the local default cache was used"
