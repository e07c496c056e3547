"""The ``autorater`` command line: compile, run locally, and inspect AutoSxS and Gecko templates.

Exit status: 0 success, 1 the run failed (a pipeline step failed), 2 bad input (parameters, dataset,
template). Bad input is reported in one line without a traceback and leaves no output files.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autorater_pipelines import __version__
from autorater_pipelines.errors import AutoraterError, InputError

__all__ = ["main"]

logger = logging.getLogger("autorater_pipelines.cli")

DEFAULT_COMPILED_DIR = "compiled"


def _template_path(name: str, template: str | None) -> str:
    if template:
        path = template
    else:
        packaged = Path(__file__).resolve().parent.parent.parent / DEFAULT_COMPILED_DIR / f"{name}.yaml"
        path = str(packaged) if packaged.exists() else os.path.join(DEFAULT_COMPILED_DIR, f"{name}.yaml")
    if not os.path.exists(path):
        raise InputError(
            f"compiled template not found: {path!r}; run `autorater compile` or pass --template", source="--template"
        )
    return path


def _load_params(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            params = json.load(fh)
    except FileNotFoundError:
        raise InputError("file not found", source=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", source=path) from None
    if not isinstance(params, dict):
        raise InputError(
            f"must be a JSON object mapping pipeline parameter names to values, got {type(params).__name__}",
            source=path,
        )
    return params


def _check_param_names(params: dict[str, Any], template: str, source: str) -> None:
    from autorater_pipelines.pipelines._local import template_inputs

    inputs = template_inputs(template)
    unknown = sorted(set(params) - set(inputs))
    if unknown:
        raise InputError(f"unknown pipeline parameters {unknown}; valid: {sorted(inputs)}", source=source)
    missing = sorted(n for n, spec in inputs.items() if not getattr(spec, "optional", False) and n not in params)
    if missing:
        raise InputError(f"missing required pipeline parameters {missing}", source=source)


def _preflight_autosxs(params: dict[str, Any]) -> None:
    """Validate parameters and dataset in-process before starting the pipeline (fast, clean errors)."""
    from autorater_pipelines import autosxs

    autosxs.check_run_parameters(
        params.get("autorater_model", ""), params.get("autorater_parameters"), params.get("judgments_format", "jsonl")
    )
    autosxs.prepare_examples(
        evaluation_dataset=params["evaluation_dataset"],
        task=params["task"],
        id_columns=params["id_columns"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_column_a=params.get("response_column_a", ""),
        response_column_b=params.get("response_column_b", ""),
        human_preference_column=params.get("human_preference_column", ""),
        model_a=params.get("model_a", ""),
        model_b=params.get("model_b", ""),
        experimental_args=params.get("experimental_args"),
    )


def _absolutize_local_paths(params: dict[str, Any]) -> None:
    """Make relative local dataset and replay paths absolute, so pipeline steps find them from any cwd."""

    def absolute(path: str) -> str:
        path = path.strip()
        return path if "://" in path or os.path.isabs(path) or not path else os.path.abspath(path)

    if isinstance(params.get("evaluation_dataset"), str):
        params["evaluation_dataset"] = ",".join(absolute(p) for p in params["evaluation_dataset"].split(","))
    for key in ("autorater_model", "rubric_generation_model", "validator_model"):
        value = params.get(key)
        if isinstance(value, str) and value.startswith("replay/"):
            params[key] = "replay/" + absolute(value[len("replay/") :])


def _fmt_rate(metrics: dict[str, Any], key: str) -> str:
    value = metrics.get(key)
    if value is None:
        return "n/a"
    low, high = metrics.get(f"{key}_ci_lower"), metrics.get(f"{key}_ci_upper")
    ci = f"  (95% CI {low:.1%}–{high:.1%})" if low is not None and high is not None else ""
    return f"{value:.1%}{ci}"


def _print_autosxs_summary(metrics: dict[str, Any], out_dir: str) -> None:
    print(
        f"\nAutoSxS: {metrics['evaluation_count']} examples, {metrics['judged_count']} judged, "
        f"{metrics['error_count']} errors"
    )
    print(f"  model A win rate   {_fmt_rate(metrics, 'autorater_model_a_win_rate')}")
    print(f"  model B win rate   {_fmt_rate(metrics, 'autorater_model_b_win_rate')}")
    print(f"  tie rate           {_fmt_rate(metrics, 'autorater_tie_rate')}")
    if metrics.get("position_consistency") is not None:
        print(
            f"  position consistency {metrics['position_consistency']:.1%} "
            f"({metrics['position_consistency_count']}/{metrics['both_orders_judged_count']} examples)"
        )
    if metrics.get("alignment_count"):
        print(
            f"  human alignment on {metrics['alignment_count']} examples: accuracy {metrics['accuracy']:.1%}, "
            f"F1 {metrics['f1_score']:.3f}, Cohen's kappa {metrics['cohens_kappa']:.3f}"
        )
    print(
        f"  model call attempts {metrics.get('model_call_attempt_count', 0)}, "
        f"cached samples {metrics.get('cached_sample_count', 0)}"
    )
    print(f"Outputs in {out_dir}: judgments.jsonl, error_messages.jsonl, metrics.json")


def _cmd_compile(args: argparse.Namespace) -> int:
    from autorater_pipelines.pipelines import compile_pipelines

    for path in compile_pipelines(args.output_dir, image=args.image):
        print(f"wrote {path}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from autorater_pipelines.pipelines._local import PipelineRunError, artifact_path, run_local

    template = _template_path(args.pipeline, args.template)
    params = _load_params(args.params)
    _check_param_names(params, template, args.params)
    # GCPC-style project/location placeholders only resolve on Vertex AI: pass explicit values.
    params.setdefault("project", "")
    params.setdefault("location", "us-central1")
    _absolutize_local_paths(params)
    if args.pipeline == "autosxs":
        _preflight_autosxs(params)

    out_dir = os.path.abspath(args.output_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.partial-", dir=parent)
    try:
        outputs = _run_quietly(args.quiet, run_local, template, params, os.path.join(staging, "pipeline_root"))
        files = {
            "judgments.jsonl": artifact_path(outputs["judgments"]),
            "error_messages.jsonl": artifact_path(outputs["error_messages"]),
        }
        metrics_dir = os.path.dirname(os.path.dirname(files["judgments.jsonl"]))
        metrics_file = _find_metrics_json(metrics_dir, staging)
        files["metrics.json"] = metrics_file
        os.makedirs(out_dir, exist_ok=True)
        for name, src in files.items():
            shutil.copyfile(src, os.path.join(staging, name))
        for name in files:
            os.replace(os.path.join(staging, name), os.path.join(out_dir, name))
    except PipelineRunError as exc:
        print(f"error: pipeline run failed: {exc}", file=sys.stderr)
        return 1
    finally:
        if not args.keep_pipeline_root:
            shutil.rmtree(staging, ignore_errors=True)
        else:
            print(f"pipeline root kept in {staging}")
    with open(os.path.join(out_dir, "metrics.json"), encoding="utf-8") as fh:
        metrics = json.load(fh)
    _print_autosxs_summary(metrics, out_dir)
    return 0


def _run_quietly(quiet: bool, func: Any, *args: Any) -> Any:
    """Call ``func(*args)``; with ``quiet``, capture the local runner's logs and show their tail on failure."""
    if not quiet:
        return func(*args)
    import contextlib
    import io as _io

    buffer = _io.StringIO()
    handler = logging.StreamHandler(buffer)
    kfp_logger = logging.getLogger("kfp")
    kfp_logger.addHandler(handler)
    old_propagate, kfp_logger.propagate = kfp_logger.propagate, False
    try:
        with contextlib.redirect_stdout(buffer):
            return func(*args)
    except Exception:
        print("\n".join(buffer.getvalue().splitlines()[-60:]), file=sys.stderr)
        raise
    finally:
        kfp_logger.removeHandler(handler)
        kfp_logger.propagate = old_propagate


