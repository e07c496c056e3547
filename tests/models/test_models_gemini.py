"""The real google-genai client (Vertex AI and API-key modes) against the emulator."""

from __future__ import annotations

import dataclasses
import json

import pytest

from autorater_pipelines.models import ErrorKind, GenerateConfig, MediaPart, ModelRequest, get_model
from autorater_pipelines.models.providers import vertex as vertex_module
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
    assert out.raw is not None and out.raw["candidates"][0]["finishReason"] == "STOP"  # the API's JSON
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


_WIRE_CASES = [
    (ModelRequest(parts=("hi",)), {}),
    (
        ModelRequest(
            parts=(
                "Is there a cat?",
                MediaPart("image/png", data=b"\x89PNG\xff\xfe"),
                MediaPart("video/mp4", uri="gs://b/v.mp4"),
            ),
            system_instruction="Be careful.",
            response_schema=SCHEMA,
        ),
        {"temperature": 0.2, "max_output_tokens": 64, "top_p": 0.9, "seed": 7, "logprobs": 3},
    ),
    (ModelRequest(parts=("x",), response_schema=SCHEMA), {"temperature": 0}),
]


@pytest.mark.parametrize("api_key", [False, True], ids=["vertex", "gemini_api"])
@pytest.mark.parametrize(("request_", "settings"), _WIRE_CASES)
@pytest.mark.parametrize(
    "name", ["gemini-2.5-flash", "publishers/google/models/gemini-2.5-flash", "projects/p/locations/l/endpoints/7"]
)
def test_request_body_matches_the_sdk_conversion(
    make_config, monkeypatch: pytest.MonkeyPatch, api_key: bool, request_: ModelRequest, settings: dict, name: str
) -> None:
    """The wire body we build is exactly what google-genai's own typed path would send."""
    from google.genai import _common, models

    if api_key:
        if name.startswith("projects/"):
            pytest.skip("the Gemini API has no endpoints")
        monkeypatch.setenv("GEMINI_API_KEY", "k")
    model = get_model(name, make_config(**settings))
    provider = model._backend
    params = models.types._GenerateContentParameters(
        model=provider.name,
        contents=[models.types.Content(role="user", parts=[vertex_module._part(p) for p in request_.parts])],
        config=provider._generation_config(request_),
    )
    api = provider._client._api_client
    convert = (
        models._GenerateContentParameters_to_vertex if api.vertexai else models._GenerateContentParameters_to_mldev
    )
    expected = convert(api, params, None, params)
    path = expected.pop("_url")["model"] + ":generateContent"
    expected.pop("config", None)
    expected = _common.encode_unserializable_types(_common.convert_to_dict(expected))
    assert provider.request_body(request_) == expected
    assert provider._path == path


def test_sdk_typed_path_gives_the_same_outputs(emulator: ModelEmulator, make_config, monkeypatch) -> None:
    """Without the SDK transport method, calls go through generate_content with the same results."""
    emulator.responder = lambda req: {
        "text": "A",
        "logprobs": [{"token": "A", "logprob": -0.1, "top": [["A", -0.1], ["B", -2.5]]}],
    }
    requests = [ModelRequest(parts=("x",), response_schema=SCHEMA, system_instruction="s")]
    fast = get_model("gemini-2.5-flash", make_config(logprobs=2))
    typed = get_model("gemini-2.5-flash", make_config(logprobs=2))
    monkeypatch.setattr(typed._backend, "_transport", None)
    [a], [b] = fast.generate(requests), typed.generate(requests)
    assert emulator.requests[0].body == emulator.requests[1].body
    assert dataclasses.replace(a, latency_s=0, raw=None) == dataclasses.replace(b, latency_s=0, raw=None)
    assert a.raw["candidates"][0]["content"] == b.raw["candidates"][0]["content"]
    assert a.usage.input_tokens > 0 and a.finish_reason == "stop"


# --- the start-up self-check of google-genai's private transport ------------------------------------------


@pytest.fixture
def fresh_fallback_log(monkeypatch):
    """The once-per-process fallback warning not yet given (another test may have triggered it)."""
    from autorater_pipelines.models.providers import _genai_transport

    monkeypatch.setattr(_genai_transport, "_fallback_logged", False)


def _fallback_warnings(caplog) -> list[str]:
    from autorater_pipelines.models.providers._genai_transport import FALLBACK_MESSAGE

    return [r.getMessage() for r in caplog.records if FALLBACK_MESSAGE in r.getMessage()]


