"""AutoSxS metrics of a panel of judges: each juror's own metrics and the agreement between jurors.

The panel's rates and human alignment are :func:`~autorater_pipelines.autosxs.metrics.pairwise_metrics` of the
panel's judgment rows (:mod:`autorater_pipelines.pairwise.panel`), at the top level of ``metrics.json`` with the
keys of one judge. :func:`panel_metrics` adds:

- ``panel_vote`` and ``panel_size``;
- ``jurors``: ``{model spec: metrics}``, each juror's ``pairwise_metrics`` computed from its own row verdicts and
  samples alone, exactly as a run with that juror as ``autorater_model`` gives them (rates, ``accuracy``,
  ``cohens_kappa`` … with human labels, ``position_consistency``, ``model_call_attempt_count``,
  ``cached_sample_count``, token counts), plus ``abstention_count`` (rows the juror did not vote on: ``ERROR`` or
  judged in one order only) and ``vote_count``;
- ``juror_agreement``: Fleiss' kappa and the pairwise agreement matrix
  (:func:`~autorater_pipelines.pairwise.agreement.juror_agreement`).

At the top level, ``position_consistency`` and the per-order accuracies pool every juror's samples of a row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.pairwise.agreement import juror_agreement
from autorater_pipelines.pairwise.panel import juror_rows, juror_vote

__all__ = ["is_panel", "juror_rows", "panel_metrics"]


def is_panel(judgments: Iterable[Mapping[str, Any]]) -> bool:
    """True when the judgment rows are a panel's (they carry ``jurors``)."""
    return any(r.get("jurors") for r in judgments)


def panel_metrics(
    judgments: Iterable[Mapping[str, Any]],
    *,
    human_preference_column: str | None = None,
    ties_as_half: bool = False,
    include_incomplete: bool = False,
) -> dict[str, Any]:
    """The panel's sections of ``metrics.json`` (``panel_vote``, ``panel_size``, ``jurors``, ``juror_agreement``).

    Args:
        judgments: Panel judgment rows (each with ``jurors``).
        human_preference_column: As for ``pairwise_metrics``.
        ties_as_half: As for ``pairwise_metrics``, for each juror.
        include_incomplete: As for ``pairwise_metrics``, for each juror (abstentions are counted regardless).

    Returns:
        The sections; empty when the rows are not a panel's.
    """
    rows = list(judgments)
    if not is_panel(rows):
        return {}
    names = [str(j["juror"]) for j in next(r for r in rows if r.get("jurors"))["jurors"]]
    jurors: dict[str, Any] = {}
    ratings: list[list[str | None]] = [[] for _ in rows]
    for name in names:
        own = juror_rows(rows, name, human_preference_column)
        votes = [juror_vote(r) for r in own]
        for row_votes, vote in zip(ratings, votes, strict=True):
            row_votes.append(vote)
        section = pairwise_metrics(
            own,
            human_preference_column=human_preference_column,
            ties_as_half=ties_as_half,
            include_incomplete=include_incomplete,
        )
        section["vote_count"] = sum(v is not None for v in votes)
        section["abstention_count"] = sum(v is None for v in votes)
        jurors[name] = section
    return {
        "panel_vote": next((r.get("panel_vote") for r in rows if r.get("panel_vote")), "majority"),
        "panel_size": len(names),
        "jurors": jurors,
        "juror_agreement": juror_agreement(names, ratings),
    }
