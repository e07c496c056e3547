"""Protocol answers say what happened: a 200 that is not the API's answer, a 404 of another API version, api_version.

The real SDK clients talk to the project's emulator; ``catch_all`` makes it answer every path it has no route for
with HTTP 200 (as a web app's catch-all route), ``api_versions`` makes it serve only some API versions.
"""

from __future__ import annotations

import pytest

from autorater_pipelines.errors import InputError, ModelCallError
from autorater_pipelines.models import ErrorKind, GenerateConfig, MediaPart, ModelRequest, get_model
from autorater_pipelines.models._structured import MODES, schema_instruction
from autorater_pipelines.testing import ModelEmulator

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}}}
QUIET = {"progress": False, "cache_dir": "off", "max_retries": 0, "max_concurrency": 1}  # calls in order
VERTEX_PATH = "/v1beta1/projects/local/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


@pytest.fixture(autouse=True)
def fresh_modes():
    MODES.reset()
    yield
    MODES.reset()


def _requests(n: int) -> list[ModelRequest]:
    return [ModelRequest(parts=(f"question {i}",), key={"id": i}) for i in range(n)]


# --- a 200 answer that is not the protocol's response ---------------------------------------------------------


@pytest.mark.parametrize("body", [{}, "<html><body>Welcome to our site</body></html>"], ids=["json", "html"])
def test_catch_all_200_stops_a_gemini_run_with_one_error_naming_the_path(body) -> None:
    """12 rows through a catch-all route: one call, one error that says the endpoint does not speak generateContent."""
    # The emulator routes only API version v9 here: every request lands on its catch-all route.
    with ModelEmulator(api_versions=("v9",), catch_all=body) as emu:
        url = emu.url
        model = get_model("gemini-2.5-flash", GenerateConfig(base_url=emu.url, **QUIET))
        with pytest.raises(ModelCallError) as caught:
            model.generate(_requests(12))
        assert emu.call_count == 1  # the first answer stopped the run: no 11 more "blocked" rows
    message = str(caught.value)
    assert "did not answer with a generateContent response" in message
    assert f"POST {url}{VERTEX_PATH} answered HTTP 200" in message
    assert repr(body if isinstance(body, str) else "{}") in message
    assert "blocked" not in message and "finish reason" not in message
    assert "0 of 12 requests were answered" in message


def test_catch_all_200_stops_an_openai_run_with_one_error_naming_the_path() -> None:
    with ModelEmulator(api_versions=("v9",), catch_all="<html>hello</html>") as emu:
        model = get_model("openai/m", GenerateConfig(base_url=emu.url, **QUIET))
        with pytest.raises(
            ModelCallError, match=r"did not answer with a chat completion: POST \S+/v1/chat/completions"
        ):
            model.generate(_requests(12))
        # GET /v1/models (the context-window probe) is not a POST: only the one chat call counts
        assert emu.call_count == 1


def test_a_catch_all_answer_after_real_answers_fails_that_row_only(emulator: ModelEmulator, make_config) -> None:
    """Once the endpoint answered, a non-generateContent 200 is that request's error (FATAL, not 'blocked')."""
    model = get_model("gemini-2.5-flash", make_config(max_retries=0))
    assert model.generate(_requests(1))[0].ok
    emulator.api_versions, emulator.catch_all = ("v9",), {"status": "ok"}
    [out] = model.generate(_requests(1))
    assert out.error is not None and out.error.kind is ErrorKind.FATAL
    assert out.error.reason == "wrong_protocol" and out.error.status_code == 200
    assert out.error.message.startswith("this endpoint did not answer with a generateContent response: POST ")
    assert '{"status": "ok"}' in out.error.message


def test_a_blocked_prompt_is_still_an_answer_without_text(emulator: ModelEmulator, make_config) -> None:
    """A real generateContent answer without candidates (``promptFeedback`` only) stays BLOCKED, not a protocol error."""
    emulator.responder = lambda req: {"text": None, "finish_reason": "safety"}
    [out] = get_model("gemini-2.5-flash", make_config()).generate(_requests(1))
    assert out.error is not None and out.error.kind is ErrorKind.BLOCKED
    assert out.error.message == "the model returned no text (finish reason: safety)"


# --- a 404 names the path and the API version; the api_version option -------------------------------------------


def test_404_names_the_path_requested_and_the_api_version() -> None:
    """A server that serves /v1/... only: the Vertex AI path /v1beta1/... is a 404 that says which path and version."""
    with ModelEmulator(api_versions=("v1",)) as emu:
        url = emu.url
        model = get_model("gemini-2.5-flash", GenerateConfig(base_url=url, **QUIET))
        with pytest.raises(ModelCallError) as caught:
            model.generate(_requests(3))
    message = str(caught.value)
    assert "answered HTTP 404" in message
    assert f"requested POST {url}{VERTEX_PATH} (API version v1beta1;" in message
    assert "set the api_version option" in message


