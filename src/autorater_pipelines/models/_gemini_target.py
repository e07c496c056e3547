"""Which Gemini API a model spec reaches, and with which project: decided without creating an SDK client.

Used by :class:`~autorater_pipelines.models.providers.vertex.GeminiProvider` when it is built, and by
:func:`~autorater_pipelines.models.check_model` when a run is validated (``autorater submit --dry-run`` must
not create clients, which look for credentials).
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from autorater_pipelines.errors import InputError
from autorater_pipelines.models._provider import is_loopback_url

__all__ = ["DEFAULT_LOCATION", "EMULATOR_PROJECT", "VERTEX_BASE_URL_ENV", "GeminiTarget", "gemini_target"]

DEFAULT_LOCATION = "us-central1"
VERTEX_BASE_URL_ENV = "GOOGLE_VERTEX_BASE_URL"
"""google-genai's own variable for the Vertex AI endpoint; honoured here too (emulators: loopback rules)."""
EMULATOR_PROJECT = "local"
_RESOURCE = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/")


class GeminiTarget(NamedTuple):
    """Where calls to a Gemini model go."""

    mode: str
    """``vertex`` or ``gemini_api``."""
    project: str | None
    location: str
    api_key: str | None
    loopback: bool
    """The endpoint called is a loopback address (an emulator)."""
    base_url: str | None
    """The endpoint to call: ``base_url``, else (Vertex AI) ``$GOOGLE_VERTEX_BASE_URL``; None = Google's."""


def gemini_target(name: str, config: Any, mode: str = "auto") -> GeminiTarget:
    """Decide the API, project and location of Gemini model ``name`` (rules in ``providers/vertex.py``).

    Raises:
        InputError: no way to authenticate (no project, no API key, not an emulator), or a Vertex AI resource
            name for the Gemini Developer API.
    """
    resource = _RESOURCE.match(name)
    project = config.project or (resource.group("project") if resource else None)
    location = (resource.group("location") if resource else None) or config.location or DEFAULT_LOCATION
    api_key = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
    # google-genai sends Vertex AI calls to $GOOGLE_VERTEX_BASE_URL when no base_url is given; decide the
    # project and credentials from the endpoint that will really be called.
    env_base_url = os.environ.get(VERTEX_BASE_URL_ENV) or None
    loopback = is_loopback_url(config.base_url or env_base_url)
    if mode == "auto":
        mode = "vertex" if project or (loopback and not api_key) else "gemini_api" if api_key else ""
    if not mode:
        raise InputError(
            f"cannot choose how to call Gemini model {name!r}: no Google Cloud project was given and "
            "neither GEMINI_API_KEY nor GOOGLE_API_KEY is set. Pass the pipeline parameter `project` "
            "(Vertex AI, Application Default Credentials) or set GEMINI_API_KEY (Gemini Developer API).",
            source="model spec",
        )
    if mode == "vertex":
        project = project or (EMULATOR_PROJECT if loopback else None)
        if not project:
            raise InputError(
                f"Vertex AI model {name!r} needs a Google Cloud project: pass the pipeline parameter "
                "`project` (or use a `projects/P/locations/L/...` resource name).",
                source="model spec",
            )
    elif resource:
        raise InputError(
            f"resource name {name!r} is a Vertex AI model; the Gemini Developer API cannot call it. "
            "Use a plain model name such as 'gemini-2.5-flash'.",
            source="model spec",
        )
    elif not api_key and not loopback:
        raise InputError(
            f"Gemini Developer API model {name!r} needs an API key: set GEMINI_API_KEY.", source="model spec"
        )
    base_url = config.base_url or (env_base_url if mode == "vertex" else None)
    return GeminiTarget(mode, project, location, api_key, loopback, base_url)
