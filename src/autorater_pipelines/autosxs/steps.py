"""The AutoSxS pipeline steps: what each component calls, once.

Each step takes the component's inputs (paths and the pipeline parameters), builds the typed stages from the
parameter model (:class:`~autorater_pipelines.pairwise.stages.Autorater`,
:class:`~autorater_pipelines.autosxs.params.ResponseModel`) and hands them whole to a stage module:
:mod:`~autorater_pipelines.autosxs.prepare` (dataset checked, prompt parameters rendered),
:mod:`~autorater_pipelines.autosxs.inference` (model A / model B responses; the ``generate_pairwise_responses``
component calls :func:`~autorater_pipelines.autosxs.inference.fill_missing_responses`),
:mod:`~autorater_pipelines.pairwise.judge` (the autorater, shared with arena),
:mod:`~autorater_pipelines.autosxs.shards` (the merge) and :mod:`~autorater_pipelines.autosxs.export` (metrics and
export). The components' calls and their keyword names are part of the compiled templates
(``compiled/autosxs.yaml``), so these signatures stay as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autorater_pipelines.autosxs.params import AutoraterParameters
from autorater_pipelines.autosxs.preflight import validate_run
from autorater_pipelines.evaluation.parameters import ValidatedRun
from autorater_pipelines.pairwise import judge, panel, tasks
from autorater_pipelines.pairwise.stages import Autorater

__all__ = ["judge_examples", "prepare_run"]


def prepare_run(params: Mapping[str, Any], output_path: str) -> ValidatedRun:
    """The pipeline's first step (``prepare_pairwise_examples``): check the run, then write the prepared examples.

    The check is :func:`~autorater_pipelines.autosxs.preflight.validate_run` on every parameter; the examples are
    streamed to ``output_path`` as they are rendered (memory bounded by one row; ``rows`` is None,
    ``row_count`` their number).

    Raises:
        InputError: the first problem ``validate_run`` finds; nothing is written then.
    """
    return validate_run(params, examples_path=output_path)


def judge_examples(
    *,
    examples: Iterable[Mapping[str, Any]],
    task: str,
    id_columns: Sequence[str],
    autorater_model: str = "",
    autorater_parameters: Mapping[str, Any] | AutoraterParameters | None = None,
    project: str = "",
    location: str = "",
    experimental_args: Mapping[str, Any] | None = None,
    judgments_path: str | None = None,
    error_messages_path: str | None = None,
    shard_count: int = 1,
    shard_index: int = 0,
    pace_dir: str | None = None,
    autorater_panel: Sequence[str] | None = None,
    panel_vote: str = "",
    collect: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], judge.JudgeSummary]:
    """The ``judge_pairwise_examples`` component's call: build the autorater stage, then :func:`judge.judge_shard`.

    With ``autorater_panel``, every juror judges the examples and the panel votes
    (:func:`~autorater_pipelines.pairwise.panel.judge_panel_shard`).

    When the model calls stop early (see :mod:`autorater_pipelines.models`: a wrong endpoint, no progress for
    ``max_stall_s``, ``max_consecutive_failures``), the judgments so far are kept, the rest become ERROR rows with
    the reason, everything is written, and :class:`ModelCallError` is raised only in strict mode
    (``autorater_parameters["strict"]``). SIGTERM always raises (nothing is written; a re-run resumes from the
    response cache).

    Args:
        examples: Prepared examples (:mod:`autorater_pipelines.autosxs.prepare`): a list, or any iterable read once
            as judging goes (``io.iter_jsonl(path)``, :func:`~autorater_pipelines.autosxs.iter_shard`).
        task: Task name, as for :func:`~autorater_pipelines.autosxs.prepare_examples`.
        id_columns: Id columns of the examples.
        autorater_model: Model spec (docs/models.md); empty = :data:`~autorater_pipelines.evaluation.DEFAULT_MODEL`.
        autorater_parameters: :class:`~autorater_pipelines.autosxs.params.AutoraterParameters` (judging keys
            ``sampling_count``, ``flip``, ``verdict_pattern``, ``verdict_map`` and every model-call setting).
        project: Google Cloud project for Vertex AI models.
        location: Google Cloud region for Vertex AI models.
        experimental_args: May hold ``custom_task_definition``.
        judgments_path: Where to write judgment rows as JSONL (atomically), or None.
        error_messages_path: Where to write error rows as JSONL (atomically), or None.
        shard_count: Number of shards judging the dataset in parallel (this call judges one of them): a declared
            ``requests_per_minute`` is divided among them, so that together they stay within it.
        shard_index: Which shard this call judges (0-based), for ``pace_dir``.
        pace_dir: A directory (local or ``gs://``) shared by the shards of this run only, where they share their
            pace (:func:`autorater_pipelines.models.shared_pace`); None = a static split of a declared quota.
        autorater_panel: Jurors' model specs (two or more) judging instead of ``autorater_model``; empty = none.
        panel_vote: How the panel votes: ``majority`` (default) or ``mean``.
        collect: Return the rows (False: empty lists; rows are only written, memory bounded by the calls in flight).

    Returns:
        ``(judgments, error_messages, summary)``: one judgment per example in input order.

    Raises:
        InputError: bad parameters.
        ModelCallError: the model calls stopped early and ``strict`` is set, or the process got SIGTERM.
    """
    autorater = Autorater.of(autorater_model, autorater_parameters, project=project, location=location)
    definition = tasks.get_task(task, dict(experimental_args or {}))
    vote = panel.check_panel_vote(panel_vote)
    specs = panel.check_panel(autorater_panel, autorater_model=autorater_model, panel_vote=vote)
    if specs:
        return panel.judge_panel_shard(
            examples if isinstance(examples, Sequence) else list(examples),  # a panel holds its rows
            panel.panel_jurors(specs, autorater),
            definition,
            id_columns,
            panel_vote=vote,
            judgments_path=judgments_path,
            error_messages_path=error_messages_path,
            shard_count=shard_count,
            shard_index=shard_index,
            pace_dir=pace_dir,
        )
    return judge.judge_shard(
        examples,
        autorater,
        definition,
        id_columns,
        judgments_path=judgments_path,
        error_messages_path=error_messages_path,
        shard_count=shard_count,
        shard_index=shard_index,
        pace_dir=pace_dir,
        collect=collect,
    )
