"""Kill the judging process mid-run (SIGKILL), run it again: nothing lost, nothing judged twice.

The real ``autosxs.judge_examples`` runs in a child process against the emulator (in this process);
the test kills it once some answers are in the response cache, then runs it to completion and checks
that exactly the unfinished calls were made again, that every cache entry is whole, and that the
judgments have one row per example.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

ROWS = 45
SAMPLES = 2
TOTAL = ROWS * SAMPLES

SCRIPT = textwrap.dedent(
    """
    import sys
    from autorater_pipelines import autosxs

    dataset, url, cache, out = sys.argv[1:5]
    examples = autosxs.prepare_examples(
        evaluation_dataset=dataset,
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )
    autosxs.judge_examples(
        examples=examples,
        task="question_answering@001",
        id_columns=["id"],
        autorater_model="gemini-2.5-flash",
        autorater_parameters={"base_url": url, "cache_dir": cache, "max_concurrency": 2, "progress": False},
        judgments_path=out,
    )
    """
)


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json")) if cache.is_dir() else []


def _run(script: Path, args: list[str]) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
    return subprocess.Popen([sys.executable, str(script), *args], env=env, stderr=subprocess.PIPE)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
def test_sigkill_mid_run_then_resume(tmp_path: Path) -> None:
    dataset = tmp_path / "dataset.jsonl"
    expected = {}
    with open(dataset, "w", encoding="utf-8") as f:
        for i in range(ROWS):
            a, b = "word " * (5 + i % 7), "word " * (8 + i % 3) + "x"
            expected[f"q{i}"] = "A" if len(a) > len(b) else "B"
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?", "a": a, "b": b}) + "\n")
    script = tmp_path / "judge.py"
    script.write_text(SCRIPT)
    cache, out = tmp_path / "cache", tmp_path / "judgments.jsonl"

    with ModelEmulator(length_judge, latency_s=0.05) as emu:
        args = [str(dataset), emu.url, str(cache), str(out)]
        proc = _run(script, args)
        deadline = time.monotonic() + 120
        while len(_entries(cache)) < TOTAL // 3:
            assert proc.poll() is None, f"the judging process ended early: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no progress within 120 s"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL
        first_calls = emu.call_count

        # Every entry on disk is whole: written to a temporary file and renamed.
        cached = _entries(cache)
        for entry in cached:
            data = json.loads(entry.read_text(encoding="utf-8"))
            assert data["key"] == entry.stem and isinstance(data["text"], str)
        assert TOTAL // 3 <= len(cached) < TOTAL, "the kill did not land mid-run"
        assert not out.exists(), "a killed run must leave no judgments file"

        emu.reset()
        proc = _run(script, args)
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr.decode()[-3000:]
        resumed = emu.requests

        # Exactly the unfinished calls were made again, each once.
        assert len(resumed) == TOTAL - len(cached)
        assert len({r.prompt_text for r in resumed}) == len(resumed)
        assert first_calls >= len(cached)

        judgments = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [j["id"] for j in judgments] == [f"q{i}" for i in range(ROWS)]  # one row each, in order
        assert {j["id"]: j["choice"] for j in judgments} == expected
        samples = [s for j in judgments for s in j["samples"]]
        assert sum(s["cached"] for s in samples) == len(cached)
        assert not any(s["error"] for s in samples)

        # A third run is served entirely from the cache.
        emu.reset()
        proc = _run(script, args)
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr.decode()[-3000:]
        assert emu.call_count == 0


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="needs POSIX signals")
def test_sigterm_mid_run_with_a_gcs_cache_then_resume(tmp_path: Path, bucket) -> None:
    """A judging task on Vertex AI is stopped with SIGTERM: its cache under gs:// lets the re-run skip every answer."""
    from autorater_pipelines.models._cache_store import GcsResponseCache

    gcs_bucket, folder = bucket
    cache = f"{folder}/autorater-cache"
    dataset = tmp_path / "dataset.jsonl"
    with open(dataset, "w", encoding="utf-8") as f:
        for i in range(ROWS):
            f.write(
                json.dumps({"id": f"q{i}", "question": f"question {i}?", "a": "a " * (3 + i % 5), "b": "b b b b"})
                + "\n"
            )
    script = tmp_path / "judge.py"
    script.write_text(SCRIPT)
    out = tmp_path / "judgments.jsonl"

    with ModelEmulator(length_judge, latency_s=0.05) as emu:
        args = [str(dataset), emu.url, cache, str(out)]
        proc = _run(script, args)  # STORAGE_EMULATOR_HOST is in the environment (bucket fixture)
        deadline = time.monotonic() + 120
        while emu.stats()["by_status"].get("200", 0) < TOTAL // 3:
            assert proc.poll() is None, f"the judging process ended early: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no progress within 120 s"
            time.sleep(0.005)
        proc.send_signal(signal.SIGTERM)  # what Vertex AI sends when it stops a task
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode != 0, "an interrupted step must fail (its retry resumes it)"
        assert "interrupted by SIGTERM" in stderr.decode()
        assert not out.exists(), "an interrupted run must leave no judgments file"
        answered = [r.prompt_text for r in emu.requests if r.status == 200]
        assert TOTAL // 3 <= len(answered) < TOTAL, "the signal did not land mid-run"

        # Calls in flight finished and every answer reached the cache (uploaded in segments, not per call).
        stored = GcsResponseCache(cache)
        assert len(stored) == len(answered)
        segments = list(gcs_bucket.client.list_blobs(gcs_bucket.name, prefix=cache.split("/", 3)[3]))
        assert 1 <= len(segments) <= 3

        emu.reset()
        proc = _run(script, args)
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr.decode()[-3000:]
        resumed = [r.prompt_text for r in emu.requests]

    # Exactly the unfinished calls were made, each once.
    assert len(resumed) == TOTAL - len(answered)
    assert set(resumed).isdisjoint(answered) and len(set(resumed)) == len(resumed)
    judgments = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [j["id"] for j in judgments] == [f"q{i}" for i in range(ROWS)]
    assert sum(s["cached"] for j in judgments for s in j["samples"]) == len(answered)


