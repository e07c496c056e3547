"""Structured output that adapts to what each endpoint accepts.

A request with a ``response_schema`` is sent in the strongest mode the endpoint accepts:

1. ``json_schema``: the schema is enforced by the server (OpenAI ``response_format`` type ``json_schema``,
   Gemini ``responseJsonSchema``);
2. ``json_object``: the server only guarantees JSON (OpenAI ``response_format`` type ``json_object``,
   Gemini ``responseMimeType: application/json``); the schema goes into the prompt;
3. ``prompt``: no structured-output field at all; the schema goes into the prompt and the answer is
   parsed tolerantly (:mod:`autorater_pipelines.parsing`).

With ``GenerateConfig.structured_output = "auto"`` (the default) an endpoint starts at ``json_schema``.
The first answer that refuses the mode (:attr:`~autorater_pipelines.models._classify.Reason.RESPONSE_FORMAT`)
moves the endpoint one mode down, for every later request of the process (one run), logged once per
endpoint and mode; the refused request is sent again at once in the next mode (a refusal is not a
retry and uses none of the retry budget). Until an endpoint's mode is confirmed by one accepted answer,
structured requests to it go one at a time, so a server that refuses ``json_schema`` sees one refused
request, not one per request in flight. A fixed mode (``json_schema``, ``json_object``, ``prompt``) is
used as is, never changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any, TypeVar

from autorater_pipelines.models._classify import Reason
from autorater_pipelines.models._provider import ProviderError
from autorater_pipelines.models._types import ErrorKind, ModelError, Part

_T = TypeVar("_T")

__all__ = [
    "MODES",
    "OutputMode",
    "StructuredModes",
    "is_complete_json",
    "schema_instruction",
    "truncation_error",
    "with_schema_instruction",
]

logger = logging.getLogger("autorater_pipelines.models")


class OutputMode(str, enum.Enum):
    """How a response schema is sent (strongest first)."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    PROMPT = "prompt"


_ORDER = (OutputMode.JSON_SCHEMA, OutputMode.JSON_OBJECT, OutputMode.PROMPT)


def schema_instruction(schema: dict[str, Any]) -> str:
    """The text appended to the prompt when the server does not enforce the schema itself.

    It shows the answer's shape with placeholders (``{"explanation": "<string>", "choice": "<A|B|SAME>"}``)
    and the properties' descriptions, not the JSON schema itself: small models asked to follow a schema
    tend to answer with a copy of the schema (measured with SmolLM2-135M-Instruct).
    """
    lines = [
        "Answer with one JSON object and nothing else (no prose, no code fence), in this shape:",
        json.dumps(_skeleton(schema), ensure_ascii=False),
    ]
    described = [
        f'- "{name}": {sub["description"]}'
        for name, sub in (schema.get("properties") or {}).items()
        if isinstance(sub, dict) and sub.get("description")
    ]
    if described:
        lines += ["where", *described]
    return "\n".join(lines)


def with_schema_instruction(parts: tuple[Part, ...], schema: dict[str, Any]) -> tuple[Part, ...]:
    """``parts`` with :func:`schema_instruction` appended to the last text part, after a newline.

    One text part, not a second one: a proxy that turns two text parts into list-form chat content (LiteLLM's
    generateContent route) sends llama.cpp a message its chat template refuses. Without any text part the
    instruction is added as the last part.
    """
    instruction = schema_instruction(schema)
    for index in range(len(parts) - 1, -1, -1):
        part = parts[index]
        if isinstance(part, str):
            return (*parts[:index], f"{part}\n{instruction}", *parts[index + 1 :])
    return (*parts, instruction)


