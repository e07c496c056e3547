"""AutoSxS: pairwise (side-by-side) evaluation with an LLM autorater.

Modules, in the order data flows through them:

- :mod:`~autorater_pipelines.autosxs.params` — the parameter model (every pipeline parameter and nested option);
- :mod:`~autorater_pipelines.autosxs.preflight` — :func:`validate_run`, the one check of a run;
- :mod:`~autorater_pipelines.autosxs.steps` — one function per pipeline component;
- :mod:`~autorater_pipelines.autosxs.prepare` — the first stage: dataset checked, prompt parameters rendered;
- :mod:`~autorater_pipelines.autosxs.sides` — where each side's responses come from (column or model);
- :mod:`~autorater_pipelines.autosxs.inference` — model A / model B responses when the dataset has none;
- :mod:`~autorater_pipelines.autosxs.shards` — which examples each judging shard takes, and the merge;
- :mod:`~autorater_pipelines.autosxs.metrics` — win rates, position consistency, human alignment;
- :mod:`~autorater_pipelines.autosxs.export` — the metrics and export steps (JSONL, JSON, BigQuery);
- :mod:`~autorater_pipelines.autosxs.dataframe` — :func:`evaluate` on a pandas DataFrame (notebooks, no KFP).

Task definitions, the sample schedule, verdict parsing, voting, confidence and the judge stage
(:mod:`~autorater_pipelines.pairwise.judge`, :class:`~autorater_pipelines.pairwise.stages.Autorater`) are the
pairwise core (:mod:`autorater_pipelines.pairwise`), shared with the arena evaluation; ``autosxs.tasks`` is
:mod:`autorater_pipelines.pairwise.tasks`.
"""

from autorater_pipelines.autosxs.dataframe import evaluate
from autorater_pipelines.autosxs.export import ExportResult, aggregate_judgments, export_judgments
from autorater_pipelines.autosxs.metrics import console_metrics
from autorater_pipelines.autosxs.params import (
    Autorater,
    AutoraterParameters,
    AutosxsParams,
    ModelParameters,
    ResponseModel,
)
from autorater_pipelines.autosxs.preflight import (
    ValidatedRun,
    check_run_parameters,
    split_autorater_parameters,
    validate_run,
)
from autorater_pipelines.autosxs.prepare import prepare_examples
from autorater_pipelines.autosxs.shards import iter_shard, merge_shards, select_shard, shard_count
from autorater_pipelines.autosxs.steps import judge_examples, prepare_run
from autorater_pipelines.pairwise import tasks
from autorater_pipelines.pairwise.judge import JudgeSummary

__all__ = [
    "Autorater",
    "AutoraterParameters",
    "AutosxsParams",
    "ExportResult",
    "JudgeSummary",
    "ModelParameters",
    "ResponseModel",
    "ValidatedRun",
    "aggregate_judgments",
    "check_run_parameters",
    "console_metrics",
    "evaluate",
    "export_judgments",
    "iter_shard",
    "judge_examples",
    "merge_shards",
    "prepare_examples",
    "prepare_run",
    "select_shard",
    "shard_count",
    "split_autorater_parameters",
    "tasks",
    "validate_run",
]
