"""Scale: a large AutoSxS dataset through load → judging (replayed) → metrics, with wall time and peak RSS.

Runs the real step entry points one after another, as the pipeline's components call them
(``autosxs.prepare_run``, which checks the run and streams the examples out; ``autosxs.judge_examples`` with a
``replay/`` autorater on the streamed examples (``io.JsonlFile``, ``collect=False``);
``autosxs.aggregate_judgments`` on the streamed judgments), writing
the same files (prepared examples, judgments, error messages, metrics). The dataset (one ~3 KB judge prompt per
sample: a ~1.2 KB question and two responses of 0.3-0.6 KB) and its replay file are generated first and
not timed. The merge (one shard) and the JSONL export follow, as in the pipeline. Each step runs in its own child
process, as each component runs in its own container, so its peak
RSS (``ru_maxrss``, and VmRSS sampled every 20 ms) is the step's own.

    python benchmarks/scale_rows.py                # 100,000 rows × 2 samples
    python benchmarks/scale_rows.py --rows 10000

Last line: ``rows=<n> seconds=<s> peak_rss_mb=<m>``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

WORDS = "the of and to in is was for on that with as by at from it an be this which or are".split()


def generate(rows: int, workdir: Path, seed: int = 0) -> None:
    rnd = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(n))

    with open(workdir / "data.jsonl", "w", encoding="utf-8") as data, open(workdir / "replay.jsonl", "w") as replay:
        for i in range(rows):
            a, b = text(rnd.randint(60, 110)), text(rnd.randint(60, 110))
            row = {"id": f"q{i}", "question": text(220), "a": a, "b": b, "human": rnd.choice("AB")}
            data.write(json.dumps(row) + "\n")
            for flipped in (False, True):
                first, second = (b, a) if flipped else (a, b)
                choice = "A" if len(first) > len(second) else "B" if len(second) > len(first) else "SAME"
                answer = json.dumps({"explanation": "The longer response covers more.", "choice": choice})
                replay.write(json.dumps({"id": f"q{i}", "flipped": flipped, "response": answer}) + "\n")


class StepMeter:
    """Wall time, CPU time and peak RSS (sampled from /proc every 20 ms) of each step of the child process."""

    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self._peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    @staticmethod
    def rss_kib() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self._peak = max(self._peak, self.rss_kib())

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        self._peak = self.rss_kib()
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        self.timings[f"{name}_s"] = time.perf_counter() - wall
        self.timings[f"{name}_cpu_s"] = time.process_time() - cpu
        self.timings[f"{name}_rss_mb"] = max(self._peak, self.rss_kib()) / 1024


STEPS = ("load", "judge", "merge", "metrics", "export")


def run_step(workdir: Path, step: str) -> None:
    """One step (child process), as its pipeline component calls it: files in, files out; one JSON line of timings."""
    from autorater_pipelines import autosxs, io

    timings: dict[str, float] = {}
    meter = StepMeter(timings)
    with meter.step(step):
        if step == "load":  # as the prepare_pairwise_examples component: every check, examples streamed out
            params = {
                "evaluation_dataset": str(workdir / "data.jsonl"),
                "task": "question_answering@001",
                "id_columns": ["id"],
                "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
                "response_column_a": "a",
                "response_column_b": "b",
                "human_preference_column": "human",
                "autorater_model": f"replay/{workdir / 'replay.jsonl'}",
            }
            timings["rows"] = autosxs.prepare_run(params, str(workdir / "examples.jsonl")).row_count or 0
        elif step == "judge":  # as the judge_pairwise_examples component: streamed in, written as judged
            _, _, summary = autosxs.judge_examples(
                examples=autosxs.iter_shard(io.JsonlFile(str(workdir / "examples.jsonl")), 0, 1),
                task="question_answering@001",
                id_columns=["id"],
                autorater_model=f"replay/{workdir / 'replay.jsonl'}",
                autorater_parameters={"progress": False},
                judgments_path=str(workdir / "judgments.jsonl"),
                error_messages_path=str(workdir / "error_messages.jsonl"),
                collect=False,
            )
            timings["rows"] = summary.evaluation_count
            timings["error_rows"] = summary.error_count
        elif step == "merge":  # as the online_evaluation_pairwise component (one shard), file to file
            from autorater_pipelines.autosxs.merge import merge_shard_files

            count, errors = merge_shard_files(
                str(workdir / "examples.jsonl"),
                ["id"],
                [str(workdir / "judgments.jsonl")],
                [str(workdir / "error_messages.jsonl")],
                str(workdir / "merged.jsonl"),
                str(workdir / "merged_errors.jsonl"),
            )
            timings["rows"], timings["error_rows"] = count, errors
        elif step == "export":  # as the export_pairwise_judgments component (jsonl), streamed
            autosxs.export_judgments(
                judgments_path=str(workdir / "merged.jsonl"),
                judgments_format="jsonl",
                destination=str(workdir / "export.jsonl"),
            )
        else:  # as the metrics component: running aggregates over the streamed judgments
            metrics = autosxs.aggregate_judgments(
                judgments=io.iter_jsonl(str(workdir / "merged.jsonl")),
                human_preference_column="human",
                metrics_path=str(workdir / "metrics.json"),
            )
            timings["rows"] = metrics["evaluation_count"]
            timings["accuracy"] = metrics.get("accuracy")
    timings[f"{step}_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps(timings), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--step", default=None, choices=STEPS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_step(Path(args.child), args.step)
        return 0
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        workdir = Path(tmp)
        started = time.perf_counter()
        generate(args.rows, workdir)
        size = (workdir / "data.jsonl").stat().st_size / 1e6
        print(f"generated {args.rows} rows ({size:.0f} MB) in {time.perf_counter() - started:.1f} s (not timed)")
        load = os.getloadavg()[0]
        result: dict[str, float] = {}
        for step in STEPS:
            child = subprocess.run(
                [sys.executable, __file__, "--child", str(workdir), "--step", step],
                capture_output=True,
                text=True,
                check=False,
            )
            if child.returncode != 0:
                print(child.stderr[-3000:], file=sys.stderr)
                return 1
            result.update(json.loads(child.stdout.strip().splitlines()[-1]))
        result["total_s"] = sum(result[f"{step}_s"] for step in STEPS)
        result["peak_rss_mb"] = max(result[f"{step}_peak_rss_mb"] for step in STEPS)
    print(
        f"load {result['load_s']:.1f} s, judge (replay, {2 * result['rows']} samples) {result['judge_s']:.1f} s, "
        f"merge {result['merge_s']:.1f} s, metrics {result['metrics_s']:.1f} s, export {result['export_s']:.1f} s; "
        f"{result['error_rows']} error rows; load average {load:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    for step in STEPS:
        print(
            f"  {step:<8} {result[f'{step}_s']:7.1f} s wall  {result[f'{step}_cpu_s']:7.1f} s CPU  "
            f"peak RSS {result[f'{step}_rss_mb']:6.0f} MB (ru_maxrss {result[f'{step}_peak_rss_mb']:6.0f} MB)"
        )
    print(f"rows={result['rows']:.0f} seconds={result['total_s']:.1f} peak_rss_mb={result['peak_rss_mb']:.0f}")
    return 0 if result["error_rows"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