def _find_metrics_json(_unused: str, staging: str) -> str:
    """Locate the ``metrics_json`` artifact written by the metrics step under the pipeline root."""
    matches = sorted(Path(staging).rglob("metrics_json"))
    if len(matches) != 1:
        from autorater_pipelines.pipelines._local import PipelineRunError

        raise PipelineRunError(f"expected one metrics_json artifact under {staging}, found {len(matches)}")
    return str(matches[0])


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``autorater`` (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(
        prog="autorater",
        description="Open AutoSxS and Gecko evaluation pipelines for Kubeflow Pipelines / Vertex AI.",
    )
    parser.add_argument("--version", action="version", version=f"autorater-pipelines {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("compile", help="compile the pipelines to YAML templates")
    p.add_argument("--image", default=None, help="container image for every component (default: the release image)")
    p.add_argument(
        "--output-dir", default=DEFAULT_COMPILED_DIR, help="where to write <pipeline>.yaml (default: %(default)s)"
    )
    p.set_defaults(func=_cmd_compile)

    p = sub.add_parser("run", help="run a compiled template in the KFP local runner")
    p.add_argument("pipeline", choices=["autosxs"], help="which pipeline to run")
    p.add_argument("--params", required=True, help="JSON file mapping pipeline parameter names to values")
    p.add_argument(
        "--output-dir", required=True, help="directory for judgments.jsonl, error_messages.jsonl, metrics.json"
    )
    p.add_argument("--template", default=None, help="compiled YAML to run (default: compiled/<pipeline>.yaml)")
    p.add_argument("--keep-pipeline-root", action="store_true", help="keep the local runner's task outputs")
    p.add_argument("--quiet", action="store_true", help="hide the local runner's task logs")
    p.set_defaults(func=_cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``autorater`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except AutoraterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
