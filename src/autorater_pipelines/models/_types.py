"""Request and output types of the model-call layer: one output type for every model call."""

from __future__ import annotations

import dataclasses
import enum
import logging
from typing import Any

from autorater_pipelines.redaction import redact
from autorater_pipelines.unencodable import replace_unencodable

__all__ = [
    "ErrorKind",
    "MediaPart",
    "ModelError",
    "ModelOutput",
    "ModelRequest",
    "TokenLogprob",
    "Usage",
]


@dataclasses.dataclass(frozen=True)
class MediaPart:
    """A media item sent to a multimodal model.

    Exactly one of ``data`` (bytes sent inline) or ``uri`` (``gs://`` or ``http(s)://``, sent by
    reference) is set.

    Attributes:
        mime_type: IANA media type, e.g. ``image/jpeg`` or ``video/mp4``.
        data: Inline bytes.
        uri: A URI the provider fetches itself.
    """

    mime_type: str
    data: bytes | None = None
    uri: str | None = None


Part = str | MediaPart
"""One piece of a user turn: text, or a media item."""


@dataclasses.dataclass(frozen=True)
class ModelRequest:
    """One model call: a single user turn plus what identifies it.

    Attributes:
        parts: The user turn, in order: text strings and :class:`MediaPart` items.
        key: What identifies this request in the evaluation, e.g. ``{"id": "q1", "flipped": True,
            "sample_index": 1}``. Used by the ``replay/`` provider (docs/architecture.md, replay format), in logs
            and in error messages; it is NOT part of the cache key.
        system_instruction: Optional system prompt.
        response_schema: Optional JSON schema (a dict) the answer must follow; providers that support
            structured output enforce it, others receive it in the prompt only.
        sample_index: 0-based index of this sample among repeated samples of the same prompt. Part of
            the cache key, so N samples at temperature > 0 are N distinct cached calls.
    """

    parts: tuple[Part, ...]
    key: dict[str, Any] = dataclasses.field(default_factory=dict)
    system_instruction: str | None = None
    response_schema: dict[str, Any] | None = None
    sample_index: int = 0


class ErrorKind(str, enum.Enum):
    """Why a call failed, as classified by its provider (status codes / exception types only)."""

    RATE_LIMIT = "rate_limit"  # HTTP 429 / quota exhausted; retried, honouring Retry-After
    TRANSIENT = "transient"  # 408, 5xx, connection reset, timeout; retried with backoff
    FATAL = "fatal"  # 4xx other than 408/429, bad request, auth; not retried
    BLOCKED = "blocked"  # the provider answered but returned no text (safety, recitation, max tokens)
    NOT_RECORDED = "not_recorded"  # replay/ has no recording for this request's key
    BUDGET = "budget"  # the run stopped making calls (consecutive-failure budget exhausted)


@dataclasses.dataclass(frozen=True)
class ModelError:
    """A failed call, with the provider's classification and message.

    Attributes:
        kind: How the call failed (decides whether it is retried).
        message: What the server or the provider said, for people; credentials redacted
            (:func:`autorater_pipelines.redaction.redact`).
        status_code: HTTP status of the failed answer, when there was one.
        retry_after_s: Server-requested delay in seconds, if any.
        reason: Why the server refused the request as invalid, when its answer said so
            (:class:`autorater_pipelines.models._classify.Reason` values such as
            ``context_length_exceeded``); None otherwise.
    """

    kind: ErrorKind
    message: str
    status_code: int | None = None
    retry_after_s: float | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        # The one place where errors are recorded: a credential a server echoed never goes further.
        object.__setattr__(self, "message", redact(self.message))


@dataclasses.dataclass(frozen=True)
class UnsentError(ModelError):
    """A request refused before it was sent (a prompt longer than the context window): no model call attempt."""


