"""Reports and re-scoring of finished runs: one self-contained HTML page, metrics without model calls.

- :func:`write_report` / :func:`render_report`: a run's output directory (AutoSxS judgments or Gecko
  results, detected from the files present) → ``report.html`` with figures inline (SVG drawn by ``_figures``).
- :func:`rescore`: recompute ``metrics.json`` from existing judgments / results with other options
  (AutoSxS ties as half, another human label column; Gecko scoring options) — no model call.

This package imports no kfp; the pipelines' report components call it.
"""

from autorater_pipelines.report._autosxs import VERDICTS, confusion_matrix, length_bias
from autorater_pipelines.report._outputs import (
    RunOutputs,
    detect_kind,
    given_options,
    human_preference_column,
    load_files,
    load_outputs,
)
from autorater_pipelines.report._render import (
    REPORT_FILE,
    ArtifactReport,
    render_report,
    write_artifact_report,
    write_report,
)
from autorater_pipelines.report._rescore import (
    ABSENT,
    RescoreResult,
    changes,
    rescore,
    validation_rows_from_results,
)
from autorater_pipelines.report._rescore_write import write_rescore

__all__ = [
    "ABSENT",
    "REPORT_FILE",
    "VERDICTS",
    "ArtifactReport",
    "RescoreResult",
    "RunOutputs",
    "changes",
    "confusion_matrix",
    "detect_kind",
    "given_options",
    "human_preference_column",
    "length_bias",
    "load_files",
    "load_outputs",
    "render_report",
    "rescore",
    "validation_rows_from_results",
    "write_artifact_report",
    "write_report",
    "write_rescore",
]
