"""Keep credentials out of error messages, logs and outputs: one redaction function.

A server that echoes the API key it received in its error body (several do, e.g. "API key not valid:
AIza…") would otherwise put the key into ``judgments.jsonl``, ``error_messages.jsonl``, ``report.html``
and the terminal. :func:`redact` replaces, in any text:

- every credential value this process knows: the values of environment variables whose names say they
  hold one (``*API_KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, e.g. ``GEMINI_API_KEY``,
  ``OPENAI_API_KEY``) and values registered with :func:`register_secret` (a key passed as a parameter);
- bearer tokens (``Authorization: Bearer …``), ``key=``/``access_token=`` URL parameters, passwords in URLs
  (``https://user:password@host``, e.g. a ``base_url`` parameter), and values in the shapes of Google API
  keys (``AIza…``), Google OAuth access tokens (``ya29.…``) and OpenAI keys (``sk-…``).

It is applied where errors are recorded (every :class:`autorater_pipelines.models.ModelError` message),
where outputs are written (the JSON/JSONL writers of :mod:`autorater_pipelines.io`, the HTML report) and
where the CLI prints errors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

__all__ = ["REDACTED", "known_secrets", "redact", "redact_value", "redactor", "register_secret"]

REDACTED = "[REDACTED]"
"""What a credential is replaced with."""

MIN_SECRET_LENGTH = 8
"""Shorter values (``"x"``, ``"emulator"``…) are not treated as secrets: replacing them would mangle text."""

_CREDENTIAL_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_?KEY", re.IGNORECASE)
_NOT_SECRETS = {"not-needed", "emulator"}  # placeholders this package itself sends to local endpoints
_SHAPES = re.compile(
    r"(?P<prefix>(?i:bearer)\s+|[?&](?:key|api_key|access_token|token)=)[^\s&\"'<>\\@/]{4,}"
    r"|(?P<userinfo>://[^/\s:@]+:)[^\s&\"'<>\\@/]{4,}(?=@)"  # a password in a URL, never a port
    r"|\bAIza[0-9A-Za-z_\-]{30,}"
    r"|\bya29\.[0-9A-Za-z_.\-]{10,}"
    r"|\bsk-[A-Za-z0-9_\-]{20,}"
)
_registered: set[str] = set()


def register_secret(value: Any) -> None:
    """Treat ``value`` as a credential from now on (e.g. an API key given as a parameter)."""
    if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH:
        _registered.add(value.strip())


def known_secrets() -> list[str]:
    """Every credential value known now, longest first (so a key containing another is replaced whole)."""
    values = set(_registered)
    for name, value in os.environ.items():
        if _CREDENTIAL_NAME.search(name) and len(value.strip()) >= MIN_SECRET_LENGTH:
            values.add(value.strip())
    return sorted(values - _NOT_SECRETS, key=len, reverse=True)


def _shape(match: re.Match[str]) -> str:
    return (match.group("prefix") or match.group("userinfo") or "") + REDACTED


def redactor() -> Callable[[str], str]:
    """A redaction function for the credentials known now: build it once, apply it to many texts."""
    secrets = known_secrets()

    def apply(text: str) -> str:
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _SHAPES.sub(_shape, text) if _maybe_shaped(text) else text

    return apply


def _maybe_shaped(text: str) -> bool:
    """A cheap pre-check: most texts hold none of the shapes, and a substring test is faster than a regex."""
    lowered = text.lower()
    return any(marker in lowered for marker in ("bearer", "key=", "token=", "aiza", "ya29.", "sk-", "@"))


def redact(text: str) -> str:
    """``text`` with every known credential replaced by :data:`REDACTED` (see the module docstring)."""
    if not isinstance(text, str) or not text:
        return text
    return redactor()(text)


def redact_value(value: Any, apply: Callable[[str], str] | None = None) -> Any:
    """:func:`redact` every string inside ``value`` (dicts, lists and tuples are copied, other values kept)."""
    apply = apply or redactor()
    if isinstance(value, str):
        return apply(value)
    if isinstance(value, dict):
        return {k: redact_value(v, apply) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, apply) for v in value)
    return value
