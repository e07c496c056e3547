"""Scripted judges for the emulator: deterministic stand-ins for an autorater in tests and demos."""

from __future__ import annotations

import json
import re

from autorater_pipelines.testing._protocols import EmulatedRequest

__all__ = ["length_judge", "responses_in_prompt"]

_BLOCK = re.compile(r"<<<BEGIN RESPONSE (A|B) (\w+)>>>\n(.*?)\n<<<END RESPONSE \1 \2>>>", re.DOTALL)


def responses_in_prompt(prompt_text: str) -> dict[str, str]:
    """The fenced ``Response A`` / ``Response B`` blocks of an AutoSxS judge prompt, by position."""
    return {m.group(1): m.group(3) for m in _BLOCK.finditer(prompt_text)}


def length_judge(request: EmulatedRequest) -> str:
    """Prefer the longer response (``SAME`` when equally long): answers the AutoSxS JSON format.

    A famously biased judge ("longer wins", cf. the LLMBar and MT-Bench analyses) that is
    position-consistent, which makes outcomes easy to predict in tests.
    """
    responses = responses_in_prompt(request.prompt_text)
    first, second = len(responses.get("A", "")), len(responses.get("B", ""))
    choice = "A" if first > second else "B" if second > first else "SAME"
    return json.dumps({"explanation": f"Response lengths {first} vs {second}: the longer one wins.", "choice": choice})
