"""``autorater run PIPELINE``: run a compiled template in the KFP local runner.

The run is staged in a hidden directory next to ``--output-dir`` (``.OUT.partial-<pid>-*``); only a
successful run moves its files into ``--output-dir`` (each with an atomic rename), so a failed or
interrupted run leaves no partial outputs. Each staging folder holds a stamp (pid, host); the next accepted
run, holding OUT's lock, removes only stamped folders of dead runs on its own host. OUT holds runs, not the
user's files (:mod:`autorater_pipelines.report._out_dir`): a run records what it wrote in OUT's marker
``.autorater-outputs.json`` and removes only what an earlier run listed there
(``judgments.json`` of a ``json`` run, ``model_evaluations.json``, re-scored versions ``metrics.<n>.json``, a
kept ``pipeline_root``); a non-empty OUT without a marker, or a file of the user's where an output goes, is
refused before the run; a second run into an OUT that a live run is writing is refused (a lock next to OUT).
A run that reads a file inside OUT (dataset, replay, few-shot, params or Gecko media file) is
refused before it starts. The pipeline runs in its own process group that dies with the command, even with SIGKILL
(:mod:`autorater_pipelines.commands._isolated`). Parameters and the dataset are validated in-process
first, so bad input fails in about a second with one clear line.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from autorater_pipelines import registry
from autorater_pipelines.commands import _common
from autorater_pipelines.commands._run_spec import RunSpec, run_spec
from autorater_pipelines.errors import InputError
from autorater_pipelines.io import surrogate_warnings_left_to_the_steps
from autorater_pipelines.redaction import redact

__all__ = ["RunSpec", "check_run", "register", "run_spec"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


RUN_EXAMPLES = """\
examples:
  autorater run autosxs --params examples/quickstart/params.json --output-dir out/quickstart --quiet
  autorater run gecko --params examples/gecko_quickstart/params.json --output-dir out/gecko --quiet
  autorater params autosxs        # every parameter of PARAMS.json, with types and defaults

  # a documented parameter set against the local model emulator (no credentials):
  python -m autorater_pipelines.testing.emulator --port 18765 --judge length &
  GOOGLE_VERTEX_BASE_URL=http://127.0.0.1:18765 autorater run autosxs \\
      --params examples/autosxs_docs/check_alignment.json --output-dir out/docs --quiet
"""
"""Examples shown by ``autorater run --help``."""

DEFAULT_MAX_FAILED_SHARE = 0.1
"""Default of ``--max-failed-share``: a run where more than 10 % of the rows failed exits with status 1."""


def register(sub: Any) -> None:
    """Add the ``run`` subcommand."""
    p = sub.add_parser(
        "run",
        help="run a compiled template in the KFP local runner",
        description="Check PARAMS.json, run compiled/<pipeline>.yaml in the KFP local runner, move its output "
        "files into --output-dir and print a summary.",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("pipeline", choices=sorted(registry.names()), help="which pipeline to run")
    p.add_argument("--params", required=True, help="JSON file mapping pipeline parameter names to values")
    p.add_argument(
        "--output-dir",
        required=True,
        help="directory for the output files: new, empty, or an earlier run's (only the files its "
        ".autorater-outputs.json lists are replaced; yours are kept); must not hold the run's inputs",
    )
    p.add_argument("--template", default=None, help="compiled YAML to run (default: compiled/<pipeline>.yaml)")
    p.add_argument(
        "--keep-pipeline-root",
        action="store_true",
        help="keep the local runner's task outputs in OUTPUT_DIR/pipeline_root (one folder per task, as on Vertex AI)",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="hide the local runner's task logs (shown on failure) and this command's own INFO log lines; "
        "the model-call progress lines (every heartbeat_s, 20 s) still print, and the steps' warnings once "
        "per kind with a count when the run ends",
    )
    p.add_argument(
        "--max-failed-share",
        type=_share,
        default=DEFAULT_MAX_FAILED_SHARE,
        metavar="SHARE",
        help="exit with status 1 when more than this share (0-1) of the rows ended with an error; the outputs "
        f"are written either way (default: {DEFAULT_MAX_FAILED_SHARE}; 1 = only when no row was evaluated)",
    )
    p.set_defaults(func=run)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1 such as 0.1, got {text!r}")
    return value


def _locate(outputs: dict[str, str], name: str, pipeline_root: str) -> str:
    from autorater_pipelines.pipelines._local import PipelineRunError

    if "/" not in name:
        path = outputs.get(name, "")
        if not path or not os.path.exists(path):
            raise PipelineRunError(f"pipeline output artifact {name!r} has no local file ({path!r})")
        return path
    matches = sorted(p for p in Path(pipeline_root).rglob(name.split("/")[-1]) if p.parent.name == name.split("/")[0])
    if len(matches) != 1:
        raise PipelineRunError(f"expected one {name!r} artifact under {pipeline_root}, found {len(matches)}")
    return str(matches[0])


_STAGING = re.compile(r"^\.(?P<out>.+)\.partial-(?P<pid>\d+)-[^/]*$")
STAGING_STAMP = ".autorater-staging.json"
"""Written inside each staging folder as it is made: ``{"pid", "host", "started", "output_dir"}``."""


def _make_staging(out_dir: str) -> str:
    """Create the staging folder ``.OUT.partial-<pid>-*`` beside ``out_dir``, stamped as this run's."""
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.partial-{os.getpid()}-", dir=parent)
    stamp = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "output_dir": out_dir,
    }
    with open(os.path.join(staging, STAGING_STAMP), "w", encoding="utf-8") as fh:
        json.dump(stamp, fh)
    return staging


