"""What ``autorater run arena`` checks before the run and prints after it."""

from __future__ import annotations

from typing import Any

from autorater_pipelines.arena.leaderboard import identical_summary, strong_verdict_summary
from autorater_pipelines.commands._run_spec import RunSpec, juror_errors

__all__ = [
    "EXPORT_TASK",
    "OUTPUTS",
    "RANK_TASK",
    "RUN",
    "extra_outputs",
    "failed_rows",
    "preflight",
    "print_leaderboard",
    "print_summary",
]

RANK_TASK = "rank-arena-models"
"""Task that outputs the leaderboard and the metrics."""

OUTPUTS = {
    "leaderboard.jsonl": "leaderboard",
    "judgments.jsonl": "judgments",
    "error_messages.jsonl": "error_messages",
    "metrics.json": f"{RANK_TASK}/metrics_json",
    "report.html": "build-arena-report/report",
}
"""Output files of ``autorater run arena`` → pipeline or task output artifacts."""

EXPORT_TASK = "export-arena-results"
"""Task that exports the judgments and the leaderboard in ``judgments_format``."""


def extra_outputs(params: dict[str, Any]) -> dict[str, str]:
    """``judgments.json`` and ``leaderboard.json`` (one JSON array each) when ``judgments_format`` is ``json``."""
    if str(params.get("judgments_format") or "jsonl").lower() != "json":
        return {}
    return {
        "judgments.json": f"{EXPORT_TASK}/judgments_export",
        "leaderboard.json": f"{EXPORT_TASK}/leaderboard_export",
    }


def preflight(params: dict[str, Any]) -> tuple[int, list[str]]:
    """Check the whole run in-process (:func:`autorater_pipelines.arena.validate_run`); print the judge calls.

    Returns:
        The number of dataset rows (prompts) read, and no row files.

    Raises:
        InputError: the same errors the pipeline's prepare step would raise.
    """
    from autorater_pipelines.arena.preflight import validate_run
    from autorater_pipelines.arena.prepare import prompt_key

    run = validate_run(params, probe_endpoint=True)
    for note in run.notes:
        print(note, flush=True)
    return len({prompt_key(row, run.params.id_columns) for row in run.rows or []}), []


def failed_rows(metrics: dict[str, Any]) -> tuple[int, int]:
    """``(failed, total)``: samples, and pairs left unjudged (a response not generated) as failed ones.

    An ERROR sample is not a battle; a pair without any sample (its response could not be generated) counts once.
    A pair with identical responses tied without a call (``identical_pair_count``) is neither judged nor failed.
    """
    unjudged = int(metrics.get("unjudged_pair_count") or 0)
    failed = int(metrics.get("error_sample_count") or 0) + unjudged
    return failed, int(metrics.get("sample_count") or 0) + unjudged


def _num(value: Any, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def print_leaderboard(rows: list[dict[str, Any]], *, baseline: bool) -> None:
    """Print the leaderboard as a table: rank (interval), model, score [95 % CI], Elo, battles (W/L/T)."""
    width = max([5, *(len(str(r["model"])) for r in rows)])
    extra = "  win vs baseline" if baseline else ""
    print(f"  {'rank':>7}  {'model':<{width}}  {'score':>6}  {'95% CI':>15}  {'elo':>6}  {'battles':>8}  W/L/T{extra}")
    for r in rows:
        rank = f"{r['rank']} ({r['rank_upper']}-{r['rank_lower']})"
        ci = f"[{_num(r['score_ci_lower'], '.2f')}, {_num(r['score_ci_upper'], '.2f')}]"
        wlt = f"{r['wins']:g}/{r['losses']:g}/{r['ties']:g}"
        rate = f"  {_num(r.get('win_rate_vs_baseline'), '.1%')}" if baseline else ""
        print(
            f"  {rank:>7}  {str(r['model']):<{width}}  {r['score']:>6.2f}  {ci:>15}  {r['elo']:>6.0f}  "
            f"{r['battles']:>8g}  {wlt}{rate}"
        )


def print_summary(metrics: dict[str, Any]) -> None:
    """Print the pairs and battle counts, the leaderboard and the separability.

    Samples and weighted battles are both said: a strong verdict or an identical pair weighs more than one battle.
    """
    over = metrics.get("computed_over") or {}
    unjudged = int(metrics.get("unjudged_pair_count") or 0)
    identical = int(metrics.get("identical_pair_count") or 0)
    not_judged = f" (+{unjudged} not judged: a response was not generated)" if unjudged else ""
    same = f" (+{identical} identical: tied without a judge call)" if identical else ""
    jurors_failing = juror_errors(metrics, "error_sample_count")  # a panel's juror hides behind the others' votes
    failing = f"; juror ERROR samples: {', '.join(jurors_failing)}" if jurors_failing else ""
    print(
        f"\nArena: {len(metrics['models'])} models, {metrics['pair_count'] - unjudged - identical} judged pairs"
        f"{same}{not_judged}, {metrics['battle_sample_count']} battle samples of {metrics['sample_count']} "
        f"({metrics['error_sample_count']} ERROR samples are not battles{failing}), "
        f"{float(metrics['battle_count']):g} battles weighted, {over.get('prompts')} prompts"
    )
    same_line = identical_summary(metrics)
    if same_line:
        print(f"  {same_line}")
    strong = strong_verdict_summary(metrics)
    if strong:
        print(f"  {strong}")
    rows = list(metrics["leaderboard"].values())
    if not rows:  # no battle at all: the note says why
        for note in metrics.get("notes") or []:
            print(f"  note: {note}")
        return
    print_leaderboard(rows, baseline=any("win_rate_vs_baseline" in r for r in rows))
    print(
        f"  intervals: {over.get('interval')} over {over.get('bootstrap_rounds')} prompt-bootstrap rounds "
        f"(seed {over.get('seed')}); scores: {over.get('score_reference')}"
    )
    if metrics.get("separability") is not None:
        print(f"  separability {metrics['separability']:.1%} (model pairs whose intervals do not overlap)")
    for note in metrics.get("notes") or []:
        print(f"  note: {note}")


RUN = RunSpec(
    preflight=preflight,
    outputs=OUTPUTS,
    print_summary=print_summary,
    extra_outputs=extra_outputs,
    failed_rows=failed_rows,
    failed_unit=lambda m: "samples and unjudged pairs" if m.get("unjudged_pair_count") else "samples",
)
"""How ``autorater run arena`` treats the arena (the ``run`` of :data:`autorater_pipelines.arena.spec.SPEC`)."""
