"""The model emulator's HTTP layer: routes, request bodies in, JSON answers out (see :mod:`._server`).

:class:`RequestHandler` maps a path to a protocol and model (routes in :mod:`._server`), parses the body into an
:class:`~._protocols.EmulatedRequest` and sends what :class:`~._server.ModelEmulator` answers; batch prediction
paths go to :mod:`._batch`.
"""

from __future__ import annotations

import json
import re
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from autorater_pipelines.testing._batch import Answering, BatchJobs, is_batch_path
from autorater_pipelines.testing._bodies import error_body
from autorater_pipelines.testing._protocols import EmulatedRequest, parse_request

__all__ = ["EmulatorServer", "RequestHandler"]


class Emulator(Answering, Protocol):
    """What the HTTP handler uses of the emulator (:class:`~autorater_pipelines.testing._server.ModelEmulator`)."""

    api_versions: tuple[str, ...] | None
    catch_all: dict[str, Any] | str | None
    batch: BatchJobs

    def stats(self) -> dict[str, Any]:
        """Counts of what it received."""
        ...

    def _count_unrouted(self) -> None: ...

    def _track(self, conn: socket.socket, *, add: bool) -> None: ...


_VERTEX = re.compile(
    r"^/v1(?:beta1)?/projects/[^/]+/locations/[^/]+/"
    r"(?:publishers/[^/]+/models|models|endpoints)/(?P<model>[^/:]+):generateContent$"
)
_GEMINI = re.compile(r"^/v1(?:beta|alpha)?/(?:models|tunedModels)/(?P<model>[^/:]+):generateContent$")
_OPENAI = re.compile(r"^(?:/v1)?/chat/completions$")


def _route(path: str, versions: tuple[str, ...] | None = None) -> tuple[str, str] | None:
    path = path.split("?", 1)[0]
    if versions is not None and path.lstrip("/").split("/", 1)[0] not in versions:
        return None  # a server that serves other API versions only
    for protocol, pattern in (("vertex", _VERTEX), ("gemini_api", _GEMINI)):
        match = pattern.match(path)
        if match:
            return protocol, match.group("model")
    if _OPENAI.match(path):
        return "openai", ""
    return None


class EmulatorServer(ThreadingHTTPServer):
    """The emulator's threaded HTTP server (``emulator``: the :class:`ModelEmulator` that answers)."""

    daemon_threads = True
    block_on_close = False
    disable_nagle_algorithm = True  # else ~96 ms per keep-alive request (NOTES.md)
    request_queue_size = 1024  # else p99 > 1 s at concurrency 64 (NOTES.md)
    emulator: Emulator

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that hang up (cancelled or timed-out calls); report anything else."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class RequestHandler(BaseHTTPRequestHandler):
    """One connection of the emulator: routes each request, reads its JSON body, sends the JSON answer."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs expect
    server: EmulatorServer

    def setup(self) -> None:
        super().setup()
        self.server.emulator._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.emulator._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request access log."""

    def _send(self, status: int, body: dict[str, Any] | str, headers: dict[str, str] | None = None) -> None:
        """Send ``body`` as JSON, or a ``str`` as an HTML page (a catch-all route's answer)."""
        html = isinstance(body, str)
        data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{'text/html' if html else 'application/json'}; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """Answer health checks on ``/`` and ``/health``, and the counters on ``/stats``."""
        if self.path in ("/", "/health"):
            self._send(200, {"status": "ok"})
        elif self.path == "/stats":
            self._send(200, self.server.emulator.stats())
        elif is_batch_path(self.path):
            self._send(*self.server.emulator.batch.handle("GET", self.path, {}))
        else:
            self._send(404, error_body("vertex", 404, f"no GET route {self.path!r}"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        """Answer one model call."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if is_batch_path(self.path):
            try:
                job_body = json.loads(raw or b"{}")
            except ValueError:
                job_body = None  # the job handler answers 400 for a missing model/input/output
            job_body = job_body if isinstance(job_body, dict) else {}
            self._send(*self.server.emulator.batch.handle("POST", self.path, job_body))
            return
        emulator = self.server.emulator
        route = _route(self.path, emulator.api_versions)
        if route is None:
            emulator._count_unrouted()
            if emulator.catch_all is not None:  # a web app's catch-all route: 200 whatever the path
                self._send(200, emulator.catch_all)
            else:
                self._send(404, error_body("vertex", 404, f"the emulator has no route {self.path!r}"))
            return
        protocol, model = route
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            self._send(400, error_body(protocol, 400, f"invalid JSON body: {exc}"))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = EmulatedRequest(protocol, model, self.path, headers, body)
        parse_request(request)
        status, payload, headers = self.server.emulator._handle(request)
        self._send(status, payload, headers)
