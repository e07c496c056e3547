"""What ``autorater run autosxs`` checks before the run and prints after it."""

from __future__ import annotations

import json
import os
from typing import Any

from autorater_pipelines.autosxs.spec import AUTORATER_TASK, METRICS_TASK
from autorater_pipelines.commands._position_order import print_position_order
from autorater_pipelines.commands._run_spec import RunSpec, juror_errors

__all__ = [
    "AUTORATER_TASK",
    "METRICS_TASK",
    "RUN",
    "child_env",
    "failed_rows",
    "extra_outputs",
    "preflight",
    "print_model_evaluations",
    "print_summary",
]

OUTPUTS = {
    "judgments.jsonl": "judgments",
    "error_messages.jsonl": "error_messages",
    "metrics.json": f"{METRICS_TASK}/metrics_json",
    "report.html": "build-autosxs-report/report",
}
"""Output file in ``--output-dir`` → pipeline output artifact (or ``task/output`` under the pipeline root)."""
MODEL_EVALUATIONS_FILE = "model_evaluations.json"


def extra_outputs(params: dict[str, Any]) -> dict[str, str]:
    """Output files that depend on the parameters.

    ``judgments.json`` (one JSON array) when ``judgments_format`` is ``json``; ``model_evaluations.json`` (the
    Model Registry evaluations written, or why not) when model A or B is a Model Registry model.
    """
    from autorater_pipelines.autosxs.model_registry import is_registry_model

    extra = {}
    if str(params.get("judgments_format", "jsonl")).lower() == "json":
        extra["judgments.json"] = "export-pairwise-judgments/evaluation_dataset"
    if any(is_registry_model(str(params.get(key) or "")) for key in ("model_a", "model_b")):
        extra[MODEL_EVALUATIONS_FILE] = f"{METRICS_TASK}/model_evaluations"
    return extra


def child_env(out_dir: str) -> dict[str, str]:
    """The pipeline steps' environment: where the judgments will be once the run has moved them into OUT.

    The Model Registry import records it as the evaluation's ``row_based_metrics_path`` (the step's own
    artifact is in the staging folder, which is deleted when the run ends).
    """
    from autorater_pipelines.autosxs.model_registry import ROW_BASED_METRICS_PATH_ENV

    return {ROW_BASED_METRICS_PATH_ENV: os.path.join(out_dir, "judgments.jsonl")}


def print_model_evaluations(out_dir: str, written: list[str]) -> None:
    """Print the ModelEvaluation written to each Model Registry model, or why it could not be.

    Reads ``model_evaluations.json`` when this run wrote it (``written``: a run with a Model Registry model);
    a file of that name from anywhere else is never reported. Content of another shape is reported in one
    warning line.
    """
    path = os.path.join(out_dir, MODEL_EVALUATIONS_FILE)
    if MODEL_EVALUATIONS_FILE not in written or not os.path.exists(path):
        return
    try:
        with open(path, encoding="utf-8") as fh:
            evaluations = json.load(fh)
    except (OSError, ValueError) as exc:
        evaluations = exc
    if not isinstance(evaluations, dict) or not all(isinstance(e, dict) for e in evaluations.values()):
        print(
            f"  warning: {path} is not the Model Registry report of this run (expected a JSON object of "
            f"{{side: {{model, resource_name, error}}}}, got {str(evaluations)[:120]!r}); see the metrics step's log"
        )
        return
    for side, entry in sorted(evaluations.items()):
        if entry.get("resource_name"):
            print(f"  ModelEvaluation of model {side.upper()}: {entry['resource_name']}")
        else:
            model, error = entry.get("model"), entry.get("error")
            print(f"  warning: no ModelEvaluation written to model {side.upper()} ({model}): {error}")


def preflight(params: dict[str, Any]) -> tuple[int, list[str]]:
    """Check the whole run in-process before the pipeline starts: :func:`autorater_pipelines.autosxs.validate_run`.

    Returns:
        The number of data rows read from ``evaluation_dataset``, and the local files its rows name (none:
        AutoSxS rows hold text).

    Raises:
        InputError: the same errors the pipeline's prepare step would raise.
    """
    from autorater_pipelines import autosxs

    return len(autosxs.validate_run(params, probe_endpoint=True).rows or []), []


def _fmt(value: Any, spec: str) -> str:
    """Format a number, or ``n/a`` when it is undefined (e.g. Cohen's kappa with one class)."""
    return "n/a" if value is None else format(value, spec)


def _rate(metrics: dict[str, Any], key: str) -> str:
    value = metrics.get(key)
    if value is None:
        return "n/a"
    low, high = metrics.get(f"{key}_ci_lower"), metrics.get(f"{key}_ci_upper")
    ci = f"  (95% CI {low:.1%}–{high:.1%})" if low is not None and high is not None else ""
    return f"{value:.1%}{ci}"


