"""The real google-genai client (Vertex AI and API-key modes) against the emulator."""

from __future__ import annotations

import json

import pytest

from autorater_pipelines.models import ErrorKind, GenerateConfig, MediaPart, ModelRequest, get_model
from autorater_pipelines.testing import EmulatedRequest, ModelEmulator

SCHEMA = {
    "type": "object",
    "properties": {"choice": {"type": "string", "enum": ["A", "B", "TIE"]}, "confidence": {"type": "number"}},
    "required": ["choice", "confidence"],
}


def test_vertex_text_usage_and_route(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: f"echo: {req.prompt_text}"
    model = get_model("gemini-2.5-flash", make_config())
    [out] = model.generate([ModelRequest(parts=("hello", "world"), key={"id": 1})])
    assert out.ok and out.text == "echo: hello\nworld"
    assert out.finish_reason == "stop"
    assert out.usage.input_tokens == 2 and out.usage.output_tokens == 3
    assert out.attempts == 1 and not out.cached and out.latency_s > 0
    assert out.raw is not None and out.raw["candidates"][0]["finish_reason"] == "STOP"
    [req] = emulator.requests
    assert req.protocol == "vertex" and req.model == "gemini-2.5-flash"
    assert (
        req.path
        == "/v1beta1/projects/local/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
    )
    assert req.headers["authorization"] == "Bearer emulator"
    assert model.stats.calls == 1 and model.stats.usage.output_tokens == 3


def test_media_bytes_uris_and_system_instruction_arrive(emulator: ModelEmulator, make_config) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    model = get_model("gemini-2.5-flash", make_config())
    request = ModelRequest(
        parts=("Is there a cat?", MediaPart("image/png", data=png), MediaPart("video/mp4", uri="gs://b/v.mp4")),
        system_instruction="You are a careful rater.",
    )
    assert model.generate([request])[0].ok
    [req] = emulator.requests
    assert req.media == [("image/png", png, None), ("video/mp4", None, "gs://b/v.mp4")]
    assert req.prompt_text == "Is there a cat?"
    assert req.system_instruction == "You are a careful rater."


def test_structured_output_and_generation_settings_arrive(emulator: ModelEmulator, make_config) -> None:
    config = make_config(temperature=0.2, max_output_tokens=64, top_p=0.9, seed=7)
    model = get_model("gemini-2.5-flash", config)
    [out] = model.generate([ModelRequest(parts=("judge",), response_schema=SCHEMA)])
    [req] = emulator.requests
    assert req.response_schema == SCHEMA
    assert req.body["generationConfig"]["responseMimeType"] == "application/json"
    assert req.generation == {"temperature": 0.2, "max_output_tokens": 64, "top_p": 0.9, "seed": 7}
    assert json.loads(out.text) == {"choice": "A", "confidence": 0.0}  # default responder follows the schema


def test_logprobs(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: {
        "text": "A",
        "logprobs": [{"token": "A", "logprob": -0.1, "top": [["A", -0.1], ["B", -2.5]]}],
    }
    model = get_model("gemini-2.5-flash", make_config(logprobs=2))
    [out] = model.generate([ModelRequest(parts=("x",))])
    assert emulator.requests[0].generation["logprobs"] == 2
    assert [(lp.token, lp.logprob, lp.top) for lp in out.logprobs] == [("A", -0.1, (("A", -0.1), ("B", -2.5)))]


@pytest.mark.parametrize(("finish", "expected"), [("safety", "safety"), ("max_tokens", "max_tokens")])
def test_answer_without_text_is_blocked_not_retried(
    emulator: ModelEmulator, make_config, finish: str, expected: str
) -> None:
    emulator.responder = lambda req: {"text": None, "finish_reason": finish}
    model = get_model("gemini-2.5-flash", make_config())
    [out] = model.generate([ModelRequest(parts=("x",))])
    assert not out.ok and out.error.kind is ErrorKind.BLOCKED
    assert out.finish_reason == expected
    assert out.error.message == f"the model returned no text (finish reason: {expected})"
    assert emulator.call_count == 1 and out.attempts == 1


def test_gemini_api_mode(emulator: ModelEmulator, make_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    model = get_model("gemini-2.5-flash", make_config())
    assert model.provider == "gemini_api"
    [out] = model.generate([ModelRequest(parts=("hi",))])
    assert out.ok
    [req] = emulator.requests
    assert req.protocol == "gemini_api" and req.model == "gemini-2.5-flash"
    assert req.headers["x-goog-api-key"] == "test-key"


def test_endpoint_resource_name(emulator: ModelEmulator, make_config) -> None:
    model = get_model("projects/p1/locations/europe-west4/endpoints/123", make_config())
    assert model.generate([ModelRequest(parts=("hi",))])[0].ok
    [req] = emulator.requests
    assert req.path == "/v1beta1/projects/p1/locations/europe-west4/endpoints/123:generateContent"


def test_one_client_serves_several_runs(emulator: ModelEmulator, make_config) -> None:
    model = get_model("gemini-2.5-flash", make_config())
    for _ in range(3):
        assert all(o.ok for o in model.generate([ModelRequest(parts=(str(i),)) for i in range(3)]))
    assert emulator.call_count == 9


def test_emulated_request_type(emulator: ModelEmulator, make_config) -> None:
    seen: list[tuple[object, int | None]] = []
    emulator.responder = lambda req: seen.append((req, req.status)) or "ok"
    get_model("gemini-2.5-flash", make_config()).generate([ModelRequest(parts=("hi",))])
    assert isinstance(seen[0][0], EmulatedRequest) and seen[0][1] is None  # status is set after answering
    assert emulator.requests[0].status == 200


def test_config_from_params_drives_the_model(emulator: ModelEmulator) -> None:
    config = GenerateConfig.from_params(
        {"temperature": 0, "base_url": emulator.url, "sampling_count": 3, "progress": False, "cache_dir": "off"}
    )
    assert get_model("gemini-2.5-flash", config).generate([ModelRequest(parts=("x",))])[0].ok
    assert emulator.requests[0].generation == {"temperature": 0}