def test_the_installed_google_genai_passes_the_self_check(emulator, make_config, caplog) -> None:
    """The google-genai installed here (the locked one; the newest allowed in .ci/newest_sdks.sh) has the
    private transport in the expected shape: calls take the fast path and nothing is logged."""
    from importlib.metadata import version

    from autorater_pipelines.models.providers._genai_transport import private_transport

    model = get_model("gemini-2.5-flash", make_config())
    transport, problem = private_transport(model._backend._client.aio._api_client)
    assert problem is None, f"google-genai {version('google-genai')}: {problem}"
    assert model._backend._transport is not None
    emulator.responder = lambda req: "fast"
    assert model.generate([ModelRequest(parts=("x",))])[0].text == "fast"
    assert _fallback_warnings(caplog) == []


@pytest.mark.parametrize(
    "shape, problem",
    [
        ("missing", "BaseApiClient.async_request is missing"),
        ("not-async", "is no longer a coroutine function"),
        ("renamed", "takes ['method', 'url', 'body', 'options'], expected ['http_method', 'path'"),
        ("new-required", "takes ['http_method', 'path', 'request_dict', 'http_options', 'stream']"),
    ],
)
def test_the_self_check_names_what_changed(shape, problem) -> None:
    from types import SimpleNamespace

    from autorater_pipelines.models.providers._genai_transport import private_transport

    async def renamed(method, url, body, options=None): ...
    def plain(http_method, path, request_dict, http_options=None): ...
    async def new_required(http_method, path, request_dict, http_options, *, stream): ...
    async def new_optional(http_method, path, request_dict, http_options=None, *, stream=False): ...

    methods = {"renamed": renamed, "not-async": plain, "new-required": new_required}
    client = SimpleNamespace(**({"async_request": methods[shape]} if shape in methods else {}))
    transport, found = private_transport(client)
    assert transport is None and problem in found
    assert private_transport(SimpleNamespace(async_request=new_optional)) == (new_optional, None)


def _renamed_parameters(original):
    async def async_request(self, method, url, body, options=None):  # same job, other parameter names
        return await original(self, method, url, body, options)

    return async_request


def _no_longer_async(original):
    def async_request(self, http_method, path, request_dict, http_options=None):  # returns an awaitable
        return original(self, http_method, path, request_dict, http_options)

    return async_request


@pytest.mark.parametrize(
    "change, problem",
    [
        (_renamed_parameters, "takes ['method', 'url', 'body', 'options'], expected ['http_method', 'path'"),
        (_no_longer_async, "is no longer a coroutine function"),
    ],
    ids=["renamed-parameters", "not-async"],
)
def test_a_changed_private_transport_falls_back_to_the_public_call_and_says_so_once(
    change, problem, emulator, make_config, monkeypatch, caplog, fresh_fallback_log
) -> None:
    """A google-genai whose private method changed shape (its public path still working, as in a release)."""
    from importlib.metadata import version

    from google.genai import _api_client

    original = _api_client.BaseApiClient.async_request
    monkeypatch.setattr(_api_client.BaseApiClient, "async_request", change(original))
    emulator.responder = lambda req: f"answer to {req.prompt_text}"
    first, second = get_model("gemini-2.5-flash", make_config()), get_model("gemini-2.5-flash", make_config())
    assert first._backend._transport is None and second._backend._transport is None
    outputs = first.generate([ModelRequest(parts=("one",))]) + second.generate([ModelRequest(parts=("two",))])
    assert [o.text for o in outputs] == ["answer to one", "answer to two"]
    assert all(o.ok and o.usage.input_tokens > 0 for o in outputs)
    assert [r.path.rsplit("/", 1)[1] for r in emulator.requests] == ["gemini-2.5-flash:generateContent"] * 2
    [warning] = _fallback_warnings(caplog)  # two providers, one warning
    assert warning.startswith(f"google-genai {version('google-genai')}: ") and problem in warning


def test_a_private_transport_answering_in_another_shape_falls_back_on_the_first_call(
    emulator, make_config, monkeypatch, caplog, fresh_fallback_log
) -> None:
    calls = []

    async def answers_a_dict(http_method, path, request_dict, http_options=None):
        calls.append(path)
        return {"candidates": []}  # not the SdkHttpResponse (with .body) the provider reads

    emulator.responder = lambda req: f"answer to {req.prompt_text}"
    model = get_model("gemini-2.5-flash", make_config(max_concurrency=1))
    monkeypatch.setattr(model._backend, "_transport", answers_a_dict)  # what the provider took from the SDK
    outputs = model.generate([ModelRequest(parts=(f"q{i}",), key={"i": i}) for i in range(3)])
    assert [o.text for o in outputs] == ["answer to q0", "answer to q1", "answer to q2"]
    assert len(calls) == 1, "after the first odd answer the private transport is not used again"
    assert len(emulator.requests) == 3
    [warning] = _fallback_warnings(caplog)
    assert "answered dict without a text body" in warning