def _clean_partial_runs(out_dir: str) -> None:
    """Remove the staging folders that killed runs into ``out_dir`` left behind (call under its OutputLock).

    Only a folder provably made by an autorater run is removed: its name is ``.OUT.partial-<pid>-*``, it holds
    the stamp :data:`STAGING_STAMP` naming this output directory, this host and that pid, and no process with
    that pid is alive. Anything else beside OUT (a user's ``.OUT.partial-backup``, a live run's folder seen
    from another host or container) is left alone.
    """
    parent, base = os.path.dirname(out_dir), os.path.basename(out_dir)
    if not os.path.isdir(parent):
        return
    for name in os.listdir(parent):
        match = _STAGING.match(name)
        path = os.path.join(parent, name)
        if not match or match.group("out") != base or os.path.islink(path) or not os.path.isdir(path):
            continue
        try:
            with open(os.path.join(path, STAGING_STAMP), encoding="utf-8") as fh:
                stamp = json.load(fh)
        except (OSError, ValueError):
            continue  # not made by autorater (or not readable): not ours to remove
        if (
            not isinstance(stamp, dict)
            or stamp.get("pid") != int(match.group("pid"))
            or stamp.get("host") != socket.gethostname()
            or stamp.get("output_dir") != out_dir
            or _alive(int(match.group("pid")))
        ):
            continue
        shutil.rmtree(path, ignore_errors=True)
        print(f"removed {path} left by an interrupted run", file=sys.stderr)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_run(pipeline: str, params_path: str, template: str) -> tuple[dict[str, Any], int, list[str]]:
    """Everything ``autorater run`` checks before its pipeline starts; the parameters the pipeline gets.

    Names and types against the template, then the pipeline's ``validate_run`` (``autorater submit`` and the
    first pipeline step make the same check, so a set is accepted or refused with the same message by all
    three). Local paths are made absolute only after the check, so messages name them as the user wrote them.

    Returns:
        The parameters to run (``project``/``location`` defaults set, local paths absolute), the number of
        data rows read, and every local file the run reads (:func:`_common.local_inputs` and media files
        named in the rows).

    Raises:
        InputError: the first problem found.
    """
    params = _common.load_params(params_path)
    _common.check_param_names(params, template, params_path)
    _refuse_nested_null(params, params_path)
    # GCPC-style project/location placeholders only resolve on Vertex AI: pass explicit values.
    params.setdefault("project", "")
    params.setdefault("location", "us-central1")
    with surrogate_warnings_left_to_the_steps():  # the first step reads the same rows and warns once
        rows_read, row_files = run_spec(pipeline).preflight(params)
    _common.absolutize_local_paths(params)  # the pipeline's steps run in other directories
    return params, rows_read, [*_common.local_inputs(params, params_path), *row_files]


def _refuse_nested_null(value: Any, params_path: str, path: str = "") -> None:
    """Refuse a JSON ``null`` inside an object or list parameter, which the KFP local runner cannot pass.

    kfp's local runner converts every argument to a protobuf value and fails mid-run on ``None`` ("Value must be
    one of the following types ..."); a null is not always the key's default (``flip: null`` is false), so it is
    refused here, naming the key, rather than dropped.
    """
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key)
        if item is None and path:
            raise InputError(
                f"{where} is null: the KFP local runner cannot pass a null inside an object or list parameter; "
                "remove the key to use its default, or give a value",
                source=params_path,
            )
        _refuse_nested_null(item, params_path, where)


