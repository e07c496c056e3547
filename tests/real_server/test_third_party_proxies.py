"""Third-party proxies in front of the real llama.cpp server: a Gemini → OpenAI translator and LiteLLM's proxy.

- ``api-for-gemini`` (PyPI): translates Gemini API ``generateContent`` calls to chat completions of the real server,
  and answers every other path with HTTP 200 from a catch-all route.
- LiteLLM's proxy (PyPI ``litellm[proxy]``): its Gemini ``generateContent`` route and chat completions, forwarded to
  the real server.

Both are installed and started by ``.ci/third_party_servers.py`` (127.0.0.1, ready after one real request through
them to the real server, stopped at the end of the module).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.autosxs import judge_examples, prepare_examples
from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.models import GenerateConfig, ModelRequest, get_model
from autorater_pipelines.models._structured import schema_instruction

pytestmark = [pytest.mark.real_server, pytest.mark.third_party]

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["yes", "no"], "description": "yes or no"}},
    "required": ["answer"],
}


@pytest.fixture(scope="module")
def gemini_proxy(third_party, real_server, tmp_path_factory) -> Any:
    with third_party.gemini_proxy(tmp_path_factory.mktemp("api-for-gemini"), real_server.url, real_server.model) as s:
        yield s


@pytest.fixture(scope="module")
def litellm(third_party, real_server, tmp_path_factory) -> Any:
    with third_party.litellm_proxy(tmp_path_factory.mktemp("litellm"), real_server.url, real_server.model) as s:
        yield s


def test_autosxs_quickstart_through_a_gemini_translator(gemini_proxy, real_server, tmp_path) -> None:
    """The quickstart judged by a Gemini model name, through api-for-gemini, by the real server: every row ends
    judged or with a specific reason, nothing retried, and the server read every prompt."""
    params = json.loads((QUICKSTART / "params.json").read_text())
    examples = prepare_examples(
        evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
        task=params["task"],
        id_columns=params["id_columns"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_column_a=params["response_column_a"],
        response_column_b=params["response_column_b"],
        human_preference_column=params["human_preference_column"],
    )
    autorater_parameters = real_server.params(
        base_url=gemini_proxy.url,
        # the translator sends responseJsonSchema on as response_format json_schema, which llama-cpp-python refuses
        # with an HTTP 500 the translator does not pass on: ask for JSON only, the schema in the prompt
        structured_output="json_object",
        sampling_count=1,
        max_output_tokens=160,
        cache_dir=str(tmp_path / "cache"),
    )
    judgments, errors, summary = judge_examples(
        examples=examples,
        task=params["task"],
        id_columns=params["id_columns"],
        autorater_model="gemini/gemini-2.5-flash",
        autorater_parameters=autorater_parameters,
    )
    assert [j["question_id"] for j in judgments] == [e["question_id"] for e in examples]
    assert summary.evaluation_count == 6 and summary.retries == 0 and not summary.stopped
    assert summary.input_tokens > 6 * 500, "each judge prompt is over 3,000 characters: the server read them"
    reasons = {e["question_id"]: e["error"] for e in errors}
    for judgment in judgments:
        assert judgment["choice"] in ("A", "B", "TIE", "ERROR")
        if judgment["choice"] == "ERROR":  # a 135M judge: parse errors happen; a call failure must not
            assert reasons[judgment["question_id"]].startswith("parse_error:"), reasons
    # Every row's answers came back through the translator and were read (the 135M judge may copy the prompt's
    # format line, a counted parse error; the chain itself must carry every answer).
    assert all(s["raw_response"] for j in judgments for s in j["samples"]), reasons


def test_the_translators_catch_all_200_is_an_error_that_says_so(gemini_proxy) -> None:
    """A Vertex AI path (/v1beta1/projects/...) reaches api-for-gemini's catch-all route, which answers HTTP 200."""
    config = GenerateConfig(base_url=gemini_proxy.url, progress=False, cache_dir="off", max_concurrency=1)
    with pytest.raises(ModelCallError) as caught:
        get_model("gemini-2.5-flash", config).generate([ModelRequest(parts=(f"q{i}",)) for i in range(3)])
    message = str(caught.value)
    path = "/v1beta1/projects/local/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
    assert f"did not answer with a generateContent response: POST {gemini_proxy.url}{path} answered HTTP 200" in message
    said = json.dumps({"method": "POST", "path": path}, separators=(",", ":"))[:-2]  # what the catch-all route said
    assert f"with '{said}" in message
    assert "blocked" not in message and "0 of 3 requests were answered" in message


def _json_requests() -> list[ModelRequest]:
    return [
        ModelRequest(parts=("Is the sky blue on a clear day? Answer yes or no.",), response_schema=SCHEMA),
        ModelRequest(parts=("Is fire cold?",), response_schema=SCHEMA),
    ]


@pytest.mark.parametrize("spec", ["gemini/{model}", "openai/{model}"], ids=["generateContent", "chat_completions"])
def test_litellm_to_llama_cpp_carries_json_object_requests(litellm, real_server, spec: str) -> None:
    config = GenerateConfig(
        **real_server.params(base_url=litellm.url, structured_output="json_object", max_output_tokens=48)
    )
    outputs = get_model(spec.format(model=real_server.model), config).generate(_json_requests())
    for output in outputs:
        assert output.error is None and output.text, output.error
        assert output.usage.input_tokens > 40, "the server read the prompt and the schema instruction"


def test_litellm_refuses_the_two_part_message_that_one_part_avoids(third_party, litellm, real_server) -> None:
    """Why the instruction is appended to the last text part: two text parts become list content in LiteLLM's
    translation, and llama.cpp's chat template refuses it (HTTP 500)."""
    url = f"{litellm.url}/v1beta/models/{real_server.model}:generateContent"
    parts = [{"text": "Is fire cold?"}, {"text": "\n" + schema_instruction(SCHEMA)}]
    body = {"contents": [{"role": "user", "parts": parts}], "generationConfig": {"maxOutputTokens": 8}}
    status, answer = third_party.post_json(url, body)
    assert status == 500 and 'can only concatenate str (not \\"list\\") to str' in json.dumps(answer), answer
    one_part = {**body, "contents": [{"role": "user", "parts": [{"text": parts[0]["text"] + parts[1]["text"]}]}]}
    status, answer = third_party.post_json(url, one_part)
    assert status == 200 and answer["candidates"][0]["content"]["parts"][0]["text"], answer
