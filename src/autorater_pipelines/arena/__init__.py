"""Arena: rank many models from pairwise judgments (Bradley–Terry with bootstrap intervals and style control).

This round holds the ranking itself — :func:`rank_models` over :class:`Battles` — which the ``arena`` pipeline
(issue "Arena") builds on:

- :mod:`~autorater_pipelines.arena.battles` — battles from judged samples, style counts of responses;
- :mod:`~autorater_pipelines.arena.ranking` — the leaderboard, win matrix, separability, style control;
- :mod:`~autorater_pipelines.arena.length_control` — length-controlled win rate against a baseline.
"""

from autorater_pipelines.arena.battles import WINNERS, Battles, battles_from_records, markdown_counts
from autorater_pipelines.arena.length_control import length_controlled_win_rates
from autorater_pipelines.arena.ranking import STYLE_FEATURES, TIES, Ranking, rank_models

__all__ = [
    "STYLE_FEATURES",
    "TIES",
    "WINNERS",
    "Battles",
    "Ranking",
    "battles_from_records",
    "length_controlled_win_rates",
    "markdown_counts",
    "rank_models",
]