def _skeleton(schema: Any, depth: int = 0) -> Any:
    """A placeholder instance of a JSON schema (``"<string>"``, ``"<A|B>"`` for an enum, ``[item]``)."""
    if not isinstance(schema, dict) or depth > 8:
        return "<value>"
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return "<" + "|".join(str(v) for v in schema["enum"]) + ">"
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _skeleton(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        return {name: _skeleton(sub, depth + 1) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [_skeleton(schema.get("items") or {}, depth + 1)]
    if kind == "boolean":
        return "<true|false>"
    return f"<{kind or 'value'}>"


def is_complete_json(text: str | None) -> bool:
    """True when ``text`` is one complete JSON object (a structured answer that just fit the token limit)."""
    try:
        return isinstance(json.loads((text or "").strip()), dict)
    except ValueError:
        return False


def truncation_error(output_tokens: int, limit: int | None) -> ModelError:
    """The error of a structured answer cut off by the output-token limit (finish reason length).

    Only used when the answer is not already a complete JSON object (:func:`is_complete_json`).
    """
    return ModelError(
        ErrorKind.BLOCKED,
        f"truncated at {output_tokens or limit} tokens (finish reason: length, max_output_tokens={limit}): "
        "the JSON answer is incomplete; raise max_output_tokens",
    )


class StructuredModes:
    """The structured-output mode of every endpoint seen in this process (thread-safe).

    An endpoint is any hashable key, e.g. ``("openai", base_url, model)``.
    """

    def __init__(self) -> None:
        self._modes: dict[Hashable, OutputMode] = {}
        self._confirmed: set[Hashable] = set()
        self._locks: dict[tuple[Hashable, asyncio.AbstractEventLoop], asyncio.Lock] = {}
        self._guard = threading.Lock()

    def mode(self, endpoint: Hashable, setting: str = "auto") -> OutputMode:
        """The mode to use now: the fixed ``setting``, or the endpoint's detected mode for ``"auto"``."""
        if setting != "auto":
            return OutputMode(setting)
        with self._guard:
            return self._modes.get(endpoint, OutputMode.JSON_SCHEMA)

    def refused(self, endpoint: Hashable, mode: OutputMode, why: str, setting: str = "auto") -> OutputMode | None:
        """Record that ``endpoint`` refused ``mode``; return the mode to try next, or None (nothing left).

        Logged once per endpoint and mode (a WARNING naming the endpoint, the refused mode, the next mode
        and the server's words).
        """
        if setting != "auto" or mode is OutputMode.PROMPT:
            return None
        with self._guard:
            current = self._modes.get(endpoint, OutputMode.JSON_SCHEMA)
            if _ORDER.index(current) > _ORDER.index(mode):
                return current  # another request already moved it down
            following = _ORDER[_ORDER.index(mode) + 1]
            self._modes[endpoint] = following
        logger.warning(
            "%s refused structured output mode %r (%s); using %r for the rest of this run",
            _describe(endpoint),
            mode.value,
            why[:300],
            following.value,
        )
        return following

    def accepted(self, endpoint: Hashable, mode: OutputMode, setting: str = "auto") -> None:
        """Record that ``endpoint`` answered a request sent in ``mode`` (logged once per endpoint)."""
        if setting != "auto":
            return
        with self._guard:
            if endpoint in self._confirmed or self._modes.get(endpoint, OutputMode.JSON_SCHEMA) is not mode:
                return
            self._confirmed.add(endpoint)
        logger.info("%s: structured output mode %r", _describe(endpoint), mode.value)

    def detected(self, endpoint: Hashable) -> OutputMode | None:
        """The confirmed mode of ``endpoint``, or None while unknown."""
        with self._guard:
            return self._modes.get(endpoint, OutputMode.JSON_SCHEMA) if endpoint in self._confirmed else None

    @contextlib.asynccontextmanager
    async def probing(self, endpoint: Hashable, setting: str = "auto") -> AsyncIterator[None]:
        """Serialize structured requests to ``endpoint`` until its mode is confirmed (no-op afterwards)."""
        if setting != "auto" or self.detected(endpoint) is not None:
            yield
            return
        loop = asyncio.get_running_loop()
        with self._guard:
            for key in [k for k in self._locks if k[1].is_closed()]:
                del self._locks[key]
            lock = self._locks.setdefault((endpoint, loop), asyncio.Lock())
        async with lock:
            yield

    async def send(self, endpoint: Hashable, setting: str, call: Callable[[OutputMode], Awaitable[_T]]) -> _T:
        """Send one structured request in the endpoint's mode: ``await call(mode)``, moving down when refused.

        A :class:`~autorater_pipelines.models._provider.ProviderError` whose reason is
        ``RESPONSE_FORMAT`` moves the endpoint one mode down and calls again at once in the next mode (not
        a retry); any other error, or a refusal with no mode left, propagates.

        Args:
            endpoint: The endpoint's key.
            setting: ``GenerateConfig.structured_output``.
            call: Sends the request in the given mode.
        """
        async with self.probing(endpoint, setting):
            while True:
                mode = self.mode(endpoint, setting)
                try:
                    output = await call(mode)
                except ProviderError as exc:
                    if exc.error.reason == Reason.RESPONSE_FORMAT.value:
                        if self.refused(endpoint, mode, exc.error.message, setting) is not None:
                            continue  # not a retry: the same request in the next mode, at once
                    raise
                self.accepted(endpoint, mode, setting)
                return output

    def reset(self) -> None:
        """Forget every endpoint (tests)."""
        with self._guard:
            self._modes.clear()
            self._confirmed.clear()
            self._locks.clear()


def _describe(endpoint: Hashable) -> str:
    if isinstance(endpoint, tuple):
        return " ".join(str(p) for p in endpoint if p)
    return str(endpoint)


MODES = StructuredModes()
"""The process-wide registry used by the providers."""
