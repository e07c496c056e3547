"""The arena pipeline steps: one function per arena component, called by it once.

Judging is AutoSxS's judge step on the pair examples (the components ``judge_pairwise_examples`` and
``online_evaluation_pairwise`` with the pair id columns); the steps here are the arena's own:
:func:`prepare_run` (check the run, write the pair examples), :func:`generate_run` (the responses of ``models``)
and :func:`rank_run` (battles → leaderboard).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.arena.candidates import generate_candidates, parse_models
from autorater_pipelines.arena.leaderboard import leaderboard_from_judgments
from autorater_pipelines.arena.params import RankingOptions
from autorater_pipelines.arena.preflight import validate_run
from autorater_pipelines.evaluation.parameters import ValidatedRun

__all__ = ["generate_run", "prepare_run", "rank_run"]


def prepare_run(params: Mapping[str, Any], output_path: str) -> ValidatedRun:
    """The first step: :func:`~autorater_pipelines.arena.preflight.validate_run`, then write the pair examples.

    Raises:
        InputError: the first problem ``validate_run`` finds; nothing is written then.
    """
    run = validate_run(params)
    io.write_jsonl(output_path, run.rows or [])
    for note in run.notes:
        print(note, flush=True)
    return run


def generate_run(
    examples_path: str,
    models: Mapping[str, Any],
    id_columns: list[str],
    output_path: str,
    *,
    project: str = "",
    location: str = "",
) -> dict[str, int]:
    """The generation step: fill the pair examples' responses of ``models`` (:func:`generate_candidates`), write them.

    Passes the examples through unchanged when ``models`` is empty.

    Returns:
        ``{"generated_count": n, "failed_count": m}`` (model × prompt responses requested, and failed).

    Raises:
        InputError: bad ``models`` settings.
        ModelCallError: the process got SIGTERM (nothing is written; a re-run resumes from the response cache).
    """
    examples = io.read_jsonl(examples_path)
    counts = generate_candidates(examples, parse_models(models), id_columns, project=project, location=location)
    io.write_jsonl(output_path, examples)
    return counts


def rank_run(
    judgments_path: str,
    id_columns: list[str],
    options: Mapping[str, Any] | RankingOptions,
    leaderboard_path: str,
    metrics_path: str,
) -> dict[str, Any]:
    """The ranking step: read the judgments, write the leaderboard (JSONL) and the metrics (JSON); return them.

    Raises:
        InputError: a baseline without battles (with no battle at all, an empty leaderboard is written).
    """
    ranking = options if isinstance(options, RankingOptions) else RankingOptions(**dict(options))
    leaderboard, metrics = leaderboard_from_judgments(io.read_jsonl(judgments_path), id_columns, ranking)
    io.write_jsonl(leaderboard_path, leaderboard)
    io.write_json(metrics_path, metrics)
    return metrics
