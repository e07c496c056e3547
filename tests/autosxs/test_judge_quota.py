"""Judging under quotas: partial judgments when the model calls stop early, strict mode, shards sharing a quota."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

TASK = "question_answering@001"


def _judge(examples: list[dict], url: str, tmp_path: Path, **params) -> tuple:
    return autosxs.judge_examples(
        examples=examples,
        task=TASK,
        id_columns=["id"],
        autorater_model="gemini-2.5-flash",
        autorater_parameters={"base_url": url, "cache_dir": "off", "progress": False, "max_concurrency": 1, **params},
        judgments_path=str(tmp_path / "judgments.jsonl"),
        error_messages_path=str(tmp_path / "errors.jsonl"),
    )


def test_when_the_calls_stop_early_the_step_writes_what_it_has_and_error_rows_with_the_reason(
    tmp_path, qa_examples
) -> None:
    examples = qa_examples(6)
    with ModelEmulator(length_judge) as emulator:
        assert _judge(examples[:2], emulator.url, tmp_path)[2].error_count == 0  # the endpoint works
        emulator.inject_failures(100, status=400, retry_after_s=None)  # then every call is refused
        judgments, errors, summary = _judge(examples, emulator.url, tmp_path, max_consecutive_failures=3)
    assert [j["id"] for j in judgments] == [f"q{i}" for i in range(6)]  # every row, none dropped
    assert summary.error_count == 6 and summary.not_called_count == 5  # 3 calls made, 9 not: rows 2-6
    assert summary.stopped.startswith("stopped calling 'gemini-2.5-flash' after 3 consecutive failed calls")
    last = judgments[-1]
    assert last["choice"] == "ERROR" and last["samples"][0]["error"].startswith("budget: not called: stopped calling")
    written = [json.loads(line) for line in (tmp_path / "judgments.jsonl").read_text().splitlines()]
    assert [j["choice"] for j in written] == ["ERROR"] * 6
    assert len(errors) == 12 and all(not e["row_judged"] for e in errors)
    metrics = autosxs.aggregate_judgments(judgments=judgments)
    assert metrics["not_called_count"] == 5 and metrics["error_count"] == 6


def test_strict_mode_fails_the_step_after_writing(tmp_path, qa_examples) -> None:
    examples = qa_examples(3)
    with ModelEmulator(length_judge) as emulator:
        emulator.inject_failures(100, status=401, retry_after_s=None)  # a wrong endpoint stops at once
        with pytest.raises(ModelCallError, match=rf"{emulator.url} \(model 'gemini-2.5-flash'\) refused the call"):
            _judge(examples, emulator.url, tmp_path, strict=True)
    assert len((tmp_path / "judgments.jsonl").read_text().splitlines()) == 3


def test_strict_must_be_a_boolean() -> None:
    with pytest.raises(Exception, match=r"strict must be true or false, got 'yes'"):
        autosxs.split_autorater_parameters({"strict": "yes"})


SHARD_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from autorater_pipelines import autosxs, io

    examples_path, url, index, count, out = sys.argv[1:6]
    examples = autosxs.select_shard(io.read_jsonl(examples_path), int(index), int(count))
    judgments, _, _ = autosxs.judge_examples(
        examples=examples, task="question_answering@001", id_columns=["id"], autorater_model="gemini-2.5-flash",
        autorater_parameters={"base_url": url, "cache_dir": "off", "progress": False, "requests_per_minute": 240},
        shard_count=int(count),
    )
    io.write_jsonl(out, judgments)
    """
)


def test_parallel_shards_divide_the_declared_quota(tmp_path, qa_examples) -> None:
    """4 shard processes, requests_per_minute 240 (4/s) declared: together they stay within it."""
    examples = qa_examples(12)
    examples_path = tmp_path / "examples.jsonl"
    examples_path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    script = tmp_path / "shard.py"
    script.write_text(SHARD_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
    with ModelEmulator(length_judge, requests_per_minute=240, quota_burst=4) as emulator:
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(script),
                    str(examples_path),
                    emulator.url,
                    str(i),
                    "4",
                    str(tmp_path / f"{i}.jsonl"),
                ],
                env=env,
                stderr=subprocess.PIPE,
            )
            for i in range(4)
        ]
        for proc in procs:
            _, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0, stderr.decode()[-3000:]
    judgments = [json.loads(line) for i in range(4) for line in (tmp_path / f"{i}.jsonl").read_text().splitlines()]
    assert len(judgments) == 12 and not [j for j in judgments if j["choice"] == "ERROR"]
    arrivals = sorted(r.received_at for r in emulator.requests)
    window = 3.0  # any 3 s hold at most 3 s of quota plus the burst
    assert max(sum(1 for t in arrivals[i:] if t < start + window) for i, start in enumerate(arrivals)) <= 4 * 3 + 4
