"""AutoSxS: pairwise (side-by-side) evaluation with an LLM autorater.

Modules, in the order data flows through them:

- :mod:`~autorater_pipelines.autosxs.tasks` — task definitions (criteria, score rubric) and the judge prompt;
- :mod:`~autorater_pipelines.autosxs.prompt_parameters` — GCPC's ``*_prompt_parameters`` (column or Jinja2 template);
- :mod:`~autorater_pipelines.autosxs.inference` — model A / model B responses when the dataset has none;
- :mod:`~autorater_pipelines.autosxs.judging` — sample schedule (position swap), verdict parsing, voting;
- :mod:`~autorater_pipelines.autosxs.metrics` — win rates, position consistency, human alignment;
- :mod:`~autorater_pipelines.autosxs.steps` — the entry point of each KFP step (prepare, judge, merge, export);
- :mod:`~autorater_pipelines.autosxs.dataframe` — :func:`evaluate` on a pandas DataFrame (notebooks, no KFP).
"""

from autorater_pipelines.autosxs.dataframe import evaluate
from autorater_pipelines.autosxs.metrics import console_metrics
from autorater_pipelines.autosxs.steps import (
    ExportResult,
    JudgeSummary,
    aggregate_judgments,
    check_run_parameters,
    export_judgments,
    judge_examples,
    merge_shards,
    prepare_examples,
    select_shard,
    shard_count,
    split_autorater_parameters,
)

__all__ = [
    "ExportResult",
    "JudgeSummary",
    "aggregate_judgments",
    "check_run_parameters",
    "console_metrics",
    "evaluate",
    "export_judgments",
    "judge_examples",
    "merge_shards",
    "prepare_examples",
    "select_shard",
    "shard_count",
    "split_autorater_parameters",
]
