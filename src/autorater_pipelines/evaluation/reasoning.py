"""Reasoning blocks in a model's answer: ``<think>…</think>`` holds drafts, not the answer.

Reasoning models served without a reasoning parser (Qwen3, DeepSeek-R1 on vLLM or llama.cpp) write their
thoughts into the answer. Drafts in there "should not be graded as they can give false positives/negatives"
(huggingface/lighteval#869): the answer is what follows the last ``</think>`` (``</thinking>``), also when the
opening tag was part of the prompt (Qwen3's template), and an answer whose reasoning never closes holds no
verdict.
"""

from __future__ import annotations

import re

__all__ = ["UnfinishedReasoning", "answer_after_reasoning"]

_OPEN = re.compile(r"<\s*think(?:ing)?\s*>", re.I)
_CLOSE = re.compile(r"<\s*/\s*think(?:ing)?\s*>", re.I)


class UnfinishedReasoning(ValueError):
    """The answer ends inside a reasoning block (an opening ``<think>`` with no ``</think>`` after it)."""


def answer_after_reasoning(text: str) -> tuple[int, str]:
    """The answer without its reasoning block: ``(offset of the answer in text, answer)``.

    Text with no reasoning tag is returned whole (offset 0).

    Raises:
        UnfinishedReasoning: a ``<think>`` opens after the last ``</think>`` (or with none): the reasoning never
            finished, so nothing in it is an answer.
    """
    start = 0
    for close in _CLOSE.finditer(text):
        start = close.end()
    if _OPEN.search(text, start):
        raise UnfinishedReasoning(
            "the answer ends inside a <think> reasoning block (no closing </think>): its drafts are not an answer"
        )
    return start, text[start:]
