"""``GenerateConfig.mode = "batch"``: Vertex AI batch prediction jobs through the emulator's job endpoints.

The real google-genai client submits and polls jobs on the model emulator; job input and output files go
through the real google-cloud-storage client to gcp-storage-emulator (``STORAGE_EMULATOR_HOST``).
"""

from __future__ import annotations

import json

import pytest

from autorater_pipelines.errors import InputError, ModelCallError
from autorater_pipelines.models import ErrorKind, GenerateConfig, MediaPart, ModelRequest, get_model
from autorater_pipelines.models._batch import ID_LABEL
from autorater_pipelines.testing.cloud_emulators import GCS_TEST_BUCKET

BUCKET = GCS_TEST_BUCKET  # fixtures `storage_emulator` and `bucket`: tests/conftest.py


@pytest.fixture
def batch_config(make_config, bucket):
    def make(**overrides):
        values = {"mode": "batch", "batch_staging_uri": bucket[1], "batch_poll_interval_s": 0.01}
        values.update(overrides)
        return make_config(**values)

    return make


def _echo(request):
    return f"echo: {request.prompt_text}"


def _requests(n, prefix="prompt"):
    return [ModelRequest(parts=(f"{prefix} {i}",), key={"id": i}) for i in range(n)]


def _objects(bucket, suffix):
    b, root = bucket
    folder = root[len(f"gs://{BUCKET}/") :]
    return [blob for blob in b.client.list_blobs(BUCKET, prefix=folder) if blob.name.endswith(suffix)]


def test_outputs_are_joined_by_id_not_by_line_order(emulator, batch_config, bucket):
    emulator.responder = _echo
    model = get_model("gemini-2.5-flash", batch_config())

    outputs = model.generate(_requests(20))

    assert [o.text for o in outputs] == [f"echo: prompt {i}" for i in range(20)]
    assert all(o.error is None and o.usage.output_tokens == 3 for o in outputs)
    (job,) = emulator.batch.jobs
    assert job.state == "JOB_STATE_SUCCEEDED" and job.polls == 2  # PENDING -> RUNNING -> SUCCEEDED
    assert job.model == "publishers/google/models/gemini-2.5-flash"
    assert len(job.requests) == emulator.call_count == 20
    (input_blob,) = _objects(bucket, "input.jsonl")
    sent = [json.loads(line) for line in input_blob.download_as_text().splitlines()]
    assert set(sent[0]) == {"request"} and set(sent[0]["request"]["labels"]) == {ID_LABEL}
    (output_blob,) = _objects(bucket, "predictions.jsonl")
    written = [json.loads(line) for line in output_blob.download_as_text().splitlines()]
    order = [line["request"]["labels"][ID_LABEL] for line in written]
    assert order != [line["request"]["labels"][ID_LABEL] for line in sent], "the emulator shuffles output lines"
    assert {line["status"] for line in written} == {""}
    assert model.stats.requests == 20 and model.stats.calls == 20 and model.stats.failures == 0


def test_missing_line_per_line_error_and_blocked_answer_are_error_outputs(emulator, batch_config):
    def responder(request):
        if request.prompt_text == "prompt 2":
            raise RuntimeError("model crashed")  # the emulator answers 500: a failed line
        if request.prompt_text == "prompt 3":
            return {"text": None, "finish_reason": "safety"}
        return _echo(request)

    emulator.responder = responder
    emulator.batch.drop = lambda request: request.prompt_text == "prompt 1"  # a line lost from the output
    model = get_model("gemini-2.5-flash", batch_config())

    outputs = model.generate(_requests(5))

    assert [o.text for o in outputs] == ["echo: prompt 0", None, None, None, "echo: prompt 4"]
    missing, failed, blocked = outputs[1].error, outputs[2].error, outputs[3].error
    assert missing.kind is ErrorKind.TRANSIENT
    assert "ended in state JOB_STATE_SUCCEEDED" in missing.message and "has no line for this request" in missing.message
    assert f"{ID_LABEL}=" in missing.message
    assert failed.kind is ErrorKind.TRANSIENT and failed.status_code == 500
    assert failed.message.startswith("batch line failed: Internal Server Error") and "model crashed" in failed.message
    assert blocked.kind is ErrorKind.BLOCKED and outputs[3].finish_reason == "safety"
    assert model.stats.failures == 3


def test_injected_failure_is_a_failed_line_classified_by_its_http_code(emulator, batch_config):
    emulator.responder = _echo
    emulator.inject_failures(1, status=429)  # the first line the job answers (input order)
    model = get_model("gemini-2.5-flash", batch_config())

    outputs = model.generate(_requests(3))

    assert outputs[0].error.kind is ErrorKind.RATE_LIMIT and outputs[0].error.status_code == 429
    assert outputs[0].error.message.startswith("batch line failed: Too Many Requests")
    assert [o.text for o in outputs[1:]] == ["echo: prompt 1", "echo: prompt 2"]
    assert model.stats.retries == 0  # lines are not retried within a job; a rerun resubmits them


