"""The pairwise core: what every evaluation that judges two responses side by side shares (AutoSxS, arena).

Modules, in the order a judgment flows through them:

- :mod:`~autorater_pipelines.pairwise.tasks` — task definitions (criteria, score rubric) and the judge prompt;
- :mod:`~autorater_pipelines.pairwise.prompt_parameters` — GCPC's ``*_prompt_parameters`` (column or Jinja2
  template), rendered per row;
- :mod:`~autorater_pipelines.pairwise.settings` — :class:`JudgeSettings`, the one judge-settings model;
- :mod:`~autorater_pipelines.pairwise.order` — the presentation order you choose (``flip`` true/false/"random",
  ``flip_column``), identical responses, balanced position calibration;
- :mod:`~autorater_pipelines.pairwise.sampling` — the sample schedule (``sampling_count``, position swap);
- :mod:`~autorater_pipelines.pairwise.answers` — one judge answer read into a verdict (JSON ``choice`` or
  ``verdict_pattern``), :mod:`~autorater_pipelines.pairwise.verdicts` (free-text verdicts, human preference
  labels) and :mod:`~autorater_pipelines.pairwise.verdict_reach` (what a pattern can find, checked before a run);
- :mod:`~autorater_pipelines.pairwise.pointwise` — a score rubric's per-response scores;
- :mod:`~autorater_pipelines.pairwise.confidence` — a verdict's probability from log-probabilities;
- :mod:`~autorater_pipelines.pairwise.preference` — probability-weighted preferences and their win rate;
- :mod:`~autorater_pipelines.pairwise.voting` — samples un-flipped, voted over, checked for completeness.

An evaluation package imports this one, never a sibling evaluation.
"""

from autorater_pipelines.pairwise import tasks
from autorater_pipelines.pairwise.answers import ParsedVerdict, parse_verdict, parse_verdict_at, parse_verdict_note
from autorater_pipelines.pairwise.pointwise import mean_scores, parse_scores
from autorater_pipelines.pairwise.sampling import build_requests, flip_schedule
from autorater_pipelines.pairwise.settings import JudgeSettings
from autorater_pipelines.pairwise.verdicts import normalize_preference
from autorater_pipelines.pairwise.voting import (
    CHOICES,
    Sample,
    combine_samples,
    row_completeness,
    to_sample,
    total_usage,
    unparseable_check,
)

__all__ = [
    "CHOICES",
    "JudgeSettings",
    "ParsedVerdict",
    "Sample",
    "build_requests",
    "combine_samples",
    "flip_schedule",
    "mean_scores",
    "normalize_preference",
    "parse_scores",
    "parse_verdict",
    "parse_verdict_at",
    "parse_verdict_note",
    "row_completeness",
    "tasks",
    "to_sample",
    "total_usage",
    "unparseable_check",
]
