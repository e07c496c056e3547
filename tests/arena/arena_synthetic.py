"""A synthetic arena with hidden strengths: a dataset of responses and replayed judge answers drawn from BT.

The judge's answer for a pair (model_a, model_b) on a prompt is drawn from Bradley–Terry probabilities of the
hidden strengths, ``P(a beats b) = 1 / (1 + exp(s_b - s_a))`` (no ties unless ``tie_share``), one draw per sample
with ``numpy.random.default_rng(seed)``; the answer is written in position terms (a swapped sample shows model_a
second, so "A wins" is answered ``B``), as a judge answers.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np

STRENGTHS = {"m0": 1.5, "m1": 1.0, "m2": 0.5, "m3": 0.0, "m4": -0.5, "m5": -1.0}
"""Hidden log-strengths (natural log), best first."""


def write_arena(
    directory: Path,
    *,
    strengths: dict[str, float] = STRENGTHS,
    prompts: int = 200,
    seed: int = 11,
    tie_share: float = 0.0,
    pairs: list[tuple[str, str]] | None = None,
) -> tuple[Path, Path]:
    """Write ``dataset.jsonl`` and ``replay.jsonl`` (both orders of every pair on every prompt); return them."""
    rng = np.random.default_rng(seed)
    names = sorted(strengths)
    rows, replay = [], []
    for p in range(prompts):
        pid = f"p{p:03d}"
        row = {"prompt_id": pid, "question": f"Question {p}?"}
        for m in names:
            row[f"resp_{m}"] = f"Answer of {m} to question {p}." + " detail" * int(rng.integers(0, 5))
        rows.append(row)
        for a, b in pairs or itertools.combinations(names, 2):
            p_a = 1.0 / (1.0 + np.exp(strengths[b] - strengths[a]))
            for sample_index, flipped in ((0, False), (1, True)):
                u = rng.random()
                winner = "TIE" if u < tie_share else ("A" if rng.random() < p_a else "B")
                position = {"A": "B", "B": "A"}.get(winner, winner) if flipped else winner
                replay.append(
                    {
                        "prompt_id": pid,
                        "model_a": a,
                        "model_b": b,
                        "flipped": flipped,
                        "sample_index": sample_index,
                        "response": json.dumps({"explanation": f"{winner} in model terms", "choice": position}),
                    }
                )
    dataset, answers = directory / "dataset.jsonl", directory / "replay.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers.write_text("".join(json.dumps(r) + "\n" for r in replay))
    return dataset, answers


def arena_params(dataset: Path, replay: Path, models: list[str] | None = None, **overrides: object) -> dict:
    """Parameters of an arena run over the synthetic set."""
    names = models or sorted(STRENGTHS)
    return {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["prompt_id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
        "response_columns": {m: f"resp_{m}" for m in names},
        "autorater_model": f"replay/{replay}",
        "autorater_parameters": {"sampling_count": 2, "flip": True},
        **overrides,
    }