@dataclasses.dataclass(frozen=True)
class Usage:
    """Token counts reported by the provider (0 when not reported)."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


MAX_TOKEN_COUNT = 10**9
"""The largest token count one call can report (no model reads or writes more): above it a count is invalid."""
_WARNED_COUNTS: set[tuple[str, str]] = set()


def token_count(value: Any, field: str, where: str) -> int:
    """A token count a server reported, made safe to add up: 0 when missing or invalid.

    A negative, fractional, non-numeric or absurd count (above ``MAX_TOKEN_COUNT``) is not added to any total:
    it counts as 0 (not reported), with one warning per ``where`` and ``field``.

    Args:
        value: The reported value (None when the field was missing).
        field: The field's name in the answer, for the warning (e.g. ``usage.prompt_tokens``).
        where: The endpoint, for the warning.

    Returns:
        The count (an int from 0 to ``MAX_TOKEN_COUNT``).
    """
    if value is None:
        return 0
    valid = isinstance(value, (int, float)) and not isinstance(value, bool)
    valid = valid and value == value and 0 <= value <= MAX_TOKEN_COUNT and float(value).is_integer()
    if valid:
        return int(value)
    if (where, field) not in _WARNED_COUNTS:
        _WARNED_COUNTS.add((where, field))
        logging.getLogger("autorater_pipelines.models").warning(
            "%s reported %s = %r, not a token count (an integer from 0 to %d): counted as not reported (0) in "
            "the token totals",
            where,
            field,
            value,
            MAX_TOKEN_COUNT,
        )
    return 0


@dataclasses.dataclass(frozen=True)
class TokenLogprob:
    """Log-probability of one generated token and its top alternatives (natural log)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclasses.dataclass(frozen=True)
class ModelOutput:
    """The result of one model call, successful or not.

    Attributes:
        text: The generated text, exactly as returned; None when the call failed or was blocked.
        finish_reason: Provider finish reason, lower-cased (``stop``, ``max_tokens``, ``safety`` …).
        usage: Token usage of this call (zero for cache hits and replays).
        latency_s: Wall-clock seconds of the successful attempt (0 for cache hits and replays).
        attempts: Number of attempts made (1 = no retry; 0 = served from cache or replay).
        cached: True when served from the response cache.
        logprobs: Per-token log-probabilities when requested and returned.
        logprobs_problem: Why the answer's log-probabilities were dropped although returned (a field that is
            no log-probability, e.g. ``logprobs[0].token = None``; :mod:`._logprobs`); None almost always.
        raw: The provider's response as a JSON-compatible dict, when available.
        error: Set when the call failed; ``text`` is then None.
        replaced_characters: Lone UTF-16 surrogates (its JSON body spelt U+D800 as an escape, say) that were
            replaced by U+FFFD in ``text``, ``logprobs`` and ``raw`` when this output was built
            (:mod:`autorater_pipelines.unencodable`), so that every writer can encode it; 0 almost always.
    """

    text: str | None
    finish_reason: str | None = None
    usage: Usage = Usage()
    latency_s: float = 0.0
    attempts: int = 1
    cached: bool = False
    logprobs: tuple[TokenLogprob, ...] | None = None
    logprobs_problem: str | None = None
    raw: dict[str, Any] | None = None
    error: ModelError | None = None
    replaced_characters: int = 0

    def __post_init__(self) -> None:
        # The one way in of every model answer: text no UTF-8 writer can encode never goes further.
        text, a = replace_unencodable(self.text)
        raw, b = replace_unencodable(self.raw)
        logprobs, c = self.logprobs, 0
        if logprobs is not None:
            fixed = []
            for lp in logprobs:
                token, n = replace_unencodable(lp.token)
                top, m = replace_unencodable(lp.top)
                c += n + m
                fixed.append(TokenLogprob(token, lp.logprob, top) if n or m else lp)
            logprobs = tuple(fixed) if c else logprobs
        if a or b or c:
            object.__setattr__(self, "text", text)
            object.__setattr__(self, "raw", raw)
            object.__setattr__(self, "logprobs", logprobs)
            # counted where people read it (the text and its tokens); the raw answer repeats them
            object.__setattr__(self, "replaced_characters", self.replaced_characters + (a + c or b))

    @property
    def ok(self) -> bool:
        """True when the call produced text."""
        return self.error is None and self.text is not None

    @classmethod
    def failure(cls, kind: ErrorKind, message: str, **kwargs: Any) -> ModelOutput:
        """Build the output of a failed call."""
        return cls(text=None, error=ModelError(kind=kind, message=message, **kwargs))
