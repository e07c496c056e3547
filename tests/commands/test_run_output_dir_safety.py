"""``autorater run --output-dir OUT`` holds runs, not the user's files (issue 25, item 1).

A run used to delete a user's ``OUT/pipeline_root/`` and files named like outputs, report a stale
``model_evaluations.json`` as its own, and two runs into one OUT both reported success.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.report._out_dir import MARKER_FILE, OutputLock, check_output_dir, record_outputs
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ROWS = [{"id": f"q{i}", "question": f"Q{i}?", "a": "x" * i, "b": "yy"} for i in range(1, 4)]
VERDICT = '{"explanation": "fine", "choice": "%s"}'
OUTPUTS = ["error_messages.jsonl", "judgments.jsonl", "metrics.json", "report.html"]


def _snapshot(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(directory.rglob("*"))
    }


def _params(tmp_path: Path, **overrides: Any) -> Path:
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"id": r["id"], "flipped": bool(f), "response": VERDICT % ("AB"[f] if r["id"] != "q2" else "A")})
            + "\n"
            for r in ROWS
            for f in (0, 1)
        ),
        encoding="utf-8",
    )
    params = {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
        "response_column_a": "a",
        "response_column_b": "b",
        "autorater_model": f"replay/{replay}",
        **overrides,
    }
    path = tmp_path / f"params-{len(list(tmp_path.glob('params-*')))}.json"
    path.write_text(json.dumps(params), encoding="utf-8")
    return path


def _marker(out: Path) -> list[str]:
    return json.loads((out / MARKER_FILE).read_text(encoding="utf-8"))["files"]


def test_a_non_empty_output_dir_without_a_marker_is_refused_and_loses_nothing(tmp_path, capsys):
    """Every file the hostile trial saw deleted or overwritten is still there, byte for byte."""
    out = tmp_path / "mine"
    (out / "pipeline_root" / "deep").mkdir(parents=True)
    (out / "pipeline_root" / "deep" / "weights.bin").write_bytes(os.urandom(256))
    for name in ("judgments.json", "results.jsonl", "rubrics.jsonl", "judgments.1.jsonl", "metrics.2.json"):
        (out / name).write_text(f"the user's {name}\n", encoding="utf-8")
    (out / "report.html").write_text("<p>my report</p>", encoding="utf-8")
    before = _snapshot(out)

    code = main(["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"])

    err = capsys.readouterr().err
    assert code == 2
    assert f"--output-dir: {str(out)!r} is not empty (judgments.1.jsonl, judgments.json, metrics.2.json," in err
    assert f"holds no {MARKER_FILE}" in err and "pick a new or empty --output-dir" in err
    assert "Traceback" not in err
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl", "mine", "params-0.json", "replay.jsonl"]


def test_a_rerun_replaces_only_its_own_files_and_keeps_the_users(tmp_path, capsys):
    out = tmp_path / "out"
    first = ["run", "autosxs", "--params", str(_params(tmp_path, judgments_format="json")), "--output-dir", str(out)]
    assert main([*first, "--quiet", "--keep-pipeline-root"]) == 0
    assert sorted(_marker(out)) == sorted([*OUTPUTS, "judgments.json", "pipeline_root"])
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    # A file of the user's named like an output this run does not write (a registry run's report).
    (out / "model_evaluations.json").write_text("[1, 2]", encoding="utf-8")
    capsys.readouterr()

    again = ["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"]
    assert main([*again, "--keep-pipeline-root"]) == 0  # its own pipeline_root is replaced, not refused
    printed = capsys.readouterr().out
    assert f"removed outputs of an earlier run from {out}: judgments.json\n" in printed
    assert sorted(_marker(out)) == sorted([*OUTPUTS, "pipeline_root"])

    assert main(["rescore", str(out), "--params", '{"ties_as_half": true}']) == 0  # in place: keeps versions
    assert {"metrics.1.json", "report.html"} <= set(_marker(out))
    capsys.readouterr()

    code = main(again)

    printed = capsys.readouterr().out
    assert code == 0
    assert f"removed outputs of an earlier run from {out}: metrics.1.json, pipeline_root, report.1.html\n" in printed
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*OUTPUTS, MARKER_FILE, "model_evaluations.json", "notes.txt"]
    )
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert (out / "model_evaluations.json").read_text(encoding="utf-8") == "[1, 2]"
    assert "ModelEvaluation" not in printed and "model_evaluations" not in printed
    assert sorted(_marker(out)) == OUTPUTS

    # A user's file where an output goes is refused before the run, and kept.
    (out / "judgments.json").write_text("my judgments", encoding="utf-8")
    before = _snapshot(out)
    code = main(
        ["run", "autosxs", "--params", str(_params(tmp_path, judgments_format="json")), "--output-dir", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"{str(out / 'judgments.json')!r} was not written by an earlier autorater run" in err
    assert _snapshot(out) == before


def test_a_stale_model_evaluations_file_is_removed_and_never_reported(tmp_path, capsys):
    """An earlier registry run's ``model_evaluations.json`` (in the marker) does not outlive a run without one."""
    out = tmp_path / "out"
    out.mkdir()
    stale = {"b": {"model": "projects/p/locations/l/models/m", "resource_name": "projects/p/stale", "error": None}}
    (out / "model_evaluations.json").write_text(json.dumps(stale), encoding="utf-8")
    record_outputs(str(out), ["model_evaluations.json"], "autorater run autosxs")  # as that run recorded it

    code = main(["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"])

    printed = capsys.readouterr().out
    assert code == 0
    assert "projects/p/stale" not in printed and "ModelEvaluation" not in printed
    assert f"removed outputs of an earlier run from {out}: model_evaluations.json" in printed
    assert not (out / "model_evaluations.json").exists()


