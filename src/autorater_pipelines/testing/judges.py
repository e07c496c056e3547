"""Scripted judges for the emulator: deterministic stand-ins for an autorater in tests and demos."""

from __future__ import annotations

import json
import re

from autorater_pipelines.testing._protocols import EmulatedRequest, Refusal

__all__ = ["ECHO_MARK", "OVERLOAD_MARK", "length_judge", "leaky_length_judge", "responses_in_prompt"]

ECHO_MARK = "[echo-credentials]"
"""A prompt holding this text is refused by :func:`leaky_length_judge` with the caller's credential in the body."""
OVERLOAD_MARK = "[overloaded-when-swapped]"
"""A response holding this text makes :func:`leaky_length_judge` answer 503 when it is shown first."""

_BLOCK = re.compile(r"<<<BEGIN RESPONSE (A|B) (\w+)>>>\n(.*?)\n<<<END RESPONSE \1 \2>>>", re.DOTALL)


def responses_in_prompt(prompt_text: str) -> dict[str, str]:
    """The fenced ``Response A`` / ``Response B`` blocks of an AutoSxS judge prompt, by position."""
    return {m.group(1): m.group(3) for m in _BLOCK.finditer(prompt_text)}


def length_judge(request: EmulatedRequest) -> str:
    """Prefer the longer response (``SAME`` when equally long): answers the AutoSxS JSON format.

    A famously biased judge ("longer wins", cf. the LLMBar and MT-Bench analyses) that is
    position-consistent, which makes outcomes easy to predict in tests. When the request's schema asks for
    pointwise scores (``response_a_score`` / ``response_b_score`` with ``minimum`` / ``maximum``), the longer
    response gets the top of the scale, the shorter one the point below the middle, equal lengths both the
    middle (rounded down).
    """
    responses = responses_in_prompt(request.prompt_text)
    first, second = len(responses.get("A", "")), len(responses.get("B", ""))
    explanation = f"Response lengths {first} vs {second}: the longer one wins."
    properties = (request.response_schema or {}).get("properties", {})
    if "response_a_score" in properties:
        low, high = int(properties["response_a_score"]["minimum"]), int(properties["response_a_score"]["maximum"])
        middle = (low + high) // 2
        scores = (high, max(low, middle - 1)) if first > second else (max(low, middle - 1), high)
        scores = (middle, middle) if first == second else scores
        return json.dumps({"explanation": explanation, "response_a_score": scores[0], "response_b_score": scores[1]})
    choice = "A" if first > second else "B" if second > first else "SAME"
    return json.dumps({"explanation": explanation, "choice": choice})


def _credential(request: EmulatedRequest) -> str:
    headers = request.headers
    return headers.get("x-goog-api-key") or headers.get("authorization", "").removeprefix("Bearer ") or "(none)"


def leaky_length_judge(request: EmulatedRequest) -> str:
    """:func:`length_judge` behind a careless server, for tests of what a run keeps of failures.

    A prompt containing :data:`ECHO_MARK` is refused with HTTP 400 whose body echoes the credential the
    request carried (``x-goog-api-key`` or the bearer token), as some servers do ("API key not valid: …").
    A request that shows a response containing :data:`OVERLOAD_MARK` first (position A) gets a 503, so a
    row whose response B holds the mark loses its swapped-order samples.
    """
    if ECHO_MARK in request.prompt_text:
        key = _credential(request)
        raise Refusal(
            400, f"API key not valid. Please pass a valid API key. Received: {key} (Authorization: Bearer {key})"
        )
    if OVERLOAD_MARK in responses_in_prompt(request.prompt_text).get("A", ""):
        raise Refusal(503, "The model is overloaded. Please try again later.")
    return length_judge(request)
