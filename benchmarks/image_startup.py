"""Per-step start-up of the component image: both quickstarts in ``kfp.local.DockerRunner``, imports timed.

    python benchmarks/image_startup.py IMAGE [--json OUT.json]

Runs the AutoSxS and Gecko quickstarts (replay models, data copied under the pipeline root, which the
runner mounts) with every step in IMAGE and ``PYTHONPROFILEIMPORTTIME=1`` in the containers, then reports
per step: wall time (from the runner's "Executing task" to "finished" log lines: container start, imports
and work) and import time (the sum of the top-level ``cumulative`` figures of Python's import profile: every
module the step imported, lazily imported ones included). Also, per component, the CPU and wall time of
the imports its step makes before its body runs (``kfp.dsl.executor_main`` and the body's first imports, in
a container of their own: CPU time hardly depends on the load, wall time does). Also the fixed cost of a container
(``docker run IMAGE true``) and of the interpreter (``python3 -c pass``), median of 3, and the image size.
Needs a Docker engine (``.ci/docker_image.sh`` shows how to start one) and this package with ``[test]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
_RUN = """
import json, sys
from kfp import local
from kfp.components import load_component_from_file
local.init(runner=local.DockerRunner(network_mode="host", environment={"PYTHONPROFILEIMPORTTIME": "1"}),
           pipeline_root=sys.argv[2], raise_on_error=True)
load_component_from_file(sys.argv[1])(**json.loads(sys.argv[3]))
"""
_LOG = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) - INFO - (Executing task|Task) '([\w-]+)'(?: finished|$)")
_IMPORT = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def _quickstart_params(root: Path) -> dict[str, dict]:
    inputs = root / "inputs"
    shutil.copytree(REPO / "examples" / "quickstart", inputs / "quickstart")
    shutil.copytree(REPO / "examples" / "gecko_quickstart", inputs / "gecko_quickstart")
    autosxs = json.loads((REPO / "examples" / "quickstart" / "params.json").read_text())
    autosxs.update(
        evaluation_dataset=str(inputs / "quickstart" / "dataset.jsonl"),
        autorater_model=f"replay/{inputs / 'quickstart' / 'replay.jsonl'}",
    )
    gecko = json.loads((REPO / "examples" / "gecko_quickstart" / "params.json").read_text())
    gecko.update(
        evaluation_dataset=str(inputs / "gecko_quickstart" / "dataset.jsonl"),
        rubric_generation_model=f"replay/{inputs / 'gecko_quickstart' / 'rubric_replay.jsonl'}",
        validator_model=f"replay/{inputs / 'gecko_quickstart' / 'validator_replay.jsonl'}",
    )
    local = {"project": "", "location": "us-central1"}  # the templates' defaults only resolve on Vertex AI
    return {"autosxs": {**local, **autosxs}, "gecko": {**local, **gecko}}


def _steps(log: str) -> list[dict]:
    """Per task: wall seconds between its start and finish lines, and seconds spent importing."""
    steps: list[dict] = []
    for line in log.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line)
        if match := _LOG.match(line):
            stamp = datetime.strptime(match[1][:15], "%H:%M:%S.%f")
            if match[2] == "Executing task":
                steps.append({"task": match[3], "start": stamp, "imports_us": 0})
            elif steps and "start" in steps[-1]:
                steps[-1]["wall_s"] = round((stamp - steps[-1].pop("start")).total_seconds(), 2)
        elif (match := _IMPORT.search(line)) and steps and not match[3]:
            steps[-1]["imports_us"] += int(match[2])  # a top-level import: its cumulative time
    for step in steps:
        step.pop("start", None)
        step["imports_s"] = round(step.pop("imports_us") / 1e6, 2)
    return steps


_BODY_IMPORT = re.compile(r"^    (from autorater_pipelines\S* import .+|import autorater_pipelines\S*)$", re.M)
_TIMED = """import time; c, w = time.process_time(), time.perf_counter()
import kfp.dsl.executor_main
{imports}
print(round(time.process_time() - c, 2), round(time.perf_counter() - w, 2))"""


def _component_imports(image: str, components: Path) -> dict[str, dict]:
    """Per component: CPU and wall seconds of what its step imports before its body runs (median of 3)."""
    figures = {}
    for path in sorted(components.glob("*.py")):
        imports = _BODY_IMPORT.findall(path.read_text())
        if not imports:
            continue
        command = ["docker", "run", "--rm", "--network", "host", "-e", "_KFP_RUNTIME=true", image, "python3", "-c"]
        runs = [
            subprocess.run([*command, _TIMED.format(imports="\n".join(imports))], check=True, capture_output=True)
            for _ in range(3)
        ]
        cpu, wall = zip(*(map(float, r.stdout.split()) for r in runs), strict=True)
        figures[path.stem] = {"cpu_s": statistics.median(cpu), "wall_s": statistics.median(wall)}
    return figures


def _median_run(*command: str) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--log", help="also write the runner's raw output here")
    parser.add_argument(
        "--templates",
        help="compiled/ of the checkout the image was built from (default: compile this checkout); its "
        "src/autorater_pipelines/components/ beside it are timed",
    )
    args = parser.parse_args()
    size = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Size}}", args.image], check=True, capture_output=True
    )
    result: dict = {"image": args.image, "size_mb": round(int(size.stdout) / 1e6)}
    result["docker_run_true_s"] = _median_run("docker", "run", "--rm", "--network", "host", args.image, "true")
    python = ("docker", "run", "--rm", "--network", "host", args.image, "python3", "-c", "pass")
    result["docker_run_python_pass_s"] = _median_run(*python)
    result["component_imports"] = _component_imports(
        args.image, Path(args.templates or REPO / "compiled").parent / "src" / "autorater_pipelines" / "components"
    )
    with tempfile.TemporaryDirectory(prefix="image-startup-") as tmp:
        root, compiled = Path(tmp) / "root", Path(tmp) / "compiled"
        root.mkdir()
        root.chmod(0o777)  # whatever user the image runs as may write it
        params = _quickstart_params(root)
        if args.templates:  # e.g. an older release's templates, to measure its image
            compiled.mkdir()
            for name in ("autosxs", "gecko"):
                text = (Path(args.templates) / f"{name}.yaml").read_text()
                for image in {
                    e["container"]["image"] for e in yaml.safe_load(text)["deploymentSpec"]["executors"].values()
                }:
                    text = text.replace(f"image: {image}\n", f"image: {args.image}\n")
                (compiled / f"{name}.yaml").write_text(text)
        else:
            subprocess.run(["autorater", "compile", "--image", args.image, "--output-dir", str(compiled)], check=True)
        for name in ("autosxs", "gecko"):
            start = time.perf_counter()
            run = subprocess.run(
                [sys.executable, "-c", _RUN, str(compiled / f"{name}.yaml"), str(root), json.dumps(params[name])],
                capture_output=True,
                text=True,
            )
            if run.returncode:
                print(run.stdout[-4000:], run.stderr[-4000:], file=sys.stderr)
                return 1
            if args.log:
                with open(args.log, "a") as handle:
                    handle.write(run.stdout + run.stderr)
            steps = _steps(run.stdout + run.stderr)
            result[name] = {"total_s": round(time.perf_counter() - start, 1), "steps": steps}
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
