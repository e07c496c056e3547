"""AutoSxS as one evaluation of the registry (:mod:`autorater_pipelines.registry`): its :class:`PipelineSpec`.

Names and references only: importing this module imports no part of AutoSxS beyond the package itself.
"""

from __future__ import annotations

from autorater_pipelines.evaluation.pipeline_spec import PipelineSpec

__all__ = ["AUTORATER_TASK", "METRICS_TASK", "SPEC"]

AUTORATER_TASK = "online-evaluation-pairwise"
"""Task that outputs the judgments (``judgments``, ``error_messages``), named as in Google's template."""
METRICS_TASK = "model-evaluation-text-generation-pairwise"
"""Task that outputs the metrics (``autosxs_metrics``, ``metrics_json``, ``model_evaluations``), as Google's."""

SPEC = PipelineSpec(
    name="autosxs",
    title="AutoSxS",
    row_file="judgments.jsonl",
    parameters="autorater_pipelines.autosxs.params:PARAMETERS",
    validate_run="autorater_pipelines.autosxs.preflight:validate_run",
    pipeline="autorater_pipelines.pipelines.autosxs:autosxs_pipeline",
    steps="autorater_pipelines.autosxs.steps",
    dataframe="autorater_pipelines.autosxs.dataframe:evaluate",
    run="autorater_pipelines.commands._autosxs_run:RUN",
    metrics_from_rows="autorater_pipelines.report._outputs:autosxs_metrics",
    id_columns="autorater_pipelines.report._outputs:autosxs_id_columns",
    rescore="autorater_pipelines.report._rescore:rescore_autosxs",
    report_context="autorater_pipelines.report._autosxs:autosxs_context",
    report_template="autosxs.html.j2",
    check_rows="autorater_pipelines.report._outputs:check_judgment_lines",
    artifact_confusion="autorater_pipelines.report._autosxs:artifact_confusion",
)
"""AutoSxS, registered in :data:`autorater_pipelines.registry.SPEC_MODULES`."""
