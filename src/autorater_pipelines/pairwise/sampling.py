"""The sample schedule of a pairwise judgment: how many samples, and which show model B's response first.

An example is judged ``sampling_count`` times. With ``flip`` on, half of the samples show model B's
response first (position swap); which half is seeded by the example's ids, so a run is
reproducible and, with one sample per example, about half of the examples are shown swapped. A row whose order is
fixed before judging (``flip: "random"``, ``flip_column``: :mod:`~autorater_pipelines.pairwise.order`) has every
sample in that order. Position-swap debiasing
follows Zheng et al., "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena" (arXiv 2306.05685).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autorater_pipelines.errors import InputError
from autorater_pipelines.models import ModelRequest
from autorater_pipelines.pairwise.order import ORDER_KEY
from autorater_pipelines.pairwise.settings import JudgeSettings

__all__ = ["build_requests", "flip_schedule"]


def flip_schedule(ids: Sequence[Any], settings: JudgeSettings, row_flipped: bool | None = None) -> list[bool]:
    """Return, per sample index, whether that sample shows model B's response first.

    ``row_flipped`` (the row's fixed order, ``flip: "random"`` or ``flip_column``) puts every sample in that order.
    With ``flip`` true, samples alternate between orders starting from a bit seeded by the ids
    (sha256 of their JSON) for odd counts, so an even ``sampling_count`` is exactly half swapped
    (sample 0 in the original order) and a single sample per example swaps about half of the
    examples, reproducibly.

    Raises:
        InputError: ``flip: "random"`` or ``flip_column`` without the row's order (examples not prepared by the
            prepare step, which sets it).
    """
    if row_flipped is not None:
        return [bool(row_flipped)] * settings.sampling_count
    if settings.order_per_row:
        raise InputError(
            f"example {[str(v) for v in ids]} has no {ORDER_KEY!r} order: flip 'random' and flip_column fix each "
            "row's order in the prepare step (prepare_examples); judge examples it prepared",
            source="autorater_parameters",
        )
    if not settings.flip:
        return [False] * settings.sampling_count
    digest = hashlib.sha256(json.dumps([str(v) for v in ids]).encode()).digest()
    # Even counts: sample 0 original, 1 swapped, ... (exactly half swapped). Odd counts: the extra
    # sample's order is seeded by the ids, so across examples both orders are equally likely.
    start = 0 if settings.sampling_count % 2 == 0 else digest[0] & 1
    return [bool((i + start) % 2) for i in range(settings.sampling_count)]


def build_requests(
    *,
    ids: Mapping[str, Any],
    prompt: Any,
    response_a: str,
    response_b: str,
    settings: JudgeSettings,
    render_judge_prompt: Callable[[Any, str, str], str],
    response_schema: Mapping[str, Any] | None,
    flipped: bool | None = None,
) -> list[ModelRequest]:
    """Build the ``sampling_count`` judge requests of one example.

    Args:
        ids: The example's id-column values (part of the replay key).
        prompt: Rendered autorater prompt parameters, passed to ``render_judge_prompt``.
        response_a: Model A's response.
        response_b: Model B's response.
        settings: Judging settings.
        render_judge_prompt: ``(prompt, first, second) -> str`` of the task definition.
        response_schema: JSON schema of the structured answer, or None when a ``verdict_pattern``
            parses free text.
        flipped: The row's fixed order (the prepared example's ``flipped``), or None (:func:`flip_schedule`).

    Returns:
        One request per sample; ``key`` = ids + ``flipped`` + ``sample_index`` (docs/autosxs.md "Replay files").
    """
    requests = []
    for index, swapped in enumerate(flip_schedule(list(ids.values()), settings, flipped)):
        first, second = (response_b, response_a) if swapped else (response_a, response_b)
        requests.append(
            ModelRequest(
                parts=(render_judge_prompt(prompt, first, second),),
                key={**ids, "flipped": swapped, "sample_index": index},
                response_schema=dict(response_schema) if response_schema else None,
                sample_index=index,
            )
        )
    return requests
