"""The arena's report hooks: metrics from the rows, re-scoring without model calls, and the report page.

An arena run's output directory holds ``leaderboard.jsonl`` (its row file: one row per model), ``judgments.jsonl``
(one row per judged pair and prompt), ``error_messages.jsonl`` and ``metrics.json``. Re-scoring refits the
leaderboard from ``judgments.jsonl`` with other ranking options — ``bootstrap_rounds``, ``seed``, ``style_control``,
``ties``, ``baseline``, ``strong_verdict_weight`` — and no model call.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from autorater_pipelines import io
from autorater_pipelines.arena.leaderboard import (
    identical_summary,
    leaderboard_from_judgments,
    strong_verdict_summary,
)
from autorater_pipelines.arena.params import ArenaParams, RankingOptions
from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.report._figures import figure, forest, heatmap
from autorater_pipelines.report._outputs import RunOutputs
from autorater_pipelines.report._panel import arena_panel_context
from autorater_pipelines.report._rescore import RescoreResult

__all__ = ["JUDGMENTS_FILE", "arena_context", "arena_id_columns", "arena_metrics", "rescore_arena"]

JUDGMENTS_FILE = "judgments.jsonl"


def arena_metrics(rows: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What can be said from the leaderboard rows alone (``metrics.json`` absent): the leaderboard and its models."""
    return {"leaderboard": {str(r.get("model")): dict(r) for r in rows}, "models": [r.get("model") for r in rows]}


