"""Gecko as one evaluation of the registry (:mod:`autorater_pipelines.registry`): its :class:`PipelineSpec`.

Names and references only: importing this module imports no part of Gecko beyond the package itself.
"""

from __future__ import annotations

from autorater_pipelines.evaluation.pipeline_spec import PipelineSpec

__all__ = ["SPEC"]

SPEC = PipelineSpec(
    name="gecko",
    title="Gecko",
    row_file="results.jsonl",
    parameters="autorater_pipelines.gecko.params:PARAMETERS",
    validate_run="autorater_pipelines.gecko.preflight:validate_run",
    pipeline="autorater_pipelines.pipelines.gecko:gecko_pipeline",
    steps="autorater_pipelines.gecko.steps",
    dataframe="autorater_pipelines.gecko.dataframe:evaluate",
    run="autorater_pipelines.commands._gecko_run:RUN",
    metrics_from_rows="autorater_pipelines.report._outputs:gecko_metrics",
    id_columns="autorater_pipelines.report._outputs:gecko_id_columns",
    rescore="autorater_pipelines.report._rescore:rescore_gecko",
    report_context="autorater_pipelines.report._gecko:gecko_context",
    report_template="gecko.html.j2",
    report_options=("id_columns", "prompt_column", "media_column", "group_by"),
    media_response_columns=True,
)
"""Gecko, registered in :data:`autorater_pipelines.registry.SPEC_MODULES`."""
