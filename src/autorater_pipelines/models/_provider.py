"""What a provider is: a translator between :class:`ModelRequest` and one SDK, plus error classification.

Providers do not retry, rate-limit, cache or bound concurrency: :mod:`._model` does that, once, for
every provider. A provider turns a request into one SDK call, turns the SDK's answer into a
:class:`ModelOutput`, and classifies SDK exceptions into :class:`ErrorKind` ``RATE_LIMIT`` / ``TRANSIENT`` /
``FATAL``: by exception type and HTTP status code first (:func:`classify_status`); an HTTP error body is then
read in one place, :mod:`autorater_pipelines.models._classify` (structured fields first, documented message
patterns last), because real servers answer 500 for requests that can never succeed.
"""

from __future__ import annotations

import abc
import asyncio
import email.utils
import ipaddress
import json
import re
import socket
import sys
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any, ClassVar

from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest

__all__ = [
    "Provider",
    "ProviderError",
    "classify_status",
    "display_url",
    "is_loopback_url",
    "is_unreachable",
    "parse_retry_after",
]


class ProviderError(Exception):
    """Raised by a provider for a failure it has already classified (e.g. unsupported media).

    Args:
        error: The classified failure.
    """

    def __init__(self, error: ModelError) -> None:
        super().__init__(error.message)
        self.error = error


class Provider(abc.ABC):
    """One model behind one SDK client.

    Attributes:
        provider: Provider id reported as ``Model.provider`` (``vertex``, ``gemini_api``, ``openai``,
            ``replay``).
        name: Provider-side model name.
        config: The model's configuration.
        uses_network: False for providers that answer locally (replay): the model wrapper then skips
            the cache, the rate limiter and retries.
    """

    uses_network: ClassVar[bool] = True

    def __init__(self, provider: str, name: str, config: GenerateConfig) -> None:
        self.provider = provider
        self.name = name
        self.config = config

    @property
    def base_url(self) -> str | None:
        """The endpoint actually used, or None for the provider's default."""
        return self.config.base_url

    @property
    def endpoint_url(self) -> str:
        """The URL calls go to, for messages (credentials and query removed); providers override it."""
        return display_url(self.base_url) or f"the {self.provider} default endpoint"

    def quota_key(self) -> tuple[Any, ...]:
        """What identifies the quota these calls count against (see :mod:`._endpoint`)."""
        return (self.provider, self.endpoint_url, self.config.project, self.config.location, self.name)

    def cache_identity(self) -> dict[str, Any]:
        """Return what, besides the request, determines the answer (part of the cache key)."""
        return {"provider": self.provider, "model": self.name, "base_url": self.base_url}

    @abc.abstractmethod
    async def generate(self, request: ModelRequest) -> ModelOutput:
        """Make one attempt at one call.

        Returns:
            The output; a provider answer without text (blocked, max tokens) is an output whose error
            kind is ``BLOCKED``.

        Raises:
            ProviderError: an already classified failure.
            Exception: any SDK exception; the wrapper passes it to :meth:`classify_error`.
        """

    def classify_error(self, exc: BaseException) -> ModelError:
        """Classify an exception raised by :meth:`generate` (by type / status code only).

        The default treats timeouts and connection errors as transient and everything else as fatal.
        """
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
            return ModelError(ErrorKind.TRANSIENT, f"{type(exc).__name__}: {exc}")
        return ModelError(ErrorKind.FATAL, f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:  # noqa: B027 - optional hook, default no-op
        """Release the connections opened in the running event loop (called at the end of a run)."""


def classify_status(status: int, message: str, retry_after_s: float | None = None) -> ModelError:
    """Map an HTTP status code to an error kind.

    Args:
        status: HTTP status code of the failed response.
        message: Human-readable description (kept as is, never parsed).
        retry_after_s: Server-requested delay in seconds, if any.

    Returns:
        ``RATE_LIMIT`` for 429, ``TRANSIENT`` for 408 and 5xx, ``FATAL`` otherwise.
    """
    if status == 429:
        kind = ErrorKind.RATE_LIMIT
    elif status == 408 or 500 <= status <= 599:
        kind = ErrorKind.TRANSIENT
    else:
        kind = ErrorKind.FATAL
    return ModelError(kind, message, status_code=status, retry_after_s=retry_after_s)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Read the server-requested delay from response headers.

    Understands ``retry-after-ms`` (milliseconds, sent by OpenAI) and ``Retry-After`` as seconds
    (fractions accepted) or an HTTP date.

    Args:
        headers: Response headers (case-insensitive mapping, or a plain dict), or None.

    Returns:
        Delay in seconds (>= 0), or None when absent or unparseable.
    """
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    value = lowered.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def retry_delay_from_google_details(details: Any) -> float | None:
    """Read ``google.rpc.RetryInfo.retryDelay`` (e.g. ``"12s"``) from a Google API error body.

    Args:
        details: The parsed JSON error body (``{"error": {"details": [...]}}``) or None.

    Returns:
        Delay in seconds, or None.
    """
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            return None
    if not isinstance(details, dict):
        return None
    error = details.get("error", details)
    items = error.get("details") if isinstance(error, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def is_loopback_url(url: str | None) -> bool:
    """Tell whether ``url`` points at this machine (127.0.0.0/8, ::1 or ``localhost``)."""
    if not url:
        return False
    host = urllib.parse.urlsplit(url if "//" in url else f"//{url}").hostname
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def display_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (safe to print: no credentials), or None."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url if "//" in url else f"//{url}")
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", "")) or None


def is_unreachable(exc: BaseException | None) -> bool:
    """Tell whether a failed call never reached a server: connection refused or host name not resolved.

    Looks at the exception and its causes by type only: ``ConnectionRefusedError``, ``socket.gaierror``,
    aiohttp's ``ClientConnectorError`` (connect and DNS failures) and httpx's ``ConnectError`` (what the
    openai SDK wraps in ``APIConnectionError``).
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
            return True
        aiohttp = sys.modules.get("aiohttp")
        if aiohttp is not None and isinstance(exc, aiohttp.ClientConnectorError):
            return not isinstance(exc, getattr(aiohttp, "ClientConnectorCertificateError", ()))
        for name in ("httpx", "httpx2"):
            module = sys.modules.get(name)
            if module is not None and isinstance(exc, module.ConnectError):
                return True
        exc = exc.__cause__ or exc.__context__
    return False
