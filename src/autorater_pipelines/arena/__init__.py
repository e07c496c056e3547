"""Arena: rank many models from pairwise judgments (Bradley–Terry with bootstrap intervals and style control).

The ``arena`` pipeline (``compiled/arena.yaml``, ``autorater run arena``) judges pairs of models on the same prompts
as AutoSxS judges a row and ranks them; :func:`evaluate` does the same on a DataFrame. Modules:

- :mod:`~autorater_pipelines.arena.params` / :mod:`~autorater_pipelines.arena.preflight` — the parameter model and
  the one check of a run; :mod:`~autorater_pipelines.arena.pairs` — the pair schedule;
  :mod:`~autorater_pipelines.arena.prepare` — pair examples; :mod:`~autorater_pipelines.arena.leaderboard` —
  battles from judgments, ranked; :mod:`~autorater_pipelines.arena.steps` — one function per component;
- :mod:`~autorater_pipelines.arena.battles` — battles from judged samples, style counts of responses;
- :mod:`~autorater_pipelines.arena.ranking` — the leaderboard, win matrix, separability, style control;
- :mod:`~autorater_pipelines.arena.length_control` — length-controlled win rate against a baseline.
"""

from autorater_pipelines.arena.battles import WINNERS, Battles, battles_from_records, markdown_counts
from autorater_pipelines.arena.dataframe import evaluate  # noqa: I001  (after the ranking it builds on)
from autorater_pipelines.arena.length_control import length_controlled_win_rates
from autorater_pipelines.arena.ranking import STYLE_FEATURES, TIES, Ranking, rank_models

__all__ = [
    "STYLE_FEATURES",
    "TIES",
    "WINNERS",
    "Battles",
    "Ranking",
    "battles_from_records",
    "evaluate",
    "length_controlled_win_rates",
    "markdown_counts",
    "rank_models",
]
