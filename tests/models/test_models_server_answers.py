"""What the openai and Gemini providers do with what a server says: refusals, limits, repeated errors.

The real SDK clients talk to the emulator over HTTP; a responder that raises makes the emulator answer
HTTP 500 with the exception text in the body, as a server whose request validator refuses something.
"""

from __future__ import annotations

import logging

import pytest

from autorater_pipelines.models import ErrorKind, MediaPart, ModelRequest, get_model
from autorater_pipelines.models._structured import MODES, schema_instruction
from autorater_pipelines.testing import ModelEmulator, Refusal

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}}}
LONG = "The quick brown fox jumps over the lazy dog. " * 20  # 900 characters


@pytest.fixture(autouse=True)
def fresh_modes():
    MODES.reset()
    yield
    MODES.reset()


def _refusing(*refused: str, answer: str = '{"verdict": "no"}'):
    """A responder that refuses the listed response_format types like llama-cpp-python's validator."""

    def respond(req) -> str:
        fmt = (req.body.get("response_format") or {}).get("type")
        if fmt in refused:
            raise ValueError(f"1 validation error: body.response_format.type: input should be 'text' (got {fmt!r})")
        return answer

    return respond


def test_json_schema_refused_once_then_json_object_for_the_run(emulator: ModelEmulator, make_config, caplog) -> None:
    emulator.responder = _refusing("json_schema")
    model = get_model("openai/m", make_config(max_concurrency=8))
    caplog.set_level(logging.INFO, logger="autorater_pipelines.models")
    outputs = model.generate([ModelRequest(parts=(f"q{i}",), response_schema=SCHEMA) for i in range(6)])
    assert [o.text for o in outputs] == ['{"verdict": "no"}'] * 6
    assert all(o.attempts == 1 for o in outputs)  # the refusal is not a retry
    formats = [r.body.get("response_format", {}).get("type") for r in emulator.requests]
    assert formats == ["json_schema"] + ["json_object"] * 6  # one refused request, then the detected mode
    assert '{"verdict": "<yes|no>"}' in emulator.requests[1].prompt_text  # the schema moved into the prompt
    refusals = [r for r in caplog.records if "refused structured output mode 'json_schema'" in r.getMessage()]
    assert len(refusals) == 1 and "'json_object'" in refusals[0].getMessage()
    assert model.stats.retries == 0
    # A second model of the same endpoint (same run) starts in the detected mode.
    get_model("openai/m", make_config()).generate([ModelRequest(parts=("again",), response_schema=SCHEMA)])
    assert emulator.requests[-1].body["response_format"] == {"type": "json_object"}


