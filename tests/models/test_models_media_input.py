"""A text-only model given an image: known before the run from the registry, or stopped at the first refusal."""

from __future__ import annotations

import pytest

from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.models import ErrorKind, MediaPart, ModelRequest, get_model, media_input
from autorater_pipelines.models._classify import Reason, body_reason
from autorater_pipelines.testing import ModelEmulator, Refusal
from autorater_pipelines.testing.gecko_script import tiny_png

# What servers answer when a request carries an image the model cannot take (error bodies as the servers send them).
REFUSALS = {
    "openai": {
        "error": {
            "message": "Invalid content type. image_url is only supported by certain models.",
            "type": "invalid_request_error",
            "param": "messages.[0].content.[1].type",
            "code": None,
        }
    },
    "vllm": {
        "object": "error",
        "message": "Qwen/Qwen2.5-7B-Instruct is not a multimodal model",
        "type": "BadRequestError",
    },
    "llama.cpp": {
        "error": {
            "code": 500,
            "message": "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
            "type": "server_error",
        }
    },
    "ollama": {"error": "model does not support images"},
    "plain": "image input not supported",
}


@pytest.mark.parametrize("server", sorted(REFUSALS))
def test_refusals_of_media_are_recognised(server):
    assert body_reason(REFUSALS[server]) is Reason.MEDIA_UNSUPPORTED


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"error": {"message": "This model's maximum context length is 4096 tokens", "code": None}}, "context"),
        ({"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}}, "rf"),
        ({"error": {"message": "Unsupported parameter: 'max_tokens'", "code": "unsupported_parameter"}}, "param"),
    ],
)
def test_other_refusals_are_not_taken_for_media(body, reason):
    assert body_reason(body) is not Reason.MEDIA_UNSUPPORTED


def test_first_refusal_of_an_image_stops_the_run_with_one_clear_error(emulator: ModelEmulator, make_config):
    def text_only(request) -> str:
        if request.media:
            raise Refusal(400, "image input not supported")
        return "yes"

    emulator.responder = text_only
    image = MediaPart("image/png", data=tiny_png())
    requests = [ModelRequest(parts=(f"Is there a dog? ({i})", image), key={"id": i}) for i in range(6)]
    model = get_model("openai/my-text-model", make_config(max_concurrency=1, max_retries=5))
    answered: list = []
    with pytest.raises(ModelCallError, match=r"does not accept image or video input"):
        model.generate_each(requests, lambda _request, output: answered.append(output))
    assert emulator.call_count == 1, "no call after the first refusal (and no retry of it)"
    first, *rest = answered
    assert first.error.kind is ErrorKind.FATAL and first.error.reason == Reason.MEDIA_UNSUPPORTED.value
    assert first.error.message.startswith(f"model 'openai/my-text-model' at {emulator.url}")
    assert "'gemini-2.5-flash'" in first.error.message and "image input not supported" in first.error.message
    assert len(rest) == 5 and all(o.error.kind is ErrorKind.BUDGET for o in rest)
    assert all(o.error.message == f"not called: {first.error.message}" for o in rest)


def test_the_registry_knows_which_media_a_model_takes():
    assert media_input("gemini-2.5-flash").types == {"image", "video"}
    assert media_input("replay/answers.jsonl").types == {"image", "video"}  # replay reads no media
    assert media_input("openai/gpt-4o").types == {"image"}
    assert "no video" in media_input("openai/gpt-4o").note
    for text_only in ("gpt-3.5-turbo", "gpt-3.5-turbo-0125", "gpt-4", "gpt-4-1106-preview", "o3-mini"):
        known = media_input(f"openai/{text_only}")
        assert known.types == frozenset() and "text-only" in known.note, text_only
    assert media_input("openai/my-vision-model").types == {"image"}  # unknown: found at the first refusal
