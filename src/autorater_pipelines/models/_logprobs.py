"""Checking an answer's token log-probabilities: one place for replay records and live answers.

A log-probability is a finite number <= 0 (natural log); a token is a string. OpenAI's
``choices[0].logprobs.content`` (and a replay record's ``logprobs``) is a list of ``{"token", "logprob",
"top_logprobs": [{"token", "logprob"}, …]}``; Gemini's ``logprobsResult`` holds ``chosenCandidates`` (one
``{"token", "logProbability"}`` per token) and ``topCandidates`` (``{"candidates": [...]}`` per token), in
proto-JSON: a field at its default (``""``, ``0``) is omitted and a float may be a string (``"NaN"``,
``"-0.5"``). Anything else raises :class:`LogprobsError` naming the field and the value: the replay reader
refuses the record with it, a live answer keeps its text and carries it as ``ModelOutput.logprobs_problem``
(the sample then has no verdict probability and says why).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from autorater_pipelines.models._types import TokenLogprob

__all__ = ["LogprobsError", "check_logprob", "gemini_logprobs", "openai_logprobs", "show"]


class LogprobsError(ValueError):
    """A log-probabilities field that does not hold log-probabilities (the message names it and its value)."""


def show(value: Any) -> str:
    """``repr`` of a value, with ``NaN``/``Infinity``/``-Infinity`` as the JSON answer spells them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"


def check_logprob(value: Any, where: str, *, proto: bool = False) -> float:
    """``value`` as a log-probability: a finite number <= 0 (with ``proto``, also a numeric string).

    Raises:
        LogprobsError: anything else (None, a string, NaN, ±Infinity, a positive number, a bool).
    """
    number = value
    if proto and isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) or number > 0:
        got = show(number) if proto and isinstance(value, str) and number is not None else show(value)
        raise LogprobsError(f"{where} = {got} is not a log-probability (a finite number <= 0)")
    return float(number)


def _token(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise LogprobsError(f"{where} = {show(value)} is not a token (a string)")
    return value


def _items(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise LogprobsError(f"{where} = {show(value)} is not a list")
    return value


def _fields(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise LogprobsError(f"{where} = {show(value)} is not an object")
    return value


def openai_logprobs(content: Any, where: str = "logprobs") -> tuple[TokenLogprob, ...]:
    """OpenAI's ``choices[0].logprobs.content`` (a replay record's ``logprobs``) as ``ModelOutput.logprobs``.

    Raises:
        LogprobsError: the first item or field that is not of that shape, e.g. ``logprobs[0].token = None``.
    """
    out = []
    for i, item in enumerate(_items(content, where)):
        item = _fields(item, f"{where}[{i}]")
        token = _token(item.get("token"), f"{where}[{i}].token")
        logprob = check_logprob(item.get("logprob"), f"{where}[{i}].logprob")
        top = []
        for j, alt in enumerate(_items(item.get("top_logprobs") or [], f"{where}[{i}].top_logprobs")):
            alt = _fields(alt, f"{where}[{i}].top_logprobs[{j}]")
            top.append(
                (
                    _token(alt.get("token"), f"{where}[{i}].top_logprobs[{j}].token"),
                    check_logprob(alt.get("logprob"), f"{where}[{i}].top_logprobs[{j}].logprob"),
                )
            )
        out.append(TokenLogprob(token, logprob, tuple(top)))
    return tuple(out)


def gemini_logprobs(result: Any, where: str = "logprobsResult") -> tuple[TokenLogprob, ...] | None:
    """Gemini's ``candidates[0].logprobsResult`` as ``ModelOutput.logprobs`` (None without ``chosenCandidates``).

    Raises:
        LogprobsError: the first field that is not of that shape, e.g. ``…chosenCandidates[0].logProbability =
            NaN``.
    """
    if result is None:
        return None
    result = _fields(result, where)
    if not result.get("chosenCandidates"):
        return None
    tops = _items(result.get("topCandidates") or [], f"{where}.topCandidates")

    def pair(value: Any, at: str) -> tuple[str, float]:
        value = _fields(value, at)
        token = _token(value.get("token", ""), f"{at}.token")
        return token, check_logprob(value.get("logProbability", 0.0), f"{at}.logProbability", proto=True)

    out = []
    for i, chosen in enumerate(_items(result["chosenCandidates"], f"{where}.chosenCandidates")):
        token, logprob = pair(chosen, f"{where}.chosenCandidates[{i}]")
        top: list[Any] = []
        if i < len(tops):
            at = f"{where}.topCandidates[{i}]"
            top = _items(_fields(tops[i], at).get("candidates") or [], f"{at}.candidates")
        alternatives = tuple(pair(alt, f"{where}.topCandidates[{i}].candidates[{j}]") for j, alt in enumerate(top))
        out.append(TokenLogprob(token, logprob, alternatives))
    return tuple(out)
