"""What a failed HTTP answer means, in one place for every provider.

STYLE.md rule 4 asks providers to classify by status code and exception type, never by message text.
Real OpenAI-compatible servers break that assumption: llama.cpp's server answers HTTP 500 for a prompt
longer than its context, llama-cpp-python answers 500 for a request its validator refuses. Retrying such
an answer "because 5xx is transient" only burns the retry budget, so classification here goes, in order:

1. **Status code** (:func:`~autorater_pipelines.models._provider.classify_status`): 429 → ``RATE_LIMIT``;
   408 and 5xx → ``TRANSIENT``; any other 4xx → ``FATAL``. A 429 is reconsidered only for the
   narrow exception below.
2. **Structured fields of the error body**, as the servers document them: OpenAI's ``error.code``
   (``context_length_exceeded``, ``model_not_found``, ``unsupported_parameter``, ``unsupported_value``)
   and ``error.param``; llama.cpp's ``error.type`` (``exceed_context_size_error``,
   ``invalid_request_error``, ``not_supported_error``); FastAPI/pydantic validation errors' ``detail[].loc``
   (llama-cpp-python); Google's ``error.status`` (``INVALID_ARGUMENT``, ``NOT_FOUND``).
3. **Documented message patterns**, only when 2 found nothing (:data:`PATTERNS`; e.g. llama.cpp's "Context
   size has been exceeded", vLLM's "maximum context length").

A body that says the request itself is invalid makes the error ``FATAL`` whatever its status, with a
:class:`Reason` in :attr:`ModelError.reason` and the reason's text first in the message.

One narrow, documented exception reads the message of a 429 (:func:`too_large_for_quota`): a 429 that says the
*request itself* exceeds a limit can never succeed however long one waits, so retrying it only holds the
endpoint's slots and pace (measured: two such requests among 8 rows stalled a run at 2 calls/min). OpenAI
answers it with the same ``code`` as an ordinary rate limit (``rate_limit_exceeded``, type ``tokens``), so only
the message tells: "Request too large for <model> … on tokens per min (TPM): Limit X, Requested Y" (Y > X).
Google's ``RESOURCE_EXHAUSTED`` says so in a ``google.rpc.QuotaFailure`` violation of a per-request quota, or in
the same wording. Every other 429 stays ``RATE_LIMIT``. Finally, a
server that answers HTTP 500 with the very same body twice for the same request (:class:`RepeatedErrors`)
is not busy: the second answer is ``FATAL`` too.
"""

from __future__ import annotations

import collections
import enum
import hashlib
import json
import re
import threading
from typing import Any

from autorater_pipelines.models._provider import classify_status
from autorater_pipelines.models._types import ErrorKind, ModelError

__all__ = [
    "PATTERNS",
    "Reason",
    "RepeatedErrors",
    "body_reason",
    "classify_http_error",
    "media_refused_message",
    "wrong_protocol_error",
    "too_large_for_quota",
]


class Reason(str, enum.Enum):
    """Why a server refused a request as invalid (:attr:`ModelError.reason`)."""

    CONTEXT_LENGTH = "context_length_exceeded"
    RESPONSE_FORMAT = "unsupported_response_format"
    UNSUPPORTED_PARAMETER = "unsupported_parameter"
    MODEL_NOT_FOUND = "model_not_found"
    INVALID_REQUEST = "invalid_request"
    REPEATED_ERROR = "repeated_server_error"
    MEDIA_UNSUPPORTED = "media_input_not_supported"
    WRONG_PROTOCOL = "wrong_protocol"
    REQUEST_TOO_LARGE = "request_too_large"


