"""Scripted judges for the emulator: deterministic stand-ins for an autorater in tests and demos."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Callable

from autorater_pipelines.testing._protocols import EmulatedRequest, Refusal

__all__ = [
    "ECHO_FORMS",
    "ECHO_MARK",
    "OVERLOAD_MARK",
    "echo_mark",
    "length_judge",
    "leaky_length_judge",
    "responses_in_prompt",
]

ECHO_MARK = "[echo-credentials]"
"""A prompt holding this text is refused by :func:`leaky_length_judge` with the caller's credential in the body."""


def _json_escaped(key: str) -> str:
    r"""``key`` as an escaping JSON encoder writes it: ``\/``, and ``\u00xx`` for HTML-sensitive characters."""
    return "".join("\\/" if c == "/" else f"\\u{ord(c):04x}" if c in "<>&'=+" else c for c in key)


ECHO_FORMS: dict[str, Callable[[str], str]] = {
    "upper": lambda key: f"API key not valid: {key.upper()}",
    "lower": lambda key: f"API key not valid: {key.lower()}",
    "url": lambda key: f"no project for GET /v1/models?key={urllib.parse.quote(key, safe='')}",
    "json": lambda key: f'invalid credentials in request headers {{"x-api-key": "{_json_escaped(key)}"}}',
    "basic": lambda key: (
        "Authorization: Basic " + base64.b64encode(f"apikey:{key}".encode()).decode("ascii") + " is not accepted"
    ),
    "prefix": lambda key: f"Incorrect API key provided: {key[:16]}... You can find your API key in your account.",
    "bearer": lambda key: f"unauthorized request; headers were {{'authorization': 'Bearer {key}'}}",
    "split_lf": lambda key: f"key rejected:\n  {key[:16]}\n  {key[16:]}\nend of key",
    "split_crlf": lambda key: f"key rejected: {key[:16]}\r\n{key[16:]}",
    "split_escaped": lambda key: f'key rejected {{"detail": "{key[:16]}\\n{key[16:]}"}}',
    "truncated": lambda key: f"Invalid key {key[:20]} (truncated) provided",
    "hex": lambda key: "bad key hex " + key.encode("utf-8").hex(),
}
"""How :func:`leaky_length_judge` echoes the credential for a prompt holding :func:`echo_mark` of a form:
upper-/lower-cased, URL-encoded, JSON-escaped, base64 of ``apikey:KEY`` (Basic auth), its first 16
characters and an ellipsis, in an ``Authorization: Bearer`` header echo, split after 16 characters by an
indented ``\n``, by ``\r\n`` or by a JSON-escaped ``\\n``, its first 20 characters and "(truncated)", the
hex of its bytes."""


def echo_mark(form: str, *, in_answer: bool = False) -> str:
    """The mark that makes :func:`leaky_length_judge` echo the credential in ``form`` (a key of :data:`ECHO_FORMS`).

    Args:
        form: How the credential is echoed.
        in_answer: Echo it in the explanation of a valid judgment (a model repeating its prompt or headers,
            which a response cache would store) instead of an HTTP 400 error body.
    """
    if form not in ECHO_FORMS:
        raise ValueError(f"unknown echo form {form!r}; expected one of {sorted(ECHO_FORMS)}")
    return f"[echo-credentials{'-in-answer' if in_answer else ''}:{form}]"


_ECHO = re.compile(r"\[echo-credentials(-in-answer)?:(\w+)\]")

OVERLOAD_MARK = "[overloaded-when-swapped]"
"""A response holding this text makes :func:`leaky_length_judge` answer 503 when it is shown first."""

_BLOCK = re.compile(r"<<<BEGIN RESPONSE (A|B) (\w+)>>>\n(.*?)\n<<<END RESPONSE \1 \2>>>", re.DOTALL)


def responses_in_prompt(prompt_text: str) -> dict[str, str]:
    """The fenced ``Response A`` / ``Response B`` blocks of an AutoSxS judge prompt, by position."""
    return {m.group(1): m.group(3) for m in _BLOCK.finditer(prompt_text)}


_CHECK_PROMPT = re.compile(r"Reply with this number and nothing else: (\d+)")
"""The check prompt of ``autorater_pipelines.models._context.PromptReadCheck``."""


def length_judge(request: EmulatedRequest) -> str:
    """Prefer the longer response (``SAME`` when equally long): answers the AutoSxS JSON format.

    A famously biased judge ("longer wins", cf. the LLMBar and MT-Bench analyses) that is
    position-consistent, which makes outcomes easy to predict in tests. When the request's schema asks for
    pointwise scores (``response_a_score`` / ``response_b_score`` with ``minimum`` / ``maximum``), the longer
    response gets the top of the scale, the shorter one the point below the middle, equal lengths both the
    middle (rounded down). Like a model that reads its prompt, it follows the one-line check prompt the
    openai provider sends to an endpoint whose prompt-token counts look too low (it repeats the number).
    """
    check = _CHECK_PROMPT.fullmatch(request.prompt_text.strip())
    if check is not None:
        return check.group(1)
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
    request carried (``x-goog-api-key`` or the bearer token), as some servers do ("API key not valid: …");
    one containing :func:`echo_mark` of a form echoes it transformed (:data:`ECHO_FORMS`), in the error
    body or, with ``in_answer``, in the explanation of the judgment it answers.
    A request that shows a response containing :data:`OVERLOAD_MARK` first (position A) gets a 503, so a
    row whose response B holds the mark loses its swapped-order samples.
    """
    if ECHO_MARK in request.prompt_text:
        key = _credential(request)
        raise Refusal(
            400, f"API key not valid. Please pass a valid API key. Received: {key} (Authorization: Bearer {key})"
        )
    echo = _ECHO.search(request.prompt_text)
    if echo and echo.group(2) in ECHO_FORMS:
        said = ECHO_FORMS[echo.group(2)](_credential(request))
        if echo.group(1):
            answer = json.loads(length_judge(request))
            return json.dumps({**answer, "explanation": f"{answer['explanation']} Request headers: {said}"})
        raise Refusal(400, said)
    if OVERLOAD_MARK in responses_in_prompt(request.prompt_text).get("A", ""):
        raise Refusal(503, "The model is overloaded. Please try again later.")
    return length_judge(request)
