"""Answers of an OpenAI-compatible server that are not a plain chat completion (issue 19 hostile trial, items 2-3).

A small ``http.server`` on 127.0.0.1 answers every POST with one fixed body; the real openai SDK talks to it.
Each shape ends as text (list-of-parts content) or as one clear error naming the URL and what was answered.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.models import ErrorKind, GenerateConfig, ModelRequest, get_model

VERDICT = json.dumps({"explanation": "A is right.", "choice": "A"})


def _completion(message: object, **extra: object) -> dict:
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"id": "x", "object": "chat.completion", "created": 1, "model": "judge", "choices": [choice], **extra}


class _Server:
    """Answers every POST with ``(status, content type, body, headers)`` of the current ``answer``."""

    def __init__(self) -> None:
        self.answer: tuple[int, str, bytes, dict[str, str]] = (200, "application/json", b"{}", {})
        self.posts = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, ctype: str, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - the models list (what a redirected POST-as-GET would get)
                self._send(200, "application/json", b'{"object": "list", "data": [{"id": "judge"}]}', {})

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.posts += 1
                self._send(*server.answer)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> _Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    with _Server() as srv:
        yield srv


def _ask(server: _Server, body: object, *, ctype: str = "application/json", status: int = 200, headers=None):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    server.answer = (status, ctype, raw, dict(headers or {}))
    config = GenerateConfig(
        base_url=server.url, progress=False, cache_dir="off", initial_backoff_s=0.01, max_backoff_s=0.05
    )
    outputs: list = []
    model = get_model("openai/judge", config)
    try:
        model.generate_each([ModelRequest(parts=("Which is better?",))], lambda _r, o: outputs.append(o))
    except ModelCallError as exc:  # an endpoint that never answered a completion stops the run: the same reason
        assert outputs[0].error.message in str(exc)
    return outputs


def test_list_of_text_parts_content_is_read_as_text(server: _Server) -> None:
    half = len(VERDICT) // 2
    parts = [{"type": "text", "text": VERDICT[:half]}, {"type": "text", "text": VERDICT[half:]}]
    [out] = _ask(server, _completion({"role": "assistant", "content": parts}))
    assert out.error is None and out.text == VERDICT


def test_list_content_without_a_text_part_is_an_error_saying_what_came(server: _Server) -> None:
    parts = [{"type": "image_url", "image_url": {"url": "data:,"}}]
    [out] = _ask(server, _completion({"role": "assistant", "content": parts}))
    assert out.text is None and out.error.kind is ErrorKind.FATAL
    assert "message.content is a list of parts without a text part" in out.error.message
    assert "image_url" in out.error.message


CASES = {
    "empty-choices": ({"id": "x", "object": "chat.completion", "choices": []}, "an empty 'choices' list"),
    "legacy-text": (
        {"id": "x", "object": "text_completion", "choices": [{"index": 0, "text": VERDICT, "finish_reason": "stop"}]},
        "the legacy completions shape",
    ),
    "null-message": (_completion(None), "a choice without a 'message'"),
    "json-array": ([1, 2, 3], r"answered HTTP 200 with '\[1, 2, 3\]'"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_answer_that_is_not_a_chat_completion_is_one_clear_error(server: _Server, case: str) -> None:
    body, says = CASES[case]
    [out] = _ask(server, body)
    assert out.text is None and out.error.kind is ErrorKind.FATAL
    assert "blocked" not in out.error.message and "no text" not in out.error.message  # not a safety verdict
    assert f"did not answer with a chat completion: POST {server.url}/chat/completions" in out.error.message
    assert re.search(says, out.error.message), out.error.message
    assert server.posts == 1  # one attempt: not retried


def test_html_labelled_json_names_the_url_and_the_body(server: _Server) -> None:
    [out] = _ask(server, b"<html><body>Welcome to nginx</body></html>")
    assert out.error.kind is ErrorKind.FATAL and server.posts == 1
    assert f"POST {server.url}/chat/completions answered HTTP 200 with '<html><body>Welcome" in out.error.message
    assert "not JSON, though labelled so" in out.error.message


@pytest.mark.parametrize("status", [301, 307])
def test_a_redirect_is_one_error_naming_its_target(server: _Server, status: int) -> None:
    target = server.url.replace("/v1", "/v2/chat/completions")
    [out] = _ask(server, b"", status=status, headers={"Location": target})
    assert out.error.kind is ErrorKind.FATAL and server.posts == 1
    assert f"answered HTTP {status}, a redirect to {target!r}; redirects are not followed" in out.error.message


def test_a_redirect_loop_is_one_error_not_a_retried_connection_error(server: _Server) -> None:
    [out] = _ask(server, b"", status=307, headers={"Location": "/v1/chat/completions"})
    assert out.error.kind is ErrorKind.FATAL and server.posts == 1
    assert "redirects are not followed" in out.error.message
