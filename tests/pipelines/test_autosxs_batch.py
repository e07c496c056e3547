"""``autorater run autosxs`` with Vertex AI batch prediction: model A's responses, then the judge.

Model A has no response column; ``model_a_parameters.mode = "batch"`` sends its prompts as one batch job to
the model emulator's ``batchPredictionJobs`` endpoints, with the job's files in gcp-storage-emulator. The
local runner runs each component in a subprocess, so ``STORAGE_EMULATOR_HOST`` is set in ``os.environ``
(monkeypatch) before the run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.cloud_emulators import StorageEmulator, missing_emulator
from autorater_pipelines.testing.judges import length_judge, responses_in_prompt

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
BUCKET = "autorater-batch-test"


@pytest.fixture(scope="module")
def storage_emulator():
    reason = missing_emulator("gcs")
    if reason:
        pytest.skip(reason)
    with StorageEmulator(bucket=BUCKET) as emulator:
        yield emulator


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _model_a(request) -> str:
    """Model A answers with the question's length in words, spelled out to a length we can predict."""
    return "A" * (3 * len(request.prompt_text.split()))


def _responder(request):
    if responses_in_prompt(request.prompt_text):
        return length_judge(request)
    if request.prompt_text.startswith("Q6"):
        raise RuntimeError("model A crashed on this one")  # a failed batch line
    return _model_a(request)


def _params(tmp_path: Path, emulator: ModelEmulator, **autorater: object) -> dict:
    rows = _read_jsonl(QUICKSTART / "dataset.jsonl")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "answer_model_a"}) + "\n" for r in rows))
    params = json.loads((QUICKSTART / "params.json").read_text())
    params.update(
        evaluation_dataset=str(data),
        response_column_a="",
        model_a="gemini-2.5-flash",
        model_a_prompt_parameters={"prompt": {"template": "Q{{ question_id[1:] }}: {{ question }}"}},
        model_a_parameters={
            "mode": "batch",
            "batch_staging_uri": f"gs://{BUCKET}/staging",
            "batch_poll_interval_s": "0.05",
            "base_url": emulator.url,
        },
        autorater_model="gemini-2.5-flash",
        autorater_parameters={"sampling_count": 1, "flip": False, "base_url": emulator.url, **autorater},
        project="test-project",
        location="us-central1",
    )
    return params


def _run(params: dict, tmp_path: Path) -> tuple[int, Path]:
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    out = tmp_path / "out"
    # q6's model A generation fails by design (1 of 6 rows): above the default --max-failed-share of 0.1.
    args = ["run", "autosxs", "--params", str(path), "--output-dir", str(out), "--quiet", "--max-failed-share", "0.5"]
    return main(args), out


def _expected_choices() -> dict[str, str]:
    expected = {}
    for row in _read_jsonl(QUICKSTART / "dataset.jsonl"):
        qid = row["question_id"]
        if qid == "q6":
            expected[qid] = "ERROR"
            continue
        a = 3 * len(f"Q{qid[1:]}: {row['question']}".split())
        b = len(row["answer_model_b"])
        expected[qid] = "A" if a > b else "B" if b > a else "TIE"
    return expected


@pytest.mark.pipeline
@pytest.mark.parametrize("judge_mode", ["online", "batch"])
def test_model_a_responses_from_a_batch_job_then_judged(storage_emulator, judge_mode, tmp_path, monkeypatch, capsys):
    for name, value in storage_emulator.env.items():
        monkeypatch.setenv(name, value)
    judge = {"mode": "batch", "batch_staging_uri": f"gs://{BUCKET}/judge", "batch_poll_interval_s": 0.05}
    with ModelEmulator(responder=_responder) as emulator:
        params = _params(tmp_path, emulator, **(judge if judge_mode == "batch" else {}))
        code, out = _run(params, tmp_path)
        jobs = emulator.batch.jobs
        online = [r for r in emulator.requests if r.path.endswith(":generateContent")]
    assert code == 0, capsys.readouterr()

    # Model A: one batch job with one line per row, answered in shuffled order and joined back by id.
    inference = jobs[0]
    assert inference.model == "publishers/google/models/gemini-2.5-flash"
    assert inference.state == "JOB_STATE_SUCCEEDED" and inference.polls == 2
    assert [r.prompt_text.split(":")[0] for r in inference.requests] == [f"Q{i}" for i in range(1, 7)]
    judgments = {j["question_id"]: j for j in _read_jsonl(out / "judgments.jsonl")}
    for row in _read_jsonl(QUICKSTART / "dataset.jsonl"):
        qid = row["question_id"]
        if qid != "q6":
            assert judgments[qid]["response_a"] == "A" * (3 * len(f"Q{qid[1:]}: {row['question']}".split()))

    # Then judged: 5 rows with a model A response, q6's failed line is an inference error row.
    if judge_mode == "batch":
        assert len(jobs) == 2 and len(jobs[1].requests) == 5 and online == []
    else:
        assert len(jobs) == 1 and len(online) == 5
    assert {qid: j["choice"] for qid, j in judgments.items()} == _expected_choices()
    assert judgments["q6"]["response_a"] is None
    errors = _read_jsonl(out / "error_messages.jsonl")
    assert [(e["question_id"], e["stage"], e["model"]) for e in errors] == [("q6", "inference", "a")]
    assert "batch line failed: Internal Server Error" in errors[0]["error"]
    assert "model A crashed on this one" in errors[0]["error"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["error_count"] == 1 and metrics["judged_count"] == 5
