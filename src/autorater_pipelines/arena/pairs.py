"""The arena's pair schedule: which two models are judged on which prompt.

A pair's canonical order is its two model names sorted (``model_a`` < ``model_b``), whichever model a schedule
drew first; the judge sees both orders through AutoSxS's position swap (``autorater_parameters.flip``).

- ``all``: every pair of models on every prompt (N·(N−1)/2 per prompt);
- ``baseline``: every model against ``baseline`` on every prompt (N−1 per prompt; Arena-Hard, AlpacaEval);
- ``sampled``: for every model on every prompt, ``opponents_per_prompt`` opponents drawn without replacement by
  ``random.Random(f"{seed}:{prompt key}")`` (the draws of a prompt depend on its ids and the seed only, not on the
  dataset's order); the union of the drawn pairs is judged, each pair once.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

__all__ = ["judge_call_count", "pairs_for_prompt"]


def pairs_for_prompt(
    models: Sequence[str],
    pairing: str,
    *,
    baseline: str = "",
    opponents_per_prompt: int = 1,
    seed: int = 0,
    prompt_key: str = "",
) -> list[tuple[str, str]]:
    """The pairs judged on one prompt, each ``(model_a, model_b)`` with ``model_a < model_b``, sorted.

    Args:
        models: The model names.
        pairing: ``all``, ``baseline`` or ``sampled``.
        baseline: The baseline model (``baseline`` pairing).
        opponents_per_prompt: Opponents drawn per model (``sampled`` pairing), at most ``len(models) - 1``.
        seed: Seed of the draws (``sampled``).
        prompt_key: The prompt's canonical id text (seeds its draws, ``sampled``).

    Raises:
        ValueError: an unknown ``pairing``, or ``baseline`` pairing with a baseline not among ``models``.
    """
    names = sorted(models)
    if pairing == "all":
        return list(itertools.combinations(names, 2))
    if pairing == "baseline":
        if baseline not in names:
            raise ValueError(f"baseline {baseline!r} is not one of the models {names}")
        return sorted(_canonical(m, baseline) for m in names if m != baseline)
    if pairing == "sampled":
        rng = random.Random(f"{seed}:{prompt_key}")
        drawn: set[tuple[str, str]] = set()
        for model in names:
            others = [m for m in names if m != model]
            drawn.update(_canonical(model, o) for o in rng.sample(others, min(opponents_per_prompt, len(others))))
        return sorted(drawn)
    raise ValueError(f"pairing must be one of ['all', 'baseline', 'sampled'], got {pairing!r}")


def judge_call_count(pair_count: int, sampling_count: int) -> int:
    """Judge calls of a run: every pair is judged ``sampling_count`` times (both orders with ``flip``)."""
    return pair_count * sampling_count


def _canonical(x: str, y: str) -> tuple[str, str]:
    return (x, y) if x < y else (y, x)
