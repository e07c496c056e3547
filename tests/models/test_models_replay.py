"""replay/<path>: recorded raw outputs keyed by request keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.models import ErrorKind, GenerateConfig, ModelRequest, Usage, get_model

RECORDS = [
    {"id": 7, "flipped": False, "sample_index": 0, "response": "A0"},
    {"id": 7, "flipped": False, "sample_index": 1, "response": "A1"},
    {"id": 7, "flipped": True, "response": "B-any-sample"},
    {"id": "q-8", "question_id": 2, "response": "yes"},
]


def _write(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


@pytest.fixture
def replay_model(tmp_path: Path):
    path = _write(tmp_path / "rec.jsonl", [RECORDS[0], "", RECORDS[1], RECORDS[2], RECORDS[3]])
    return get_model(f"replay/{path}", GenerateConfig(progress=False))


def test_matching(replay_model) -> None:
    requests = [
        ModelRequest(parts=("ignored",), key={"id": 7, "flipped": False, "sample_index": 1}),
        ModelRequest(parts=(), key={"id": "7", "flipped": "false"}, sample_index=0),  # lenient scalars
        ModelRequest(parts=(), key={"id": 7.0, "flipped": True}, sample_index=5),  # record omits sample_index
        ModelRequest(parts=(), key={"id": "q-8", "question_id": "2"}),
    ]
    outputs = replay_model.generate(requests)
    assert [o.text for o in outputs] == ["A1", "A0", "B-any-sample", "yes"]
    assert all(o.attempts == 0 and o.usage == Usage() and not o.cached for o in outputs)
    assert outputs[0].raw == RECORDS[1]
    assert replay_model.provider == "replay" and replay_model.cache_dir is None
    assert replay_model.stats.calls == 0 and replay_model.stats.requests == 4


def test_most_specific_record_wins(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [{"id": 1, "response": "any"}, {"id": 1, "sample_index": 2, "response": "two"}])
    model = get_model(f"replay/{path}", GenerateConfig(progress=False))
    outputs = model.generate([ModelRequest(parts=(), key={"id": 1}, sample_index=i) for i in range(3)])
    assert [o.text for o in outputs] == ["any", "any", "two"]


def test_missing_recording_is_an_error_row(replay_model) -> None:
    [out] = replay_model.generate([ModelRequest(parts=(), key={"id": 9, "flipped": True})])
    assert out.text is None and out.error.kind is ErrorKind.NOT_RECORDED
    assert out.error.message.startswith("no recording in ")
    assert "for key {'id': 9, 'flipped': True, 'sample_index': 0}" in out.error.message
    assert replay_model.stats.failures == 1


def test_missing_recordings_do_not_exhaust_the_budget(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [{"id": 1, "response": "x"}])
    model = get_model(f"replay/{path}", GenerateConfig(progress=False, max_consecutive_failures=2))
    outputs = model.generate([ModelRequest(parts=(), key={"id": i}) for i in range(2, 10)])
    assert all(o.error.kind is ErrorKind.NOT_RECORDED for o in outputs)


def test_duplicate_key_names_the_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "dup.jsonl",
        [RECORDS[0], RECORDS[1], {"id": "7", "flipped": "false", "sample_index": 0, "response": "again"}],
    )
    with pytest.raises(InputError, match=r"dup\.jsonl, row 3: duplicate recording for key .* \(already on line 1\)"):
        get_model(f"replay/{path}")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": 1, "response": ', r"bad\.jsonl, row 2: not valid JSON"),
        ("[1, 2]", r"bad\.jsonl, row 2: expected a JSON object, got list"),
        ('{"id": 1}', r"bad\.jsonl, row 2, column 'response': field 'response' must be the raw model output"),
        ('{"id": 1, "response": {"choice": "A"}}', r"row 2, column 'response'"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path / "bad.jsonl", [RECORDS[0], line])
    with pytest.raises(InputError, match=message):
        get_model(f"replay/{path}")


def test_unsupported_scheme_and_missing_file(tmp_path: Path) -> None:
    # gs:// goes through autorater_pipelines.io (tests/io/test_io_gcs.py); unknown schemes are refused there.
    with pytest.raises(InputError, match=r"replay file 's3://b/rec\.jsonl': .*unsupported URI scheme 's3://'"):
        get_model("replay/s3://b/rec.jsonl")
    with pytest.raises(InputError, match=r"replay file '.*nope\.jsonl' does not exist"):
        get_model(f"replay/{tmp_path / 'nope.jsonl'}")


def test_file_uri(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [{"id": 1, "response": "x"}])
    model = get_model(f"replay/file://{path}", GenerateConfig(progress=False))
    assert model.generate([ModelRequest(parts=(), key={"id": 1})])[0].text == "x"
