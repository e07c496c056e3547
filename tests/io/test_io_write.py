import dataclasses
import datetime as dt
import decimal
import json
import os
import threading

import numpy as np
import pandas as pd
import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.io import read_jsonl, to_jsonable, write_json, write_jsonl


def test_write_and_read_jsonl_round_trip(tmp_path):
    path = str(tmp_path / "out" / "nested" / "j.jsonl")  # parents are created
    rows = [{"id": "007", "text": "é\u2028x", "n": 1}, {"id": "008", "list": [1, {"a": None}]}]
    assert write_jsonl(path, rows) == 2
    assert read_jsonl(path) == rows
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert text.count("\n") == 2 and "é" in text  # UTF-8, not \u escaped


def test_write_jsonl_accepts_a_generator(tmp_path):
    path = str(tmp_path / "g.jsonl")
    assert write_jsonl(path, ({"i": i} for i in range(3))) == 3
    assert read_jsonl(path) == [{"i": 0}, {"i": 1}, {"i": 2}]


def test_json_safe_encoding(tmp_path):
    @dataclasses.dataclass
    class Point:
        x: int

    row = {
        "nan": float("nan"),
        "inf": float("-inf"),
        "none": None,
        "np_int": np.int64(3),
        "np_float": np.float32(0.5),
        "np_nan": np.float64("nan"),
        "np_bool": np.bool_(True),
        "array": np.array([1, 2]),
        "pd_na": pd.NA,
        "nat": pd.NaT,
        "ts": pd.Timestamp("2024-05-06T07:08:09"),
        "date": dt.date(2024, 1, 2),
        "decimal": decimal.Decimal("1.25"),
        "tuple": (1, "a"),
        "bytes": b"hi",
        "point": Point(1),
        3: "int key",
    }
    path = str(tmp_path / "safe.jsonl")
    write_jsonl(path, [row])
    with open(path, encoding="utf-8") as handle:
        raw = handle.read()
    assert "NaN" not in raw and "Infinity" not in raw
    assert json.loads(raw) == {
        "nan": None,
        "inf": None,
        "none": None,
        "np_int": 3,
        "np_float": 0.5,
        "np_nan": None,
        "np_bool": True,
        "array": [1, 2],
        "pd_na": None,
        "nat": None,
        "ts": "2024-05-06T07:08:09",
        "date": "2024-01-02",
        "decimal": 1.25,
        "tuple": [1, "a"],
        "bytes": "aGk=",
        "point": {"x": 1},
        "3": "int key",
    }


def test_unknown_type_is_a_type_error_and_leaves_no_file(tmp_path):
    path = tmp_path / "bad.jsonl"
    with pytest.raises(TypeError, match="cannot convert a value of type object to JSON"):
        write_jsonl(str(path), [{"ok": 1}, {"bad": object()}])
    assert os.listdir(tmp_path) == []  # neither the target nor a temp file


def test_failed_rewrite_keeps_the_old_file(tmp_path):
    path = str(tmp_path / "j.jsonl")
    write_jsonl(path, [{"v": "old"}])

    def rows():
        yield {"v": "new"}
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_jsonl(path, rows())
    assert read_jsonl(path) == [{"v": "old"}]
    assert os.listdir(tmp_path) == ["j.jsonl"]


def test_concurrent_reader_never_sees_partial_file(tmp_path):
    path = str(tmp_path / "m.json")
    write_json(path, {"rows": list(range(20_000))})
    seen_bad = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            with open(path, encoding="utf-8") as handle:
                try:
                    json.load(handle)
                except json.JSONDecodeError as exc:
                    seen_bad.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    for i in range(20):
        write_json(path, {"rows": list(range(20_000 + i))})
    stop.set()
    thread.join()
    assert seen_bad == []


def test_write_json_indent_and_trailing_newline(tmp_path):
    path = str(tmp_path / "m.json")
    write_json(path, {"a": float("nan"), "b": [1]})
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert text == '{\n  "a": null,\n  "b": [\n    1\n  ]\n}\n'


def test_written_file_mode_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(str(tmp_path / "m.json"), {})
    finally:
        os.umask(old)
    assert oct(os.stat(tmp_path / "m.json").st_mode & 0o777) == "0o644"


def test_read_jsonl_errors(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_jsonl(str(tmp_path / "missing.jsonl"))
    (tmp_path / "bad.jsonl").write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(InputError, match=r"bad\.jsonl, row 2: is not valid JSON"):
        read_jsonl(str(tmp_path / "bad.jsonl"))


def test_to_jsonable_sets_are_sorted():
    assert to_jsonable({"s": {3, 1, 2}}) == {"s": [1, 2, 3]}
