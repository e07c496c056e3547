"""One judging shard in its own process, for ``judge_throughput.py --shards`` (importable by spawned workers)."""

from __future__ import annotations

import time
from typing import Any

from autorater_pipelines import autosxs

ShardJob = tuple[list[dict[str, Any]], int, int, dict[str, Any], str, str, str | None, float]


def import_sdk() -> None:
    """Import google-genai once per worker process (not timed)."""
    import autorater_pipelines.models.providers.vertex  # noqa: F401


def wait(_: int) -> None:
    """Keep a worker busy long enough that every worker gets one of these (all have imported the SDK)."""
    time.sleep(0.5)


def judge_shard(job: ShardJob) -> tuple[list[dict[str, Any]], float, float, int]:
    """One shard as its pipeline task runs it: (judgments, wall start, wall end, retries).

    The job holds the shards' shared pace directory (None = a static split) and a delay before the shard
    starts (a task scheduled late).
    """
    examples, index, count, params, task, model, pace_dir, delay_s = job
    time.sleep(delay_s)
    started = time.time()
    judgments, _, summary = autosxs.judge_examples(
        examples=autosxs.select_shard(examples, index, count),
        task=task,
        id_columns=["id"],
        autorater_model=model,
        autorater_parameters=params,
        shard_count=count,
        shard_index=index,
        pace_dir=pace_dir,
    )
    return judgments, started, time.time(), summary.retries
