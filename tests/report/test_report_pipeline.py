"""The report steps of the compiled templates, run in the KFP local runner: HTML and confusion-matrix artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import GECKO_QUICKSTART, QUICKSTART, REPO, parse_numbers

from autorater_pipelines import io
from autorater_pipelines.pipelines._local import run_local
from autorater_pipelines.report import confusion_matrix

pytestmark = pytest.mark.pipeline


def _task_dir(pipeline_root: Path, task: str) -> Path:
    (found,) = pipeline_root.glob(f"*/{task}")
    return found


def _params(example: Path, **paths: str) -> dict:
    params = json.loads((example / "params.json").read_text())
    params.update({k: v.format(dir=example) for k, v in paths.items()})
    return {"project": "", "location": "us-central1", **params}


def test_autosxs_template_writes_the_report_and_the_confusion_matrix(tmp_path):
    params = _params(QUICKSTART, evaluation_dataset="{dir}/dataset.jsonl", autorater_model="replay/{dir}/replay.jsonl")
    root = tmp_path / "root"
    outputs = run_local(str(REPO / "compiled" / "autosxs.yaml"), params, str(root))
    judgments = io.read_jsonl(outputs["judgments"].path)
    metrics = json.loads(next(root.glob("*/model-evaluation-text-generation-pairwise/metrics_json")).read_text())
    task = _task_dir(root, "build-autosxs-report")
    page = (task / "report").read_text()
    numbers = parse_numbers(page).numbers
    assert numbers["autorater_model_a_win_rate"][0][0] == metrics["autorater_model_a_win_rate"] == 0.5
    assert numbers["cohens_kappa"][0][0] == metrics["cohens_kappa"]
    executor = json.loads((task / "executor_output.json").read_text())
    (matrix,) = executor["artifacts"]["confusion_matrix"]["artifacts"]
    logged = matrix["metadata"]["confusionMatrix"]
    assert [a["displayName"] for a in logged["annotationSpecs"]] == ["A", "B", "TIE"]
    assert [r["row"] for r in logged["rows"]] == confusion_matrix(judgments, "human_preference")
    assert logged["rows"][0]["row"][0] == metrics["true_positive_count"]


def test_gecko_template_writes_the_report(tmp_path):
    params = _params(
        GECKO_QUICKSTART,
        evaluation_dataset="{dir}/dataset.jsonl",
        rubric_generation_model="replay/{dir}/rubric_replay.jsonl",
        validator_model="replay/{dir}/validator_replay.jsonl",
    )
    root = tmp_path / "root"
    run_local(str(REPO / "compiled" / "gecko.yaml"), params, str(root))
    metrics = json.loads(next(root.glob("*/score-gecko-validations/metrics_json")).read_text())
    page = (_task_dir(root, "build-gecko-report") / "report").read_text()
    assert parse_numbers(page).numbers["mean_final_score"][0][0] == metrics["mean_final_score"]
    assert page.count('<img class="thumb" src="data:image/jpeg;base64,') == 3  # the quickstart's local PNGs