def run(args: argparse.Namespace) -> int:
    """Validate, run the template locally, move its outputs into ``--output-dir``, print a summary."""
    from autorater_pipelines.report._out_dir import OutputLock, check_output_dir

    spec = run_spec(args.pipeline)
    out_dir = os.path.abspath(args.output_dir)
    template = _common.template_path(args.pipeline, args.template)
    params, rows_read, inputs = check_run(args.pipeline, args.params, template)
    names = [*spec.outputs, *spec.extra_outputs(params)]
    folders = ["pipeline_root"] if args.keep_pipeline_root else []
    _check_inputs_outside(out_dir, inputs)
    check_output_dir(out_dir, names, folders, beside=True)  # before the lock too: a refused run creates nothing
    with OutputLock(out_dir):
        check_output_dir(out_dir, names, folders)  # again under the lock: a run that ended meanwhile wrote OUT
        _clean_partial_runs(out_dir)  # only now: a refused run removes nothing, and no live run is staging
        print(f"read {rows_read} data row(s) from evaluation_dataset", flush=True)
        written = _run_into(args, spec, template, params, out_dir)
    if written is None:
        return 1
    with open(os.path.join(out_dir, "metrics.json"), encoding="utf-8") as fh:
        metrics = json.load(fh)
    spec.print_summary(metrics)
    spec.print_params_notes(params, out_dir)
    spec.print_outputs(out_dir, written)
    _print_error_reasons(os.path.join(out_dir, "error_messages.jsonl"))
    print(f"Outputs in {out_dir}: {', '.join(written)}")
    status = _exit_status(*spec.failed_rows(metrics), args.max_failed_share, unit=spec.failed_unit(metrics))
    return max(status, _jurors_exit_status(spec, metrics, args.max_failed_share))


def _run_into(
    args: argparse.Namespace, spec: RunSpec, template: str, params: dict[str, Any], out_dir: str
) -> list[str] | None:
    """Run the pipeline in a staging folder and replace OUT's outputs with its files (under the OUT lock).

    Returns:
        The output names written into ``out_dir``, or None when the pipeline failed (message printed; OUT
        unchanged but for a kept ``pipeline_root``).
    """
    from autorater_pipelines.commands._isolated import run_isolated
    from autorater_pipelines.pipelines._local import PipelineRunError
    from autorater_pipelines.report._out_dir import record_outputs, replace_outputs

    written_by = f"autorater run {args.pipeline}"
    staging = _make_staging(out_dir)
    pipeline_root = os.path.join(staging, "pipeline_root")
    if args.keep_pipeline_root:
        # Run in place, so the artifact URIs recorded in each task's executor_output.json stay valid.
        pipeline_root = os.path.join(out_dir, "pipeline_root")
        os.makedirs(out_dir, exist_ok=True)
        record_outputs(out_dir, ["pipeline_root"], written_by)  # listed before it is written
        shutil.rmtree(pipeline_root, ignore_errors=True)  # an earlier run's (check_output_dir: it is listed)
    try:
        outputs = run_isolated(
            template,
            params,
            staging,
            quiet=args.quiet,
            pipeline_root=pipeline_root,
            env=spec.child_env(out_dir),
        )
        wanted = {**spec.outputs, **spec.extra_outputs(params)}
        sources = {name: _locate(outputs, artifact, pipeline_root) for name, artifact in wanted.items()}
        for name, src in sources.items():
            shutil.copyfile(src, os.path.join(staging, name))
        if "report.html" in sources:
            _rename_report(staging, out_dir, spec.report_options(params))
        kept = ["pipeline_root"] if args.keep_pipeline_root else []
        stale = replace_outputs(out_dir, {n: os.path.join(staging, n) for n in sources}, written_by, keep=kept)
        if stale:  # e.g. judgments.json of an earlier run with judgments_format json
            print(f"removed outputs of an earlier run from {out_dir}: {', '.join(stale)}")
        if args.keep_pipeline_root:
            print(f"pipeline root kept in {pipeline_root}")
    except PipelineRunError as exc:
        print(f"error: pipeline run failed: {redact(_ANSI.sub('', str(exc)))}", file=sys.stderr)
        if args.keep_pipeline_root:
            print(f"pipeline root kept in {pipeline_root}", file=sys.stderr)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return list(sources)


