"""Model specs → providers: the one place model names are parsed (docs/models.md "Model specs").

Accepted specs:

==============================================================  ===========================================
``gemini-2.5-flash``, ``publishers/google/models/M``            Gemini: Vertex AI, or the Gemini API when
``projects/P/locations/L/models/M[@v]``,                        no project is given and GEMINI_API_KEY /
``projects/P/locations/L/endpoints/E``                          GOOGLE_API_KEY is set
``vertex/<model>``                                              Gemini, always Vertex AI
``gemini/<model>``                                              Gemini, always the Gemini Developer API
``openai/<model>``                                              OpenAI-compatible chat completions
``replay/<path>``                                               recorded answers (JSONL)
==============================================================  ===========================================

Providers register with :func:`register_provider`; their modules (and SDKs) are imported only when a
spec needs them, so a missing SDK fails with a message naming the pip package.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
from collections.abc import Callable
from typing import NamedTuple

from autorater_pipelines.errors import InputError
from autorater_pipelines.io._fs import split_scheme
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._model import Model
from autorater_pipelines.models._provider import Provider

__all__ = [
    "MediaInput",
    "get_model",
    "media_input",
    "model_identity",
    "parse_model_spec",
    "provider_prefixes",
    "register_provider",
]

ProviderFactory = Callable[[str, GenerateConfig], Provider]

_BARE_GOOGLE = "google"  # internal id of specs without a provider prefix
_GOOGLE_NAME = re.compile(r"^[A-Za-z0-9][\w.@-]*$")
_GOOGLE_RESOURCES = (
    re.compile(r"^publishers/[^/]+/models/[^/]+$"),
    re.compile(r"^projects/[^/]+/locations/[^/]+/models/[^/@]+(@[^/]+)?$"),
    re.compile(r"^projects/[^/]+/locations/[^/]+/endpoints/[^/]+$"),
    re.compile(r"^projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/[^/]+$"),
)


@dataclasses.dataclass(frozen=True)
class _Entry:
    prefix: str
    load: Callable[[], ProviderFactory]
    pip_package: str
    sdk_modules: tuple[str, ...]
    media: tuple[str, ...]
    media_note: str


_REGISTRY: dict[str, _Entry] = {}


def register_provider(
    prefix: str,
    *,
    pip_package: str,
    sdk_modules: tuple[str, ...] = (),
    media: tuple[str, ...] = ("image", "video"),
    media_note: str = "",
) -> Callable[[Callable[[], ProviderFactory]], Callable[[], ProviderFactory]]:
    """Register a provider under a spec prefix (decorator of a loader function).

    The loader imports the provider module lazily and returns a factory ``(name, config) -> Provider``.

    Args:
        prefix: Spec prefix without the slash, e.g. ``"openai"`` for ``openai/<model>``.
        pip_package: What to ``pip install`` when the loader's SDK import fails.
        sdk_modules: Top-level modules of the SDK (a failing import of one of these is reported as a
            missing SDK; any other import error propagates).
        media: Media types (``image``, ``video``) the provider can send to a model (:func:`media_input`).
        media_note: Why the other media types cannot be sent, for messages.
    """

    def decorate(load: Callable[[], ProviderFactory]) -> Callable[[], ProviderFactory]:
        _REGISTRY[prefix] = _Entry(prefix, load, pip_package, sdk_modules, media, media_note)
        return load

    return decorate


def provider_prefixes() -> list[str]:
    """List the registered spec prefixes, sorted (e.g. ``["gemini", "openai", "replay", "vertex"]``)."""
    return sorted(p for p in _REGISTRY if p != _BARE_GOOGLE)


def parse_model_spec(spec: str) -> tuple[str, str]:
    """Split a model spec into (provider prefix, provider-side name).

    Bare Gemini names and ``publishers/`` / ``projects/`` resource names give the prefix ``"google"``.

    Raises:
        InputError: empty spec, unknown prefix (the message lists the valid ones), or a malformed
            resource name.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"model spec must be a non-empty string, got {spec!r}", source="model spec")
    spec = spec.strip()
    if spec.startswith(("projects/", "publishers/")):
        if not any(p.match(spec) for p in _GOOGLE_RESOURCES):
            raise InputError(
                f"malformed Vertex AI resource name {spec!r}: expected publishers/google/models/M, "
                "projects/P/locations/L/models/M[@version] or projects/P/locations/L/endpoints/E",
                source="model spec",
            )
        return _BARE_GOOGLE, spec
    prefix, slash, rest = spec.partition("/")
    if not slash:
        if not _GOOGLE_NAME.match(spec):
            raise InputError(f"invalid model name {spec!r}: {_valid_specs()}", source="model spec")
        return _BARE_GOOGLE, spec
    if prefix not in _REGISTRY or prefix == _BARE_GOOGLE:
        raise InputError(
            f"unknown model provider {prefix!r} in model spec {spec!r}; {_valid_specs()}", source="model spec"
        )
    if not rest:
        raise InputError(f"model spec {spec!r} names no model after {prefix + '/'!r}", source="model spec")
    return prefix, rest


