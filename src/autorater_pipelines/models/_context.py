"""Prompt size against the model's context window, and against what the server says it read.

Two checks, both on character counts of the rendered text (no tokenizer is needed, and none matches every
server's):

- **Before sending** (:func:`check_fits`): a prompt whose *low* estimate of tokens (1 token per
  :data:`LOW_CHARS_PER_TOKEN` characters; English text averages about 4) exceeds the known context window
  fails at once with reason ``context_length_exceeded``. The window is ``GenerateConfig.max_input_tokens``,
  else what the server reports (:func:`window_from_models`). A prompt near the limit is sent, and the
  server's own refusal is classified the same way (:mod:`._classify`).
- **After answering** (:class:`PromptReadCheck`): a server's reported prompt tokens are information, not a
  verdict. Servers report fewer tokens than they read when a prompt prefix is cached (Ollama has reported 0 or
  only the newly evaluated tokens, ollama/ollama#5370; llama-server before it counted ``cache_n``), and a judge
  whose instruction prefix is the same on every call is exactly that case. What the count cannot tell apart is
  a chat template that drops the prompt (measured: one that turns list-form content into an empty turn
  reported 12 prompt tokens for a 3,000-character prompt, and its "verdicts" never saw the responses). So the
  first time an endpoint reports fewer than 1 prompt token per :data:`MAX_CHARS_PER_TOKEN` characters of a
  prompt of at least :data:`MIN_CHECKED_CHARS` characters — unless an earlier answer of that endpoint
  reported a plausible count — one short check request is sent in the same message form, asking the model to
  repeat a random number. An endpoint that repeats it reads prompts: low counts are then a warning (once per
  endpoint, with the figures) and every answer is kept. One that does not has its answers with such counts
  refused (``prompt_not_seen``), since they were written without the prompt.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, NamedTuple

from autorater_pipelines.models._classify import Reason
from autorater_pipelines.models._types import ErrorKind, MediaPart, ModelError, ModelRequest, UnsentError

__all__ = [
    "LOW_CHARS_PER_TOKEN",
    "MAX_CHARS_PER_TOKEN",
    "MIN_CHECKED_CHARS",
    "ContextWindow",
    "PromptReadCheck",
    "check_fits",
    "prompt_chars",
    "window_from_models",
]

LOW_CHARS_PER_TOKEN = 6
"""Characters per token of the low token estimate used before sending."""
MAX_CHARS_PER_TOKEN = 16
"""More characters per reported prompt token than this means the server did not read the prompt."""
MIN_CHECKED_CHARS = 400
"""Prompts shorter than this are not checked after answering (the chat template's tokens dominate)."""

logger = logging.getLogger("autorater_pipelines.models")

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


class PromptReadCheck:
    """Whether an endpoint reads the prompts it is sent, judged by what it does (module docstring).

    Process-wide and thread-safe; one instance serves every model of a provider class. A key is an endpoint,
    model and message form (plain-text or list-form content), e.g. ``(url, model, "list")``.
    """

    READS, DROPS = "reads", "drops"

    def __init__(self) -> None:
        self._verdicts: dict[Hashable, str] = {}
        self._warned: set[Hashable] = set()
        self._locks: dict[tuple[Hashable, asyncio.AbstractEventLoop], asyncio.Lock] = {}
        self._lock = threading.Lock()
        self._random = random.Random()

    def reset(self) -> None:
        """Forget every verdict (tests)."""
        with self._lock:
            self._verdicts.clear()
            self._warned.clear()
            self._locks.clear()

    async def check(
        self,
        key: Hashable,
        where: str,
        chars: int,
        reported_tokens: int,
        probe: Callable[[str], Awaitable[str | None]],
    ) -> ModelError | None:
        """The error for an answer written without the prompt, or None (the answer is used).

        Args:
            key: The endpoint, model and message form.
            where: The endpoint and model, for messages.
            chars: Characters of text the request sent (:func:`prompt_chars`).
            reported_tokens: The prompt tokens the server reported (0 = not reported: nothing to check).
            probe: Sends one check request whose prompt is the given text in the same message form; returns
                the answer's text, or None when the call failed.
        """
        if reported_tokens <= 0 or chars < MIN_CHECKED_CHARS:
            return None
        plausible = reported_tokens * MAX_CHARS_PER_TOKEN >= chars
        with self._lock:
            verdict = self._verdicts.get(key)
            if plausible:
                self._verdicts.setdefault(key, self.READS)
                return None
        if verdict is None:
            verdict = await self._probe(key, where, probe)
        if verdict == self.DROPS:
            return ModelError(
                ErrorKind.FATAL,
                f"the server reported {reported_tokens} prompt tokens for a prompt of {chars} characters (expected "
                f"at least ~{chars // MAX_CHARS_PER_TOKEN}) and did not follow a check prompt sent the same way: it "
                "does not read the prompt that is sent (e.g. a chat template that drops list-form message content), "
                "so its answer is not used",
                reason="prompt_not_seen",
            )
        with self._lock:
            first = key not in self._warned
            self._warned.add(key)
        if first:
            logger.warning(
                "%s reported %d prompt tokens for a prompt of %d characters (expected at least ~%d): it reads the "
                "prompt (it followed a check prompt, or reported a plausible count before), so the count is taken as "
                "information, not a reason to drop answers — a prompt-prefix cache reports only the new tokens. Its "
                "input-token figures may be low. (Shown once per endpoint.)",
                where,
                reported_tokens,
                chars,
                chars // MAX_CHARS_PER_TOKEN,
            )
        return None

    async def _probe(self, key: Hashable, where: str, probe: Callable[[str], Awaitable[str | None]]) -> str:
        """Send the check request once per key (concurrent callers wait for it) and record the verdict."""
        loop = asyncio.get_running_loop()
        with self._lock:
            lock = self._locks.setdefault((key, loop), asyncio.Lock())
        async with lock:
            with self._lock:
                verdict = self._verdicts.get(key)
            if verdict is not None:
                return verdict
            number = str(self._random.randrange(100_000, 1_000_000))
            answer = await probe(f"Reply with this number and nothing else: {number}")
            if answer is None:  # the check itself failed: keep the answers, and say so
                verdict = self.READS
                logger.warning("%s: the check request that tells whether it reads prompts failed", where)
            else:
                digits = "".join(ch for ch in answer if ch.isdigit())  # "775.369", "775 369", "775,369" repeat it
                verdict = self.READS if number in digits else self.DROPS
                if verdict == self.DROPS and _unfinished_thinking(answer):
                    verdict = self.READS  # a reasoning model cut off while thinking: no sign it missed the prompt
                    logger.warning(
                        "%s answered the check prompt with unfinished reasoning (%r): whether it reads the prompt "
                        "is not confirmed, so its answers are kept",
                        where,
                        answer[:120],
                    )
                if verdict == self.DROPS:
                    logger.error(
                        "%s did not repeat the number %s when asked (it answered %r): it does not read the prompts "
                        "sent this way; answers that report too few prompt tokens are not used",
                        where,
                        number,
                        answer[:120],
                    )
            with self._lock:
                return self._verdicts.setdefault(key, verdict)


def _unfinished_thinking(answer: str) -> bool:
    """True for an answer that opens a reasoning block (``<think>``, ``<thinking>``, ``<reasoning>``) never closed."""
    lowered = answer.lower()
    for tag in ("think", "thinking", "reasoning"):
        if f"<{tag}>" in lowered and f"</{tag}>" not in lowered:
            return True
    return False


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
