"""Prompt size against the model's context window, and against what the server says it read.

Two checks, both on character counts of the rendered text (no tokenizer is needed, and none matches every
server's):

- **Before sending** (:func:`check_fits`): a prompt whose *low* estimate of tokens (1 token per
  :data:`LOW_CHARS_PER_TOKEN` characters; English text averages about 4) exceeds the known context window
  fails at once with reason ``context_length_exceeded``. The window is ``GenerateConfig.max_input_tokens``,
  else what the server reports (:func:`window_from_models`). A prompt near the limit is sent, and the
  server's own refusal is classified the same way (:mod:`._classify`).
- **After answering** (:func:`check_seen`): a server that reports fewer than 1 prompt token per
  :data:`MAX_CHARS_PER_TOKEN` characters of a prompt of at least :data:`MIN_CHECKED_CHARS` characters did
  not read the prompt we sent (measured: a chat template that turns list-form content into an empty turn
  reported 12 prompt tokens for a 3,000-character prompt). That answer is an error, never a judgment.
  No tokenizer in use merges 16 characters of ordinary text into one token on average, and the chat
  template only adds tokens, so a correct server never trips it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from autorater_pipelines.models._classify import Reason
from autorater_pipelines.models._types import ErrorKind, MediaPart, ModelError, ModelRequest, UnsentError

__all__ = [
    "LOW_CHARS_PER_TOKEN",
    "MAX_CHARS_PER_TOKEN",
    "MIN_CHECKED_CHARS",
    "ContextWindow",
    "check_fits",
    "check_seen",
    "prompt_chars",
    "window_from_models",
]

LOW_CHARS_PER_TOKEN = 6
"""Characters per token of the low token estimate used before sending."""
MAX_CHARS_PER_TOKEN = 16
"""More characters per reported prompt token than this means the server did not read the prompt."""
MIN_CHECKED_CHARS = 400
"""Prompts shorter than this are not checked after answering (the chat template's tokens dominate)."""

_WINDOW_KEYS = ("n_ctx", "max_model_len", "context_length", "context_window", "max_context_length", "n_ctx_train")


class ContextWindow(NamedTuple):
    """A model's context window in tokens and where it was read (for messages)."""

    tokens: int
    source: str


def prompt_chars(request: ModelRequest, extra: str = "") -> int:
    """Characters of text the request sends (system instruction, text parts, ``extra`` such as a schema)."""
    text = sum(len(p) for p in request.parts if not isinstance(p, MediaPart))
    return text + len(request.system_instruction or "") + len(extra)


def check_fits(chars: int, window: ContextWindow | None) -> ModelError | None:
    """The error (not sent: no call attempt) for a prompt that cannot fit ``window``, or None (also if unknown)."""
    if window is None:
        return None
    low = chars // LOW_CHARS_PER_TOKEN
    if low <= window.tokens:
        return None
    return UnsentError(
        ErrorKind.FATAL,
        f"the prompt is longer than the model's context window: {chars} characters, at least ~{low} tokens "
        f"(1 per {LOW_CHARS_PER_TOKEN} characters), for a window of {window.tokens} tokens ({window.source}); "
        "not sent. Shorten the prompt or use a model with a longer context.",
        reason=Reason.CONTEXT_LENGTH.value,
    )


def check_seen(chars: int, reported_tokens: int) -> ModelError | None:
    """The error for a server that read far less than the prompt, or None (module docstring)."""
    if reported_tokens <= 0 or chars < MIN_CHECKED_CHARS or reported_tokens * MAX_CHARS_PER_TOKEN >= chars:
        return None
    return ModelError(
        ErrorKind.FATAL,
        f"the server reported {reported_tokens} prompt tokens for a prompt of {chars} characters (expected at "
        f"least ~{chars // MAX_CHARS_PER_TOKEN}): it did not read the prompt that was sent (e.g. a chat template "
        "that drops list-form message content), so its answer is not used",
        reason="prompt_not_seen",
    )


def window_from_models(payload: Any, model: str) -> ContextWindow | None:
    """The context window a ``GET /v1/models`` answer reports for ``model``, or None.

    Reads, in order of preference, ``n_ctx`` (the running context), ``max_model_len`` (vLLM),
    ``context_length`` / ``context_window`` / ``max_context_length``, then ``n_ctx_train`` (llama.cpp's
    training context), at the top level of the model's entry or under its ``meta``. The entry is the one
    whose ``id`` is ``model``, else the only entry.
    """
    entries = payload.get("data") if isinstance(payload, Mapping) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, Mapping)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    if not chosen:
        return None
    entry = chosen[0]
    for key in _WINDOW_KEYS:
        for where, scope in (("", entry), ("meta.", entry.get("meta"))):
            value = scope.get(key) if isinstance(scope, Mapping) else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return ContextWindow(value, f"/v1/models {where}{key}")
    return None
