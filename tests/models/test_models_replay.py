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
        ('{"id": 1, "response": ', r"bad\.jsonl, row 2: is not valid JSON .*a replay line looks like"),
        ("[1, 2]", r"bad\.jsonl, row 2: expected a JSON object .*got a JSON array"),
        ("[" * 100_000, r"bad\.jsonl, row 2: is nested too deeply"),
        (
            '{"id": 1, "response": "a\x00b"}',
            r"bad\.jsonl, row 2: is not valid JSON \(Invalid control character at "
            r"character",
        ),
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
    with pytest.raises(InputError, match=r"replay file '.*nope\.jsonl' not found"):
        get_model(f"replay/{tmp_path / 'nope.jsonl'}")


def test_a_missing_relative_replay_file_names_the_path_it_resolved_to(tmp_path: Path, monkeypatch) -> None:
    # Run from examples/ with a params file whose paths are relative to the repository root: the same help as a
    # missing dataset (io's LocalFileSystem), naming where the relative path led.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as raised:
        get_model("replay/examples/quickstart/replay.jsonl")
    resolved = tmp_path / "examples" / "quickstart" / "replay.jsonl"
    assert str(raised.value) == (
        f"model spec: replay file 'examples/quickstart/replay.jsonl' not found (resolved to {str(resolved)!r}); "
        "check the path and the current directory, or pass an absolute path"
    )


def test_file_uri(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [{"id": 1, "response": "x"}])
    model = get_model(f"replay/file://{path}", GenerateConfig(progress=False))
    assert model.generate([ModelRequest(parts=(), key={"id": 1})])[0].text == "x"


def test_stray_line_without_ids_answers_nothing(tmp_path: Path) -> None:
    # a line lacking the request's id fields must not become a silent default for unrecorded requests
    path = _write(
        tmp_path / "r.jsonl",
        [{"id": 1, "flipped": False, "response": "one"}, {"flipped": False, "response": "stray"}, {"response": "bare"}],
    )
    model = get_model(f"replay/{path}", GenerateConfig(progress=False))
    outputs = model.generate(
        [
            ModelRequest(parts=(), key={"id": 1, "flipped": False, "sample_index": 0}),
            ModelRequest(parts=(), key={"id": 2, "flipped": False, "sample_index": 0}),
            ModelRequest(parts=(), key={"id": 2, "flipped": False}, sample_index=1),
        ]
    )
    assert outputs[0].text == "one"
    assert [o.text for o in outputs[1:]] == [None, None]
    assert all(o.error.kind is ErrorKind.NOT_RECORDED for o in outputs[1:])


def test_record_missing_a_required_field_does_not_match(tmp_path: Path) -> None:
    # inference keys carry "model", gecko validator keys "question_id": records must carry them too
    path = _write(tmp_path / "r.jsonl", [{"id": 1, "response": "ids only"}, {"id": 1, "model": "b", "response": "b"}])
    model = get_model(f"replay/{path}", GenerateConfig(progress=False))
    outputs = model.generate(
        [
            ModelRequest(parts=(), key={"id": 1, "model": "a"}),
            ModelRequest(parts=(), key={"id": 1, "model": "b"}),
            ModelRequest(parts=(), key={"id": 1, "question_id": 3}),
            ModelRequest(parts=(), key={"id": 1}, sample_index=4),
        ]
    )
    assert [o.text for o in outputs] == [None, "b", None, "ids only"]
    assert outputs[0].error.kind is ErrorKind.NOT_RECORDED


def test_sample_index_stays_optional(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [{"id": 1, "flipped": True, "response": "every sample"}])
    model = get_model(f"replay/{path}", GenerateConfig(progress=False))
    outputs = model.generate(
        [ModelRequest(parts=(), key={"id": 1, "flipped": True, "sample_index": i}) for i in range(3)]
        + [ModelRequest(parts=(), key={"id": 1, "flipped": True}, sample_index=7)]
    )
    assert [o.text for o in outputs] == ["every sample"] * 4


def test_key_values_compare_like_dataset_ids(tmp_path: Path) -> None:
    from autorater_pipelines.io import canonical_id_value
    from autorater_pipelines.models.providers.replay import normalize_key_value

    assert normalize_key_value is canonical_id_value  # one definition for duplicate checks and matching
    path = _write(tmp_path / "r.jsonl", [{"id": "7", "response": "seven"}])
    model = get_model(f"replay/{path}", GenerateConfig(progress=False))
    assert [o.text for o in model.generate([ModelRequest(parts=(), key={"id": v}) for v in (7, 7.0, "7")])] == [
        "seven"
    ] * 3


@pytest.mark.parametrize(
    "content",
    [
        b'\xef\xbb\xbf{"id": 1, "response": "x"}\n',  # UTF-8 byte-order mark
        b'{"id": 1, "response": "x"}\r\n\r\n',  # CRLF
        '{"id": 0, "response": "a\u2028b\u0085c\\fd"}\n{"id": 1, "response": "x"}\n'.encode(),  # raw U+2028/U+0085
    ],
)
def test_file_is_read_like_a_jsonl_dataset(tmp_path: Path, content: bytes) -> None:
    from autorater_pipelines.io import read_dataset

    path = tmp_path / "r.jsonl"
    path.write_bytes(content)
    rows = read_dataset(str(path)).rows
    model = get_model(f"replay/{path}", GenerateConfig(progress=False))
    assert model.generate([ModelRequest(parts=(), key={"id": 1})])[0].text == "x"
    assert rows[-1]["response"] == "x"
    if len(rows) == 2:
        assert model.generate([ModelRequest(parts=(), key={"id": 0})])[0].text == "a\u2028b\u0085c\x0cd"


def test_not_utf8_names_the_replay_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"id": 1, "response": "x"}\n{"id": 2, "response": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"latin\.jsonl, row 2: is not valid UTF-8"):
        get_model(f"replay/{path}")
