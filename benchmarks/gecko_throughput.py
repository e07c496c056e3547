"""Gecko's rubric and validator steps at a quota: ratio to ideal, HTTP attempts per answer, lost rows.

Runs the real entry points the Gecko components call (``gecko.steps.rubrics_for_rows`` then
``gecko.steps.validate_media``) against the project's protocol emulator in its own process
(``--judge gecko``: a rubric for rubric requests, an answer for validator requests), with a token-bucket quota
and random 429/503 faults, for image and video rows and ``questions_per_call`` 0 (one validator call per row)
and 1 (one per question, the DSG/TIFA protocol). Defaults only on the model side (no ``requests_per_minute``:
the usual case). Each case gets a fresh emulator (a full bucket) and its own response cache.

    python benchmarks/gecko_throughput.py                 # 60 rows per case, quota 600/min, 10 % faults
    python benchmarks/gecko_throughput.py --rows 10 --quota-rpm 1200 --fault-rate 0   # quick

Columns: step, ok answers, seconds, answers/s, /ideal (ideal = min(quota/60, 32 / latency)), att/ok (HTTP
requests the emulator received per successful answer), lost (rows of the step without a result: error rows
and missing rows). Last line: ``worst_ratio=<x> worst_attempts=<x> lost_rows=<n>``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_throughput import Emulator, Scenario  # noqa: E402 - sibling script

from autorater_pipelines.gecko import steps  # noqa: E402
from autorater_pipelines.testing.gecko_script import tiny_png  # noqa: E402

MP4 = b"\x00\x00\x00\x18ftypisom" + b"\x00" * 12
GCP = {"project": "bench-project", "location": "us-central1"}


@dataclasses.dataclass
class StepResult:
    """One step of one case."""

    case: str
    step: str
    ok: int
    seconds: float
    attempts: int
    lost: int
    ideal: float

    @property
    def ratio(self) -> float:
        return self.ok / self.seconds / self.ideal if self.seconds and self.ideal else float("nan")

    @property
    def attempts_per_answer(self) -> float:
        return self.attempts / self.ok if self.ok else float("nan")


def _ok_answers(stats: dict[str, Any]) -> int:
    statuses = stats.get("by_status") or {}
    return int(statuses.get("200", statuses.get(200, 0)))


def run_case(sc: Scenario, rows: int, media_type: str, qpc: int, workdir: Path) -> list[StepResult]:
    """Rubric step then validator step of ``rows`` rows against a fresh emulator."""
    case = f"{media_type}, questions_per_call {qpc}"
    rows_path, rubrics_path = workdir / "rows.jsonl", workdir / "rubrics.jsonl"
    subject = "a red bicycle leaning on a wall" if media_type == "image" else "a dog jumps into a lake"
    lines = []
    for i in range(rows):  # one file per row, bytes of its own: no two validator requests are the same
        media = workdir / (f"media-{i}.png" if media_type == "image" else f"media-{i}.mp4")
        media.write_bytes((tiny_png() if media_type == "image" else MP4) + f"row {i}".encode())
        lines.append(json.dumps({"id": i, "prompt": f"{subject}, take {i}", "media": str(media)}) + "\n")
    rows_path.write_text("".join(lines))
    results = []
    with Emulator(sc, judge="gecko") as emu:
        base = {"base_url": emu.url, "progress": False, "cache_dir": str(workdir / "cache")}
        before = emu.stats()
        started = time.perf_counter()
        summary = steps.rubrics_for_rows(
            rows_path=str(rows_path),
            id_columns=["id"],
            media_type=media_type,
            prompt_column="prompt",
            rubric_generation_model="gemini-2.5-flash",
            rubric_generation_parameters=base,
            rubrics_path=str(rubrics_path),
            errors_path=str(workdir / "rubric_errors.jsonl"),
            **GCP,
        )
        seconds = time.perf_counter() - started
        after = emu.stats()
        ok = _ok_answers(after) - _ok_answers(before)
        lost = rows - summary.rubric_count
        results.append(StepResult(case, "rubrics", ok, seconds, after["calls"] - before["calls"], lost, sc.ideal))
        before = after
        started = time.perf_counter()
        validated = steps.validate_media(
            rubrics_path=str(rubrics_path),
            id_columns=["id"],
            media_column="media",
            media_type=media_type,
            validator_model="gemini-2.5-flash",
            validator_parameters={**base, "questions_per_call": qpc},
            prompt_column="prompt",
            validations_path=str(workdir / "validations.jsonl"),
            errors_path=str(workdir / "validation_errors.jsonl"),
            **GCP,
        )
        seconds = time.perf_counter() - started
        after = emu.stats()
        ok = _ok_answers(after) - _ok_answers(before)
        errors = sum(1 for _ in open(workdir / "validation_errors.jsonl"))
        lost = summary.rubric_count - validated + errors
        results.append(StepResult(case, "validator", ok, seconds, after["calls"] - before["calls"], lost, sc.ideal))
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=60, help="rows per case (default: 60)")
    p.add_argument("--latency-ms", type=float, default=200.0, help="emulator latency per answer (default: 200)")
    p.add_argument("--quota-rpm", type=float, default=600.0, help="emulator quota, requests/min (default: 600)")
    p.add_argument("--fault-rate", type=float, default=0.1, help="random 429/503 faults (default: 0.1)")
    p.add_argument("--media", default="image,video", help="comma list of image, video")
    p.add_argument("--questions-per-call", default="0,1", help="comma list of 0, 1")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    sc = Scenario(
        calls=args.rows,
        samples=1,
        latency_s=args.latency_ms / 1000.0,
        quota_rpm=args.quota_rpm,
        quota_burst=args.quota_rpm / 60.0 if args.quota_rpm else None,
        fault_rate=args.fault_rate,
        fault_statuses=(429, 503),
        concurrency=32,
        seed=args.seed,
        declared=False,
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{args.rows} rows per case; latency {args.latency_ms:g} ms; quota {args.quota_rpm:g} rpm; faults "
        f"{args.fault_rate:.0%} (429, 503); defaults only (max_concurrency 32, no requests_per_minute); ideal "
        f"{sc.ideal:.1f} answers/s; load average {load:.2f} on {os.cpu_count()} CPUs"
    )
    import autorater_pipelines.models.providers.vertex  # noqa: F401 - SDK import once, not timed

    results: list[StepResult] = []
    print(f"{'case':<28}{'step':<11}{'ok':>6}{'secs':>8}{'ans/s':>8}{'/ideal':>8}{'att/ok':>8}{'lost':>6}")
    for media_type in [m.strip() for m in args.media.split(",") if m.strip()]:
        for qpc in [int(q) for q in args.questions_per_call.split(",") if q.strip()]:
            with tempfile.TemporaryDirectory(prefix="gecko-bench-") as tmp:
                for r in run_case(sc, args.rows, media_type, qpc, Path(tmp)):
                    results.append(r)
                    print(
                        f"{r.case:<28}{r.step:<11}{r.ok:>6}{r.seconds:>8.2f}{r.ok / r.seconds:>8.1f}"
                        f"{r.ratio:>8.3f}{r.attempts_per_answer:>8.2f}{r.lost:>6}"
                    )
    worst_ratio = min(r.ratio for r in results)
    worst_attempts = max(r.attempts_per_answer for r in results)
    lost = sum(r.lost for r in results)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    print(f"worst_ratio={worst_ratio:.3f} worst_attempts={worst_attempts:.2f} lost_rows={lost}")
    return 0 if lost == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