CONCURRENCY = 2  # max_concurrency of SCRIPT: the calls in flight at any moment


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
def test_sigkill_mid_run_with_a_gcs_cache_repeats_at_most_the_calls_in_flight(tmp_path: Path, bucket) -> None:
    """SIGKILL (no handler runs, nothing is flushed) of a judging process whose cache is under gs://.

    Issue 25: 28 of 70 answered calls were asked again on resume (answers waited up to 10 s for a batch
    upload). Every answer is now stored before its call counts as finished, so the re-run repeats at most
    the calls that were in flight.
    """
    gcs_bucket, folder = bucket
    cache = f"{folder}/autorater-cache"
    dataset = tmp_path / "dataset.jsonl"
    with open(dataset, "w", encoding="utf-8") as f:
        for i in range(ROWS):
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?", "a": "a " * (3 + i % 5), "b": "b"}) + "\n")
    script = tmp_path / "judge.py"
    script.write_text(SCRIPT)
    out = tmp_path / "judgments.jsonl"

    with ModelEmulator(length_judge, latency_s=0.05) as emu:
        args = [str(dataset), emu.url, cache, str(out)]
        proc = _run(script, args)
        deadline = time.monotonic() + 120
        while emu.stats()["by_status"].get("200", 0) < TOTAL // 3:
            assert proc.poll() is None, f"the judging process ended early: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no progress within 120 s"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stderr.close()
        answered = [r.prompt_text for r in emu.requests if r.status == 200]
        assert TOTAL // 3 <= len(answered) < TOTAL, "the kill did not land mid-run"

        emu.reset()
        proc = _run(script, args)
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr.decode()[-3000:]
        resumed = [r.prompt_text for r in emu.requests]

    repeated = set(resumed) & set(answered)
    print(f"answered before SIGKILL: {len(answered)}, asked again on resume: {len(repeated)}")
    assert len(repeated) <= CONCURRENCY, f"{len(repeated)} of {len(answered)} answered calls were asked again"
    assert len(resumed) == TOTAL - len(answered) + len(repeated) and len(set(resumed)) == len(resumed)
    judgments = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [j["id"] for j in judgments] == [f"q{i}" for i in range(ROWS)]
