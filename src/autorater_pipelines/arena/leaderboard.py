"""The arena leaderboard from judged pairs: battles from every judged sample, ranked by Bradley–Terry.

Every judged sample is a battle (Arena-Hard's convention: both games of a pair count): its ``choice`` (already in
model terms: ``A`` = ``model_a``) is the winner, a tie half a win to each; a sample marked ``strong`` (a verdict
``A>>B``) counts as ``strong_verdict_weight`` battles. An ``ERROR`` sample is not a battle: it is counted
(``error_sample_count``) and its reason is in ``error_messages``. The prompt of a battle is its id columns' values,
so the bootstrap resamples prompts with all their battles. A pair whose two responses were identical, made a ``TIE``
without a judge call (``identical_responses: "tie"``), is one tie battle (``identical_pair_count``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.arena.battles import battles_from_records
from autorater_pipelines.arena.length_control import length_controlled_win_rates
from autorater_pipelines.arena.params import RankingOptions
from autorater_pipelines.arena.prepare import prompt_key
from autorater_pipelines.arena.ranking import rank_models
from autorater_pipelines.errors import InputError

__all__ = ["battle_records", "leaderboard_from_judgments", "strong_verdict_summary"]


def battle_records(
    judgments: Sequence[Mapping[str, Any]], id_columns: Sequence[str], strong_verdict_weight: int = 3
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """One battle record per judged sample (module docstring), and the counts of what was and was not a battle.

    Returns:
        ``(records, counts)``: records for :func:`~autorater_pipelines.arena.battles.battles_from_records`;
        counts ``pair_count`` (judgment rows), ``sample_count``, ``battle_sample_count``, ``error_sample_count``,
        ``unjudged_pair_count`` (rows without any sample, e.g. a response that could not be generated),
        ``strong_verdict_count``, ``identical_pair_count`` (identical responses: one tie battle each, no sample).

    Raises:
        InputError: a judgment row lacks ``model_a``/``model_b`` or an id column (not an arena judgment file).
    """
    ids = list(id_columns)
    records: list[dict[str, Any]] = []
    counts = dict.fromkeys(
        (
            "pair_count",
            "sample_count",
            "battle_sample_count",
            "error_sample_count",
            "unjudged_pair_count",
            "strong_verdict_count",
            "identical_pair_count",
        ),
        0,
    )
    for number, row in enumerate(judgments, start=1):
        missing = [k for k in (*ids, "model_a", "model_b") if k not in row]
        if missing:
            raise InputError(
                f"judgment {number} lacks {missing}: not an arena judgment (keys {sorted(row)[:12]})",
                source="judgments",
            )
        counts["pair_count"] += 1
        samples = row.get("samples") or []
        key = prompt_key(dict(row), ids)
        battle = {"prompt_id": key, "model_a": row["model_a"], "model_b": row["model_b"]}
        texts = {"response_a": row.get("response_a") or "", "response_b": row.get("response_b") or ""}
        if row.get("identical_responses") is True and row.get("choice") == "TIE":
            counts["identical_pair_count"] += 1  # no judge call, no sample: one tie battle
            records.append({**battle, "winner": "TIE", "weight": 1.0, **texts})
        elif row.get("jurors"):
            _panel_battles(row, battle, texts, records, counts)
            continue
        elif not samples:
            counts["unjudged_pair_count"] += 1
        for sample in samples:
            counts["sample_count"] += 1
            choice = sample.get("choice")
            if choice not in ("A", "B", "TIE"):
                counts["error_sample_count"] += 1
                continue
            strong = bool(sample.get("strong")) and choice != "TIE"
            counts["strong_verdict_count"] += strong
            counts["battle_sample_count"] += 1
            records.append(
                {**battle, "winner": choice, "weight": float(strong_verdict_weight if strong else 1), **texts}
            )
    return records, counts


def _panel_battles(
    row: Mapping[str, Any],
    battle: dict[str, Any],
    texts: dict[str, Any],
    records: list[dict[str, Any]],
    counts: dict[str, int],
) -> None:
    """A panel's pair (:mod:`autorater_pipelines.pairwise.panel`): its verdict, as many battles as one juror's samples.

    So a panel run weighs each pair as a one-judge run does (``sampling_count`` battles); a panel ``ERROR`` (every
    juror abstained) counts that many error samples. Strong verdicts are a juror's own: a panel battle weighs 1.
    """
    units = max(1, len(row.get("samples") or []) // max(1, len(row["jurors"])))
    counts["sample_count"] += units
    if row.get("choice") not in ("A", "B", "TIE"):
        counts["error_sample_count"] += units
        return
    counts["battle_sample_count"] += units
    records.extend({**battle, "winner": row["choice"], "weight": 1.0, **texts} for _ in range(units))


def leaderboard_from_judgments(
    judgments: Sequence[Mapping[str, Any]], id_columns: Sequence[str], options: RankingOptions
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The leaderboard rows and the metrics of an arena run, from its judgments (no model call).

    Args:
        judgments: The judgment rows (one per judged pair and prompt, AutoSxS's fields plus ``model_a``,
            ``model_b``).
        id_columns: The prompt's id columns (without ``model_a``/``model_b``).
        options: The ranking options (``baseline``, ``bootstrap_rounds``, ``seed``, ``style_control``, ``ties``,
            ``strong_verdict_weight``).

    Returns:
        ``(leaderboard, metrics)``: leaderboard rows best first (:func:`~autorater_pipelines.arena.rank_models`'s
        keys); metrics with the counts of :func:`battle_records`, ``models``, ``leaderboard`` (model → its row, best
        first), ``win_matrix``,
        ``separability``, ``style_coefficients``, ``tie_parameter``, ``computed_over``, ``notes``,
        ``ranking_options`` (``options``), ``id_columns`` and, with a baseline, ``length_controlled``
        (AlpacaEval's length-controlled win rates).

        With no battle at all (every sample an ERROR), an empty leaderboard and metrics that say so
        (``battle_count`` 0, ``models`` empty, a note with the sample counts): the run's judgments and
        error_messages are still its outputs.

    Raises:
        InputError: fewer than 2 models with battles, or a baseline without battles.
    """
    ids = list(id_columns)
    records, counts = battle_records(judgments, ids, options.strong_verdict_weight)
    if not records:
        return [], _finite(_unranked_metrics(judgments, ids, options, counts))
    battles = battles_from_records(records, source="judgments")
    baseline = options.baseline or None
    if baseline is not None and baseline not in battles.models:
        raise InputError(
            f"baseline {baseline!r} has no judged battle (models with battles: {list(battles.models)})",
            source="baseline",
        )
    try:
        ranking = rank_models(
            battles,
            baseline=baseline,
            bootstrap_rounds=options.bootstrap_rounds,
            seed=options.seed,
            ties=options.ties,
            style_control=options.style_control,
        )
    except ValueError as exc:
        raise InputError(str(exc), source="judgments") from None
    metrics: dict[str, Any] = {
        **counts,
        "evaluation_count": counts["pair_count"],
        "battle_count": float(battles.weight.sum()),
        "models": list(battles.models),
        "leaderboard": {str(row["model"]): row for row in ranking.leaderboard},
        "win_matrix": ranking.win_matrix,
        "separability": ranking.separability,
        "style_coefficients": ranking.style,
        "tie_parameter": ranking.tie_parameter,
        "computed_over": {
            **ranking.computed_over,
            "battle_unit": "one judged sample (both presentation orders count); ERROR samples are not battles",
            "strong_verdict_weight": options.strong_verdict_weight,
        },
        "notes": ranking.notes + _unranked_note(judgments, battles.models),
        "ranking_options": options.model_dump(),
        "id_columns": ids,
    }
    if baseline is not None:
        metrics["length_controlled"] = length_controlled_win_rates(
            battles, baseline, bootstrap_rounds=options.bootstrap_rounds, seed=options.seed
        )
    return _finite(ranking.leaderboard), _finite(metrics)