def print_summary(metrics: dict[str, Any]) -> None:
    """Print win rates with confidence intervals and, with human labels, alignment."""
    print(
        f"\nAutoSxS: {metrics['evaluation_count']} examples, {metrics['judged_count']} judged, "
        f"{metrics['error_count']} with errors{_panel_errors(metrics)}"
    )
    one_order = int(metrics.get("one_order_only_count") or 0)
    if one_order:
        treated = "excluded" if metrics.get("one_order_only_excluded", True) else "included (include_incomplete)"
        print(
            f"  {one_order} rows judged in one order only: {treated} "
            "(their samples in the other order failed; a re-run completes them)"
        )
    print(f"  model A win rate   {_rate(metrics, 'autorater_model_a_win_rate')}")
    print(f"  model B win rate   {_rate(metrics, 'autorater_model_b_win_rate')}")
    print(f"  tie rate           {_rate(metrics, 'autorater_tie_rate')}")
    if "autorater_model_a_weighted_win_rate" in metrics:  # preference "probability"
        error = metrics.get("autorater_model_a_weighted_win_rate_standard_error")
        fallbacks = int(metrics.get("preference_fallback_sample_count") or 0)
        print(
            f"  model A weighted win rate {_fmt(metrics['autorater_model_a_weighted_win_rate'], '.4%')}"
            f" (standard error {_fmt(error, '.4%')})"
            + (f"; {fallbacks} sample(s) without a verdict probability counted by their vote" if fallbacks else "")
        )
        alternatives = int(metrics.get("verdict_from_alternatives_sample_count") or 0)
        if alternatives:
            print(f"    {alternatives} one-token answer(s) that were no verdict voted by their alternatives")
    if metrics.get("position_consistency") is not None:
        print(
            f"  position consistency {metrics['position_consistency']:.1%} "
            f"({metrics['position_consistency_count']}/{metrics['both_orders_judged_count']} examples)"
        )
    if metrics.get("first_position_rate") is not None:
        print(
            f"  first-shown response chosen {metrics['first_position_rate']:.1%} "
            f"({metrics['first_position_count']}/{metrics['decisive_sample_count']} A-or-B samples)"
            + (f"; {metrics['first_position_rate_note']}" if metrics.get("first_position_rate_note") else "")
        )
    if metrics.get("identical_response_count"):
        print(f"  identical responses {metrics['identical_response_count']} (TIE without a judge call)")
    if metrics.get("original_order_accuracy") is not None:
        print(
            f"  per-order accuracy original {metrics['original_order_accuracy']:.1%} "
            f"({metrics['original_order_correct_count']}/{metrics['original_order_sample_count']}), swapped "
            f"{metrics['swapped_order_accuracy']:.1%} "
            f"({metrics['swapped_order_correct_count']}/{metrics['swapped_order_sample_count']})"
            if metrics.get("swapped_order_accuracy") is not None
            else f"  original-order accuracy {metrics['original_order_accuracy']:.1%}"
        )
    if metrics.get("alignment_count"):
        print(
            f"  human alignment on {metrics['alignment_count']} examples where both chose A or B: "
            f"accuracy {_fmt(metrics.get('accuracy'), '.1%')}, "
            f"F1 {_fmt(metrics.get('f1_score'), '.3f')}, Cohen's kappa {_fmt(metrics.get('cohens_kappa'), '.3f')}"
        )
    _print_panel(metrics)
    cached_errors = int(metrics.get("cached_error_sample_count") or 0)
    print(
        f"  model call attempts {metrics.get('model_call_attempt_count', 0)}, "
        f"cached samples {metrics.get('cached_sample_count', 0)}"
        + (f", {cached_errors} errors from cached answers that could not be parsed" if cached_errors else "")
    )
    if cached_errors:
        print(
            "    (a re-run asks them again with autorater_parameters.retry_unparseable true; "
            "the default for temperature > 0)"
        )


def _panel_errors(metrics: dict[str, Any]) -> str:
    """`` (panel); juror errors: <spec> <n>, …`` after a panel's error count (empty without a panel)."""
    if not isinstance(metrics.get("jurors"), dict):
        return ""
    failing = juror_errors(metrics, "error_count")
    return " (panel)" + (f"; juror errors: {', '.join(failing)}" if failing else "")


def _print_panel(metrics: dict[str, Any]) -> None:
    """A panel's jurors (votes, abstentions, accuracy) and their agreement, when the run had one."""
    jurors, agreement = metrics.get("jurors"), metrics.get("juror_agreement")
    if not isinstance(jurors, dict) or not isinstance(agreement, dict):
        return
    print(
        f"  panel of {len(jurors)} jurors ({metrics.get('panel_vote', 'majority')} vote): Fleiss' kappa "
        f"{_fmt(agreement.get('fleiss_kappa'), '.3f')} over {agreement.get('fleiss_kappa_row_count', 0)} rows "
        "every juror voted on"
    )
    for name, juror in jurors.items():
        aligned = (
            f", accuracy {_fmt(juror.get('accuracy'), '.1%')} on {juror['alignment_count']}"
            if juror.get("alignment_count")
            else ""
        )
        print(f"    {name}: {juror.get('vote_count', 0)} votes, {juror.get('abstention_count', 0)} abstained{aligned}")


def failed_rows(metrics: dict[str, Any]) -> tuple[int, int]:
    """``(failed, total)``: rows left out of the rates (errors, rows judged in one order only) count as failed."""
    total = int(metrics.get("evaluation_count") or 0)
    return total - int(metrics.get("judged_count") or 0), total


RUN = RunSpec(
    preflight=preflight,
    outputs=OUTPUTS,
    print_summary=print_summary,
    extra_outputs=extra_outputs,
    print_outputs=print_model_evaluations,
    print_params_notes=print_position_order,
    child_env=child_env,
    failed_rows=failed_rows,
)
"""How ``autorater run autosxs`` treats AutoSxS (the ``run`` of :data:`autorater_pipelines.autosxs.spec.SPEC`)."""
