"""AutoSxS: pairwise (side-by-side) evaluation with an LLM autorater.

Modules, in the order data flows through them:

- :mod:`~autorater_pipelines.autosxs.params` — the parameter model (every pipeline parameter and nested option)
  and :func:`validate_run`, the one check of a run;
- :mod:`~autorater_pipelines.autosxs.tasks` — task definitions (criteria, score rubric) and the judge prompt;
- :mod:`~autorater_pipelines.autosxs.prompt_parameters` — GCPC's ``*_prompt_parameters`` (column or Jinja2 template);
- :mod:`~autorater_pipelines.autosxs.prepare` — the first step: dataset checked, prompt parameters rendered;
- :mod:`~autorater_pipelines.autosxs.inference` — model A / model B responses when the dataset has none;
- :mod:`~autorater_pipelines.autosxs.judging` — sample schedule (position swap), verdict parsing, voting;
- :mod:`~autorater_pipelines.autosxs.judge` — the judge step (one shard of examples through the autorater);
- :mod:`~autorater_pipelines.autosxs.shards` — which examples each judging shard takes, and the merge;
- :mod:`~autorater_pipelines.autosxs.metrics` — win rates, position consistency, human alignment;
- :mod:`~autorater_pipelines.autosxs.export` — the metrics and export steps (JSONL, JSON, BigQuery);
- :mod:`~autorater_pipelines.autosxs.dataframe` — :func:`evaluate` on a pandas DataFrame (notebooks, no KFP).
"""

from autorater_pipelines.autosxs.dataframe import evaluate
from autorater_pipelines.autosxs.export import ExportResult, aggregate_judgments, export_judgments
from autorater_pipelines.autosxs.judge import JudgeSummary, judge_examples
from autorater_pipelines.autosxs.metrics import console_metrics
from autorater_pipelines.autosxs.params import (
    AutoraterParameters,
    AutosxsParams,
    ModelParameters,
    ValidatedRun,
    check_run_parameters,
    split_autorater_parameters,
    validate_run,
)
from autorater_pipelines.autosxs.prepare import prepare_examples, prepare_run
from autorater_pipelines.autosxs.shards import merge_shards, select_shard, shard_count

__all__ = [
    "AutoraterParameters",
    "AutosxsParams",
    "ExportResult",
    "JudgeSummary",
    "ModelParameters",
    "ValidatedRun",
    "aggregate_judgments",
    "check_run_parameters",
    "console_metrics",
    "evaluate",
    "export_judgments",
    "judge_examples",
    "merge_shards",
    "prepare_examples",
    "prepare_run",
    "select_shard",
    "shard_count",
    "split_autorater_parameters",
    "validate_run",
]
