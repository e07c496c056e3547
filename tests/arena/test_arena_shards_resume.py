"""Arena judging in shards, and a killed ``autorater run arena`` resumed from its response cache.

- ``autorater_parameters.shards`` > 1 judges the pairs in parallel tasks (AutoSxS's shards): the judgments and the
  leaderboard are those of one shard.
- SIGKILL of ``autorater run arena`` mid-judging (its pipeline's process group goes with it), then the same run
  again with the same cache: no answered call is asked again beyond the calls that were in flight, the generated
  model is not asked again, and a third run makes no call at all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from arena_synthetic import arena_params, write_arena

from autorater_pipelines.cli import main
from autorater_pipelines.testing import EmulatedRequest, ModelEmulator
from autorater_pipelines.testing.demo_models import is_judge_request
from autorater_pipelines.testing.judges import length_judge


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _run(params: dict, tmp_path: Path, name: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / name
    return main(["run", "arena", "--params", str(params_path), "--output-dir", str(out), "--quiet"]), out


@pytest.mark.pipeline
def test_three_shards_give_the_leaderboard_of_one(tmp_path):
    dataset, replay = write_arena(tmp_path, prompts=40)
    code, one = _run(arena_params(dataset, replay, bootstrap_rounds=30), tmp_path, "one")
    assert code == 0
    sharded = arena_params(dataset, replay, bootstrap_rounds=30)
    sharded["autorater_parameters"] = {**sharded["autorater_parameters"], "shards": 3}
    code, three = _run(sharded, tmp_path, "three")
    assert code == 0
    assert len(_read_jsonl(three / "judgments.jsonl")) == 15 * 40
    assert (three / "judgments.jsonl").read_text() == (one / "judgments.jsonl").read_text()  # merged in pair order
    assert _read_jsonl(three / "leaderboard.jsonl") == _read_jsonl(one / "leaderboard.jsonl")
    metrics_one, metrics_three = (json.loads((d / "metrics.json").read_text()) for d in (one, three))
    assert metrics_three["win_matrix"] == metrics_one["win_matrix"]
    assert metrics_three["battle_sample_count"] == metrics_one["battle_sample_count"] == 15 * 40 * 2


MODELS = 4  # 3 response columns + 1 generated model
PROMPTS = 30
JUDGE_CALLS = 6 * PROMPTS * 2  # 6 model pairs × prompts × 2 samples
CONCURRENCY = 2
GENERATED = "A generated answer of middling length here."


def _responder(request: EmulatedRequest) -> str:
    return length_judge(request) if is_judge_request(request) else GENERATED


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}


def _autorater(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "autorater_pipelines.cli", *args],
        env=_clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (read from /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _cached(cache: Path) -> int:
    return len(list(cache.glob("*/*.json"))) if cache.is_dir() else 0


@pytest.mark.pipeline
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs POSIX SIGKILL and /proc")
def test_sigkill_mid_judging_then_resume_repeats_no_finished_call(tmp_path):
    dataset = tmp_path / "dataset.jsonl"
    rows = [
        {
            "id": f"q{i:02d}",
            "question": f"Question {i}?",
            "a": "a " * (2 + i % 5),
            "b": "b " * 4,
            "c": "c " * (1 + i % 9),
        }
        for i in range(PROMPTS)
    ]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache, out = tmp_path / "cache", tmp_path / "out"
    with ModelEmulator(_responder, latency_s=0.05) as emu:
        params = {
            "evaluation_dataset": str(dataset),
            "task": "question_answering@001",
            "id_columns": ["id"],
            "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
            "response_columns": {"col-a": "a", "col-b": "b", "col-c": "c"},
            "models": {
                "gen": {
                    "model": "openai/gen-model",
                    "prompt_parameters": {"prompt": {"column": "question"}},
                    "parameters": {"base_url": emu.url, "cache_dir": str(cache)},
                }
            },
            "autorater_model": "gemini-2.5-flash",
            "project": "test-project",
            "location": "us-central1",
            "autorater_parameters": {"base_url": emu.url, "cache_dir": str(cache), "max_concurrency": CONCURRENCY},
            "bootstrap_rounds": 10,
        }
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(params))
        args = ["run", "arena", "--params", str(params_path), "--output-dir", str(out), "--quiet"]

        proc = _autorater(args)
        deadline = time.monotonic() + 600
        while _cached(cache) < PROMPTS + JUDGE_CALLS // 4:
            assert proc.poll() is None, f"the run ended early: {proc.stderr.read().decode()[-3000:]}"
            assert time.monotonic() < deadline, "no progress within 600 s"
            time.sleep(0.01)
        (pid_file,) = tmp_path.glob(".out.partial-*/pipeline.pid")
        pgid = int(pid_file.read_text())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stderr.close()
        deadline = time.monotonic() + 60
        while _group_members(pgid) and time.monotonic() < deadline:  # the pipeline's steps end with the run
            time.sleep(0.2)
        assert _group_members(pgid) == [], "the pipeline's process group outlived autorater run"
        answered = {r.prompt_text for r in emu.requests if r.status == 200 and is_judge_request(r)}
        generated = [r for r in emu.requests if not is_judge_request(r)]
        assert len(generated) == PROMPTS, "each prompt generated once before judging"
        assert JUDGE_CALLS // 4 <= len(answered) < JUDGE_CALLS, "the kill did not land mid-judging"
        assert not out.exists(), "a killed run writes no output"

        emu.reset()
        proc = _autorater(args)
        _, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, stderr.decode()[-3000:]
        resumed = [r.prompt_text for r in emu.requests]

        # No generation again; the judge calls not finished before the kill, each once; at most the calls that
        # were in flight (answered by the server, not yet stored) asked again.
        assert all(is_judge_request(r) for r in emu.requests)
        repeated = set(resumed) & answered
        print(f"judge calls answered before SIGKILL: {len(answered)}, asked again on resume: {len(repeated)}")
        assert len(repeated) <= CONCURRENCY
        assert len(set(resumed)) == len(resumed) == JUDGE_CALLS - len(answered) + len(repeated)

        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["pair_count"] == 6 * PROMPTS and metrics["battle_sample_count"] == JUDGE_CALLS
        judgments = _read_jsonl(out / "judgments.jsonl")
        assert sum(s["cached"] for j in judgments for s in j["samples"]) == JUDGE_CALLS - len(resumed)
        assert {j["response_b"] for j in judgments if j["model_b"] == "gen"} == {GENERATED}

        emu.reset()
        proc = _autorater(args)
        _, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, stderr.decode()[-3000:]
        assert emu.call_count == 0, "a third run is served from the cache"