def test_a_registry_run_refuses_a_users_model_evaluations_file_with_a_clear_error(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "judgments.jsonl").write_text("", encoding="utf-8")
    record_outputs(str(out), ["judgments.jsonl"], "autorater run autosxs")
    (out / "model_evaluations.json").write_text("not json at all", encoding="utf-8")
    names = ["judgments.jsonl", "model_evaluations.json"]
    with pytest.raises(InputError, match=r"model_evaluations.json' was not written by an earlier autorater run"):
        check_output_dir(str(out), names)
    (out / MARKER_FILE).write_text('{"files": ["../../etc"]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"is not an autorater output marker .* changed by hand"):
        check_output_dir(str(out), names)


def _autorater(args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
    return subprocess.Popen(
        [sys.executable, "-m", "autorater_pipelines.cli", *args], env=env, stderr=subprocess.PIPE, **kwargs
    )


def test_two_runs_into_one_output_dir_never_both_succeed(tmp_path, capsys):
    out = tmp_path / "out"
    lock = tmp_path / ".out.lock"
    with ModelEmulator(length_judge, latency_s=0.3) as emu:
        params = _params(
            tmp_path,
            autorater_model="gemini-2.5-flash",
            autorater_parameters={"base_url": emu.url, "max_concurrency": 1, "cache_dir": "off"},
        )
        first = _autorater(["run", "autosxs", "--params", str(params), "--output-dir", str(out), "--quiet"])
        deadline = time.monotonic() + 600
        while emu.call_count < 1:
            assert first.poll() is None, first.communicate()[1].decode()[-3000:]
            assert time.monotonic() < deadline, "judging never started"
            time.sleep(0.1)
        assert lock.exists()

        code = main(["run", "autosxs", "--params", str(params), "--output-dir", str(out), "--quiet"])

        err = capsys.readouterr().err
        assert code == 2
        host = socket.gethostname()
        assert f"another autorater run (pid {first.pid} on {host} since " in err and "is writing" in err
        _, first_err = first.communicate(timeout=600)
    assert first.returncode == 0, first_err.decode()[-3000:]
    assert sorted(_marker(out)) == OUTPUTS
    assert not lock.exists()


def test_a_lock_left_by_a_killed_run_is_taken_over(tmp_path, capsys):
    """The kernel releases a killed holder's ``flock``; its lock file, still naming it, does not block."""
    out = tmp_path / "out"
    lock = tmp_path / ".out.lock"
    lock.write_text(json.dumps({"pid": 999999, "host": socket.gethostname(), "started": "2026-01-01T00:00:00"}))

    with OutputLock(str(out)):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
        with pytest.raises(InputError, match=rf"another autorater run \(pid {os.getpid()} on .*\) is writing"):
            OutputLock(str(out)).__enter__()
    err = capsys.readouterr().err
    assert f"took over {lock} left by an interrupted run (pid 999999 on " in err
    assert not lock.exists()


def test_run_piped_into_head_ends_without_a_traceback(tmp_path):
    out = tmp_path / "out"
    proc = _autorater(
        ["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out)], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    first_line = proc.stdout.readline()  # what `| head -1` reads before it exits
    proc.stdout.close()
    _, stderr = proc.communicate(timeout=600)
    assert first_line == b"read 3 data row(s) from evaluation_dataset\n"
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr, stderr.decode()[-3000:]
    assert proc.returncode == 141
    assert sorted(_marker(out)) == OUTPUTS  # the run itself finished


def test_a_move_cut_short_leaves_an_output_dir_that_is_not_read_until_a_run_completes_it(tmp_path, capsys):
    """A run dying while its files are moved into OUT (old and new files mixed): report and rescore refuse
    OUT, and the next run into it replaces every file either run listed."""
    from autorater_pipelines.report._out_dir import replace_outputs

    out = tmp_path / "out"
    assert main(["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"]) == 0
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "judgments.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(FileNotFoundError):  # the second staged file is gone, as after a kill mid-move
        replace_outputs(
            str(out), {"judgments.jsonl": str(staged / "judgments.jsonl"), "x.json": str(staged / "x")}, "t"
        )
    capsys.readouterr()

    assert main(["report", str(out)]) == 2
    assert "holds a run that was interrupted while its outputs were moved in" in capsys.readouterr().err
    assert main(["rescore", str(out), "--params", "{}"]) == 2
    assert "run it again into the same --output-dir" in capsys.readouterr().err

    assert main(["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"]) == 0
    assert sorted(_marker(out)) == OUTPUTS
    assert json.loads((out / MARKER_FILE).read_text(encoding="utf-8"))["complete"] is True
    assert main(["report", str(out)]) == 0


def _staging(parent: Path, name: str, **stamp: Any) -> Path:
    folder = parent / name
    (folder / "pipeline_root").mkdir(parents=True)
    (folder / "pipeline_root" / "part.bin").write_bytes(b"x")
    if stamp:
        (folder / ".autorater-staging.json").write_text(json.dumps(stamp), encoding="utf-8")
    return folder


def test_a_users_folder_named_like_a_staging_folder_is_never_removed(tmp_path, capsys):
    """Trial F1: ``.results.partial-my-backup`` (and an unstamped ``-<dead pid>-`` one) survive refused and accepted runs."""
    out = tmp_path / "results"
    backup = tmp_path / ".results.partial-my-backup"
    backup.mkdir()
    (backup / "photo.jpg").write_bytes(os.urandom(64))
    unstamped = _staging(tmp_path, ".results.partial-999999-old")  # no stamp: not provably autorater's
    killed = _staging(tmp_path, ".results.partial-999998-k", pid=999998, host=socket.gethostname(), output_dir=str(out))
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")  # no marker: the run is refused

    code = main(["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"])

    assert code == 2 and "is not empty (notes.txt)" in capsys.readouterr().err
    assert (backup / "photo.jpg").is_file() and (unstamped / "pipeline_root" / "part.bin").is_file()
    assert killed.is_dir()  # a refused run removes nothing, not even a dead run's stamped folder
    with OutputLock(str(tmp_path / "other")):  # a run refused by the lock removes nothing either
        code = main(["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(tmp_path / "other")])
    assert code == 2 and killed.is_dir()


def test_only_stamped_staging_folders_of_dead_runs_on_this_host_are_removed(tmp_path, capsys):
    """Trial F2: a live run's folder seen from another PID namespace or host (pid not visible) is kept."""
    from autorater_pipelines.commands.run import _clean_partial_runs

    out = tmp_path / "results"
    here = socket.gethostname()
    dead = _staging(tmp_path, ".results.partial-999998-a", pid=999998, host=here, output_dir=str(out))
    elsewhere = _staging(tmp_path, ".results.partial-999997-b", pid=999997, host=f"{here}-other", output_dir=str(out))
    live = _staging(tmp_path, f".results.partial-{os.getppid()}-c", pid=os.getppid(), host=here, output_dir=str(out))
    forged = _staging(tmp_path, ".results.partial-999996-d", pid=1, host=here, output_dir=str(out))  # pid mismatch
    other_out = _staging(tmp_path, ".results.partial-999995-e", pid=999995, host=here, output_dir=str(tmp_path / "x"))

    with OutputLock(str(out)):
        _clean_partial_runs(str(out))

    assert not dead.exists()
    assert f"removed {dead} left by an interrupted run" in capsys.readouterr().err
    assert elsewhere.is_dir() and live.is_dir() and forged.is_dir() and other_out.is_dir()


def test_a_dangling_symlink_output_dir_is_refused_before_the_run(tmp_path, capsys):
    """Trial F5: the run used to finish and then fail with a FileExistsError traceback, its outputs lost."""
    out = tmp_path / "out"
    out.symlink_to(tmp_path / "gone")

    code = main(["run", "autosxs", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"])

    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"{str(out)!r} is a symbolic link to {str(tmp_path / 'gone')!r}, which does not exist" in err
    assert "read 3 data row(s)" not in err and not (tmp_path / "gone").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_a_writable_output_dir_in_a_read_only_parent_is_refused_with_a_clear_error(tmp_path):
    """Trial F6: the lock and the staging folder go next to OUT; an unwritable parent was an OSError traceback."""
    import shutil
    import tempfile

    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("running as root (which writes anywhere) and no setpriv to drop privileges")
    base = Path(tempfile.mkdtemp(dir="/tmp"))  # outside root's private pytest folder, so nobody can read it
    try:
        base.chmod(0o755)
        params = _params(base)
        for p in base.iterdir():
            p.chmod(0o644)
        (base / "ro" / "out").mkdir(parents=True)
        (base / "ro" / "out").chmod(0o777)
        (base / "ro").chmod(0o555)
        cmd = [sys.executable, "-m", "autorater_pipelines.cli", "run", "autosxs", "--params", str(params)]
        cmd += ["--output-dir", str(base / "ro" / "out"), "--quiet"]
        if os.geteuid() == 0:
            drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            probe = subprocess.run([*drop, sys.executable, "-c", "import autorater_pipelines"], capture_output=True)
            if probe.returncode != 0:  # e.g. CI's venv in a 0700 temporary folder: uid 65534 cannot import it
                pytest.skip("the unprivileged user cannot import this interpreter's autorater_pipelines")
            cmd = [*drop, *cmd]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**env, "HOME": str(base)})
    finally:
        (base / "ro").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert (
        f"--output-dir: '{base}/ro/out' is in '{base}/ro', which is not writable; a run keeps its lock" in proc.stderr
    )


def test_a_forged_marker_never_makes_a_run_remove_a_directory(tmp_path, capsys):
    """Trial F7: ``{"files": ["photos", ...]}`` made the next run rmtree the user's folder."""
    from autorater_pipelines.report._out_dir import replace_outputs

    out = tmp_path / "out"
    (out / "photos").mkdir(parents=True)
    (out / "photos" / "cat.jpg").write_bytes(os.urandom(64))
    (out / "pipeline_root").mkdir()
    (out / "old.json").write_text("{}", encoding="utf-8")
    record_outputs(str(out), ["photos", "pipeline_root", "old.json"], "autorater run autosxs")  # as forged
    staged = tmp_path / "metrics.json"
    staged.write_text("{}", encoding="utf-8")

    stale = replace_outputs(str(out), {"metrics.json": str(staged)}, "autorater run autosxs")

    assert (out / "photos" / "cat.jpg").is_file()
    assert stale == ["old.json", "pipeline_root"] and not (out / "pipeline_root").exists()
    assert f"left {out / 'photos'} alone: {MARKER_FILE} lists it, but autorater writes no such folder" in (
        capsys.readouterr().err
    )
    assert _marker(out) == ["metrics.json"]  # the folder is the user's again


def test_the_lock_never_follows_a_symlink_or_truncates_a_users_file(tmp_path):
    """Trial F8: ``.out.lock`` a link to the user's ``.x.lock``, or a file of the user's of that name."""
    users = tmp_path / ".x.lock"
    users.write_text("my settings\n", encoding="utf-8")
    (tmp_path / ".out.lock").symlink_to(users)
    with pytest.raises(InputError, match=r"cannot open the lock file .*\.out\.lock.* it is a symbolic link: remove it"):
        OutputLock(str(tmp_path / "out")).__enter__()
    assert users.read_text(encoding="utf-8") == "my settings\n"

    (tmp_path / ".b.lock").write_text("my notes\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"\.b\.lock' exists and is not an autorater lock file"):
        OutputLock(str(tmp_path / "b")).__enter__()
    assert (tmp_path / ".b.lock").read_text(encoding="utf-8") == "my notes\n"
    (tmp_path / ".c.lock").write_text("", encoding="utf-8")  # a run killed before it wrote its lock: taken over
    with OutputLock(str(tmp_path / "c")) as lock:
        assert json.loads(Path(lock.path).read_text(encoding="utf-8"))["pid"] == os.getpid()
