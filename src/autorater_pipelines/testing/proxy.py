"""A middleware that drops images: a loopback HTTP proxy that forwards model calls with their media parts removed.

Some widely used middlewares (a Gemini→OpenAI proxy, LiteLLM's proxy, test servers) forward a multimodal request
without its image and answer as if nothing happened (issue 19: the prompt-token count was the same with and without
the image; TIFA's sample scored 0.06 instead of 0.8125). :class:`ImageDroppingProxy` plays such a middleware in
front of any server (the :class:`~autorater_pipelines.testing.ModelEmulator`, for tests of Gecko's media probe)::

    with ModelEmulator() as emu, ImageDroppingProxy(emu.url) as proxy:
        ...  # base_url=proxy.url: the emulator receives every request, never an image

It removes OpenAI ``image_url`` / ``input_audio`` / ``video_url`` content parts and Gemini ``inlineData`` /
``fileData`` parts (either spelling), and forwards everything else (path, query, body, the status and body of the
answer) unchanged. ``dropped`` counts the parts removed. Two switches play other middlewares: ``drop_media = False``
forwards the media (the proxy "fixed", same URL, so the same response-cache keys) and ``prompt_tokens = N`` rewrites
the prompt-token count of every JSON answer (OpenAI ``usage.prompt_tokens``, Gemini
``usageMetadata.promptTokenCount``) to ``N``, as a gateway that reports its own counts does.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ImageDroppingProxy"]

_OPENAI_MEDIA = {"image_url", "input_audio", "video_url", "input_image", "file"}
_GOOGLE_MEDIA = {"inlineData", "inline_data", "fileData", "file_data"}


def _rewrite_tokens(payload: bytes, tokens: int) -> bytes:
    """``payload`` (a JSON answer) with its prompt-token count set to ``tokens``; other payloads unchanged."""
    try:
        answer = json.loads(payload)
    except ValueError:
        return payload
    if not isinstance(answer, dict):
        return payload
    if isinstance(answer.get("usage"), dict):
        answer["usage"]["prompt_tokens"] = tokens
    if isinstance(answer.get("usageMetadata"), dict):
        answer["usageMetadata"]["promptTokenCount"] = tokens
    return json.dumps(answer).encode("utf-8")


def _strip(body: Any) -> tuple[Any, int]:
    """The request body without its media parts, and how many were removed."""
    dropped = 0
    if not isinstance(body, dict):
        return body, 0
    for message in body.get("messages") or []:
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            kept = [p for p in message["content"] if not (isinstance(p, dict) and p.get("type") in _OPENAI_MEDIA)]
            dropped += len(message["content"]) - len(kept)
            message["content"] = kept
    contents = body.get("contents")
    for content in contents if isinstance(contents, list) else [contents] if isinstance(contents, dict) else []:
        if isinstance(content, dict) and isinstance(content.get("parts"), list):
            kept = [p for p in content["parts"] if not (isinstance(p, dict) and _GOOGLE_MEDIA & set(p))]
            dropped += len(content["parts"]) - len(kept)
            content["parts"] = kept
    return body, dropped


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    disable_nagle_algorithm = True
    proxy: ImageDroppingProxy


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        """Quiet: no line per request."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        """Forward the request without its media parts; send back the target's answer."""
        proxy = self.server.proxy
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body, dropped = _strip(json.loads(data or b"{}")) if proxy.drop_media else (None, 0)
            if proxy.drop_media:
                data = json.dumps(body).encode("utf-8")
        except ValueError:
            dropped = 0
        with proxy._lock:
            proxy.dropped += dropped
            proxy.forwarded += 1
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        request = urllib.request.Request(proxy.target + self.path, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - a loopback URL given by a test
                status, payload, kind = answer.status, answer.read(), answer.headers.get("Content-Type")
        except urllib.error.HTTPError as exc:
            status, payload, kind = exc.code, exc.read(), exc.headers.get("Content-Type")
        if proxy.prompt_tokens is not None:
            payload = _rewrite_tokens(payload, proxy.prompt_tokens)
        self.send_response(status)
        self.send_header("Content-Type", kind or "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class ImageDroppingProxy:
    """A loopback proxy to ``target`` that removes every media part of the requests it forwards.

    Args:
        target: Base URL of the server behind it, e.g. ``ModelEmulator.url`` (no trailing slash).

    Attributes:
        dropped: Media parts removed so far.
        forwarded: Requests forwarded so far.
        drop_media: Remove media parts (default True; set False to play the proxy once fixed).
        prompt_tokens: When set, every JSON answer reports this many prompt tokens (a gateway rewriting usage).
    """

    def __init__(self, target: str) -> None:
        self.target = target.rstrip("/")
        self.dropped = 0
        self.forwarded = 0
        self.drop_media = True
        self.prompt_tokens: int | None = None
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The proxy's base URL (``http://127.0.0.1:PORT``); paths are forwarded as they come."""
        if self._server is None:
            raise RuntimeError("the proxy is not running: use it as a context manager")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ImageDroppingProxy:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.proxy = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