def arena_id_columns(rows: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """The leaderboard's row id: ``model``."""
    return ["model"]


def _judgments(outputs: RunOutputs) -> list[dict[str, Any]]:
    path = os.path.join(outputs.directory, JUDGMENTS_FILE)
    if not os.path.isfile(path):
        raise InputError(f"an arena run's {JUDGMENTS_FILE} is missing: the leaderboard cannot be refitted", source=path)
    return io.read_jsonl(path)


def rescore_arena(outputs: RunOutputs, params: Mapping[str, Any]) -> RescoreResult:
    """Refit the leaderboard from ``judgments.jsonl`` with other ranking options (module docstring); no model call.

    Raises:
        InputError: an unknown option or a bad value (the same bounds as the pipeline's parameters), no
            ``judgments.jsonl``, or a ``baseline`` without battles.
    """
    previous = outputs.metrics
    known = set(RankingOptions.model_fields) | {"id_columns"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise InputError(
            "invalid re-scoring options for an Arena run: " + unknown_names("keys", unknown, sorted(known)),
            source="--params",
        )
    before = dict(previous.get("ranking_options") or {})
    merged = {**before, **{k: v for k, v in params.items() if k != "id_columns"}}
    if merged.get("style_control") and merged.get("ties") == "rao_kupper" and "style_control" not in params:
        earlier = "an earlier re-scoring" if previous.get("rescore_options") else "the run"
        raise InputError(
            f'"ties": "rao_kupper" cannot be fitted with style control, and style_control is true from {earlier} '
            '(an option left out keeps its latest value); add "style_control": false to the options',
            source="--params",
        )
    ids = list(params.get("id_columns") or previous.get("id_columns") or [])
    if not ids:
        raise InputError("the run's metrics.json names no id_columns; give them in --params", source="--params")
    try:  # the pipeline's own parameter model checks the values (same bounds, same messages)
        checked = ArenaParams.model_validate(
            {
                "evaluation_dataset": "-",
                "task": "-",
                "id_columns": ids,
                "autorater_prompt_parameters": {},
                "response_columns": {m: m for m in (previous.get("models") or ["a", "b"])},
                **{k: v for k, v in merged.items() if k != "strong_verdict_weight" or v is not None},
            }
        )
    except pydantic.ValidationError as exc:
        raise InputError(str(exc.errors()[0].get("msg")), source="--params") from None
    except InputError as exc:
        raise InputError(str(exc), source="--params") from None
    leaderboard, metrics = leaderboard_from_judgments(_judgments(outputs), ids, checked.ranking())
    metrics["rescore_options"] = {
        **{k: v for k, v in params.items()},
        "model_calls": 0,
        "original": {"ranking_options": before},
    }
    files = {"leaderboard.jsonl": leaderboard, "metrics.json": metrics}
    return RescoreResult(outputs.kind, metrics, previous, files)


def _fmt(value: Any, spec: str = ".2f") -> str:
    return "n/a" if value is None else format(value, spec)


def _flagged_pairs(judgments: Sequence[Mapping[str, Any]], errors: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per pair of models: ERROR samples and position-inconsistent prompts (the two orders disagree)."""
    flags: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for row in judgments:
        pair = (str(row.get("model_a")), str(row.get("model_b")))
        samples = row.get("samples") or []
        by_order = collections.defaultdict(set)
        for s in samples:
            if s.get("choice") in ("A", "B", "TIE"):
                by_order[bool(s.get("flipped"))].add(s["choice"])
        flags[pair]["prompts"] += 1
        if len(by_order) == 2 and by_order[True] != by_order[False]:
            flags[pair]["inconsistent"] += 1
    for e in errors:
        if "model_a" in e and "model_b" in e:
            flags[(str(e["model_a"]), str(e["model_b"]))]["errors"] += 1
    out = [
        {"pair": f"{a} vs {b}", "prompts": c["prompts"], "errors": c["errors"], "inconsistent": c["inconsistent"]}
        for (a, b), c in sorted(flags.items())
        if c["errors"] or c["inconsistent"]
    ]
    return sorted(out, key=lambda r: (-r["errors"], -r["inconsistent"], r["pair"]))


def arena_context(outputs: RunOutputs, *, max_rows: int = 2000) -> dict[str, Any]:
    """The report template's context: leaderboard, forest plot, win-rate heatmap, battles per pair, flags."""
    metrics = outputs.metrics
    board = outputs.rows  # leaderboard.jsonl, best first
    models = [str(r["model"]) for r in board]
    figures = {}
    if board and all(r.get("score_ci_lower") is not None for r in board):
        figures["fig-forest"] = figure(
            "fig-forest",
            "Scores with 95 % intervals",
            "Bradley–Terry log-strength (natural log) of each model, best first, with its prompt-bootstrap "
            "interval; " + str((metrics.get("computed_over") or {}).get("score_reference") or ""),
            forest(
                models,
                [r["score"] for r in board],
                [(r["score_ci_lower"], r["score_ci_upper"]) for r in board],
                xlabel="score",
            ),
        )
    matrix = metrics.get("win_matrix") or {}
    if matrix:
        rates: list[list[int | None]] = [
            [None if a == b else round(100 * (matrix.get(a, {}).get(b) or {}).get("win_rate", 0)) for b in models]
            for a in models
        ]  # a model never meets itself: blank diagonal
        counts: list[list[int | None]] = [
            [None if a == b else int((matrix.get(a, {}).get(b) or {}).get("battles", 0)) for b in models]
            for a in models
        ]
        figures["fig-win-rates"] = figure(
            "fig-win-rates",
            "Observed win rates (%)",
            "Share of (weighted) battles the row's model won against the column's model, ties half; 0 where they "
            "never met (see battles per pair).",
            heatmap(rates, models, models, "model", "opponent"),
        )
        figures["fig-battles"] = figure(
            "fig-battles",
            "Battles per pair",
            "Weighted battles between the row's and the column's model (every judged sample, both orders).",
            heatmap(counts, models, models, "model", "opponent"),
        )
    judgments = _judgments_or_empty(outputs)
    style = metrics.get("style_coefficients") or {}
    return {
        "kind": outputs.kind,
        "title": "Arena report",
        "leaderboard": [
            {
                **r,
                "score_text": _fmt(r.get("score")),
                "ci_text": f"{_fmt(r.get('score_ci_lower'))} – {_fmt(r.get('score_ci_upper'))}",
                "elo_text": _fmt(r.get("elo"), ".0f"),
                "style_text": _fmt(r.get("score_style_controlled")),
                "vs_baseline": _fmt(r.get("win_rate_vs_baseline"), ".1%") if "win_rate_vs_baseline" in r else "",
                **{k: _count(r.get(k)) for k in ("battles", "wins", "losses", "ties")},
            }
            for r in board
        ],
        "figures": figures,
        "style": [
            {"feature": k, "coefficient": _fmt(v.get("coefficient"), ".3f"), "interval": _interval(v)}
            for k, v in style.items()
        ],
        "flagged": _flagged_pairs(judgments, outputs.errors)[:max_rows],
        "computed_over": {
            **(metrics.get("computed_over") or {}),
            **{k: metrics[k] for k in ("pair_count", "sample_count", "error_sample_count") if k in metrics},
        },
        "battles_note": _battles_note(metrics),
        "panel": arena_panel_context(metrics),
        "arena_notes": metrics.get("notes") or [],
        "errors": outputs.errors[:max_rows],
    }


def _battles_note(metrics: Mapping[str, Any]) -> str:
    """What a battle is in this run: the samples that are battles, the ERROR samples that are not, strong verdicts."""
    if "battle_sample_count" not in metrics:
        return ""
    errors = metrics.get("error_sample_count") or 0
    note = (
        f"Battles: every judged sample is one ({metrics['battle_sample_count']} from {metrics.get('sample_count')} "
        f"samples, both presentation orders; {errors} ERROR samples are not battles)."
    )
    for extra in (identical_summary(metrics), strong_verdict_summary(metrics)):
        if extra:
            note += f" {extra[0].upper()}{extra[1:]}."
    return note


def _count(value: Any) -> Any:
    """A (weighted) battle count as printed: ``48``, not ``48.0``; a fractional count as ``2.5``."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else round(value, 2)
    return value


def _interval(v: Mapping[str, Any]) -> str:
    return f"{_fmt(v.get('ci_lower'), '.3f')} – {_fmt(v.get('ci_upper'), '.3f')}"


def _judgments_or_empty(outputs: RunOutputs) -> list[dict[str, Any]]:
    path = os.path.join(outputs.directory, JUDGMENTS_FILE)
    return io.read_jsonl(path) if os.path.isfile(path) else []