_TEXT = {
    Reason.CONTEXT_LENGTH: "the prompt is longer than the model's context window",
    Reason.RESPONSE_FORMAT: "the server does not support this structured-output request",
    Reason.UNSUPPORTED_PARAMETER: "the server refused a request parameter",
    Reason.MODEL_NOT_FOUND: "the server does not know this model",
    Reason.INVALID_REQUEST: "the server refused the request as invalid",
    Reason.REPEATED_ERROR: "the server gave the same error twice for this request",
    Reason.MEDIA_UNSUPPORTED: "the model does not accept image or video input",
    Reason.WRONG_PROTOCOL: "this endpoint did not answer in the API's response format",
    Reason.REQUEST_TOO_LARGE: (
        "the request alone exceeds the server's rate limit, so it can never be accepted (shorten the prompt or "
        "lower max_output_tokens, or raise the limit)"
    ),
}

_CODES = {  # error.code / error.type values (OpenAI, vLLM, llama.cpp server)
    "context_length_exceeded": Reason.CONTEXT_LENGTH,
    "exceed_context_size_error": Reason.CONTEXT_LENGTH,
    "string_above_max_length": Reason.CONTEXT_LENGTH,
    "model_not_found": Reason.MODEL_NOT_FOUND,
    "unsupported_parameter": Reason.UNSUPPORTED_PARAMETER,
    "unsupported_value": Reason.UNSUPPORTED_PARAMETER,
    "not_supported_error": Reason.UNSUPPORTED_PARAMETER,
    "invalid_request_error": Reason.INVALID_REQUEST,
    "badrequesterror": Reason.INVALID_REQUEST,  # vLLM's error.type
    "invalid_argument": Reason.INVALID_REQUEST,  # Google's error.status
    "not_found": Reason.MODEL_NOT_FOUND,
}

_RESPONSE_FORMAT_FIELDS = re.compile(
    r"response_format|json[_ ]schema|response_?(?:json_?)?schema|responsejsonschema|response_?mime_?type", re.I
)

_MEDIA_REFUSED = re.compile(
    # OpenAI "Invalid content type. image_url is only supported by certain models."; vLLM "... is not a multimodal
    # model"; llama.cpp "image input is not supported - hint: ... mmproj"; Ollama "model does not support images";
    # generic "image input not supported", "vision is not supported".
    r"(?:image|video|vision|multimodal|multi-modal)[\w ]{0,30}(?:is |are )?(?:not supported|unsupported)|"
    r"(?:does not|doesn't|do not|cannot|can't) (?:support|accept|handle|process) (?:image|video|vision|multimodal)|"
    r"not a multimodal model|image_url is only supported by certain models|mmproj",
    re.I,
)
"""A refusal of the request's images or videos (checked before the other patterns: it is the most specific)."""

PATTERNS: tuple[tuple[re.Pattern[str], Reason], ...] = (
    # llama.cpp "Context size has been exceeded." / "the request exceeds the available context size";
    # vLLM/OpenAI "This model's maximum context length is N tokens"; Ollama "prompt too long"; Gemini
    # "The input token count (N) exceeds the maximum number of tokens allowed (M)".
    (
        re.compile(
            r"context (?:size|length|window)[^.]{0,40}exceed|exceeds? the (?:available )?context|"
            r"maximum context length|prompt (?:is )?too long|too many (?:input )?tokens|"
            r"exceeds the maximum number of tokens",
            re.I,
        ),
        Reason.CONTEXT_LENGTH,
    ),
    (
        re.compile(r"model[^.]{0,80}(?:not found|does not exist)|unknown model|no such model", re.I),
        Reason.MODEL_NOT_FOUND,
    ),
    (
        re.compile(r"unsupported parameter|unrecognized request argument|extra inputs are not permitted", re.I),
        Reason.UNSUPPORTED_PARAMETER,
    ),
    (re.compile(r"validation error|invalid request|invalid_request|is not valid under", re.I), Reason.INVALID_REQUEST),
)
"""Last-resort message patterns (only consulted when the body has no recognised structured field)."""


