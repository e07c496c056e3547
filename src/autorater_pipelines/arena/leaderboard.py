"""The arena leaderboard from judged pairs: battles from every judged sample, ranked by Bradley–Terry.

Every judged sample is a battle (Arena-Hard's convention: both games of a pair count): its ``choice`` (already in
model terms: ``A`` = ``model_a``) is the winner, a tie half a win to each; a sample marked ``strong`` (a verdict
``A>>B``) counts as ``strong_verdict_weight`` battles. An ``ERROR`` sample is not a battle: it is counted
(``error_sample_count``) and its reason is in ``error_messages``. The prompt of a battle is its id columns' values,
so the bootstrap resamples prompts with all their battles.

A pair whose two responses were identical, made a ``TIE`` without a judge call (``identical_responses: "tie"``), is
neither judged nor failed: it counts as many tie battles as a judged pair has samples (``sampling_count``, 1 with
``flip: "random"``; read from the judgments as the most samples of any judged pair, 1 when no pair was judged), so
it weighs as much as a pair the judge called a tie in every sample. It is counted in ``identical_pair_count`` and
``identical_response_count`` (AutoSxS's name for the same count).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.arena.battles import battles_from_records
from autorater_pipelines.arena.length_control import length_controlled_win_rates
from autorater_pipelines.arena.panel_metrics import arena_panel_metrics, panel_strong
from autorater_pipelines.arena.params import RankingOptions
from autorater_pipelines.arena.prepare import prompt_key
from autorater_pipelines.arena.ranking import rank_models
from autorater_pipelines.errors import InputError

__all__ = [
    "battle_records",
    "identical_battle_weight",
    "identical_summary",
    "leaderboard_from_judgments",
    "strong_verdict_summary",
]

BATTLE_UNIT = (
    "one judged sample (both presentation orders count); ERROR samples are not battles; an identical pair is "
    "identical_battle_weight tie battles"
)
"""What one battle is, as ``metrics.json``'s ``computed_over.battle_unit`` says it."""


def battle_records(
    judgments: Sequence[Mapping[str, Any]], id_columns: Sequence[str], strong_verdict_weight: int = 3
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """One battle record per judged sample (module docstring), and the counts of what was and was not a battle.

    Returns:
        ``(records, counts)``: records for :func:`~autorater_pipelines.arena.battles.battles_from_records`;
        counts ``pair_count`` (judgment rows), ``sample_count``, ``battle_sample_count``, ``error_sample_count``,
        ``unjudged_pair_count`` (rows without any sample, e.g. a response that could not be generated),
        ``strong_verdict_count``, ``identical_pair_count`` and ``identical_response_count`` (pairs with identical
        responses: no sample, ``identical_battle_weight`` tie battles each), ``identical_battle_weight``.

    Raises:
        InputError: a judgment row lacks ``model_a``/``model_b`` or an id column (not an arena judgment file).
    """
    ids = list(id_columns)
    records: list[dict[str, Any]] = []
    rows = list(judgments)
    weight = identical_battle_weight(rows)
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
    for number, row in enumerate(rows, start=1):
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
        if _is_identical(row):
            counts["identical_pair_count"] += 1  # no judge call, no sample: tie battles as a judged pair's samples
            records.append({**battle, "winner": "TIE", "weight": float(weight), **texts})
        elif row.get("jurors"):
            _panel_battles(row, battle, texts, records, counts, strong_verdict_weight)
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
    counts["identical_response_count"] = counts["identical_pair_count"]
    counts["identical_battle_weight"] = weight
    return records, counts


def _panel_battles(
    row: Mapping[str, Any],
    battle: dict[str, Any],
    texts: dict[str, Any],
    records: list[dict[str, Any]],
    counts: dict[str, int],
    strong_verdict_weight: int,
) -> None:
    """A panel's pair (:mod:`autorater_pipelines.pairwise.panel`): its verdict, as many battles as one juror's samples.

    So a panel run weighs each pair as a one-judge run does (``sampling_count`` battles); a panel ``ERROR`` (every
    juror abstained) counts that many error samples. A strong panel verdict
    (:func:`~autorater_pipelines.arena.panel_metrics.panel_strong`: majority vote, a strict majority of the voting
    jurors gave it strongly) weighs ``strong_verdict_weight`` per battle, else 1.
    """
    units = max(1, _samples_per_judge(row))
    counts["sample_count"] += units
    if row.get("choice") not in ("A", "B", "TIE"):
        counts["error_sample_count"] += units
        return
    counts["battle_sample_count"] += units
    strong = panel_strong(row)
    counts["strong_verdict_count"] += units if strong else 0
    weight = float(strong_verdict_weight if strong else 1)
    records.extend({**battle, "winner": row["choice"], "weight": weight, **texts} for _ in range(units))


def identical_battle_weight(judgments: Sequence[Mapping[str, Any]]) -> int:
    """Tie battles an identical pair counts as: the most samples of any judged pair of the run (1 when none).

    Every judged pair of a run has ``sampling_count`` samples (1 with ``flip: "random"``), ERROR samples included,
    so this is the run's ``sampling_count``, read from the judgments alone (``autorater rescore`` has no
    parameters of the judge).
    """
    judged = [_samples_per_judge(row) for row in judgments if not _is_identical(row)]
    return max([1, *judged])


def _samples_per_judge(row: Mapping[str, Any]) -> int:
    """A judged pair's samples, per juror for a panel's pair (its samples are every juror's)."""
    samples = len(row.get("samples") or [])
    return samples // max(1, len(row["jurors"])) if row.get("jurors") else samples


def _is_identical(row: Mapping[str, Any]) -> bool:
    """A pair made a ``TIE`` for identical responses (``identical_responses: "tie"``), without a judge call."""
    return row.get("identical_responses") is True and row.get("choice") == "TIE"


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
            "battle_unit": BATTLE_UNIT,
            "strong_verdict_weight": options.strong_verdict_weight,
        },
        "notes": ranking.notes + _identical_note(counts) + _unranked_note(judgments, battles.models),
        "ranking_options": options.model_dump(),
        "id_columns": ids,
    }
    metrics.update(
        arena_panel_metrics(judgments, lambda rows: battle_records(rows, ids, options.strong_verdict_weight))
    )
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
            "battle_unit": BATTLE_UNIT,
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


def identical_summary(metrics: Mapping[str, Any]) -> str | None:
    """``4 identical pairs tied without a judge call (2 tie battles each)``, from the metrics; None without any."""
    count = metrics.get("identical_pair_count")
    if not count:
        return None
    weight = metrics.get("identical_battle_weight") or 1
    pairs = "pair" if count == 1 else "pairs"
    each = "1 tie battle" if weight == 1 else f"{_number(weight)} tie battles"
    return f"{count} identical {pairs} tied without a judge call ({each} each, as a judged pair's samples)"


def _identical_note(counts: Mapping[str, int]) -> list[str]:
    """A note when every battle is a tie of identical responses: the scores say nothing about the models."""
    if not counts["identical_pair_count"] or counts["battle_sample_count"]:
        return []
    return [
        f"every battle is a tie of identical responses ({counts['identical_pair_count']} pairs, "
        "identical_responses: tie, no judge call): the scores are all equal and say nothing about the models"
    ]


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