def test_openai_404_names_the_path_requested() -> None:
    with ModelEmulator(api_versions=("v2",)) as emu:
        model = get_model("openai/m", GenerateConfig(base_url=emu.url, **QUIET))
        with pytest.raises(
            ModelCallError, match=r"HTTP 404: .*; requested POST http://127\.0\.0\.1:\d+/v1/chat/completions"
        ):
            model.generate(_requests(1))


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ("gemini-2.5-flash", "/v1/projects/local/locations/us-central1/publishers/google/models/gemini-2.5-flash"),
        ("gemini/gemini-2.5-flash", "/v1/models/gemini-2.5-flash"),
    ],
    ids=["vertex", "gemini_api"],
)
def test_api_version_reaches_the_request_path(spec: str, path: str) -> None:
    with ModelEmulator(api_versions=("v1",)) as emu:
        model = get_model(spec, GenerateConfig(base_url=emu.url, api_version="v1", **QUIET))
        outputs = model.generate(_requests(2))
        assert [o.ok for o in outputs] == [True, True]
        assert [r.path for r in emu.requests] == [f"{path}:generateContent"] * 2


def test_api_version_is_refused_for_openai_models_and_checked_for_shape() -> None:
    with pytest.raises(InputError, match=r"api_version='v1' applies to Gemini models only; .*part of its base_url"):
        get_model("openai/m", GenerateConfig(base_url="http://127.0.0.1:9/v1", api_version="v1"))
    with pytest.raises(InputError, match=r"api_version='v1/x'.*should match pattern"):
        GenerateConfig.from_params({"api_version": "v1/x"})


@pytest.mark.parametrize(
    ("module", "cls"),
    [
        ("autorater_pipelines.autosxs.params", "AutoraterParameters"),
        ("autorater_pipelines.autosxs.params", "ModelParameters"),
        ("autorater_pipelines.gecko.params", "RubricGenerationParameters"),
        ("autorater_pipelines.gecko.params", "ValidatorParameters"),
    ],
)
def test_api_version_is_accepted_wherever_base_url_is(module: str, cls: str) -> None:
    import importlib

    options = getattr(importlib.import_module(module), cls)
    parsed = options.parse({"base_url": "http://127.0.0.1:8080", "api_version": "v1"}, source="p")
    assert parsed.generate_config(source="p").api_version == "v1"
    assert "api_version" in options.valid_keys()


# --- the schema instruction in json_object / prompt mode is one text part --------------------------------------


@pytest.mark.parametrize("mode", ["json_object", "prompt"])
def test_gemini_schema_instruction_is_appended_to_the_last_text_part(
    emulator: ModelEmulator, make_config, mode: str
) -> None:
    model = get_model("gemini-2.5-flash", make_config(structured_output=mode, max_concurrency=1))
    model.generate(
        [
            ModelRequest(parts=("Judge this.",), response_schema=SCHEMA),
            ModelRequest(parts=("Is it red?", MediaPart("image/png", data=PNG)), response_schema=SCHEMA),
        ]
    )
    text_only, with_image = (r.body["contents"][0]["parts"] for r in emulator.requests)
    assert text_only == [{"text": "Judge this.\n" + schema_instruction(SCHEMA)}]
    assert [list(p) for p in with_image] == [["text"], ["inlineData"]]
    assert with_image[0]["text"] == "Is it red?\n" + schema_instruction(SCHEMA)


def test_gemini_sdk_typed_path_sends_the_same_one_part(emulator: ModelEmulator, make_config, monkeypatch) -> None:
    fast = get_model("gemini-2.5-flash", make_config(structured_output="json_object"))
    typed = get_model("gemini-2.5-flash", make_config(structured_output="json_object"))
    monkeypatch.setattr(typed._backend, "_transport", None)
    request = ModelRequest(parts=("a", "b"), response_schema=SCHEMA)
    fast.generate([request])
    typed.generate([request])
    parts = [r.body["contents"][0]["parts"] for r in emulator.requests]
    assert parts[0] == parts[1] == [{"text": "a"}, {"text": "b\n" + schema_instruction(SCHEMA)}]


def test_openai_schema_instruction_with_an_image_is_in_the_one_text_part(emulator: ModelEmulator, make_config) -> None:
    model = get_model("openai/m", make_config(structured_output="json_object"))
    model.generate([ModelRequest(parts=("Is it red?", MediaPart("image/png", data=PNG)), response_schema=SCHEMA)])
    content = emulator.requests[0].body["messages"][-1]["content"]
    assert [c["type"] for c in content] == ["text", "image_url"]
    assert content[0]["text"] == "Is it red?\n" + schema_instruction(SCHEMA)


def test_api_version_in_autorater_parameters_reaches_every_judge_call(tmp_path) -> None:
    """The AutoSxS quickstart judged by a server that serves /v1/... only, with ``api_version`` in the parameters."""
    import json
    from pathlib import Path

    from autorater_pipelines.autosxs import judge_examples, prepare_examples
    from autorater_pipelines.testing.judges import length_judge

    quickstart = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
    params = json.loads((quickstart / "params.json").read_text())
    examples = prepare_examples(
        evaluation_dataset=str(quickstart / "dataset.jsonl"),
        task=params["task"],
        id_columns=params["id_columns"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_column_a=params["response_column_a"],
        response_column_b=params["response_column_b"],
    )
    with ModelEmulator(responder=length_judge, api_versions=("v1",)) as emu:
        judgments, errors, summary = judge_examples(
            examples=examples,
            task=params["task"],
            id_columns=params["id_columns"],
            autorater_model="gemini-2.5-flash",
            autorater_parameters={"base_url": emu.url, "api_version": "v1", "progress": False, "cache_dir": "off"},
        )
        paths = {r.path.split("/publishers/")[0] for r in emu.requests}
    assert errors == [] and summary.model_calls == 12  # 6 rows, both orders
    assert all(j["choice"] in ("A", "B", "TIE") for j in judgments)
    assert paths == {"/v1/projects/local/locations/us-central1"}
