"""Compiled templates and the Artifact Registry KFP endpoint: template files, registry URLs, downloads.

A KFP repository in Artifact Registry is ``https://REGION-kfp.pkg.dev/PROJECT/REPO`` (the *host*); one
template version is ``HOST/PACKAGE/VERSION`` where ``PACKAGE`` is the template's ``pipelineInfo.name``
and ``VERSION`` is ``sha256:…`` or a tag (``latest``, ``0.1.0``). ``kfp.registry.RegistryClient`` talks
to it (Application Default Credentials on ``*-kfp.pkg.dev``, none elsewhere), so any other host — a
local fake in tests — works the same way with the last two path segments as package and version.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any
from urllib.parse import urlsplit

from autorater_pipelines.errors import AutoraterError, InputError

__all__ = [
    "AR_HOST_PATTERN",
    "DIGEST_PATTERN",
    "TAG_PATTERN",
    "TemplateInfo",
    "TemplateRef",
    "check_host",
    "download_template",
    "http_error_message",
    "parse_template_url",
    "read_template",
    "registry_client",
]

AR_HOST_PATTERN = re.compile(r"^https://(?P<region>[a-z0-9-]+)-kfp\.pkg\.dev/(?P<project>[^/]+)/(?P<repo>[^/]+)$")
"""An Artifact Registry KFP repository: ``https://REGION-kfp.pkg.dev/PROJECT/REPO``."""
TAG_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""A template version tag (``latest``, ``0.1.0``): what ``publish --tag`` accepts and a template URL may end in."""
DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")
"""An immutable template version: ``sha256:`` and the 64 hex digits of the file's SHA-256 (what ``publish`` prints)."""
_PLACEHOLDER = re.compile(r"…|\.\.\.|[$<>{}]")
"""What documentation writes for a value to fill in: ``sha256:…``, ``$PROJECT``, ``<REGION>``, ``{VERSION}``."""


@dataclasses.dataclass(frozen=True)
class TemplateInfo:
    """What a compiled pipeline template says about itself.

    Attributes:
        path: The YAML file.
        name: ``pipelineInfo.name`` — the package name in Artifact Registry.
        images: Container images of its executors (one, for our templates).
    """

    path: str
    name: str
    images: tuple[str, ...]


def read_template(path: str) -> TemplateInfo:
    """Read a compiled pipeline YAML's name and images.

    Raises:
        InputError: the file is missing, not YAML, or not a compiled KFP pipeline.
    """
    import yaml  # here: every `autorater` command imports this module, few read a template

    try:
        with open(path, encoding="utf-8") as fh:
            spec = yaml.safe_load(fh)
    except FileNotFoundError:
        raise InputError("compiled template not found; run `autorater compile`", source=path) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}", source=path) from None
    name = spec.get("pipelineInfo", {}).get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or not name or "root" not in spec:
        raise InputError(
            "not a compiled KFP pipeline (no pipelineInfo.name or root); run `autorater compile`", source=path
        )
    executors = (spec.get("deploymentSpec") or {}).get("executors") or {}
    images = sorted({e.get("container", {}).get("image", "") for e in executors.values()} - {""})
    return TemplateInfo(path=path, name=name, images=tuple(images))


def check_host(host: str) -> str:
    """Normalize a registry host URL (no trailing slash).

    Raises:
        InputError: not an http(s) URL with a path (``https://REGION-kfp.pkg.dev/PROJECT/REPO``).
    """
    host = host.rstrip("/")
    parts = urlsplit(host)
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.path.strip("/"):
        raise InputError(f"expected https://REGION-kfp.pkg.dev/PROJECT/REPO, got {host!r}", source="--host")
    if "-kfp.pkg.dev" in parts.netloc and not AR_HOST_PATTERN.match(host):
        raise InputError(
            f"an Artifact Registry KFP host is https://REGION-kfp.pkg.dev/PROJECT/REPO, got {host!r}",
            source="--host",
        )
    return host


