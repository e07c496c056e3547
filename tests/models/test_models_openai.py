"""The real openai client against the emulator's chat-completions route."""

from __future__ import annotations

import base64

from autorater_pipelines.models import ErrorKind, MediaPart, ModelRequest, get_model
from autorater_pipelines.testing import ModelEmulator

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}}}


def test_text_usage_and_headers(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: f"echo: {req.prompt_text}"
    model = get_model("openai/my-model", make_config())
    assert model.provider == "openai" and model.name == "my-model"
    [out] = model.generate([ModelRequest(parts=("hello",), system_instruction="Be brief.")])
    assert out.ok and out.text == "echo: hello" and out.finish_reason == "stop"
    assert (out.usage.input_tokens, out.usage.output_tokens) == (3, 2)
    [req] = emulator.requests
    assert req.protocol == "openai" and req.model == "my-model" and req.path == "/v1/chat/completions"
    assert req.system_instruction == "Be brief."
    assert req.headers["authorization"] == "Bearer not-needed"


def test_image_schema_generation_and_logprobs(emulator: ModelEmulator, make_config) -> None:
    jpeg = b"\xff\xd8\xff" + bytes(100)
    model = get_model("openai/m", make_config(temperature=0.0, max_output_tokens=5, seed=1, logprobs=3))
    request = ModelRequest(parts=("Is it red?", MediaPart("image/jpeg", data=jpeg)), response_schema=SCHEMA)
    [out] = model.generate([request])
    [req] = emulator.requests
    assert req.media == [("image/jpeg", jpeg, None)]
    image_url = req.body["messages"][0]["content"][1]["image_url"]["url"]
    assert image_url == "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()
    assert req.response_schema == SCHEMA
    assert req.body["response_format"]["type"] == "json_schema"
    assert req.generation == {"temperature": 0.0, "max_output_tokens": 5, "seed": 1, "logprobs": 3}
    assert out.text == '{"verdict": "yes"}'
    assert out.logprobs is not None and len(out.logprobs[0].top) == 3


def test_video_is_a_fatal_error_without_a_call(emulator: ModelEmulator, make_config) -> None:
    model = get_model("openai/m", make_config())
    [out] = model.generate([ModelRequest(parts=("x", MediaPart("video/mp4", data=b"v")))])
    assert out.error.kind is ErrorKind.FATAL
    assert out.error.message.startswith("'video/mp4' media is not supported by the openai provider")
    assert emulator.call_count == 0


def test_gs_uri_is_a_fatal_error(emulator: ModelEmulator, make_config) -> None:
    model = get_model("openai/m", make_config())
    [out] = model.generate([ModelRequest(parts=(MediaPart("image/png", uri="gs://b/x.png"),))])
    assert out.error.kind is ErrorKind.FATAL and "'gs://b/x.png' is not supported" in out.error.message


def test_length_without_content_is_blocked(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: {"text": None, "finish_reason": "max_tokens"}
    [out] = get_model("openai/m", make_config()).generate([ModelRequest(parts=("x",))])
    assert out.error.kind is ErrorKind.BLOCKED and out.finish_reason == "max_tokens"
    assert emulator.requests[0].status == 200
    assert emulator.call_count == 1


def test_client_survives_several_runs(emulator: ModelEmulator, make_config) -> None:
    model = get_model("openai/m", make_config())
    for _ in range(3):
        assert all(o.ok for o in model.generate([ModelRequest(parts=(str(i),)) for i in range(4)]))
    assert emulator.call_count == 12
