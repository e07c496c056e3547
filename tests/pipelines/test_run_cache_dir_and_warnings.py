"""``autorater run``: an unusable local ``cache_dir`` is refused before any step; step warnings print under --quiet.

Before, a ``cache_dir`` that is a file (or an unwritable directory) was accepted, the run went on without a
response cache, and the one warning saying so was hidden by ``--quiet`` although ``run --help`` says warnings
still print.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autorater_pipelines.cli import main

REPO = Path(__file__).resolve().parents[2]


def _run(pipeline: str, params: dict, tmp_path: Path) -> tuple[int, Path]:
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    out = tmp_path / "out"
    return main(["run", pipeline, "--params", str(path), "--output-dir", str(out), "--quiet"]), out


def _quickstart() -> dict:
    return json.loads((REPO / "examples/quickstart/params.json").read_text())


def test_a_cache_dir_that_is_a_file_is_refused_before_any_step(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    params = _quickstart()
    params["autorater_parameters"] = {**params["autorater_parameters"], "cache_dir": str(afile)}
    code, out = _run("autosxs", params, tmp_path)
    err = capsys.readouterr().err
    assert code == 2
    assert f"error: autorater_parameters: cache_dir '{afile}' exists and is not a directory" in err, err
    assert not out.exists()


def test_a_cache_dir_that_is_not_writable_is_refused(tmp_path, monkeypatch, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anywhere: nothing to refuse here
            pytest.skip("this user can write to a directory of mode 0500")
        monkeypatch.chdir(REPO)
        params = _quickstart()
        params["autorater_parameters"] = {**params["autorater_parameters"], "cache_dir": str(locked)}
        code, out = _run("autosxs", params, tmp_path)
        err = capsys.readouterr().err
        assert code == 2
        assert f"error: autorater_parameters: cache_dir '{locked}' is a directory that is not writable" in err, err
        assert not out.exists()
    finally:
        locked.chmod(0o700)


@pytest.mark.pipeline
def test_a_step_warning_prints_under_quiet(tmp_path, monkeypatch, capsys):
    """The Gecko validation step warns that logprobs are unused with questions_per_call=0; --quiet shows it."""
    monkeypatch.chdir(REPO)
    params = json.loads((REPO / "examples/gecko_quickstart/params.json").read_text())
    params["validator_parameters"] = {**params["validator_parameters"], "logprobs": 5}
    code, out = _run("gecko", params, tmp_path)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "WARNING: validator_parameters.logprobs is only used with questions_per_call=1; ignored" in err, err
    assert "[KFP Executor" not in err  # the step's other log lines stay in the log file
    assert (out / "results.jsonl").exists()