_TOO_LARGE = re.compile(
    r"\brequest too large\b|\brequest (?:is )?(?:too large|larger than)\b|exceeds? the (?:per-request|request) "
    r"(?:token |size )?(?:limit|quota)",
    re.I,
)
_LIMIT_REQUESTED = re.compile(r"\bLimit:? ([\d,]+)[^.]{0,20}?\bRequested:? ([\d,]+)", re.I)


def too_large_for_quota(body: Any) -> bool:
    """Tell whether a 429 body says the request itself exceeds the limit (module docstring: the exception).

    True for OpenAI's "Request too large for <model> … Limit X, Requested Y" (also any "Limit X, Requested Y"
    with Y > X and no "Used" count, i.e. not a full bucket), the same wording in any other server's message,
    and a Google ``QuotaFailure`` violation whose quota id or metric is per request.
    """
    error = _error_object(body)
    message = " ".join(str(error.get(k) or "") for k in ("message", "msg", "detail"))
    if _TOO_LARGE.search(message):
        return True
    numbers = _LIMIT_REQUESTED.search(message)
    if numbers and "used" not in message.lower():
        limit, requested = (int(g.replace(",", "")) for g in numbers.groups())
        if requested > limit:
            return True
    for item in error.get("details") or []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("google.rpc.QuotaFailure"):
            for violation in item.get("violations") or []:
                if not isinstance(violation, dict):
                    continue
                names = " ".join(str(violation.get(k) or "") for k in ("quotaId", "quotaMetric", "subject"))
                if re.search(r"per_?request", names, re.I):
                    return True
    return False


def _error_object(body: Any) -> dict[str, Any]:
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except ValueError:
            return {"message": body.decode("utf-8", "replace") if isinstance(body, bytes) else body}
    if not isinstance(body, dict):
        return {}
    error = body.get("error", body)
    if isinstance(error, str):
        return {**body, "message": error}
    return error if isinstance(error, dict) else {}


def _mentions_response_format(error: dict[str, Any]) -> bool:
    for item in error.get("detail") or []:  # FastAPI: {"detail": [{"loc": ["body", "response_format", ...]}]}
        if isinstance(item, dict) and any(_RESPONSE_FORMAT_FIELDS.search(str(p)) for p in item.get("loc") or []):
            return True
    return bool(_RESPONSE_FORMAT_FIELDS.search(str(error.get("param") or "")))


def body_reason(body: Any) -> Reason | None:
    """The reason an error body gives for refusing the request, or None (see the module docstring).

    Args:
        body: The error body: parsed JSON (dict), or its raw text.

    Returns:
        The :class:`Reason`, from structured fields first, then :data:`PATTERNS`.
    """
    error = _error_object(body)
    if not error:
        return None
    found: Reason | None = None
    for field in ("code", "type", "status"):
        value = error.get(field)
        if isinstance(value, str) and value.lower() in _CODES:
            found = _CODES[value.lower()]
            break
    if found is None and isinstance(error.get("detail"), list):
        found = Reason.INVALID_REQUEST  # a pydantic validation error list
    message = " ".join(str(error.get(k) or "") for k in ("message", "msg", "detail"))
    if found in (None, Reason.INVALID_REQUEST, Reason.UNSUPPORTED_PARAMETER) and _MEDIA_REFUSED.search(message):
        return Reason.MEDIA_UNSUPPORTED
    if found in (None, Reason.INVALID_REQUEST):  # a generic code: a pattern may tell more
        for pattern, reason in PATTERNS:
            if pattern.search(message):
                found = reason if found is None or reason is not Reason.INVALID_REQUEST else found
                break
    if found in (Reason.INVALID_REQUEST, Reason.UNSUPPORTED_PARAMETER) and (
        _mentions_response_format(error) or _RESPONSE_FORMAT_FIELDS.search(message)
    ):
        found = Reason.RESPONSE_FORMAT
    return found