def test_no_structured_output_at_all_falls_back_to_the_prompt(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = _refusing("json_schema", "json_object", answer='Sure! {"verdict": "yes"}')
    model = get_model("openai/m", make_config())
    [first, second] = model.generate([ModelRequest(parts=(f"q{i}",), response_schema=SCHEMA) for i in range(2)])
    assert first.text == second.text == 'Sure! {"verdict": "yes"}'
    assert sorted(r.status for r in emulator.requests) == [200, 200, 500, 500]
    answered = [r for r in emulator.requests if r.status == 200]  # in any order: the two requests run concurrently
    assert all("response_format" not in r.body for r in answered)
    assert sorted(r.prompt_text.split("\n", 1)[0] for r in answered) == ["q0", "q1"]
    assert all(r.prompt_text.split("\n", 1)[1].startswith("Answer with one JSON object") for r in answered)


def test_fixed_mode_is_never_changed(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = _refusing("json_schema")
    model = get_model("openai/m", make_config(structured_output="json_schema", max_retries=3))
    [out] = model.generate([ModelRequest(parts=("q",), response_schema=SCHEMA)])
    assert out.error.kind is ErrorKind.FATAL and out.error.reason == "unsupported_response_format"
    assert out.attempts == 1 and emulator.call_count == 1
    assert out.error.message.startswith("the server does not support this structured-output request")


def test_context_exceeded_500_is_one_fatal_attempt(emulator: ModelEmulator, make_config) -> None:
    def respond(req) -> str:
        raise RuntimeError("Context size has been exceeded.")  # llama.cpp server's words, as HTTP 500

    emulator.responder = respond
    [out] = get_model("openai/m", make_config(max_retries=5)).generate([ModelRequest(parts=("q",))])
    assert out.error.kind is ErrorKind.FATAL and out.error.reason == "context_length_exceeded"
    assert out.error.status_code == 500 and out.attempts == 1
    assert out.error.message.startswith("the prompt is longer than the model's context window")


def test_same_500_body_twice_stops_retrying_but_503_is_retried(emulator: ModelEmulator, make_config) -> None:
    def respond(req) -> str:
        raise KeyError("slot")  # an opaque server bug: the same 500 body every time

    emulator.responder = respond
    [out] = get_model("openai/m", make_config(max_retries=5)).generate([ModelRequest(parts=("q",))])
    assert out.error.kind is ErrorKind.FATAL and out.error.reason == "repeated_server_error"
    assert out.attempts == 2 and emulator.call_count == 2

    emulator.responder = lambda req: "fine"
    emulator.inject_failures(3, status=503, retry_after_s=None)
    [out] = get_model("openai/m", make_config(max_retries=5)).generate([ModelRequest(parts=("other",))])
    assert out.ok and out.attempts == 4  # a busy server's identical 503s stay transient


def test_plain_string_content_and_both_token_limits(emulator: ModelEmulator, make_config) -> None:
    model = get_model("openai/m", make_config(max_output_tokens=7))
    model.generate([ModelRequest(parts=("first", "second"), system_instruction="sys")])
    body = emulator.requests[0].body
    assert body["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "first\nsecond"}]
    assert body["max_tokens"] == 7 and body["max_completion_tokens"] == 7
    model.generate([ModelRequest(parts=("look", MediaPart("image/png", data=b"\x89PNG")))])
    content = emulator.requests[1].body["messages"][0]["content"]
    assert isinstance(content, list) and content[0] == {"type": "text", "text": "look"}


def test_refused_max_tokens_is_dropped_for_the_endpoint(emulator: ModelEmulator, make_config) -> None:
    def respond(req) -> str:
        if "max_tokens" in req.body:
            raise Refusal(400, "Unsupported parameter: 'max_tokens' is not supported with this model.")
        return "ok"

    emulator.responder = respond
    model = get_model("openai/m", make_config(max_output_tokens=9))
    outputs = model.generate([ModelRequest(parts=("q",))])
    outputs += model.generate([ModelRequest(parts=(f"q{i}",)) for i in range(3)])
    assert all(o.ok and o.attempts == 1 for o in outputs)
    assert [r.status for r in emulator.requests] == [400, 200, 200, 200, 200]
    assert sum("max_tokens" in r.body for r in emulator.requests) == 1
    assert all(r.body["max_completion_tokens"] == 9 for r in emulator.requests)


def test_truncated_structured_answer_is_an_error_naming_the_limit(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: {"text": '{"verdict": "y', "finish_reason": "max_tokens", "output_tokens": 5}
    model = get_model("openai/m", make_config(max_output_tokens=5))
    [structured, plain] = model.generate(
        [ModelRequest(parts=("q",), response_schema=SCHEMA), ModelRequest(parts=("free text",))]
    )
    assert structured.error.kind is ErrorKind.BLOCKED
    assert structured.error.message.startswith("truncated at 5 tokens (finish reason: length, max_output_tokens=5)")
    assert plain.ok and plain.text == '{"verdict": "y' and plain.finish_reason == "max_tokens"


def test_a_server_that_did_not_read_the_prompt_is_an_error(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: {"text": "an unrelated answer", "input_tokens": 12}
    model = get_model("openai/m", make_config(max_retries=3))
    [out] = model.generate([ModelRequest(parts=(LONG,))])
    assert out.error.kind is ErrorKind.FATAL and out.error.reason == "prompt_not_seen" and out.attempts == 1
    assert "reported 12 prompt tokens for a prompt of 900 characters" in out.error.message
    assert "did not follow a check prompt sent the same way" in out.error.message
    check = emulator.requests[1]  # one check request, which the server did not follow either
    assert check.prompt_text.startswith("Reply with this number and nothing else: ") and emulator.call_count == 2
    [again] = model.generate([ModelRequest(parts=(LONG + "again",))])
    assert again.error.reason == "prompt_not_seen" and emulator.call_count == 3  # the verdict is kept
    emulator.responder = lambda req: {"text": "fine", "input_tokens": 12}
    [short] = model.generate([ModelRequest(parts=("short prompt",))])
    assert short.ok  # short prompts are not checked: the template's tokens dominate


@pytest.mark.parametrize(
    "check_answer",
    [
        lambda number: "<think>\nOkay, the user wants me to reply with just the number they gave and nothing",
        lambda number: f"{number[:3]}.{number[3:]}",
    ],
    ids=["reasoning-cut-off", "number-with-a-dot"],
)
def test_a_check_answer_that_does_not_show_a_dropped_prompt_keeps_the_answers(
    emulator: ModelEmulator, make_config, check_answer
) -> None:
    import re

    def respond(req):
        found = re.search(r"Reply with this number and nothing else: (\d{6})", req.prompt_text)
        if found:
            return {"text": check_answer(found.group(1)), "input_tokens": 10}
        return {"text": '{"choice": "A"}', "input_tokens": 10}

    emulator.responder = respond
    outputs = get_model("openai/m", make_config()).generate([ModelRequest(parts=(LONG + str(i),)) for i in range(3)])
    assert [o.text for o in outputs] == ['{"choice": "A"}'] * 3  # was: all FATAL prompt_not_seen
    assert emulator.call_count == 4  # three answers and one check


def _caching_server(first_count: int | None):
    """A server that reads every prompt but reports 3 prompt tokens (a cached prefix) after its first answer."""
    answered = []

    def respond(req):
        number = req.prompt_text.rsplit(" ", 1)[-1]
        if req.prompt_text.startswith("Reply with this number and nothing else: "):
            return {"text": f"{number}", "input_tokens": 3}
        answered.append(req)
        if len(answered) == 1 and first_count is not None:
            return {"text": "read", "input_tokens": first_count}
        return {"text": "read", "input_tokens": 3}

    return respond


@pytest.mark.parametrize("first_count", [None, 300], ids=["low-from-the-start", "low-after-the-first-answer"])
def test_a_server_that_reads_the_prompt_but_reports_few_tokens_keeps_every_answer(
    emulator: ModelEmulator, make_config, caplog, first_count
) -> None:
    emulator.responder = _caching_server(first_count)
    model = get_model("openai/m", make_config(max_concurrency=1))
    caplog.set_level(logging.WARNING, logger="autorater_pipelines.models")
    outputs = model.generate([ModelRequest(parts=(f"{i} {LONG}",)) for i in range(6)])
    assert [o.text for o in outputs] == ["read"] * 6  # every answer kept
    checks = [r for r in emulator.requests if r.prompt_text.startswith("Reply with this number")]
    assert len(checks) == (1 if first_count is None else 0)  # an endpoint that counted right once needs no check
    warnings = [r.getMessage() for r in caplog.records if "reported 3 prompt tokens" in r.getMessage()]
    assert len(warnings) == 1  # once per endpoint, with the figures
    assert "for a prompt of 902 characters (expected at least ~56): it reads the prompt" in warnings[0]


def test_max_input_tokens_is_checked_before_sending(emulator: ModelEmulator, make_config) -> None:
    for spec in ("openai/m", "gemini-2.5-flash"):
        model = get_model(spec, make_config(max_input_tokens=100))
        [out] = model.generate([ModelRequest(parts=(LONG,))])  # 900 chars ≥ 150 tokens at the low estimate
        assert out.error.kind is ErrorKind.FATAL and out.error.reason == "context_length_exceeded"
        assert "900 characters, at least ~150 tokens" in out.error.message and "(max_input_tokens)" in out.error.message
        assert out.attempts == 0 and model.stats.calls == 0  # not sent: no model call attempt
    assert emulator.call_count == 0
    [fits] = get_model("openai/m", make_config(max_input_tokens=200)).generate([ModelRequest(parts=(LONG,))])
    assert fits.ok and emulator.call_count == 1


def test_gemini_schema_refused_then_mime_type_only(emulator: ModelEmulator, make_config, caplog) -> None:
    def respond(req) -> str:
        config = req.body.get("generationConfig") or {}
        if "responseJsonSchema" in config:
            raise Refusal(400, 'Invalid JSON payload received. Unknown name "responseJsonSchema": Cannot find field.')
        return '{"verdict": "yes"}'

    emulator.responder = respond
    model = get_model("gemini-1.0-pro", make_config())
    outputs = model.generate([ModelRequest(parts=(f"q{i}",), response_schema=SCHEMA) for i in range(3)])
    assert all(o.ok and o.attempts == 1 for o in outputs)
    configs = [r.body["generationConfig"] for r in emulator.requests]
    assert "responseJsonSchema" in configs[0] and all("responseJsonSchema" not in c for c in configs[1:])
    assert all(c.get("responseMimeType") == "application/json" for c in configs)
    assert '{"verdict": "<yes|no>"}' in emulator.requests[-1].prompt_text


def test_gemini_400_context_message_is_a_context_error(emulator: ModelEmulator, make_config) -> None:
    emulator.max_input_tokens = 10
    [out] = get_model("gemini-2.5-flash", make_config()).generate([ModelRequest(parts=(LONG,))])
    assert out.error.kind is ErrorKind.FATAL and out.error.reason == "context_length_exceeded"
    assert out.error.status_code == 400 and out.attempts == 1


def test_schema_instruction_shows_the_shape_not_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "explanation": {"type": "string", "description": "Why."},
            "choice": {"type": "string", "enum": ["A", "B", "SAME"]},
            "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        },
    }
    assert schema_instruction(schema) == (
        "Answer with one JSON object and nothing else (no prose, no code fence), in this shape:\n"
        '{"explanation": "<string>", "choice": "<A|B|SAME>", "items": [{"n": "<integer>"}]}\n'
        "where\n"
        '- "explanation": Why.'
    )


def test_a_complete_json_answer_at_the_token_limit_is_kept(emulator: ModelEmulator, make_config) -> None:
    emulator.responder = lambda req: {"text": '{"verdict": "yes"}', "finish_reason": "max_tokens"}
    [out] = get_model("openai/m", make_config()).generate([ModelRequest(parts=("q",), response_schema=SCHEMA)])
    assert out.ok and out.text == '{"verdict": "yes"}' and out.finish_reason == "max_tokens"