@dataclasses.dataclass(frozen=True)
class TemplateRef:
    """One template version in a registry.

    Attributes:
        host: The repository URL (``https://REGION-kfp.pkg.dev/PROJECT/REPO``).
        package: Package name (the template's ``pipelineInfo.name``).
        version: ``sha256:…`` version or a tag.
    """

    host: str
    package: str
    version: str

    @property
    def url(self) -> str:
        """``HOST/PACKAGE/VERSION``, the form ``aiplatform.PipelineJob(template_path=...)`` accepts."""
        return f"{self.host}/{self.package}/{self.version}"

    @property
    def is_artifact_registry(self) -> bool:
        """True for a ``*-kfp.pkg.dev`` host (Vertex AI fetches the template itself)."""
        return bool(AR_HOST_PATTERN.match(self.host))

    @property
    def is_digest(self) -> bool:
        """True when ``version`` is an immutable ``sha256:`` version rather than a tag."""
        return self.version.startswith("sha256:")


def parse_template_url(url: str) -> TemplateRef:
    """Split ``https://REGION-kfp.pkg.dev/PROJECT/REPO/PACKAGE/VERSION`` (or any ``HOST/PACKAGE/VERSION``).

    Raises:
        InputError: not an http(s) URL ending in ``/PACKAGE/VERSION``; an unfilled placeholder (``sha256:…``,
            ``$PROJECT``, ``<REGION>``); a ``sha256:`` version that is not 64 hex digits, or a malformed tag.
    """
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if parts.scheme not in ("http", "https") or not parts.netloc or len(segments) < 3 or parts.query:
        raise InputError(
            f"expected a template URL https://REGION-kfp.pkg.dev/PROJECT/REPO/PACKAGE/VERSION (VERSION: sha256:… or a "
            f"tag), got {url!r}",
            source="--template",
        )
    placeholder = _PLACEHOLDER.search(url)
    if placeholder:
        raise InputError(
            f"template URL {url!r} still holds the placeholder {placeholder.group()!r}: fill in the real value (the "
            "template URL `autorater publish` printed, e.g. .../autosxs-template/sha256:<64 hex digits>, or a tag "
            "such as latest)",
            source="--template",
        )
    host = f"{parts.scheme}://{parts.netloc}/" + "/".join(segments[:-2])
    version = segments[-1]
    if version.startswith("sha256:") and not DIGEST_PATTERN.match(version):
        raise InputError(
            f"template version {version!r} is not a whole sha256 version (sha256: and 64 hex digits, as `autorater "
            f"publish` prints it); copy the full version or use a tag, got {url!r}",
            source="--template",
        )
    if not version.startswith("sha256:") and not TAG_PATTERN.match(version):
        raise InputError(
            f"template version {version!r} is neither sha256:<64 hex digits> nor a tag (letters, digits, '.', '_', "
            f"'-'), got {url!r}",
            source="--template",
        )
    if "-kfp.pkg.dev" in parts.netloc and not AR_HOST_PATTERN.match(host):
        raise InputError(
            f"an Artifact Registry template URL is https://REGION-kfp.pkg.dev/PROJECT/REPO/PACKAGE/VERSION, "
            f"got {url!r}",
            source="--template",
        )
    return TemplateRef(host=host, package=segments[-2], version=version)


def registry_client(host: str) -> Any:
    """A ``kfp.registry.RegistryClient`` for ``host`` (Application Default Credentials on ``*-kfp.pkg.dev``).

    Raises:
        AutoraterError: Artifact Registry needs credentials and none were found.
    """
    import google.auth.exceptions
    from kfp.registry import RegistryClient

    try:
        return RegistryClient(host=host)
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise AutoraterError(
            f"no Google credentials for {host}: run `gcloud auth application-default login` or set "
            f"GOOGLE_APPLICATION_CREDENTIALS ({exc})"
        ) from None


def http_error_message(exc: Exception) -> str:
    """One line for a failed registry request: status, reason and the start of the answer."""
    response = getattr(exc, "response", None)
    if response is None:
        return str(exc)
    body = (response.text or "").strip().replace("\n", " ")
    return f"HTTP {response.status_code} {response.reason}: {body[:300]}"


def download_template(ref: TemplateRef, directory: str) -> str:
    """Download one template version into ``directory``; return the file path.

    Raises:
        AutoraterError: the registry could not be reached or refused the request.
    """
    import requests

    client = registry_client(ref.host)
    target = os.path.join(directory, f"{ref.package}.yaml")
    kind = {"version": ref.version} if ref.is_digest else {"tag": ref.version}
    try:
        return str(client.download_pipeline(ref.package, file_name=target, **kind))
    except requests.RequestException as exc:
        raise AutoraterError(f"could not download template {ref.url}: {http_error_message(exc)}") from None