_GEMINI_PREFIXES = frozenset({_BARE_GOOGLE, "vertex", "gemini"})


def model_identity(spec: str) -> tuple[str, str]:
    """The model a spec names, normalised so that two spellings of one model compare equal.

    Gemini (bare, ``vertex/``, ``gemini/``, ``publishers/google/models/M``) → ``("gemini", m)``: one model
    whichever API serves it; model names are case-folded (``GEMINI-2.5-flash`` is ``gemini-2.5-flash``);
    ``replay/<path>`` → ``("replay", real path)`` for a local path (``os.path.realpath``: ``.``, ``..``, ``//``
    and symlinks resolved), the URI with ``.``/``..``/``//`` collapsed for ``gs://`` and the like. A spec that
    does not parse is its stripped self (:func:`parse_model_spec` reports it where the model is built).

    Returns:
        ``(family, name)``.
    """
    try:
        prefix, name = parse_model_spec(spec)
    except InputError:
        return ("", str(spec).strip())
    if prefix == "replay":
        scheme, path = split_scheme(name)
        if scheme in ("", "file"):
            return (prefix, os.path.realpath(os.path.expanduser(path)))
        return (prefix, f"{scheme}://{posixpath.normpath(path)}")
    if prefix in _GEMINI_PREFIXES:
        name = name.removeprefix("publishers/google/models/")
        return ("gemini", name.casefold())
    return (prefix, name.casefold())


def get_model(spec: str, config: GenerateConfig | None = None) -> Model:
    """Build a :class:`Model` from a spec such as ``"gemini-2.5-flash"`` or ``"openai/gpt-4o-mini"``.

    Args:
        spec: Model spec (see the module docstring).
        config: Generation and execution settings; defaults to ``GenerateConfig()``.

    Returns:
        The model, with one SDK client kept for its lifetime.

    Raises:
        InputError: bad spec, unknown provider, missing SDK, or missing project / API key.
    """
    config = config if config is not None else GenerateConfig()
    prefix, name = parse_model_spec(spec)
    entry = _REGISTRY[prefix]
    try:
        factory = entry.load()
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not any(
            missing == m or missing.startswith(m + ".") or m.startswith(missing + ".") for m in entry.sdk_modules
        ):
            raise
        raise InputError(
            f"model spec {spec!r} needs the Python package {entry.pip_package!r}, which is not installed "
            f"(No module named {missing!r}): pip install {entry.pip_package}",
            source="model spec",
        ) from None
    return Model(spec.strip(), factory(name, config), config)


_TEXT_ONLY_OPENAI = re.compile(
    r"gpt-3\.5-turbo[\w.-]*|o1-mini[\w-]*|o1-preview[\w-]*|o3-mini[\w-]*|davinci-002|babbage-002|"
    r"gpt-4|gpt-4-0314|gpt-4-0613|gpt-4-32k[\w-]*|gpt-4-turbo-preview|gpt-4-\d{4}-preview",
    re.I,
)
"""OpenAI models documented as text-only (no image input); other ``openai/`` names may be either, so a text-only
server is found at its first refusal (:func:`~autorater_pipelines.models._classify.media_refused_message`)."""


