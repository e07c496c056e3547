"""A local fake of the Artifact Registry KFP endpoint (``https://REGION-kfp.pkg.dev/PROJECT/REPO``).

``kfp.registry.RegistryClient`` accepts any host, so pointing it at :attr:`FakeKfpRegistry.host`
exercises the real client over real HTTP (NOTES.md, "Vertex / Artifact Registry")::

    with FakeKfpRegistry() as registry:
        RegistryClient(host=registry.host).upload_pipeline("compiled/autosxs.yaml", tags=["0.1.0", "latest"])
        assert registry.uploads[0].tags == ["0.1.0", "latest"]

Routes, as the real endpoint answers them:

- ``POST /PROJECT/REPO`` — multipart form: optional field ``tags`` (``"a,b"``) and file field ``content``
  (the compiled YAML). The package is the template's ``pipelineInfo.name``, the version
  ``sha256:<hex digest of the content>``; tags move to the new version. Answer ``200``, plain text
  ``PACKAGE/sha256:…``. A missing ``content``, a file that is not a compiled pipeline, or an empty or
  ``sha256:``-prefixed tag → ``400``.
- ``GET /PROJECT/REPO/PACKAGE/VERSION`` (``VERSION``: ``sha256:…`` or a tag) → ``200`` with the YAML, else ``404``.

Run it by hand: ``python -m autorater_pipelines.testing.registry --port 8081``.
"""

from __future__ import annotations

import argparse
import dataclasses
import email.parser
import email.policy
import hashlib
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from autorater_pipelines.testing._local_http import LocalFake, LocalServer

__all__ = ["FakeKfpRegistry", "Upload"]


@dataclasses.dataclass(frozen=True)
class Upload:
    """One accepted upload.

    Attributes:
        package: The template's ``pipelineInfo.name``.
        version: ``sha256:<hex>`` of ``content``.
        tags: Tags in the order sent.
        content: The uploaded bytes.
        filename: The file name the client sent.
        authorization: The ``Authorization`` header, if any.
    """

    package: str
    version: str
    tags: list[str]
    content: bytes
    filename: str
    authorization: str | None


class _Server(LocalServer):
    registry: FakeKfpRegistry


class _BadRequest(Exception):
    pass


def _parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[bytes, str | None]]:
    """``{field: (bytes, filename)}`` of a ``multipart/form-data`` body."""
    if not content_type.startswith("multipart/form-data"):
        raise _BadRequest(f"expected multipart/form-data, got {content_type!r}")
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    fields: dict[str, tuple[bytes, str | None]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True)
        fields[str(name)] = (payload if isinstance(payload, bytes) else b"", part.get_filename())
    return fields


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        """Quiet: tests read :attr:`FakeKfpRegistry.uploads` instead of logs."""

    def _answer(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        """Upload a template."""
        registry = self.server.registry
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if urlsplit(self.path).path.rstrip("/") != registry.base_path:
            self._answer(404, f"no repository at {self.path}".encode())
            return
        try:
            answer = registry._upload(
                _parse_multipart(self.headers.get("Content-Type", ""), body), self.headers.get("Authorization")
            )
        except _BadRequest as exc:
            self._answer(400, str(exc).encode())
            return
        self._answer(200, answer.encode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        """Download a template by version or tag."""
        registry = self.server.registry
        path = unquote(urlsplit(self.path).path)
        prefix = registry.base_path + "/"
        segments = path[len(prefix) :].split("/") if path.startswith(prefix) else []
        content = registry.get(*segments) if len(segments) == 2 else None
        if content is None:
            self._answer(404, f"not found: {path}".encode())
            return
        self._answer(200, content, "application/x-yaml")


class FakeKfpRegistry(LocalFake):
    """An in-memory KFP template repository on 127.0.0.1 (see the module docstring for its routes).

    Args:
        project: First path segment of :attr:`host` (the Google Cloud project in the real URL).
        repository: Second path segment (the Artifact Registry repository).
        port: TCP port; 0 picks a free one.

    Attributes:
        uploads: Every accepted upload, in order.
    """

    _thread_name = "fake-kfp-registry"

    def __init__(self, project: str = "test-project", repository: str = "test-repo", port: int = 0) -> None:
        self.base_path = f"/{project}/{repository}"
        self.uploads: list[Upload] = []
        self._versions: dict[str, dict[str, bytes]] = {}
        self._tags: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._listen(_Handler, port, _Server)

    @property
    def host(self) -> str:
        """The repository URL to give ``RegistryClient(host=...)`` and ``autorater publish --host``."""
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    def tags(self, package: str) -> dict[str, str]:
        """``{tag: version}`` of ``package``."""
        with self._lock:
            return dict(self._tags.get(package, {}))

    def versions(self, package: str) -> list[str]:
        """Versions of ``package`` in upload order."""
        with self._lock:
            return list(self._versions.get(package, {}))

    def get(self, package: str, version_or_tag: str) -> bytes | None:
        """Content of a version (``sha256:…``) or tag of ``package``; None when absent."""
        with self._lock:
            version = self._tags.get(package, {}).get(version_or_tag, version_or_tag)
            return self._versions.get(package, {}).get(version)

    def _upload(self, fields: dict[str, tuple[bytes, str | None]], authorization: str | None) -> str:
        if "content" not in fields:
            raise _BadRequest("missing file field 'content'")
        content, filename = fields["content"]
        try:
            spec = yaml.safe_load(content)
        except yaml.YAMLError as exc:
            raise _BadRequest(f"content is not YAML: {exc}") from None
        package = spec.get("pipelineInfo", {}).get("name") if isinstance(spec, dict) else None
        if not isinstance(package, str) or not package:
            raise _BadRequest("content is not a compiled KFP pipeline: no pipelineInfo.name")
        raw_tags = fields.get("tags", (b"", None))[0].decode()
        tags = raw_tags.split(",") if raw_tags else []
        for tag in tags:
            if not tag.strip() or tag.startswith("sha256:"):
                raise _BadRequest(f"invalid tag {tag!r} in {raw_tags!r}")
        version = "sha256:" + hashlib.sha256(content).hexdigest()
        with self._lock:
            self._versions.setdefault(package, {})[version] = content
            for tag in tags:
                self._tags.setdefault(package, {})[tag] = version
            self.uploads.append(Upload(package, version, tags, content, filename or "", authorization))
        return f"{package}/{version}"


def main(argv: list[str] | None = None) -> None:
    """Serve a fake registry until interrupted."""
    parser = argparse.ArgumentParser(description="Fake Artifact Registry KFP endpoint on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8081, help="TCP port (default: %(default)s)")
    parser.add_argument("--project", default="test-project", help="first path segment (default: %(default)s)")
    parser.add_argument("--repository", default="test-repo", help="second path segment (default: %(default)s)")
    args = parser.parse_args(argv)
    registry = FakeKfpRegistry(args.project, args.repository, args.port)
    print(f"fake KFP registry at {registry.host}", flush=True)
    registry.serve_until_interrupted()


if __name__ == "__main__":
    main()
