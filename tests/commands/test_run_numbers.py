"""``autorater run``: the findings of "Numbers you can trust" (issue 14) where they were seen, end to end."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.redaction import REDACTED
from autorater_pipelines.report._out_dir import MARKER_FILE, record_outputs
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import ECHO_MARK, OVERLOAD_MARK, leaky_length_judge, length_judge

pytestmark = [pytest.mark.pipeline, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

VERDICT = '{"explanation": "fine", "choice": "%s"}'


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _params(tmp_path: Path, dataset: Path, replay: Path, **overrides: Any) -> dict[str, Any]:
    params = {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
        "response_column_a": "a",
        "response_column_b": "b",
        "autorater_model": f"replay/{replay}",
    }
    params.update(overrides)
    return params


def _run(params: dict[str, Any], tmp_path: Path, name: str = "out", *extra: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    out = tmp_path / name
    argv = ["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet", *extra]
    return main(argv), out


def _replay(tmp_path: Path, choices: dict[str, tuple[str, str]]) -> Path:
    """Replay file: row id → (position verdict in the original order, in the swapped order)."""
    rows = [
        {"id": row_id, "flipped": flipped, "response": VERDICT % pair[flipped]}
        for row_id, pair in choices.items()
        for flipped in (False, True)
    ]
    return _write_jsonl(tmp_path / "replay.jsonl", rows)


def test_csv_with_an_empty_cell_is_read_like_jsonl_and_the_row_count_is_printed_and_recorded(tmp_path, capsys):
    """One empty CSV cell used to refuse the whole dataset while the same row in JSONL was accepted; a
    200,000-character template runs (it is passed to the steps through a file, not the command line)."""
    dataset = tmp_path / "data.csv"
    dataset.write_text("id,question,a,b\nq1,Q1?,x,yy\nq2,Q2?,x,\nq3,Q3?,x,yy\nq4,Q4?,x,yy\n", encoding="utf-8")
    replay = _replay(tmp_path, {f"q{i}": ("A", "B") for i in range(1, 5)})
    # A 200,000-character template used to end in a raw "Argument list too long" traceback.
    template = "Answer with care. " * 11_112 + "{{ question }}"
    assert len(template) > 200_000
    params = _params(
        tmp_path, dataset, replay, autorater_prompt_parameters={"inference_instruction": {"template": template}}
    )
    code, out = _run(params, tmp_path)
    captured = capsys.readouterr()
    printed = captured.out
    assert "Traceback" not in printed + captured.err and "Argument list too long" not in printed + captured.err
    assert code == 0
    assert "read 4 data row(s) from evaluation_dataset" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["dataset_rows_read"] == 4 and metrics["evaluation_count"] == 4
    judgments = {j["id"]: j for j in _read_jsonl(out / "judgments.jsonl")}
    assert judgments["q2"]["response_b"] == "" and judgments["q2"]["choice"] == "A"
    assert judgments["q3"]["inference_instruction"] == "Answer with care. " * 11_112 + "Q3?"


def test_csv_stray_quote_in_the_last_column_is_refused_naming_file_and_line(tmp_path, capsys):
    """A stray quote used to swallow the rest of the file: "1 examples, 1 judged, 0 with errors", exit 0."""
    dataset = tmp_path / "data.csv"
    dataset.write_text('id,question,a,b\nq1,Q1?,x,yy\nq2,Q2?,x,"yy\nq3,Q3?,x,yy\nq4,Q4?,x,yy\n', encoding="utf-8")
    replay = _replay(tmp_path, {f"q{i}": ("A", "B") for i in range(1, 5)})
    code, out = _run(_params(tmp_path, dataset, replay), tmp_path)
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert f"{dataset}, line 3: a quoted value opens" in err and "Traceback" not in err


KEY = "AIzaSyD-run-secret-0123456789abcdefghijk"


def _autorater(args: list[str], env: dict[str, str], **kwargs: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "autorater_pipelines.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **kwargs,
    )


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_", "LC_", "LANG"))}
    env.pop("PYTHONUTF8", None)
    env.pop("PYTHONIOENCODING", None)
    return {**env, **extra}


def test_a_leaky_overloaded_endpoint_on_an_ascii_terminal(tmp_path):
    """One run through the CLI, on a machine whose locale is not UTF-8, against an endpoint that
    overloads on some swapped samples and echoes the API key in its error body: rows judged in one
    order only are excluded and said so; the key is in no output and not on the terminal; no traceback;
    stale outputs and staging folders of earlier runs are removed."""
    rows = [
        {"id": f"r{i}", "question": f"Q{i}?", "a": "long answer " * (3 + i % 2 * 4), "b": "medium " * 5}
        for i in range(6)
    ]
    rows[2]["b"] += OVERLOAD_MARK  # every swapped sample of r2 fails: judged in the original order only
    rows[4]["question"] += ECHO_MARK  # r4 is refused with the key in the error body
    dataset = _write_jsonl(tmp_path / "data.jsonl", rows)
    out = tmp_path / "out"
    out.mkdir()
    (out / "judgments.json").write_text("[]")  # an earlier run's judgments_format=json export
    (out / "metrics.1.json").write_text("{}")  # an earlier run's re-scoring history
    record_outputs(str(out), ["judgments.json", "metrics.1.json"], "autorater run autosxs")  # as they recorded
    killed = tmp_path / ".out.partial-999999-abcd"  # a killed run's staging folder (pid 999999 is gone)
    killed.mkdir()
    stamp = {"pid": 999999, "host": socket.gethostname(), "output_dir": str(out)}
    (killed / ".autorater-staging.json").write_text(json.dumps(stamp))
    with ModelEmulator(leaky_length_judge) as emu:
        params = _params(
            tmp_path,
            dataset,
            tmp_path,
            autorater_model="gemini-2.5-flash",
            autorater_parameters={"base_url": emu.url, "max_retries": 0, "cache_dir": str(tmp_path / "cache")},
        )
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(params))
        env = _clean_env(GEMINI_API_KEY=KEY, LC_ALL="C", PYTHONUTF8="0")
        proc = _autorater(
            ["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--max-failed-share", "1"], env
        )
        stdout, stderr = proc.communicate(timeout=1500)
        assert any(r.headers.get("x-goog-api-key") == KEY for r in emu.requests)
    # The pipeline's own process writes UTF-8 (its UTF-8 mode is on); the command's summary had to fit ASCII.
    printed = (stdout + stderr).decode("utf-8", errors="replace")
    assert "95% CI" in printed and "\\u2013" in printed  # "–" written as an escape, not a crash
    assert proc.returncode == 0, printed[-3000:]
    assert "Traceback" not in printed
    assert KEY not in printed and "API key not valid" in printed
    assert "1 rows judged in one order only: excluded" in printed
    assert "read 6 data row(s) from evaluation_dataset" in printed
    assert sorted(p.name for p in out.iterdir()) == [
        MARKER_FILE,
        "error_messages.jsonl",
        "judgments.jsonl",
        "metrics.json",
        "report.html",
    ]
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]
    for path in out.iterdir():  # the marker too
        assert KEY not in path.read_text(encoding="utf-8"), path.name
    errors = _read_jsonl(out / "error_messages.jsonl")
    assert any(REDACTED in e["error"] for e in errors if e["id"] == "r4")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["one_order_only_count"] == 1 and metrics["error_count"] == 1 and metrics["judged_count"] == 4
    judgments = {j["id"]: j for j in _read_jsonl(out / "judgments.jsonl")}
    assert judgments["r2"]["complete"] is False and judgments["r4"]["choice"] == "ERROR"


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from /proc")
def test_sigkill_of_autorater_run_stops_its_pipeline_and_the_next_run_cleans_up(tmp_path):
    """SIGKILL of `autorater run` left its judging step running and calling the model (126 → 187 calls in 4 s)."""
    rows = [{"id": f"r{i}", "question": f"Q{i}?", "a": "a " * (i % 5 + 1), "b": "b b b"} for i in range(400)]
    dataset = _write_jsonl(tmp_path / "data.jsonl", rows)
    out = tmp_path / "out"
    with ModelEmulator(length_judge, latency_s=0.2) as emu:
        params = _params(
            tmp_path,
            dataset,
            tmp_path,
            autorater_model="gemini-2.5-flash",
            autorater_parameters={"base_url": emu.url, "max_concurrency": 2, "cache_dir": "off"},
        )
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(params))
        proc = _autorater(
            ["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"], _clean_env()
        )
        deadline = time.monotonic() + 900
        while emu.call_count < 5:
            assert proc.poll() is None, proc.communicate()[1].decode()[-3000:]
            assert time.monotonic() < deadline, "judging never started"
            time.sleep(0.2)
        (pid_file,) = tmp_path.glob(".out.partial-*/pipeline.pid")
        pgid = int(pid_file.read_text())
        assert _group_members(pgid), "the pipeline runs in its own process group"
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        deadline = time.monotonic() + 30
        while _group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _group_members(pgid) == [], "the pipeline's process group outlived autorater run"
        calls = emu.call_count
        time.sleep(3)
        assert emu.call_count == calls, "nothing calls the model after autorater run was killed"
    assert list(tmp_path.glob(".out.partial-*")), "the killed run left its staging folder"
    params_path.write_text(json.dumps({**params, "task": "no_such_task@001"}))
    refused = _autorater(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out)], _clean_env())
    _, stderr = refused.communicate(timeout=600)
    assert refused.returncode == 2 and b"Traceback" not in stderr
    # A refused run removes nothing (a user's folder named like a staging folder must survive it); a run that is
    # accepted cleans up first, under the OUT lock: the cleanup it calls removes the killed run's stamped folder.
    assert list(tmp_path.glob(".out.partial-*")), "a refused run removes nothing"
    from autorater_pipelines.commands.run import _clean_partial_runs

    _clean_partial_runs(os.path.abspath(out))
    assert not list(tmp_path.glob(".out.partial-*")), "the next run removes the staging folder of the killed one"


def test_the_failure_budget_stop_inside_a_step_is_one_error_line_not_a_traceback(tmp_path):
    """A dead endpoint trips the judge step's failure budget: the user sees why, in one line, no traceback.

    Without ``strict`` the step still writes every row (ERROR with the reason) and the run exits 1 because
    no row could be judged.
    """
    rows = [{"id": f"r{i}", "question": f"Q{i}?", "a": "a", "b": "b b"} for i in range(30)]
    dataset = _write_jsonl(tmp_path / "data.jsonl", rows)
    with ModelEmulator(fault_rate=1.0, fault_status=503) as emu:
        params = _params(
            tmp_path,
            dataset,
            tmp_path,
            autorater_model="gemini-2.5-flash",
            autorater_parameters={
                "base_url": emu.url,
                "cache_dir": "off",
                "max_retries": 0,
                "max_consecutive_failures": 3,
                "max_concurrency": 1,
            },
        )
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(params))
        proc = _autorater(
            ["run", "autosxs", "--params", str(params_path), "--output-dir", str(tmp_path / "out")], _clean_env()
        )
        stdout, stderr = proc.communicate(timeout=1500)
    printed = (stdout + stderr).decode("utf-8", errors="replace")
    assert proc.returncode == 1, printed[-3000:]
    assert "Traceback" not in printed, printed[-3000:]
    assert "model calls stopped early: stopped calling 'gemini-2.5-flash' after 3 consecutive failed calls" in printed
    assert "error: no row could be evaluated" in printed
    judgments = [json.loads(line) for line in (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()]
    assert len(judgments) == 30 and {j["choice"] for j in judgments} == {"ERROR"}
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["not_called_count"] == 29  # r0's two calls and r1's first were made; the rest never