class MediaInput(NamedTuple):
    """What :func:`media_input` knows about a model's media input."""

    types: frozenset[str]
    """Media types (``image``, ``video``) the model can be sent."""
    note: str
    """Why the other types cannot be sent (empty when both can)."""


def media_input(spec: str) -> MediaInput:
    """The media types a model spec can be given, as far as the registry knows before any call.

    Gemini models take images and videos; ``replay/`` reads no media; ``openai/`` models take images (the provider
    sends no video), except the OpenAI models documented as text-only, which take none. An OpenAI-compatible server
    that turns out to be text-only is detected at its first refusal instead.

    Raises:
        InputError: as :func:`parse_model_spec`.
    """
    prefix, name = parse_model_spec(spec)
    entry = _REGISTRY[prefix]
    if prefix == "openai" and _TEXT_ONLY_OPENAI.fullmatch(name.strip()):
        return MediaInput(frozenset(), f"{name!r} is a text-only OpenAI model (it takes no image input)")
    return MediaInput(frozenset(entry.media), entry.media_note)


_GEMINI_MODES = {_BARE_GOOGLE: "auto", "vertex": "vertex", "gemini": "gemini_api"}


def check_model(spec: str, config: GenerateConfig | None = None) -> None:
    """Check that :func:`get_model` would build ``spec`` with ``config``, without creating an SDK client.

    Gemini specs are resolved to their API and project (a Vertex AI model with no project and no API key fails)
    without building a ``google.genai`` client, which would look for credentials; other providers are built as
    :func:`get_model` does (an OpenAI model needs a key or ``base_url``; a ``replay/`` recording is read and
    checked). No network call is made, so validating a run works offline (``autorater submit --dry-run``).

    Raises:
        InputError: as :func:`get_model`.
    """
    config = config if config is not None else GenerateConfig()
    prefix, name = parse_model_spec(spec)
    if prefix in _GEMINI_MODES:
        from autorater_pipelines.models._gemini_target import gemini_target

        gemini_target(name, config, _GEMINI_MODES[prefix])
    else:
        get_model(spec, config)


def _valid_specs() -> str:
    prefixes = ", ".join(f"'{p}/<model>'" for p in provider_prefixes())
    return (
        f"valid specs are {prefixes}, a Gemini model name such as 'gemini-2.5-flash', or a Vertex AI "
        "resource name 'publishers/google/models/M', 'projects/P/locations/L/models/M[@version]' or "
        "'projects/P/locations/L/endpoints/E'"
    )


# --- built-in providers (lazy imports) -----------------------------------------------------------
_GENAI = ("google.genai", "google.auth", "google.oauth2")


@register_provider(_BARE_GOOGLE, pip_package="google-genai", sdk_modules=_GENAI)
def _google() -> ProviderFactory:
    from autorater_pipelines.models.providers.vertex import GeminiProvider

    return lambda name, config: GeminiProvider(name, config, mode="auto")


@register_provider("vertex", pip_package="google-genai", sdk_modules=_GENAI)
def _vertex() -> ProviderFactory:
    from autorater_pipelines.models.providers.vertex import GeminiProvider

    return lambda name, config: GeminiProvider(name, config, mode="vertex")


@register_provider("gemini", pip_package="google-genai", sdk_modules=_GENAI)
def _gemini() -> ProviderFactory:
    from autorater_pipelines.models.providers.vertex import GeminiProvider

    return lambda name, config: GeminiProvider(name, config, mode="gemini_api")


@register_provider(
    "openai",
    pip_package="openai",
    sdk_modules=("openai",),
    media=("image",),
    media_note="OpenAI-compatible chat completions take images, not videos (the openai provider sends no video)",
)
def _openai() -> ProviderFactory:
    from autorater_pipelines.models.providers.openai import OpenAIProvider

    return OpenAIProvider


@register_provider("replay", pip_package="autorater-pipelines")
def _replay() -> ProviderFactory:
    from autorater_pipelines.models.providers.replay import ReplayProvider

    return ReplayProvider
