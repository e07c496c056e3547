"""A local fake of the Vertex AI Model Registry's evaluation API (``ModelService``, REST, ``v1``).

``google-cloud-aiplatform``'s ``ModelServiceClient(transport="rest", client_options={"api_endpoint":
"http://127.0.0.1:PORT"})`` reaches it over real HTTP; ``autorater_pipelines.autosxs.model_registry`` does so
when ``AIPLATFORM_EMULATOR_HOST`` is set (:attr:`FakeModelRegistry.env`)::

    with FakeModelRegistry(models=["projects/p/locations/us-central1/models/123"]) as registry:
        os.environ.update(registry.env)
        ...  # run AutoSxS with model_a = "projects/p/locations/us-central1/models/123"
        assert registry.imports[0].metrics["modelWinRate"] == 0.5

Routes, as the real API answers them:

- ``POST /v1/projects/P/locations/L/models/M[@V]/evaluations:import`` — body ``{"modelEvaluation": {...}}``
  (``ImportModelEvaluationRequest``). The evaluation must have a ``metricsSchemaUri`` and ``metrics`` (an
  object of numbers), else ``400 INVALID_ARGUMENT``; an unknown model is ``404 NOT_FOUND``. Answer: the stored
  ``ModelEvaluation`` with ``name`` ``projects/P/locations/L/models/M/evaluations/N`` and ``createTime``.
- ``GET /v1/projects/P/locations/L/models/M/evaluations/N`` — the stored evaluation, or ``404``.

Errors use Google's JSON error body ``{"error": {"code", "message", "status"}}``. :meth:`fail_next` makes the
next imports fail with a given status (permission denied, unavailable …).

Run it by hand: ``python -m autorater_pipelines.testing.model_registry --port 8082``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import re
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from autorater_pipelines.testing._local_http import LocalFake, LocalServer

__all__ = ["FakeModelRegistry", "ImportedEvaluation"]

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
_IMPORT = re.compile(
    r"^/v1/(?P<model>projects/[^/]+/locations/[^/]+/models/[^/@]+)(?:@(?P<version>[^/]+))?/evaluations:import$"
)
_GET = re.compile(r"^/v1/(?P<name>projects/[^/]+/locations/[^/]+/models/[^/@]+/evaluations/[^/]+)$")


@dataclasses.dataclass(frozen=True)
class ImportedEvaluation:
    """One accepted ``ImportModelEvaluation`` call.

    Attributes:
        parent: The model the client named, with its ``@version`` if any.
        name: The resource name given to the evaluation.
        evaluation: The ``ModelEvaluation`` as stored (camelCase JSON, with ``name`` and ``createTime``).
        headers: The request headers, names lower-cased.
    """

    parent: str
    name: str
    evaluation: dict[str, Any]
    headers: dict[str, str]

    @property
    def metrics(self) -> dict[str, Any]:
        """The evaluation's ``metrics`` object."""
        return dict(self.evaluation.get("metrics") or {})


class _Server(LocalServer):
    registry: FakeModelRegistry


class _ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        """Quiet: tests read :attr:`FakeModelRegistry.imports` instead of logs."""

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, exc: _ApiError) -> None:
        status_name = _STATUS_NAMES.get(exc.status, "UNKNOWN")
        self._answer(exc.status, {"error": {"code": exc.status, "message": str(exc), "status": status_name}})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        """``ImportModelEvaluation``."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        match = _IMPORT.match(unquote(urlsplit(self.path).path))
        try:
            if match is None:
                raise _ApiError(404, f"no such method: POST {self.path}")
            stored = self.server.registry._import(
                match["model"], match["version"], body, {k.lower(): v for k, v in self.headers.items()}
            )
        except _ApiError as exc:
            self._error(exc)
            return
        self._answer(200, stored)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        """``GetModelEvaluation``."""
        match = _GET.match(unquote(urlsplit(self.path).path))
        evaluation = self.server.registry.get(match["name"]) if match else None
        if evaluation is None:
            self._error(_ApiError(404, f"evaluation not found: {self.path}"))
            return
        self._answer(200, evaluation)


class FakeModelRegistry(LocalFake):
    """Model Registry models that accept evaluations, on 127.0.0.1 (routes in the module docstring).

    Args:
        models: Resource names ``projects/P/locations/L/models/M`` that exist (without ``@version``); None =
            every model exists.
        port: TCP port; 0 picks a free one.

    Attributes:
        imports: Every accepted import, in order.
    """

    _thread_name = "fake-model-registry"

    def __init__(self, models: Iterable[str] | None = None, port: int = 0) -> None:
        self.models = None if models is None else {m.split("@", 1)[0] for m in models}
        self.imports: list[ImportedEvaluation] = []
        self._failures: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        self._listen(_Handler, port, _Server)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the ``api_endpoint`` for the client."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """Environment that sends ``autorater_pipelines``' Model Registry calls here."""
        from autorater_pipelines.autosxs.model_registry import EMULATOR_ENV

        return {EMULATOR_ENV: self.url}

    def fail_next(self, count: int, status: int = 403, message: str = "Permission denied on the model") -> None:
        """Answer the next ``count`` imports with HTTP ``status`` and ``message``."""
        with self._lock:
            self._failures.extend([(status, message)] * count)

    def get(self, name: str) -> dict[str, Any] | None:
        """A stored evaluation by resource name; None when absent."""
        with self._lock:
            found = [i.evaluation for i in self.imports if i.name == name]
        return dict(found[0]) if found else None

    def _import(self, model: str, version: str | None, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            if self._failures:
                raise _ApiError(*self._failures.pop(0))
        if self.models is not None and model not in self.models:
            raise _ApiError(404, f"Model {model} not found.")
        try:
            evaluation = json.loads(body or b"{}").get("modelEvaluation")
        except (ValueError, AttributeError):
            raise _ApiError(400, "request body is not a JSON ImportModelEvaluationRequest") from None
        if not isinstance(evaluation, dict):
            raise _ApiError(400, "modelEvaluation is required")
        if not evaluation.get("metricsSchemaUri"):
            raise _ApiError(400, "modelEvaluation.metricsSchemaUri is required")
        metrics = evaluation.get("metrics")
        if not isinstance(metrics, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in metrics.values()
        ):
            raise _ApiError(400, f"modelEvaluation.metrics must be an object of numbers, got {metrics!r}")
        with self._lock:
            name = f"{model}/evaluations/{len(self.imports) + 1}"
            created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            stored = {**evaluation, "name": name, "createTime": created}
            parent = f"{model}@{version}" if version else model
            self.imports.append(ImportedEvaluation(parent, name, stored, headers))
        return stored


def main(argv: list[str] | None = None) -> None:
    """Serve a fake Model Registry until interrupted."""
    parser = argparse.ArgumentParser(description="Fake Vertex AI Model Registry evaluation API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8082, help="TCP port (default: %(default)s)")
    args = parser.parse_args(argv)
    registry = FakeModelRegistry(port=args.port)
    print(f"fake Model Registry at {registry.url} (set AIPLATFORM_EMULATOR_HOST={registry.url})", flush=True)
    registry.serve_until_interrupted()


if __name__ == "__main__":
    main()
