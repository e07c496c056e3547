"""Time of fitting an arena leaderboard: Bradley–Terry + bootstrap intervals on synthetic battles.

Battles are drawn from known strengths (seeded): ``--models`` models, ``--battles`` battles over ``--prompts``
prompts (random pairs per prompt), 10 % ties, responses of random length and Markdown for style control. Runs the
library's real :func:`autorater_pipelines.arena.rank_models`; reports the best of ``--repeat`` runs (wall and CPU
seconds) for plain Bradley–Terry with ``--rounds`` bootstrap rounds, and style control with 100 rounds.

Usage::

    python benchmarks/arena_ranking.py     # issue "Arena": 20 models x 20,000 battles, 1,000 rounds, <= 10 s
    # last line: models=<n> battles=<n> rounds=<n> bt_s=<s> style_s=<s> order_recovered=<bool>
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from autorater_pipelines.arena import battles_from_records, rank_models


def synthetic(models: int, battles: int, prompts: int, seed: int) -> tuple[list[dict], np.ndarray]:  # noqa: D103
    """Battle records drawn from Bradley–Terry with strengths ``linspace(1.5, -1.5)``, and those strengths."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.5, -1.5, models)
    a = rng.integers(0, models, battles)
    b = (a + rng.integers(1, models, battles)) % models
    p = 1 / (1 + np.exp(strength[b] - strength[a]))
    u = rng.random(battles)
    winner = np.where(rng.random(battles) < 0.1, "TIE", np.where(u < p, "A", "B"))
    lengths = rng.integers(50, 2000, size=(battles, 2))
    records = [
        {
            "prompt_id": int(rng.integers(0, prompts)),
            "model_a": f"model-{a[k]:02d}",
            "model_b": f"model-{b[k]:02d}",
            "winner": str(winner[k]),
            "response_a": "x" * int(lengths[k, 0]) + "\n- item" * int(k % 5),
            "response_b": "**y** " * int(lengths[k, 1] // 6),
        }
        for k in range(battles)
    ]
    return records, strength


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--battles", type=int, default=20000)
    parser.add_argument("--prompts", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    records, strength = synthetic(args.models, args.battles, args.prompts, seed=0)
    t0 = time.perf_counter()
    battles = battles_from_records(records)
    build_s = time.perf_counter() - t0
    timings: dict[str, list[tuple[float, float]]] = {"bt": [], "style": []}
    ranking = None
    for _ in range(args.repeat):
        for name, options in (("bt", {"bootstrap_rounds": args.rounds}), ("style", {"style_control": True})):
            wall, cpu = time.perf_counter(), time.process_time()
            result = rank_models(battles, seed=1, **options)
            timings[name].append((time.perf_counter() - wall, time.process_time() - cpu))
            ranking = result if name == "bt" else ranking
    assert ranking is not None
    order = [row["model"] for row in ranking.leaderboard]
    recovered = order == [f"model-{k:02d}" for k in range(args.models)]
    bt_s, bt_cpu = min(timings["bt"])
    style_s, style_cpu = min(timings["style"])
    print(f"building battles from {args.battles} records: {build_s:.2f} s")
    print(
        f"Bradley-Terry + {args.rounds} bootstrap rounds: {bt_s:.2f} s wall, {bt_cpu:.2f} s CPU (best of {args.repeat})"
    )
    print(f"style control + 100 bootstrap rounds: {style_s:.2f} s wall, {style_cpu:.2f} s CPU")
    print(
        f"models={args.models} battles={args.battles} rounds={args.rounds} bt_s={bt_s:.2f} style_s={style_s:.2f} "
        f"order_recovered={recovered}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