def _rename_report(staging: str, out_dir: str, options: dict[str, Any]) -> None:
    """Rebuild the staged ``report.html`` from the staged files so that its title names ``out_dir``.

    The pipeline's report step names the folder it read (under the staging folder's pipeline root), which is
    deleted when the run ends; the page is otherwise the same.
    """
    from autorater_pipelines.report import REPORT_FILE, write_report

    write_report(staging, os.path.join(staging, REPORT_FILE), source=out_dir, **options)


def _jurors_exit_status(spec: RunSpec, metrics: dict[str, Any], max_share: float) -> int:
    """1 when a panel's juror failed more than ``max_share`` of its rows, as that model alone as the judge would.

    A juror's section of ``metrics.json`` (``jurors.<spec>``) has a single judge's counts, so the pipeline's own
    ``failed_rows`` reads it; a juror that fails every call would otherwise hide behind the other jurors' votes.
    """
    jurors = metrics.get("jurors")
    if not isinstance(jurors, dict):
        return 0
    statuses = [
        _exit_status(*spec.failed_rows(section), max_share, unit=spec.failed_unit(section), subject=f"juror {name!r}")
        for name, section in jurors.items()
        if isinstance(section, dict)
    ]
    return max(statuses, default=0)


def _exit_status(failed: int, total: int, max_share: float, *, unit: str = "rows", subject: str = "") -> int:
    """1 when nothing was evaluated or more than ``max_share`` of the ``unit`` failed (message on stderr), else 0.

    ``subject`` (e.g. ``juror 'gemini-2.5-flash'``) starts the message when the counts are one juror's.
    """
    prefix = f"error: {subject}: " if subject else "error: "
    if total > 0 and failed >= total:
        one = unit.split(" ")[0].removesuffix("s")
        print(f"{prefix}no {one} could be evaluated; see error_messages.jsonl", file=sys.stderr)
        return 1
    if total > 0 and failed / total > max_share:
        print(
            f"{prefix}{failed} of {total} {unit} ({failed / total:.0%}) ended with an error, more than "
            f"--max-failed-share {max_share:g}; see error_messages.jsonl",
            file=sys.stderr,
        )
        return 1
    return 0


def _check_inputs_outside(out_dir: str, inputs: list[str]) -> None:
    """Refuse a run that reads a file inside ``out_dir``, before anything runs.

    The run replaces its output files in ``out_dir`` and removes the outputs of earlier runs there, so an
    input kept inside it (e.g. ``OUT/judgments.json`` as ``evaluation_dataset``) could be deleted or
    overwritten by the run that reads it.

    Raises:
        InputError: naming the first such input and ``out_dir``.
    """
    real_out = os.path.realpath(out_dir)
    for path in inputs:
        real = os.path.realpath(path)
        if real == real_out or real.startswith(real_out.rstrip(os.sep) + os.sep):
            raise InputError(
                f"the run reads {path!r}, which is inside the output directory {out_dir!r}; the run replaces and "
                "removes files there, so move the input out of it or pick another --output-dir",
                source="--output-dir",
            )


def _shortened(text: str, width: int = 320) -> str:
    """``text`` on one line, at most ``width`` characters (the server's message is usually within them)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _print_error_reasons(path: str, limit: int = 3) -> None:
    """Print how many error messages a run wrote and its most common reasons."""
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    if not rows:
        return
    from autorater_pipelines.evaluation.error_rows import error_text

    reasons: collections.Counter[str] = collections.Counter()
    example: dict[str, str] = {}
    for row in rows:
        reason, key = _without_key(error_text(row))
        reasons[reason] += 1
        example.setdefault(reason, key)
    print(f"{len(rows)} error message(s) in error_messages.jsonl; most common:")
    for reason, count in reasons.most_common(limit):
        shown = f" (e.g. key {_shortened(example[reason], 160)})" if example[reason] else ""
        print(f"  {count} × {_shortened(reason)}{shown}")


def _without_key(text: str) -> tuple[str, str]:
    """``(text with its 'for key {...}' written 'for key {…}', the key)``; ``(text, "")`` without one.

    Messages that name the request's key (replay's ``no recording … for key {...}``) then group as one reason.
    """
    start = text.find(_KEY_MARK)
    if start < 0:
        return text, ""
    open_at = start + len(_KEY_MARK) - 1
    depth = 0
    for end in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[:open_at] + "{…}" + text[end + 1 :], text[open_at : end + 1]
    return text, ""


_KEY_MARK = "for key {"
