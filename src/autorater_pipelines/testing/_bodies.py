"""Answer bodies of the emulated APIs: a success or an error in the request's protocol (see :mod:`._protocols`).

Responses use the camelCase JSON of the real APIs (Vertex AI / Gemini API ``GenerateContentResponse``,
OpenAI ``chat.completion``).
"""

from __future__ import annotations

import re
import time
from typing import Any

from autorater_pipelines.testing._protocols import Answer, EmulatedRequest

__all__ = ["error_body", "success_body"]


def _logprobs(answer: Answer, alternatives: int) -> tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...]:
    if answer.logprobs is not None:
        return answer.logprobs
    tokens = re.findall(r"\s*\S+", answer.text or "") or [answer.text or ""]
    top = lambda tok: ((tok, 0.0),) + tuple((f"<alt{i}>", -10.0 - i) for i in range(1, alternatives))  # noqa: E731
    return tuple((tok, 0.0, top(tok)) for tok in tokens)


_GOOGLE_FINISH = {"stop": "STOP", "max_tokens": "MAX_TOKENS", "safety": "SAFETY", "recitation": "RECITATION"}
_OPENAI_FINISH = {"max_tokens": "length", "safety": "content_filter"}


def success_body(request: EmulatedRequest, answer: Answer) -> dict[str, Any]:
    """Build the JSON body of a successful answer in the request's protocol."""
    words_in = len(request.prompt_text.split()) + len((request.system_instruction or "").split()) + len(request.media)
    tokens_in = answer.input_tokens if answer.input_tokens is not None else max(1, words_in)
    tokens_out = answer.output_tokens if answer.output_tokens is not None else len((answer.text or "").split())
    # None: no logprobs asked (or no text); else the number of alternatives per token
    alternatives = int(request.generation.get("logprobs") or 0)
    logprobs = alternatives if "logprobs" in request.generation and answer.text is not None else None
    if request.protocol == "openai":
        return _openai_body(request, answer, tokens_in, tokens_out, logprobs)
    return _google_body(request, answer, tokens_in, tokens_out, logprobs)


def _openai_body(
    request: EmulatedRequest, answer: Answer, tokens_in: int, tokens_out: int, alternatives: int | None
) -> dict[str, Any]:
    """A Chat Completions answer; ``alternatives`` None: no ``logprobs``."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": answer.text},
        "finish_reason": _OPENAI_FINISH.get(answer.finish_reason, answer.finish_reason),
        "logprobs": None,
    }
    if alternatives is not None:
        choice["logprobs"] = {
            "content": [
                {
                    "token": tok,
                    "logprob": lp,
                    "bytes": list(tok.encode()),
                    "top_logprobs": [
                        {"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top[:alternatives]
                    ],
                }
                for tok, lp, top in _logprobs(answer, alternatives)
            ]
        }
    return {
        "id": "chatcmpl-emulated",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


def _google_body(
    request: EmulatedRequest, answer: Answer, tokens_in: int, tokens_out: int, alternatives: int | None
) -> dict[str, Any]:
    """A ``GenerateContentResponse`` (Vertex AI / Gemini API); ``alternatives`` None: no ``logprobsResult``."""
    candidate: dict[str, Any] = {
        "finishReason": _GOOGLE_FINISH.get(answer.finish_reason, answer.finish_reason.upper()),
        "index": 0,
    }
    if answer.text is not None:
        candidate["content"] = {"role": "model", "parts": [{"text": answer.text}]}
    if alternatives is not None:
        items = _logprobs(answer, max(alternatives, 1))
        candidate["logprobsResult"] = {
            "chosenCandidates": [{"token": tok, "logProbability": lp} for tok, lp, _ in items],
            "topCandidates": [
                {"candidates": [{"token": t, "logProbability": v} for t, v in top[:alternatives]]}
                for _, _, top in items
            ],
        }
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": tokens_in,
            "candidatesTokenCount": tokens_out,
            "totalTokenCount": tokens_in + tokens_out,
        },
        "modelVersion": request.model,
    }


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_OPENAI_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


def error_body(protocol: str, status: int, message: str, retry_delay_s: float | None = None) -> dict[str, Any]:
    """Build the JSON body of an error answer in the given protocol.

    ``retry_delay_s`` adds Google's ``google.rpc.RetryInfo`` detail (``retryDelay: "12s"``) to a Gemini /
    Vertex AI error, as the Gemini API sends with ``RESOURCE_EXHAUSTED``.
    """
    if protocol != "openai" and retry_delay_s is not None:
        body = error_body(protocol, status, message)
        body["error"]["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_delay_s:g}s"}
        ]
        return body
    if protocol == "openai":
        kind = _OPENAI_TYPE.get(status, "server_error" if status >= 500 else "invalid_request_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "UNKNOWN")}}
