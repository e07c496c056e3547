"""The Gemini provider's start-up self-check of google-genai's private transport (see ``vertex.py``).

``GeminiProvider`` sends its own wire-format body through ``BaseApiClient.async_request``, a private
google-genai method, because the public ``client.aio.models.generate_content`` costs 1-2 ms of CPU per call
in pydantic conversions. A private method can change in any release: :func:`private_transport` checks its
shape before it is used, and :func:`log_fallback` says once per process when the public path is used instead.
:func:`request_url` and :func:`answered_url` give the URL of a call for error messages.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

__all__ = [
    "FALLBACK_MESSAGE",
    "answered_url",
    "TRANSPORT_PARAMETERS",
    "log_fallback",
    "pin_transport_choice",
    "private_transport",
    "request_url",
]

logger = logging.getLogger("autorater_pipelines.models.providers.vertex")

TRANSPORT_PARAMETERS = ["http_method", "path", "request_dict", "http_options"]
"""``BaseApiClient.async_request``'s parameters (google-genai 1.30 to 2.x): the shape the provider calls."""
FALLBACK_MESSAGE = "Gemini calls use the public client.aio.models.generate_content"
"""Part of the one warning logged when the private transport is not used."""

_fallback_logged = False


def private_transport(api_client: Any) -> tuple[Any, str | None]:
    """google-genai's private ``BaseApiClient.async_request`` if it has the shape this module calls.

    Returns:
        ``(method, None)``, or ``(None, what changed)`` when it is missing, not a coroutine function, or
        takes other parameters than ``(http_method, path, request_dict, http_options)``.
    """
    transport = getattr(api_client, "async_request", None)
    if transport is None:
        return None, "BaseApiClient.async_request is missing"
    if not inspect.iscoroutinefunction(transport):
        return None, "BaseApiClient.async_request is no longer a coroutine function"
    try:
        parameters = inspect.signature(transport).parameters
    except (TypeError, ValueError):
        return None, "BaseApiClient.async_request has no readable signature"
    names = list(parameters)
    extra_required = [n for n in names[4:] if parameters[n].default is inspect.Parameter.empty]
    if names[:4] != TRANSPORT_PARAMETERS or extra_required:
        return None, f"BaseApiClient.async_request takes {names}, expected {TRANSPORT_PARAMETERS}"
    return transport, None


def log_fallback(problem: str) -> None:
    """Say once per process that the private transport is not used, and why."""
    global _fallback_logged  # noqa: PLW0603 - one warning per process
    if _fallback_logged:
        return
    _fallback_logged = True
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("google-genai")
    except PackageNotFoundError:
        installed = "(version unknown)"
    logger.warning(
        "google-genai %s: %s; %s instead (same results, about 1-2 ms more CPU per call)",
        installed,
        problem,
        FALLBACK_MESSAGE,
    )


def pin_transport_choice(api_client: Any) -> None:
    """Decide once per client whether google-genai uses google-auth's async transport.

    The SDK re-decides on every request (``_use_google_auth_async``: an import and several mTLS certificate
    file checks, about 13 % of a call's CPU at 500 calls/s); the inputs (installed packages, certificate
    configuration) do not change during a run. Only this client instance is changed.
    """
    decide = getattr(api_client, "_use_google_auth_async", None)
    if callable(decide):
        decided = bool(decide())
        api_client._use_google_auth_async = lambda *args, **kwargs: decided


def request_url(api_client: Any, path: str) -> str | None:
    """The URL google-genai sends a ``POST path`` to (base URL, API version, project and location), for messages.

    Read from the SDK's own URL building (``BaseApiClient._build_request``, private: None when it is missing or
    fails), with credentials and query removed.
    """
    from autorater_pipelines.models._provider import display_url

    build = getattr(api_client, "_build_request", None)
    try:
        url = build("post", path, {}, None).url if callable(build) else None
    except Exception:  # noqa: BLE001 - a message detail only
        return None
    return display_url(url) if isinstance(url, str) else None


def answered_url(response: Any) -> str | None:
    """``METHOD URL`` of the request an HTTP response of google-genai answers (aiohttp or httpx), or None."""
    from autorater_pipelines.models._provider import display_url

    try:
        url = getattr(response, "url", None)
        method = getattr(response, "method", None) or getattr(getattr(response, "request", None), "method", None)
    except Exception:  # noqa: BLE001 - httpx raises when the response has no request; a message detail only
        return None
    shown = display_url(str(url)) if url is not None else None
    return f"{str(method or 'POST').upper()} {shown}" if shown else None
