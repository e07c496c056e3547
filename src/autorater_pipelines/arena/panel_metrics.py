"""Arena metrics of a panel of judges: each juror's battles and abstentions, the agreement between jurors.

With ``autorater_panel`` an arena's ``metrics.json`` adds (:func:`arena_panel_metrics`):

- ``panel_vote`` and ``panel_size``;
- ``jurors``: ``{model spec: counts}``, the battle counts of
  :func:`~autorater_pipelines.arena.leaderboard.battle_records` over that juror's own samples alone (as a run with
  that juror as ``autorater_model`` counts them: ``battle_sample_count``, ``error_sample_count``,
  ``strong_verdict_count`` …, ``battle_count`` weighted by ``strong_verdict_weight``), plus ``vote_count`` and
  ``abstention_count`` (pairs the juror did not vote on: ``ERROR`` or judged in one order only);
- ``juror_agreement``: Fleiss' kappa and the pairwise agreement matrix over the jurors' pair verdicts
  (:func:`~autorater_pipelines.pairwise.agreement.juror_agreement`, as AutoSxS's panel metrics).

Strong panel verdicts (:func:`panel_strong`): with ``panel_vote`` ``majority``, a pair's panel verdict (``A`` or
``B``) is strong when a strict majority of the jurors that voted gave that verdict strongly; a juror gives its
verdict strongly when a strict majority of its samples on the pair are strong (``A>>B``/``B>>A``) with that
verdict (with both orders judged: both). The ``mean`` vote has no strong verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autorater_pipelines.pairwise.agreement import juror_agreement
from autorater_pipelines.pairwise.panel import juror_rows, juror_vote

__all__ = ["arena_panel_metrics", "juror_names", "panel_strong"]

BattleCounter = Callable[[Sequence[Mapping[str, Any]]], tuple[list[dict[str, Any]], dict[str, int]]]


def juror_names(judgments: Sequence[Mapping[str, Any]]) -> list[str]:
    """The jurors of a panel's judgment rows in panel order; empty when the rows are not a panel's."""
    first = next((r for r in judgments if r.get("jurors")), None)
    return [str(j["juror"]) for j in first["jurors"]] if first else []


def _strong_juror(entry: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> bool:
    choice = entry.get("choice")
    own = [s for s in samples if s.get("juror") == entry.get("juror")]
    strong = sum(1 for s in own if s.get("strong") and s.get("choice") == choice)
    return choice in ("A", "B") and strong * 2 > len(own)


def panel_strong(row: Mapping[str, Any]) -> bool:
    """Whether a panel's pair verdict is strong (module docstring); False for ``mean``, a ``TIE`` or ``ERROR``."""
    if (row.get("panel_vote") or "majority") != "majority" or row.get("choice") not in ("A", "B"):
        return False
    entries = row.get("jurors") or []
    voters = [e for e in entries if juror_vote(e) is not None]
    samples = row.get("samples") or []
    strong = sum(1 for e in voters if e.get("choice") == row["choice"] and _strong_juror(e, samples))
    return strong * 2 > len(voters)


def arena_panel_metrics(judgments: Sequence[Mapping[str, Any]], battle_counter: BattleCounter) -> dict[str, Any]:
    """The panel's sections of an arena's ``metrics.json`` (module docstring); empty when not a panel's rows.

    Args:
        judgments: The arena's judgment rows.
        battle_counter: ``battle_records`` with the run's id columns and ``strong_verdict_weight`` bound.
    """
    rows = [r for r in judgments if r.get("jurors")]  # the pairs the panel judged
    names = juror_names(rows)
    if not names:
        return {}
    jurors: dict[str, Any] = {}
    ratings: list[list[str | None]] = [[] for _ in rows]
    for name in names:
        own = juror_rows(rows, name)
        votes = [juror_vote(r) for r in own]
        for row_votes, vote in zip(ratings, votes, strict=True):
            row_votes.append(vote)
        records, counts = battle_counter(own)
        jurors[name] = {
            **counts,
            "battle_count": float(sum(r["weight"] for r in records)),
            "vote_count": sum(v is not None for v in votes),
            "abstention_count": sum(v is None for v in votes),
        }
    return {
        "panel_vote": next((r.get("panel_vote") for r in rows if r.get("panel_vote")), "majority"),
        "panel_size": len(names),
        "jurors": jurors,
        "juror_agreement": juror_agreement(names, ratings),
    }
