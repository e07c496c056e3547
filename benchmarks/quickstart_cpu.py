"""CPU seconds of ``autorater run autosxs`` on the quickstart, in all and per process.

    python benchmarks/quickstart_cpu.py [--repeat 3] [--pipeline autosxs|gecko] [--json OUT.json]

Runs ``autorater run PIPELINE --params examples/<quickstart>/params.json --output-dir TMP --quiet`` (the
acceptance command of issue 9) ``--repeat`` times and reports, per run:

- **total**: user + system CPU seconds of the whole process tree, from ``/usr/bin/time -v`` when it is
  installed (what the acceptance reads), else from ``getrusage(RUSAGE_CHILDREN)`` (the same counters: the
  kernel adds a waited-for child's CPU, its own children's included, to its parent);
- **per process**: the launcher (``autorater``) and each KFP step, measured by a ``sitecustomize`` module put
  on ``PYTHONPATH`` for the run only, which writes each Python process's own CPU time (``RUSAGE_SELF``,
  interpreter start-up and imports included) at exit; the library is not changed for this. The per-process
  figures add up to less than the total: the ``sh -ec`` of each step and what a process does after its exit
  handlers (interpreter shutdown) are not counted.

The last line is ``cpu_s=<median total> launcher_s=<median> steps=<n>``. CPU time, unlike wall time, does not
count waiting, but on a loaded machine it still grows (shared caches, hyper-threads): compare runs made
under the same load (``uptime`` is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUICKSTARTS = {"autosxs": "examples/quickstart/params.json", "gecko": "examples/gecko_quickstart/params.json"}

_SITECUSTOMIZE = """
import atexit, json, os, resource, sys
_OUT = os.environ.get("QUICKSTART_CPU_LOG")
def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def _write():
    argv = sys.argv
    step = argv[argv.index("--function_to_execute") + 1] if "--function_to_execute" in argv else None
    with open(_OUT, "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "step": step, "argv0": argv[0], "cpu_s": _cpu()}) + "\\n")
if _OUT:
    atexit.register(_write)
"""


def _autorater() -> str:
    found = shutil.which("autorater", path=str(Path(sys.executable).parent)) or shutil.which("autorater")
    if not found:
        raise SystemExit("autorater is not installed in this environment: pip install -e .")
    return found


def run_once(pipeline: str, workdir: Path) -> dict:
    """One run; returns ``{"total_s", "source", "processes": [...]}``."""
    site = workdir / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    log = workdir / "cpu.jsonl"
    log.unlink(missing_ok=True)
    out_dir = workdir / "out"
    shutil.rmtree(out_dir, ignore_errors=True)
    env = {**os.environ, "QUICKSTART_CPU_LOG": str(log)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
    command = [_autorater(), "run", pipeline, "--params", QUICKSTARTS[pipeline], "--output-dir", str(out_dir)]
    command.append("--quiet")
    time_bin = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if time_bin:
        report = workdir / "time.txt"
        done = subprocess.run([time_bin, "-v", "-o", str(report), *command], cwd=REPO, env=env, capture_output=True)
        text = report.read_text() if report.exists() else ""
        fields = dict(line.strip().rsplit(": ", 1) for line in text.splitlines() if ": " in line)
        total = float(fields.get("User time (seconds)", "nan")) + float(fields.get("System time (seconds)", "nan"))
        source = "/usr/bin/time -v"
    else:
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        source = "getrusage(RUSAGE_CHILDREN)"
    if done.returncode != 0:
        sys.stderr.write(done.stdout.decode() + done.stderr.decode())
        raise SystemExit(f"the run failed (exit {done.returncode})")
    processes = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return {"total_s": total, "source": source, "processes": processes}


def _launcher(processes: list[dict]) -> float:
    return sum(p["cpu_s"] for p in processes if p["step"] is None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", choices=sorted(QUICKSTARTS), default="autosxs")
    parser.add_argument("--repeat", type=int, default=3, help="runs (the median is reported); default 3")
    parser.add_argument("--json", help="write every run's figures to this file")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs")
    runs = []
    with tempfile.TemporaryDirectory(prefix="quickstart-cpu-") as tmp:
        for i in range(args.repeat):
            run = run_once(args.pipeline, Path(tmp))
            runs.append(run)
            steps = [p for p in run["processes"] if p["step"]]
            print(
                f"run {i + 1}: total {run['total_s']:.2f} s CPU ({run['source']}); "
                f"launcher {_launcher(run['processes']):.2f} s; "
                + ", ".join(f"{p['step']} {p['cpu_s']:.2f}" for p in steps)
            )
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    total = statistics.median(r["total_s"] for r in runs)
    launcher = statistics.median(_launcher(r["processes"]) for r in runs)
    steps = len([p for p in runs[0]["processes"] if p["step"]])
    print(f"cpu_s={total:.2f} launcher_s={launcher:.2f} steps={steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