def _unranked_metrics(
    judgments: Sequence[Mapping[str, Any]], ids: list[str], options: RankingOptions, counts: dict[str, Any]
) -> dict[str, Any]:
    """The metrics of a run without any battle: the counts, no model ranked, and a note saying why."""
    why = (
        f"nothing ranked: 0 battles from {counts['sample_count']} samples, {counts['error_sample_count']} of them "
        "ERROR samples (see error_messages)"
    )
    return {
        **counts,
        "evaluation_count": counts["pair_count"],
        "battle_count": 0.0,
        "models": [],
        "leaderboard": {},
        "win_matrix": {},
        "separability": None,
        "style_coefficients": None,
        "tie_parameter": None,
        "computed_over": {
            "battles": 0.0,
            "battle_records": 0,
            "models": 0,
            "prompts": len({tuple(str(row.get(k)) for k in ids) for row in judgments}),
            "bootstrap_rounds": options.bootstrap_rounds,
            "seed": options.seed,
            "ties": options.ties,
            "battle_unit": "one judged sample (both presentation orders count); ERROR samples are not battles",
            "strong_verdict_weight": options.strong_verdict_weight,
        },
        "notes": [why],
        "ranking_options": options.model_dump(),
        "id_columns": ids,
    }


def strong_verdict_summary(metrics: Mapping[str, Any]) -> str | None:
    """How strong verdicts weigh in a run's battle count, from its metrics; None when it had none.

    ``117 strong verdicts (A>>B, B>>A) count 3 battles each: 585 battles weighted``, from ``strong_verdict_count``,
    ``computed_over.strong_verdict_weight`` and ``battle_count`` (as :func:`leaderboard_from_judgments` writes them).
    """
    count = metrics.get("strong_verdict_count")
    if not count:
        return None
    weight = (metrics.get("computed_over") or {}).get("strong_verdict_weight")
    each = "battle" if weight == 1 else "battles"
    return (
        f"{count} strong verdicts (A>>B, B>>A) count {_number(weight)} {each} each: "
        f"{_number(metrics.get('battle_count'))} battles weighted"
    )


def _number(value: Any) -> str:
    """``3`` for 3 or 3.0, ``2.5`` for 2.5; anything else (None) as written."""
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _unranked_note(judgments: Sequence[Mapping[str, Any]], ranked: Sequence[str]) -> list[str]:
    """A note naming the models of the judgments without any battle (every pair of theirs unjudged or ERROR)."""
    named = {str(row[k]) for row in judgments for k in ("model_a", "model_b")}
    unranked = sorted(named - {str(m) for m in ranked})
    if not unranked:
        return []
    return [
        f"not ranked: {', '.join(repr(m) for m in unranked)} had no judged battle (every pair of theirs failed, e.g. "
        "responses that could not be generated; see error_messages)"
    ]


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
