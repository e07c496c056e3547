"""Wire formats of the emulated APIs: parse request bodies; answers built in :mod:`._bodies`.

Protocols:

- ``vertex``: Vertex AI ``generateContent``
  (``POST /v1beta1/projects/P/locations/L/publishers/google/models/M:generateContent``)
- ``gemini_api``: Gemini Developer API ``generateContent`` (``POST /v1beta/models/M:generateContent``)
- ``openai``: OpenAI chat completions (``POST /v1/chat/completions``)

Google request bodies mix camelCase and snake_case keys (google-genai sends ``inlineData`` with a
nested ``mime_type``), so both spellings are read. Responses use the camelCase JSON of the real APIs.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import mimetypes
import re
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "Answer",
    "EmulatedRequest",
    "Refusal",
    "Responder",
    "default_responder",
    "parse_request",
    "schema_example",
    "to_answer",
]

DEFAULT_TEXT = "This is an emulated response."


@dataclasses.dataclass
class EmulatedRequest:
    """One request received by the emulator.

    Attributes:
        protocol: ``"vertex"``, ``"gemini_api"`` or ``"openai"``.
        model: Model name or resource id from the URL (Google) or the body (OpenAI).
        path: Request path.
        headers: Request headers, names lower-cased.
        body: Parsed JSON body.
        prompt_text: All text parts of the user turn(s), joined with newlines.
        media: ``(mime_type, bytes or None, uri or None)`` per media part, in order.
        response_schema: The JSON schema asked for (structured output), if any.
        system_instruction: System prompt text, if any.
        generation: Generation settings found in the body, snake_case keys among ``temperature``,
            ``max_output_tokens``, ``top_p``, ``seed``, ``logprobs`` (number of alternatives; 0 when
            only chosen-token log-probabilities were asked for).
        received_at: ``time.monotonic()`` when the request arrived.
        status: HTTP status the emulator answered with (None while in flight).
    """

    protocol: str
    model: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    prompt_text: str = ""
    media: list[tuple[str, bytes | None, str | None]] = dataclasses.field(default_factory=list)
    response_schema: dict[str, Any] | None = None
    system_instruction: str | None = None
    generation: dict[str, Any] = dataclasses.field(default_factory=dict)
    received_at: float = dataclasses.field(default_factory=time.monotonic)
    status: int | None = None


class Refusal(Exception):
    """Raised by a responder to answer with an HTTP error instead of text (e.g. a server's validator).

    Args:
        status: HTTP status of the answer (400-599).
        message: The error message put in the protocol's error body.
        retry_after_s: Send ``Retry-After`` (and ``retry-after-ms`` for OpenAI) with this many seconds.
        fields: Extra fields of the body's ``error`` object, e.g. OpenAI's ``{"type": "tokens", "code":
            "rate_limit_exceeded"}`` or Google's ``{"details": [...]}``.
    """

    def __init__(
        self, status: int, message: str, *, retry_after_s: float | None = None, fields: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after_s = retry_after_s
        self.fields = dict(fields or {})


@dataclasses.dataclass(frozen=True)
class Answer:
    """What the emulated model answers (normalized from a responder's return value).

    Attributes:
        text: Generated text; None for an answer without text (blocked).
        finish_reason: Lower-case reason: ``stop``, ``max_tokens``, ``safety`` (mapped per protocol).
        logprobs: ``(token, logprob, ((alternative, logprob), ...))`` per token, or None to synthesize
            them when the request asks for log-probabilities.
        input_tokens: Reported prompt tokens, or None to estimate (whitespace words + media parts).
        output_tokens: Reported output tokens, or None to estimate (whitespace words).
    """

    text: str | None
    finish_reason: str = "stop"
    logprobs: tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


Responder = Callable[[EmulatedRequest], "str | dict[str, Any]"]
"""Answers a request: the text, or a dict with ``text`` and optional ``finish_reason``, ``logprobs``
(list of ``{"token", "logprob", "top": [[token, logprob], ...]}`` or ``(token, logprob)`` pairs),
``input_tokens``, ``output_tokens``."""


def _b64decode(text: str) -> bytes:
    """Decode standard or URL-safe base64 (google-genai sends URL-safe), padding optional."""
    text = text.strip().replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return b""


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    return obj.get(camel, obj.get(snake))


def _google_parts(parts: list[Any], request: EmulatedRequest, texts: list[str]) -> None:
    for part in parts or []:
        if not isinstance(part, dict):
            continue
        if part.get("text") is not None:
            texts.append(str(part["text"]))
        inline = _get(part, "inlineData", "inline_data")
        if isinstance(inline, dict):
            mime = _get(inline, "mimeType", "mime_type") or ""
            request.media.append((mime, _b64decode(str(inline.get("data") or "")), None))
        file_data = _get(part, "fileData", "file_data")
        if isinstance(file_data, dict):
            mime = _get(file_data, "mimeType", "mime_type") or ""
            request.media.append((mime, None, _get(file_data, "fileUri", "file_uri")))


def _parse_google(request: EmulatedRequest) -> None:
    body = request.body
    texts: list[str] = []
    contents = body.get("contents") or []
    if isinstance(contents, dict):
        contents = [contents]
    for content in contents:
        if isinstance(content, dict) and content.get("role", "user") == "user":
            _google_parts(content.get("parts") or [], request, texts)
    request.prompt_text = "\n".join(texts)
    system = _get(body, "systemInstruction", "system_instruction")
    if isinstance(system, dict):
        request.system_instruction = "\n".join(
            str(p.get("text")) for p in system.get("parts") or [] if isinstance(p, dict) and p.get("text")
        )
    config = _get(body, "generationConfig", "generation_config") or {}
    schema = _get(config, "responseJsonSchema", "response_json_schema")
    if schema is None:
        schema = _get(config, "responseSchema", "response_schema")
    request.response_schema = schema if isinstance(schema, dict) else None
    names = {
        "temperature": ("temperature", "temperature"),
        "max_output_tokens": ("maxOutputTokens", "max_output_tokens"),
        "top_p": ("topP", "top_p"),
        "seed": ("seed", "seed"),
    }
    request.generation = {k: _get(config, *v) for k, v in names.items() if _get(config, *v) is not None}
    if _get(config, "responseLogprobs", "response_logprobs"):
        request.generation["logprobs"] = int(config.get("logprobs") or 0)


_DATA_URL = re.compile(r"^data:(?P<mime>[^;,]*)(?:;[^,]*)?;base64,(?P<data>.*)$", re.S)


def _parse_openai(request: EmulatedRequest) -> None:
    body = request.body
    request.model = str(body.get("model", ""))
    texts: list[str] = []
    systems: list[str] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        target = systems if message.get("role") in ("system", "developer") else texts
        if isinstance(content, str):
            target.append(content)
            continue
        for part in content or []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                target.append(str(part.get("text", "")))
            elif part.get("type") == "image_url":
                url = str((part.get("image_url") or {}).get("url", ""))
                match = _DATA_URL.match(url)
                if match:
                    request.media.append((match["mime"], _b64decode(match["data"]), None))
                else:
                    request.media.append((mimetypes.guess_type(url)[0] or "", None, url))
    request.prompt_text = "\n".join(texts)
    request.system_instruction = "\n".join(systems) if systems else None
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        request.response_schema = schema if isinstance(schema, dict) else None
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    generation = {
        "temperature": body.get("temperature"),
        "max_output_tokens": max_tokens,
        "top_p": body.get("top_p"),
        "seed": body.get("seed"),
    }
    request.generation = {k: v for k, v in generation.items() if v is not None}
    if body.get("logprobs"):
        request.generation["logprobs"] = int(body.get("top_logprobs") or 0)


def parse_request(request: EmulatedRequest) -> EmulatedRequest:
    """Fill the derived fields (prompt text, media, schema, ...) of a request from its body."""
    if request.protocol == "openai":
        _parse_openai(request)
    else:
        _parse_google(request)
    return request


# --- answers ------------------------------------------------------------------------------------
def schema_example(schema: Any) -> Any:
    """Build a small JSON value that satisfies a (simple) JSON schema: first enum value, all properties."""
    if not isinstance(schema, dict):
        return DEFAULT_TEXT
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return schema_example(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        return {name: schema_example(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [schema_example(schema.get("items") or {"type": "string"})] * max(1, int(schema.get("minItems", 1)))
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0.0))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "emulated"


def default_responder(request: EmulatedRequest) -> str:
    """Answer a fixed short text, or a JSON instance of the requested response schema."""
    import json

    if request.response_schema is not None:
        return json.dumps(schema_example(request.response_schema))
    return DEFAULT_TEXT


def to_answer(result: Any) -> Answer:
    """Normalize a responder's return value (str or dict) to an :class:`Answer`.

    Raises:
        TypeError: the value is neither a string nor a dict with a ``text`` key.
    """
    if isinstance(result, str):
        return Answer(text=result)
    if not isinstance(result, dict) or "text" not in result:
        raise TypeError(f"a responder must return str or a dict with 'text', got {result!r}")
    logprobs = None
    if result.get("logprobs") is not None:
        items = []
        for item in result["logprobs"]:
            if isinstance(item, dict):
                token, logprob, top = item["token"], item["logprob"], item.get("top") or ()
            else:
                token, logprob, top = item[0], item[1], (item[2] if len(item) > 2 else ())
            items.append((str(token), float(logprob), tuple((str(t), float(v)) for t, v in top)))
        logprobs = tuple(items)
    return Answer(
        text=result["text"],
        finish_reason=str(result.get("finish_reason") or "stop").lower(),
        logprobs=logprobs,
        input_tokens=result.get("input_tokens"),
        output_tokens=result.get("output_tokens"),
    )
