"""The emulator's wire formats and failure simulation, checked with plain HTTP (no SDK)."""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from autorater_pipelines.testing import ModelEmulator, schema_example

VERTEX = "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-x:generateContent"
GEMINI = "/v1beta/models/gemini-x:generateContent"
OPENAI = "/v1/chat/completions"


def post(emu: ModelEmulator, path: str, body: Any) -> tuple[int, dict[str, str], dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(emu.url + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def google_body(text: str = "hi", **generation: Any) -> dict:
    return {"contents": [{"role": "user", "parts": [{"text": text}]}], "generationConfig": generation}


def openai_body(text: str = "hi", **extra: Any) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


def test_vertex_response_shape(emulator: ModelEmulator) -> None:
    emulator.responder = lambda req: "The answer"
    status, _, body = post(emulator, VERTEX, google_body("one two three"))
    assert status == 200
    candidate = body["candidates"][0]
    assert candidate["content"] == {"role": "model", "parts": [{"text": "The answer"}]}
    assert candidate["finishReason"] == "STOP"
    assert body["usageMetadata"] == {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}
    [req] = emulator.requests
    assert (req.protocol, req.model, req.prompt_text) == ("vertex", "gemini-x", "one two three")


@pytest.mark.parametrize(
    ("path", "protocol", "model"),
    [
        (GEMINI, "gemini_api", "gemini-x"),
        ("/v1/models/gemini-x:generateContent", "gemini_api", "gemini-x"),
        ("/v1/projects/p/locations/l/endpoints/42:generateContent", "vertex", "42"),
        ("/v1beta1/projects/p/locations/l/models/7@2:generateContent", "vertex", "7@2"),
    ],
)
def test_google_routes(emulator: ModelEmulator, path: str, protocol: str, model: str) -> None:
    assert post(emulator, path, google_body())[0] == 200
    assert (emulator.requests[0].protocol, emulator.requests[0].model) == (protocol, model)


def test_google_inline_media_snake_and_camel_case(emulator: ModelEmulator) -> None:
    data = bytes(range(250))
    parts = [
        {"inlineData": {"mime_type": "image/png", "data": base64.urlsafe_b64encode(data).decode()}},
        {"inline_data": {"mimeType": "image/jpeg", "data": base64.b64encode(b"jpg").decode()}},
        {"fileData": {"file_uri": "gs://b/v.mp4", "mime_type": "video/mp4"}},
    ]
    post(emulator, VERTEX, {"contents": [{"role": "user", "parts": parts}]})
    assert emulator.requests[0].media == [
        ("image/png", data, None),
        ("image/jpeg", b"jpg", None),
        ("video/mp4", None, "gs://b/v.mp4"),
    ]


def test_openai_response_shape_and_logprobs(emulator: ModelEmulator) -> None:
    emulator.responder = lambda req: "yes it is"
    status, _, body = post(emulator, OPENAI, openai_body(logprobs=True, top_logprobs=2))
    assert status == 200 and body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "yes it is"}
    assert choice["finish_reason"] == "stop"
    assert [t["token"] for t in choice["logprobs"]["content"]] == ["yes", " it", " is"]
    assert len(choice["logprobs"]["content"][0]["top_logprobs"]) == 2
    assert body["usage"] == {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}


def test_google_logprobs_from_responder(emulator: ModelEmulator) -> None:
    emulator.responder = lambda req: {"text": "B", "logprobs": [("B", -0.2, [("B", -0.2), ("A", -1.9)])]}
    _, _, body = post(emulator, VERTEX, google_body(responseLogprobs=True, logprobs=2))
    result = body["candidates"][0]["logprobsResult"]
    assert result["chosenCandidates"] == [{"token": "B", "logProbability": -0.2}]
    assert result["topCandidates"] == [
        {"candidates": [{"token": "B", "logProbability": -0.2}, {"token": "A", "logProbability": -1.9}]}
    ]


def test_blocked_answer_has_no_content(emulator: ModelEmulator) -> None:
    emulator.responder = lambda req: {"text": None, "finish_reason": "safety"}
    _, _, body = post(emulator, VERTEX, google_body())
    assert "content" not in body["candidates"][0] and body["candidates"][0]["finishReason"] == "SAFETY"
    _, _, body = post(emulator, OPENAI, openai_body())
    assert body["choices"][0]["message"]["content"] is None
    assert body["choices"][0]["finish_reason"] == "content_filter"


def test_default_responder_follows_the_schema(emulator: ModelEmulator) -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ok": {"type": "boolean"},
            "kind": {"enum": ["x", "y"]},
        },
    }
    _, _, body = post(
        emulator,
        OPENAI,
        openai_body(response_format={"type": "json_schema", "json_schema": {"name": "r", "schema": schema}}),
    )
    assert json.loads(body["choices"][0]["message"]["content"]) == {
        "n": 0,
        "tags": ["emulated"],
        "ok": True,
        "kind": "x",
    }
    assert emulator.requests[0].response_schema == schema
    _, _, body = post(emulator, VERTEX, google_body())
    assert body["candidates"][0]["content"]["parts"][0]["text"] == "This is an emulated response."
    assert schema_example({"anyOf": [{"type": "null"}, {"type": "string"}]}) is None


