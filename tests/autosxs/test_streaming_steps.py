"""The AutoSxS steps on streams (issue 24): the same bytes as before streaming, nothing written on bad input.

``data/streaming/`` holds a 40-row dataset (ids both ints and strings, non-ASCII text with U+2028, human labels
A/B/TIE/``model_a``, one identical pair) and a replay recording where some rows have no recording (both samples
fail), some only one order (rows judged in one order) and some an unparseable answer. ``examples.jsonl``,
``judgments.jsonl``, ``error_messages.jsonl`` and ``metrics.json`` there were written by main before any streaming
(at 96de1ad; ``metrics.json`` again at 04bef33, which added the bias metrics; the other three were unchanged there), with ``prepare_examples``, ``judge_examples(examples=io.read_jsonl(...))`` and
``aggregate_judgments(judgments=io.read_jsonl(...))``, run in that directory with relative paths.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autorater_pipelines import autosxs, io
from autorater_pipelines.autosxs.merge import merge_shard_files
from autorater_pipelines.errors import AutoraterError, InputError

DATA = Path(__file__).parent / "data" / "streaming"
TASK = "question_answering@001"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    for name in ("data.jsonl", "replay.jsonl", "examples.jsonl"):
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _judge(examples, out: Path, **kwargs):
    return autosxs.judge_examples(
        examples=examples,
        task=TASK,
        id_columns=["id"],
        autorater_model="replay/./replay.jsonl",
        autorater_parameters={"progress": False},
        judgments_path=str(out / "judgments.jsonl"),
        error_messages_path=str(out / "error_messages.jsonl"),
        **kwargs,
    )


def _same_bytes(out: Path, *names: str) -> None:
    for name in names:
        assert (out / name).read_bytes() == (DATA / name).read_bytes(), name


def test_streamed_judging_and_metrics_write_the_bytes_written_before_streaming(workdir):
    out = workdir / "out"
    judgments, errors, summary = _judge(io.iter_jsonl("examples.jsonl"), out, collect=False)
    assert (judgments, errors) == ([], [])
    assert (summary.evaluation_count, summary.error_count) == (40, 8)
    metrics = autosxs.aggregate_judgments(
        judgments=io.iter_jsonl(str(out / "judgments.jsonl")),
        human_preference_column="human",
        metrics_path=str(out / "metrics.json"),
    )
    _same_bytes(out, "judgments.jsonl", "error_messages.jsonl", "metrics.json")
    assert metrics["evaluation_count"] == 40
    assert metrics["one_order_only_count"] == 3


def test_in_memory_judging_still_returns_and_writes_the_same_rows(workdir):
    out = workdir / "mem"
    judgments, errors, summary = _judge(io.read_jsonl("examples.jsonl"), out)
    assert len(judgments) == summary.evaluation_count == 40
    assert [j["id"] for j in judgments] == [e["id"] for e in io.read_jsonl("examples.jsonl")]
    _same_bytes(out, "judgments.jsonl", "error_messages.jsonl")
    io.write_jsonl(str(out / "again.jsonl"), judgments)
    assert (out / "again.jsonl").read_bytes() == (DATA / "judgments.jsonl").read_bytes()
    assert errors == io.read_jsonl(str(DATA / "error_messages.jsonl"))


@pytest.mark.parametrize("shards", [1, 3, 7])
def test_streamed_shards_hold_the_examples_of_the_listed_shards(shards):
    rows = io.read_jsonl(str(DATA / "examples.jsonl"))
    for index in range(shards):
        streamed = list(autosxs.iter_shard(io.iter_jsonl(str(DATA / "examples.jsonl")), index, shards))
        assert streamed == autosxs.select_shard(rows, index, shards)
        sized = autosxs.iter_shard(io.JsonlFile(str(DATA / "examples.jsonl")), index, shards)
        assert len(sized) == len(streamed) and list(sized) == streamed == list(sized)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"shard_index 3 is outside 0\.\.2"):
        autosxs.iter_shard([], 3, 3)


def test_a_bad_line_deep_in_the_examples_names_the_line_and_nothing_is_written(workdir):
    lines = (DATA / "examples.jsonl").read_bytes().splitlines(keepends=True)
    (workdir / "bad.jsonl").write_bytes(b"".join(lines[:37]) + b'{"id": 99, "response_a": \n' + b"".join(lines[37:]))
    out = workdir / "bad-out"
    message = r"^bad\.jsonl, row 38: is not valid JSON \(Expecting value at character 26\): '\{\"id\": 99, "
    with pytest.raises(InputError, match=message):
        io.read_jsonl("bad.jsonl")
    with pytest.raises(InputError, match=message):
        _judge(io.iter_jsonl("bad.jsonl"), out, collect=False)
    assert not out.exists() or sorted(p.name for p in out.iterdir()) == []


def test_iter_jsonl_reads_what_read_jsonl_reads_and_fails_alike(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_bytes(b'\xef\xbb\xbf{"a": 1}\n\n   \n{"b": "\xe2\x80\xa8x"}\r\n{"c": [1, 2]}')
    assert list(io.iter_jsonl(str(good))) == io.read_jsonl(str(good)) == [{"a": 1}, {"b": "\u2028x"}, {"c": [1, 2]}]
    for content, message in (
        (b'{"a": 1}\n{"b": 2}\n{"c": "\xff"}\n', r"row 3: is not valid UTF-8: byte\(s\) b'\\xff' at byte offset 25"),
        (
            b'\xef\xbb\xbf{"a": 1}\n[1]\n',
            r"row 2: expected a JSON object \(\{\.\.\.\}\) on each line, got a JSON array",
        ),
    ):
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(content)
        with pytest.raises(InputError, match=message):
            io.read_jsonl(str(bad))
        with pytest.raises(InputError, match=message):
            list(io.iter_jsonl(str(bad)))
    with pytest.raises(InputError, match="file not found"):
        list(io.iter_jsonl(str(tmp_path / "missing.jsonl")))


def test_jsonl_writer_appears_whole_on_commit_and_leaves_the_old_file_on_error(tmp_path):
    target = tmp_path / "sub" / "rows.jsonl"
    rows = [{"a": float("nan"), "b": "\u00e9"}, {"c": [1, {"d": None}]}]
    with io.JsonlWriter(str(target)) as writer:
        for row in rows:
            writer.write(row)
        assert not target.exists()
        assert writer.commit() == 2
    io.write_jsonl(str(tmp_path / "whole.jsonl"), rows)
    assert target.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    with pytest.raises(RuntimeError, match="stop"), io.JsonlWriter(str(target)) as writer:
        writer.write({"new": 1})
        raise RuntimeError("stop")
    assert target.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert sorted(p.name for p in target.parent.iterdir()) == ["rows.jsonl"]


PARAMS = {
    "evaluation_dataset": "data.jsonl",
    "task": TASK,
    "id_columns": ["id"],
    "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
    "response_column_a": "a",
    "response_column_b": "b",
    "human_preference_column": "human",
    "autorater_model": "replay/./replay.jsonl",
}


def test_the_prepare_step_streams_the_bytes_written_before_streaming(workdir):
    out = workdir / "prep"
    run = autosxs.prepare_run(PARAMS, str(out / "examples.jsonl"))
    assert (run.rows, run.row_count) == (None, 40)
    _same_bytes(out, "examples.jsonl")
    assert autosxs.prepare_examples(**PARAMS) == io.read_jsonl(str(DATA / "examples.jsonl"))  # in memory alike


def test_the_prepare_step_checks_every_id_before_a_row_error_and_writes_nothing(workdir):
    rows = io.read_jsonl("data.jsonl")
    rows[3]["a"] = None  # an empty response early ...
    rows[33]["id"] = rows[31]["id"]  # ... and a duplicate id deep in the file: the id is reported, as before
    io.write_jsonl("bad.jsonl", rows)
    target = workdir / "prep" / "examples.jsonl"
    with pytest.raises(InputError, match=r"^bad\.jsonl, row 34: duplicate id \{'id': 31\}: bad\.jsonl line 32 and"):
        autosxs.prepare_run({**PARAMS, "evaluation_dataset": "bad.jsonl"}, str(target))
    rows[33]["id"] = "fresh"
    io.write_jsonl("bad.jsonl", rows)
    with pytest.raises(InputError, match=r"^bad\.jsonl line 4, column 'a': model A's response is empty"):
        autosxs.prepare_run({**PARAMS, "evaluation_dataset": "bad.jsonl"}, str(target))
    assert not target.parent.exists() or list(target.parent.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [({"x": 1}, r"\{'x': 1\} \(an object\)"), ([1], r"\[1\] \(a list\)"), (False, r"False \(a boolean\)")],
)
def test_the_prepare_step_refuses_a_response_that_is_not_text_and_writes_nothing(workdir, value, shown):
    rows = io.read_jsonl("data.jsonl")
    rows[5]["a"] = value
    io.write_jsonl("bad.jsonl", rows)
    target = workdir / "prep" / "examples.jsonl"
    with pytest.raises(
        InputError, match=rf"^bad\.jsonl line 6, column 'a': response_column_a 'a' holds {shown}, expected"
    ):
        autosxs.prepare_run({**PARAMS, "evaluation_dataset": "bad.jsonl"}, str(target))
    assert not target.parent.exists() or list(target.parent.iterdir()) == []
    rows[5]["a"], rows[6]["b"] = 42, 2.5  # numbers are text as written, as before
    io.write_jsonl("numbers.jsonl", rows)
    autosxs.prepare_run({**PARAMS, "evaluation_dataset": "numbers.jsonl"}, str(target))
    examples = io.read_jsonl(str(target))
    assert (examples[5]["response_a"], examples[6]["response_b"]) == ("42", "2.5")


def _shard_files(workdir: Path, shards: int) -> tuple[list[str], list[str]]:
    judgments, errors = [], []
    for index in range(shards):
        out = workdir / f"shard-{index}"
        examples = autosxs.iter_shard(io.iter_jsonl("examples.jsonl"), index, shards)
        _judge(examples, out, collect=False)
        judgments.append(str(out / "judgments.jsonl"))
        errors.append(str(out / "error_messages.jsonl"))
    return judgments, errors


@pytest.mark.parametrize(("shards", "order"), [(1, [0]), (3, [0, 1, 2]), (3, [2, 0, 1]), (7, [6, 5, 4, 3, 2, 1, 0])])
def test_the_streamed_merge_of_shards_writes_the_bytes_of_one_unsharded_run(workdir, shards, order):
    judgments, errors = _shard_files(workdir, shards)
    out = workdir / "merged"
    count, error_count = merge_shard_files(
        "examples.jsonl",
        ["id"],
        [judgments[i] for i in order],  # a collection may list the shards in any order
        [errors[i] for i in order],
        str(out / "judgments.jsonl"),
        str(out / "error_messages.jsonl"),
    )
    assert (count, error_count) == (40, 8)
    _same_bytes(out, "judgments.jsonl", "error_messages.jsonl")


def test_a_merge_with_a_lost_or_foreign_row_fails_or_orders_as_the_in_memory_merge(workdir):
    judgments, errors = _shard_files(workdir, 3)
    lines = Path(judgments[1]).read_bytes().splitlines(keepends=True)
    Path(judgments[1]).write_bytes(b"".join(lines[:4] + lines[5:]))  # one judgment lost
    out = workdir / "merged"
    args = (str(out / "judgments.jsonl"), str(out / "error_messages.jsonl"))
    with pytest.raises(AutoraterError, match=r"merging shards: 1 examples have no judgment, e\.g\. \[\(13,\)\]"):
        merge_shard_files("examples.jsonl", ["id"], judgments, errors, *args)
    assert not out.exists() or list(out.iterdir()) == []
    Path(judgments[1]).write_bytes(b"".join(lines))
    foreign = {"id": "elsewhere", "stage": "judge", "error": "x", "sample_index": 0}
    Path(errors[2]).write_text(Path(errors[2]).read_text() + json.dumps(foreign) + "\n")
    assert merge_shard_files("examples.jsonl", ["id"], judgments, errors, *args) == (40, 8)
    expected = autosxs.merge_shards(
        io.read_jsonl("examples.jsonl"),
        ["id"],
        [io.read_jsonl(p) for p in judgments],
        [io.read_jsonl(p) for p in errors],
    )
    assert io.read_jsonl(args[1]) == expected[1]
    assert io.read_jsonl(args[1])[0]["id"] == "elsewhere"  # an error of no row sorts first, as before
    _same_bytes(out, "judgments.jsonl")


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_the_streamed_export_writes_the_bytes_of_the_in_memory_export(tmp_path, fmt):
    source = str(DATA / "judgments.jsonl")
    streamed = autosxs.export_judgments(judgments_path=source, judgments_format=fmt, destination=str(tmp_path / "s"))
    autosxs.export_judgments(judgments=io.read_jsonl(source), judgments_format=fmt, destination=str(tmp_path / "w"))
    assert (streamed.path, streamed.bigquery_table) == (str(tmp_path / "s"), "")
    assert (tmp_path / "s").read_bytes() == (tmp_path / "w").read_bytes()
    if fmt == "jsonl":
        assert (tmp_path / "s").read_bytes() == (DATA / "judgments.jsonl").read_bytes()
    else:
        assert json.loads((tmp_path / "s").read_text()) == io.read_jsonl(source)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    autosxs.export_judgments(judgments_path=str(empty), judgments_format=fmt, destination=str(tmp_path / "e"))
    autosxs.export_judgments(judgments=[], judgments_format=fmt, destination=str(tmp_path / "e2"))
    assert (tmp_path / "e").read_bytes() == (tmp_path / "e2").read_bytes()