def classify_http_error(
    status: int, body: Any, message: str, retry_after_s: float | None = None, *, repeated: bool = False
) -> ModelError:
    """Classify a failed HTTP answer: status first, then what its body says (module docstring).

    Args:
        status: HTTP status code.
        body: The error body (parsed JSON or raw text), or None.
        message: Human-readable description of the failure (kept in the error message).
        retry_after_s: Server-requested delay in seconds, if any.
        repeated: The same request got the very same HTTP 500 body before (:class:`RepeatedErrors`).

    Returns:
        The error; ``FATAL`` with :attr:`ModelError.reason` set when the body says the request is invalid.
    """
    base = classify_status(status, message, retry_after_s)
    if base.kind is ErrorKind.RATE_LIMIT:
        if not too_large_for_quota(body):
            return base
        too_large = Reason.REQUEST_TOO_LARGE
        return ModelError(ErrorKind.FATAL, f"{_TEXT[too_large]}: {message}", status_code=status, reason=too_large.value)
    reason = body_reason(body) if 400 <= status <= 599 and status not in (401, 403) else None
    if reason is None and repeated and base.kind is ErrorKind.TRANSIENT:
        reason = Reason.REPEATED_ERROR
    if reason is None:
        return base
    return ModelError(ErrorKind.FATAL, f"{_TEXT[reason]}: {message}", status_code=status, reason=reason.value)


def media_refused_message(spec: str, endpoint: str, error: ModelError) -> str:
    """The one-line stop message when an endpoint refuses the request's images or videos.

    For :attr:`Reason.MEDIA_UNSUPPORTED`: the model, the endpoint, what it answered, and the fix.
    """
    status = f"HTTP {error.status_code} " if error.status_code else ""
    answer = error.message.removeprefix(f"{_TEXT[Reason.MEDIA_UNSUPPORTED]}: ")
    return (
        f"model {spec!r} at {endpoint} does not accept image or video input: it answered {status}{answer!r} to the "
        "first request with media, so no further call was made. Use a model that takes the media, e.g. "
        "'gemini-2.5-flash' (images and videos), or a vision model on this server (llama.cpp: start it with the "
        "model's --mmproj file)."
    )


def wrong_protocol_error(expected: str, url: str, body: Any, fix: str) -> ModelError:
    """The error of an HTTP 200 answer that is not the API's response (a catch-all route's ``{}``, an HTML page).

    ``FATAL`` with :attr:`Reason.WRONG_PROTOCOL` (a run whose endpoint never answered stops at the first one).

    Args:
        expected: What the answer should have been, e.g. ``"a generateContent response"``.
        url: The URL requested (no credentials).
        body: The answer's body (text, or parsed JSON); the first 200 characters are quoted.
        fix: What to check, one or two sentences.
    """
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
    preview = text if len(text) <= 200 else text[:200] + "..."
    return ModelError(
        ErrorKind.FATAL,
        f"this endpoint did not answer with {expected}: POST {url} answered HTTP 200 with {preview!r}. {fix}",
        status_code=200,
        reason=Reason.WRONG_PROTOCOL.value,
    )


class RepeatedErrors:
    """Remembers the last HTTP 500 body each request got, to tell a broken request from a busy server.

    Only status 500 counts: 502/503/504 say "busy or unreachable" by definition and stay transient.
    Bounded: the most recent ``capacity`` failing requests are remembered.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._last: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    @staticmethod
    def fingerprint(payload: Any) -> str:
        """A stable hash of a request payload (JSON-compatible, or bytes)."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload, sort_keys=True, default=str).encode()
        return hashlib.sha256(data).hexdigest()

    def seen_before(self, request_fingerprint: str, status: int, body: Any) -> bool:
        """Record this answer; True when the same request already got this very HTTP 500 body."""
        if status != 500:
            return False
        text = body if isinstance(body, str) else json.dumps(body, sort_keys=True, default=str)
        with self._lock:
            repeated = self._last.get(request_fingerprint) == text
            self._last[request_fingerprint] = text
            self._last.move_to_end(request_fingerprint)
            while len(self._last) > self._capacity:
                self._last.popitem(last=False)
        return repeated