def test_injected_failures_carry_retry_after(emulator: ModelEmulator) -> None:
    emulator.inject_failures(2, status=429, retry_after_s=0.5)
    status, headers, body = post(emulator, VERTEX, google_body())
    assert status == 429 and headers["Retry-After"] == "0.5"
    assert body == {"error": {"code": 429, "message": "injected failure (HTTP 429)", "status": "RESOURCE_EXHAUSTED"}}
    status, headers, body = post(emulator, OPENAI, openai_body())
    assert status == 429 and headers["retry-after-ms"] == "500" and body["error"]["type"] == "rate_limit_exceeded"
    assert post(emulator, OPENAI, openai_body())[0] == 200
    assert [r.status for r in emulator.requests] == [429, 429, 200]


def test_quota_answers_429_with_retry_after() -> None:
    with ModelEmulator(requests_per_minute=2) as emu:
        assert [post(emu, VERTEX, google_body())[0] for _ in range(2)] == [200, 200]
        status, headers, _ = post(emu, VERTEX, google_body())
        assert status == 429 and 0 < float(headers["Retry-After"]) <= 60
        assert emu.call_count == 3


def test_quota_is_a_token_bucket_and_faults_use_no_quota() -> None:
    with ModelEmulator(requests_per_minute=600, quota_burst=2, fault_rate=1.0, fault_status=503) as emu:
        assert [post(emu, VERTEX, google_body())[0] for _ in range(3)] == [503, 503, 503]  # faults: no tokens used
        emu.fault_rate = 0.0
        assert [post(emu, VERTEX, google_body())[0] for _ in range(2)] == [200, 200]  # the full bucket
        status, headers, body = post(emu, VERTEX, google_body())
        assert status == 429 and 0 < float(headers["Retry-After"]) <= 0.1  # one token per 0.1 s
        assert body["error"]["message"] == "quota of 600 requests per minute exceeded"
        time.sleep(0.12)
        assert post(emu, VERTEX, google_body())[0] == 200  # refilled
        assert emu.stats() == {
            "calls": 7,
            "by_status": {"200": 3, "429": 1, "503": 3},
            "in_flight": 0,
            "max_in_flight": 1,
            "max_calls_per_minute": 7,  # all 7 calls within one minute
        }


def test_several_fault_statuses_and_stats_endpoint() -> None:
    with ModelEmulator(fault_rate=1.0, fault_status=(429, 503), seed=1, record_requests=False) as emu:
        statuses = [post(emu, OPENAI, openai_body())[0] for _ in range(20)]
        assert set(statuses) == {429, 503}
        assert emu.requests == [] and emu.call_count == 20  # counters only
        with urllib.request.urlopen(emu.url + "/stats", timeout=5) as response:
            stats = json.loads(response.read())
        assert stats["calls"] == 20 and sum(stats["by_status"].values()) == 20


def test_random_faults_are_seeded() -> None:
    def statuses(seed: int) -> list[int]:
        with ModelEmulator(fault_rate=0.5, fault_status=502, seed=seed) as emu:
            return [post(emu, OPENAI, openai_body())[0] for _ in range(12)]

    first = statuses(3)
    assert first == statuses(3) and set(first) == {200, 502}


def test_bad_requests(emulator: ModelEmulator) -> None:
    assert post(emulator, "/v1/unknown", {})[0] == 404
    assert post(emulator, VERTEX, b"{not json")[0] == 400
    emulator.responder = lambda req: 1 / 0
    status, _, body = post(emulator, VERTEX, google_body())
    assert status == 500 and body["error"]["message"] == "responder failed: ZeroDivisionError: division by zero"
    with urllib.request.urlopen(emulator.url + "/health", timeout=5) as response:
        assert json.loads(response.read()) == {"status": "ok"}


def test_counters_under_concurrency(emulator: ModelEmulator) -> None:
    emulator.latency_s = 0.05
    threads = [threading.Thread(target=post, args=(emulator, OPENAI, openai_body())) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert emulator.call_count == 6 and 2 <= emulator.max_in_flight <= 6
    emulator.reset()
    assert emulator.call_count == 0 and emulator.requests == []


def test_stop_closes_keep_alive_connections() -> None:
    emu = ModelEmulator().start()
    host, port = emu.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.request("POST", OPENAI, json.dumps(openai_body()), {"Content-Type": "application/json"})
    assert conn.getresponse().read()
    started = time.monotonic()
    emu.stop()
    emu.stop()  # idempotent
    assert time.monotonic() - started < 2
    with pytest.raises(RuntimeError, match="the emulator is not running"):
        _ = emu.url
    conn.close()