def test_cache_hits_are_served_first_and_not_submitted(emulator, batch_config, tmp_path):
    emulator.responder = _echo
    config = batch_config(cache_dir=str(tmp_path / "cache"))
    first = get_model("gemini-2.5-flash", config).generate(_requests(3))
    assert all(o.ok and not o.cached for o in first)

    model = get_model("gemini-2.5-flash", config)
    outputs = model.generate(_requests(5))

    assert [o.text for o in outputs] == [f"echo: prompt {i}" for i in range(5)]
    assert [o.cached for o in outputs] == [True, True, True, False, False]
    assert [len(job.requests) for job in emulator.batch.jobs] == [3, 2]
    assert [r.prompt_text for r in emulator.batch.jobs[1].requests] == ["prompt 3", "prompt 4"]
    assert model.stats.cache_hits == 3 and model.stats.calls == 2

    again = get_model("gemini-2.5-flash", config).generate(_requests(5))
    assert all(o.cached for o in again) and len(emulator.batch.jobs) == 2  # nothing left to submit


def test_identical_requests_are_submitted_once(emulator, batch_config):
    emulator.responder = _echo
    requests = [ModelRequest(parts=("same",), key={"id": i}) for i in range(3)] + _requests(1)
    model = get_model("gemini-2.5-flash", batch_config())

    outputs = model.generate(requests)

    assert [o.text for o in outputs] == ["echo: same"] * 3 + ["echo: prompt 0"]
    assert [o.cached for o in outputs] == [False, True, True, False]
    assert len(emulator.batch.jobs[0].requests) == 2


def test_request_lines_carry_what_an_online_call_sends(emulator, batch_config):
    schema = {"type": "object", "properties": {"choice": {"type": "string", "enum": ["A", "B"]}}}
    request = ModelRequest(
        parts=("Look:", MediaPart("image/png", data=b"\x89PNG bytes"), MediaPart("image/jpeg", uri="gs://b/x.jpg")),
        system_instruction="Be strict.",
        response_schema=schema,
    )
    config = batch_config(temperature=0.0, max_output_tokens=64, seed=7)
    (output,) = get_model("gemini-2.5-flash", config).generate([request])
    online = get_model("gemini-2.5-flash", config.model_copy(update={"mode": "online"})).generate([request])[0]

    assert json.loads(output.text) == json.loads(online.text) == {"choice": "A"}
    batch_line, online_call = emulator.requests
    assert "batchPredictionJobs" in batch_line.path and online_call.path.endswith(":generateContent")
    for seen in (batch_line, online_call):
        assert seen.prompt_text == "Look:" and seen.system_instruction == "Be strict."
        assert seen.media == [("image/png", b"\x89PNG bytes", None), ("image/jpeg", None, "gs://b/x.jpg")]
        assert seen.response_schema == schema
        assert seen.generation == {"temperature": 0.0, "max_output_tokens": 64, "seed": 7}


def test_model_registry_model_runs_as_a_batch_job(emulator, batch_config):
    emulator.responder = _echo
    spec = "projects/test-project/locations/europe-west4/models/1234@2"
    (output,) = get_model(spec, batch_config()).generate(_requests(1))

    assert output.text == "echo: prompt 0"
    (job,) = emulator.batch.jobs
    assert job.model == spec and job.name.startswith("projects/test-project/locations/europe-west4/")


def test_failed_job_without_output_stops_the_run(emulator, batch_config):
    emulator.batch.fail_next = "Quota exceeded for batch prediction jobs"
    model = get_model("gemini-2.5-flash", batch_config())

    with pytest.raises(ModelCallError, match=r"ended in state JOB_STATE_FAILED: Quota exceeded .* none of the 2"):
        model.generate(_requests(2))


def test_job_still_running_at_the_timeout_is_cancelled(emulator, batch_config):
    emulator.batch.polls_to_finish = 10_000
    model = get_model("gemini-2.5-flash", batch_config(batch_timeout_s=0.1))

    with pytest.raises(ModelCallError, match=r"did not end within batch_timeout_s=0.1 s and was cancelled"):
        model.generate(_requests(2))
    assert emulator.batch.jobs[0].state == "JOB_STATE_CANCELLED"


def test_staging_bucket_that_does_not_exist_is_an_input_error(emulator, batch_config):
    model = get_model("gemini-2.5-flash", batch_config(batch_staging_uri="gs://no-such-bucket/staging"))

    with pytest.raises(InputError, match=r"gs://no-such-bucket/staging/.*/input.jsonl: not found in Cloud Storage"):
        model.generate(_requests(1))
    assert emulator.batch.jobs == []


@pytest.mark.parametrize(
    ("spec", "overrides", "message"),
    [
        (
            "openai/gpt-4o-mini",
            {},
            r"mode='batch' runs Vertex AI batch prediction, but model 'openai/gpt-4o-mini' uses provider 'openai'",
        ),
        ("projects/p/locations/l/endpoints/9", {}, r"batch prediction jobs take a model, not an endpoint"),
        ("gemini-2.5-flash", {"batch_staging_uri": None}, r"batch_staging_uri: mode='batch' needs batch_staging_uri"),
    ],
)
def test_unsupported_models_and_missing_staging_fail_when_the_model_is_built(emulator, spec, overrides, message):
    values = {"base_url": emulator.url, "mode": "batch", "batch_staging_uri": "gs://b/staging", **overrides}
    with pytest.raises(InputError, match=message):
        get_model(spec, GenerateConfig(**values))


def test_staging_uri_must_be_cloud_storage():
    with pytest.raises(InputError, match=r"batch_staging_uri='/tmp/x': .*must be a Cloud Storage prefix"):
        GenerateConfig.from_params({"mode": "batch", "batch_staging_uri": "/tmp/x"})
