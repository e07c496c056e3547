"""The arena as one evaluation of the registry (:mod:`autorater_pipelines.registry`): its :class:`PipelineSpec`.

Names and references only: importing this module imports no part of the arena beyond the package itself.
"""

from __future__ import annotations

from autorater_pipelines.evaluation.pipeline_spec import PipelineSpec

__all__ = ["SPEC"]

SPEC = PipelineSpec(
    name="arena",
    title="Arena",
    row_file="leaderboard.jsonl",
    parameters="autorater_pipelines.arena.params:PARAMETERS",
    validate_run="autorater_pipelines.arena.preflight:validate_run",
    pipeline="autorater_pipelines.pipelines.arena:arena_pipeline",
    steps="autorater_pipelines.arena.steps",
    dataframe="autorater_pipelines.arena.dataframe:evaluate",
    run="autorater_pipelines.commands._arena_run:RUN",
    metrics_from_rows="autorater_pipelines.report._arena:arena_metrics",
    id_columns="autorater_pipelines.report._arena:arena_id_columns",
    rescore="autorater_pipelines.report._arena:rescore_arena",
    report_context="autorater_pipelines.report._arena:arena_context",
    report_template="arena.html.j2",
    companion_row_files=("judgments.jsonl",),
)
"""The arena, registered in :data:`autorater_pipelines.registry.SPEC_MODULES`."""
