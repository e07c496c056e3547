"""Fixtures of the report tests: finished runs' output directories (see report_helpers)."""

from __future__ import annotations

import json
import shutil
import socket
import threading
from pathlib import Path

import pytest
from report_helpers import (
    GECKO_QUICKSTART,
    REPO,
    autosxs_run,
    gecko_run,
    load_example,
    mixed_gecko_params,
    quickstart_params,
)


@pytest.fixture(scope="session")
def quickstart_out(tmp_path_factory) -> Path:
    """The README quickstart (6 rows, human labels, ties), with q6's recordings removed: one ERROR row."""
    tmp = tmp_path_factory.mktemp("quickstart")
    return autosxs_run(tmp / "out", quickstart_params(tmp, drop_replay_ids=("q6",)))


@pytest.fixture(scope="session")
def llmbar_out(tmp_path_factory) -> Path:
    """LLMBar MT-Bench (200 pairs) with GPT-4's recorded judgments in both orders (acceptance run)."""
    source = REPO.parent / "shared" / "data" / "llmbar-mtbench"
    if not source.is_dir():
        pytest.skip(f"shared data not found at {source} (it sits next to the repository in CI)")
    tmp = tmp_path_factory.mktemp("llmbar")
    params_path = load_example("llmbar_mtbench").convert(str(source), str(tmp))
    return autosxs_run(tmp / "out", json.loads(Path(params_path).read_text()))


@pytest.fixture(scope="session")
def tifa_out(tmp_path_factory) -> Path:
    """TIFA's public sample (2 real images, 19 supplied questions, recorded VQA answers; acceptance run)."""
    shared = REPO.parent / "shared" / "data"
    if not (shared / "tifa-sample").is_dir():
        pytest.skip(f"shared data not found at {shared} (it sits next to the repository in CI)")
    tmp = tmp_path_factory.mktemp("tifa")
    data = load_example("gecko_public_data").convert_tifa_sample(shared, tmp)
    params = {
        "evaluation_dataset": str(data.dataset),
        "id_columns": data.id_columns,
        "prompt_column": "caption",
        "media_column": data.media_column,
        "rubrics_column": data.rubrics_column,
        "validator_model": f"replay/{data.replay}",
        "validator_parameters": {"questions_per_call": 1},
    }
    return gecko_run(tmp / "out", params)


@pytest.fixture(scope="session")
def gecko_quickstart_out(tmp_path_factory) -> Path:
    """The README Gecko quickstart: generated rubrics with keyword markup, local PNGs."""
    tmp = tmp_path_factory.mktemp("gecko-quickstart")
    params = json.loads((GECKO_QUICKSTART / "params.json").read_text())
    shutil.copytree(GECKO_QUICKSTART, tmp / "data")
    params.update(
        evaluation_dataset=str(tmp / "data" / "dataset.jsonl"),
        rubric_generation_model=f"replay/{tmp / 'data' / 'rubric_replay.jsonl'}",
        validator_model=f"replay/{tmp / 'data' / 'validator_replay.jsonl'}",
    )
    return gecko_run(tmp / "out", params)


@pytest.fixture(scope="session")
def mixed_gecko_out(tmp_path_factory) -> Path:
    """Gecko outputs with masking, parse failures, a missing answer and an error row (see mixed_gecko_params)."""
    tmp = tmp_path_factory.mktemp("gecko-mixed")
    return gecko_run(tmp / "out", mixed_gecko_params(tmp))


@pytest.fixture
def copy_out(tmp_path):
    """Copy a session output directory so a test may change it."""

    def copy(src: Path) -> Path:
        dst = tmp_path / src.name
        shutil.copytree(src, dst)
        return dst

    return copy


@pytest.fixture
def no_network(monkeypatch):
    """Fail any attempt to open a network connection (proves "no model calls").

    Records the attempts of the test's own thread and of threads it starts. A daemon thread left over from an
    earlier test of the same session (a Google client's credential lookup, seen once in a full run) is refused
    the connection but not recorded: it is not the code under test.
    """
    attempts = []
    earlier = {t.ident for t in threading.enumerate()} - {threading.get_ident()}

    def refuse(self, address, *args, **kwargs):
        if threading.get_ident() not in earlier:
            attempts.append(address)
        raise OSError(f"network access attempted during a test that must not call any model: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts
