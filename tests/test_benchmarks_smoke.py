"""The benchmark scripts still run (tiny settings): they exercise the real judging path end to end."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
def test_judge_throughput_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("judge_throughput")
    args = ["--calls", "40", "--latency-ms", "5", "--quota-rpm", "0", "--fault-rate", "0.1", "--concurrency", "8"]
    assert bench.main([*args, "--baselines", "sequential", "--baseline-time-limit-s", "1"]) == 0
    out = capsys.readouterr().out
    assert "ours, fake provider" in out and "sequential" in out and "re-run after completion: 0 model calls" in out
    assert out.strip().splitlines()[-1].endswith("lost_rows=0")


@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
def test_judge_throughput_unknown_quota_and_shards_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("judge_throughput")
    args = ["--calls", "24", "--latency-ms", "5", "--quota-rpm", "1200", "--fault-rate", "0", "--baselines", "none"]
    assert bench.main([*args, "--unknown-quota"]) == 0
    assert bench.main([*args, "--shards", "2"]) == 0
    out = capsys.readouterr().out
    assert "ours, 2 shards" in out and "calls in any 60 s" in out
    assert out.strip().splitlines()[-1].endswith("lost_rows=0")


@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
def test_gecko_throughput_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("gecko_throughput")
    assert bench.main(["--rows", "4", "--latency-ms", "5", "--quota-rpm", "1200", "--fault-rate", "0.1"]) == 0
    out = capsys.readouterr().out
    for case in ("image, questions_per_call 0", "image, questions_per_call 1", "video, questions_per_call 1"):
        assert f"{case} rubrics" in out and f"{case} validator" in out
    assert out.strip().splitlines()[-1].endswith("lost_rows=0")


def test_gcs_cache_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    from autorater_pipelines.testing.cloud_emulators import missing_emulator

    if missing_emulator("gcs"):
        pytest.skip(missing_emulator("gcs"))
    assert _load("gcs_cache").main(["--calls", "300", "--batch-entries", "100", "--per-call-sample", "5"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("calls=300 segments=") and 3 <= int(last.split()[1].split("=")[1]) <= 6  # <= 100 each


def test_arena_ranking_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--models", "4", "--battles", "2000", "--prompts", "50", "--rounds", "20", "--repeat", "1"]
    assert _load("arena_ranking").main(args) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("models=4 battles=2000 rounds=20 bt_s=") and last.endswith("order_recovered=True")


def test_scale_rows_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    assert _load("scale_rows").main(["--rows", "300"]) == 0
    # strip(): after a ParallelFor, the KFP local runner leaves print() indenting in this process (NOTES.md).
    lines = [line.strip() for line in capsys.readouterr().out.strip().splitlines()]
    assert lines[-1].startswith("rows=300 seconds=")
    steps = [line.split()[0] for line in lines if "s CPU  peak RSS" in line]
    assert steps == ["load", "judge", "merge", "metrics", "export"]  # wall, CPU and peak RSS of each step


def test_image_startup_reads_step_times_and_top_level_imports_from_the_runner_log() -> None:
    """The parser of ``image_startup.py`` (the image runs themselves need Docker: .ci/docker_image.sh)."""
    log = "\n".join(
        [
            "10:00:00.000000 - INFO - Running pipeline: \x1b[95m'autosxs-template'\x1b[0m",
            "10:00:01.000000 - INFO - Executing task \x1b[96m'prepare-pairwise-examples'\x1b[0m",
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |     300000 | kfp",
            "import time:       200 |     250000 |   kfp.dsl",
            "import time:      1000 |    1200000 | autorater_pipelines",
            "10:00:03.500000 - INFO - Task \x1b[96m'prepare-pairwise-examples'\x1b[0m finished with status SUCCESS",
            "10:00:03.510000 - INFO - Task \x1b[96m'prepare-pairwise-examples'\x1b[0m outputs:",
            "10:00:04.000000 - INFO - Executing task \x1b[96m'judge-pairwise-examples'\x1b[0m",
            "import time:        50 |      40000 | json",
            "10:00:04.250000 - INFO - Task \x1b[96m'judge-pairwise-examples'\x1b[0m finished with status SUCCESS",
        ]
    )
    assert _load("image_startup")._steps(log) == [
        {"task": "prepare-pairwise-examples", "wall_s": 2.5, "imports_s": 1.5},
        {"task": "judge-pairwise-examples", "wall_s": 0.25, "imports_s": 0.04},
    ]


def test_quickstart_cpu_once(capsys: pytest.CaptureFixture[str]) -> None:
    """One quickstart run: the total and a CPU figure for the launcher and each of the 7 steps (no timing asserted)."""
    assert _load("quickstart_cpu").main(["--repeat", "1"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("cpu_s=") and out[-1].endswith(" steps=7"), out[-3:]
    per_step = out[-2].split("; ")[-1].split(", ")  # "<component> <cpu s>" per step
    assert len(per_step) == 7 and all(float(item.split()[1]) >= 0 for item in per_step), out[-2]
