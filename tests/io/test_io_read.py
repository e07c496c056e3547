import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.io import SourcePart, read_dataset, register_source_reader
from autorater_pipelines.io._formats import ParsedFile

REAL_DATA = Path("/work/shared/data/llmbar-mtbench/dataset.json")


def write(path: Path, text: str | bytes) -> str:
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return str(path)


def test_jsonl_skips_blank_lines_and_records_line_numbers(tmp_path):
    uri = write(tmp_path / "d.jsonl", '{"id": 1, "q": "a"}\n\n   \n{"id": 2, "q": "b", "extra": [1]}\r\n')
    ds = read_dataset(uri)
    assert ds.rows == [{"id": 1, "q": "a"}, {"id": 2, "q": "b", "extra": [1]}]
    assert ds.locations == [(uri, 1), (uri, 4)]
    assert ds.columns == ["id", "q", "extra"]
    assert ds.location(1) == f"{uri} line 4"
    assert len(ds) == 2


def test_ndjson_and_unicode_line_separator_inside_string(tmp_path):
    # U+2028 is legal unescaped inside a JSON string and must not split the line.
    uri = write(tmp_path / "d.ndjson", '{"t": "a\u2028b"}\n')
    assert read_dataset(uri).rows == [{"t": "a\u2028b"}]


def test_malformed_jsonl_line_names_file_and_line(tmp_path):
    uri = write(tmp_path / "bad.jsonl", '{"id": 1}\n{"id": 2,}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl, row 2: is not valid JSON .*each line must hold"):
        read_dataset(uri)


def test_jsonl_line_that_is_not_an_object(tmp_path):
    uri = write(tmp_path / "arr.jsonl", '{"id": 1}\n[1, 2]\n')
    message = r"arr\.jsonl, row 2: expected a JSON object .* got a JSON array: \[1, 2\]"
    with pytest.raises(InputError, match=message):
        read_dataset(uri)


def test_nan_in_jsonl_becomes_none_but_infinity_is_refused(tmp_path):
    assert read_dataset(write(tmp_path / "n.jsonl", '{"x": NaN}\n')).rows == [{"x": None}]
    with pytest.raises(InputError, match=r"row 1: holds the non-standard JSON number 'Infinity'"):
        read_dataset(write(tmp_path / "i.jsonl", '{"x": Infinity}\n'))


def test_non_utf8_names_file_and_line(tmp_path):
    uri = write(tmp_path / "latin.jsonl", b'{"id": 1}\n{"t": "caf\xe9"}\n')
    message = r"latin\.jsonl, row 2: is not valid UTF-8: byte\(s\) b'\\xe9'.*iconv"
    with pytest.raises(InputError, match=message):
        read_dataset(uri)


def test_utf8_bom_is_accepted(tmp_path):
    uri = write(tmp_path / "bom.jsonl", b'\xef\xbb\xbf{"id": 1}\n')
    assert read_dataset(uri).rows == [{"id": 1}]


def test_missing_file(tmp_path):
    missing = str(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match=r"nope\.jsonl: file not found"):
        read_dataset(missing)


def test_directory_is_refused(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        read_dataset(str(tmp_path))


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_dataset(tmp_path, content):
    uri = write(tmp_path / "empty.jsonl", content)
    with pytest.raises(InputError, match=r"evaluation_dataset: evaluation dataset is empty: .*empty\.jsonl"):
        read_dataset(uri)


@pytest.mark.parametrize("uri", ["", "  ", " , ", None])
def test_blank_uri(uri):
    with pytest.raises(InputError, match="evaluation_dataset: expected one or more comma-separated"):
        read_dataset(uri)


def test_comma_separated_sources_keep_order_and_locations(tmp_path):
    a = write(tmp_path / "a.jsonl", '{"id": "a1"}\n')
    b = write(tmp_path / "b.jsonl", '\n{"id": "b1"}\n')
    ds = read_dataset(f"{a}, {b},")
    assert [r["id"] for r in ds.rows] == ["a1", "b1"]
    assert ds.locations == [(a, 1), (b, 2)]


def test_local_wildcard(tmp_path):
    (tmp_path / "parts").mkdir()
    write(tmp_path / "parts" / "p2.jsonl", '{"id": 2}\n')
    write(tmp_path / "parts" / "p1.jsonl", '{"id": 1}\n')
    ds = read_dataset(str(tmp_path / "parts" / "*.jsonl"))
    assert [r["id"] for r in ds.rows] == [1, 2]  # sorted by file name
    with pytest.raises(InputError, match="the wildcard matched no files"):
        read_dataset(str(tmp_path / "parts" / "*.csv"))


def test_file_uri_scheme(tmp_path):
    path = write(tmp_path / "d.jsonl", '{"id": 1}\n')
    assert read_dataset(f"file://{path}").rows == [{"id": 1}]


def test_json_list_and_instances_and_data(tmp_path):
    rows = [{"id": 1}, {"id": 2}]
    for name, payload in [("l.json", rows), ("i.json", {"instances": rows}), ("d.json", {"data": rows})]:
        uri = write(tmp_path / name, json.dumps(payload, indent=2))
        ds = read_dataset(uri)
        assert ds.rows == rows
        assert ds.location(1) == f"{uri} item 2"


def test_json_item_that_is_not_an_object(tmp_path):
    uri = write(tmp_path / "x.json", '[{"id": 1}, "oops"]')
    with pytest.raises(InputError, match=r"x\.json, row 2: item 2 of the list is a JSON string"):
        read_dataset(uri)


def test_json_syntax_error_has_line(tmp_path):
    uri = write(tmp_path / "x.json", '[\n  {"id": 1},\n  {"id": 2\n]')
    with pytest.raises(InputError, match=r"x\.json, row 4: is not valid JSON"):
        read_dataset(uri)


def test_json_named_file_holding_jsonl_is_read_as_jsonl(tmp_path):
    # BigQuery exports NEWLINE_DELIMITED_JSON to files named *.json.
    uri = write(tmp_path / "export-000.json", '{"id": 1}\n{"id": 2}\n')
    ds = read_dataset(uri)
    assert ds.rows == [{"id": 1}, {"id": 2}]
    assert ds.location(1) == f"{uri} line 2"


def test_json_scalar_top_level(tmp_path):
    uri = write(tmp_path / "s.json", '"hello"')
    with pytest.raises(InputError, match=r"expected a list of objects .* got a JSON string: 'hello'"):
        read_dataset(uri)


def test_unknown_extension_is_read_as_jsonl_and_says_so(tmp_path):
    assert read_dataset(write(tmp_path / "part-0000", '{"id": 1}\n')).rows == [{"id": 1}]
    with pytest.raises(InputError, match=r"read as JSONL because the extension '\.xlsx' is not one of"):
        read_dataset(write(tmp_path / "data.xlsx", "id,text\n1,a\n"))


def test_csv_keeps_strings_and_line_numbers(tmp_path):
    uri = write(tmp_path / "d.csv", 'id,text,score\n007,"two\nlines",1.50\n008,,NA\n\n009,"a, b",None\n')
    ds = read_dataset(uri)
    assert ds.rows == [
        {"id": "007", "text": "two\nlines", "score": "1.50"},
        {"id": "008", "text": "", "score": "NA"},  # an empty cell is "", as in JSONL
        {"id": "009", "text": "a, b", "score": "None"},
    ]
    assert [n for _, n in ds.locations] == [2, 4, 6]
    assert ds.location(0) == f"{uri} line 2"


def test_csv_record_short_of_fields_is_an_error_naming_file_line_and_counts(tmp_path):
    # Found in a hostile trial: a record with fewer fields than the header was padded with "" silently.
    with pytest.raises(
        InputError,
        match=r"s\.csv, line 3: has 2 fields but the header has 3 columns \['id', 'a', 'b'\]: \['2', 'x'\]; add the "
        r"missing values",
    ):
        read_dataset(write(tmp_path / "s.csv", "id,a,b\n1,x,y\n2,x\n3,x,y\n"))
    with pytest.raises(InputError, match=r"one\.csv, line 2: has 1 field but the header has 2 columns"):
        read_dataset(write(tmp_path / "one.csv", "a,b\n1\n"))
    # The line is the one the record starts on, after a value that spans lines.
    with pytest.raises(InputError, match=r"m\.csv, line 4: has 2 fields .* \(the record spans lines 4-5\)"):
        read_dataset(write(tmp_path / "m.csv", 'id,a,b\n1,"x\ny",z\n2,"p\nq"\n3,x,y\n'))


def test_csv_record_with_more_fields_than_the_header_is_an_error(tmp_path):
    with pytest.raises(InputError, match=r"l\.csv, line 3: has 3 fields but the header has 2 columns .*quote values"):
        read_dataset(write(tmp_path / "l.csv", "a,b\n1,2\n1,2,3\n"))
    with pytest.raises(InputError, match=r"t\.csv, line 2: has 3 fields but the header has 2 columns"):
        read_dataset(write(tmp_path / "t.csv", "a,b\n1,2,\n"))  # a trailing comma is one more (empty) field


def test_csv_empty_cells_that_are_present_are_empty_strings(tmp_path):
    ds = read_dataset(write(tmp_path / "e.csv", 'a,b,c\n1,,3\n,,\n"",x,""\n'))
    assert ds.rows == [{"a": "1", "b": "", "c": "3"}, {"a": "", "b": "", "c": ""}, {"a": "", "b": "x", "c": ""}]


def test_csv_text_after_a_closing_quote_is_an_error_naming_the_line(tmp_path):
    # Found in a hostile trial: "a1"x was read as a1x.
    with pytest.raises(
        InputError,
        match=r"q\.csv, line 3: has text after the closing quote of a quoted value: "
        r"'2,\"a1\"x,y'",
    ):
        read_dataset(write(tmp_path / "q.csv", 'id,a,b\n1,p,q\n2,"a1"x,y\n3,p,q\n'))
    with pytest.raises(InputError, match=r"s\.csv, line 2: has text after the closing quote"):
        read_dataset(write(tmp_path / "s.csv", 'id,a\n1,"x" \n'))
    # After a value that spans lines, the line is the one with the stray text.
    with pytest.raises(InputError, match=r"m\.csv, line 4: has text after the closing quote"):
        read_dataset(write(tmp_path / "m.csv", 'id,a\n1,x\n2,"two\nlines"!\n'))
    # A quote inside an unquoted value is a character, as in every CSV reader; a doubled quote is one quote.
    assert read_dataset(write(tmp_path / "ok.csv", 'id,a\n1,5" disk\n2,"say ""hi"""\n')).rows == [
        {"id": "1", "a": '5" disk'},
        {"id": "2", "a": 'say "hi"'},
    ]


def test_csv_header_problems(tmp_path):
    with pytest.raises(InputError, match=r"line 1: the header repeats column name\(s\) \['a'\]"):
        read_dataset(write(tmp_path / "dup.csv", "a,b,a\n1,2,3\n"))
    ds = read_dataset(write(tmp_path / "idx.csv", ",text\n0,x\n"))  # pandas' to_csv index column
    assert ds.columns == ["Unnamed: 0", "text"]


def test_csv_unclosed_quote_is_an_error_naming_the_line(tmp_path):
    # A stray quote in the last column used to swallow the rest of the file: 1 row read out of 4.
    text = 'id,question,a,b\nq1,Q1,x,y\n\nq2,"Q2\nstill Q2",x,"y\nq3,Q3,x,y\nq4,Q4,x,y\n'
    with pytest.raises(
        InputError,
        match=r"q\.csv, line 5: a quoted value opens \(\"\) on this line \('still Q2\",x,\"y', in the record "
        r"that starts on line 4\) and never closes",
    ):
        read_dataset(write(tmp_path / "q.csv", text))
    # The line is where the unclosed value starts, not where its record starts nor the end of the file.
    text = 'id,a,b\n1,"x\nx","y\nz,\n3,p,q\n'
    with pytest.raises(
        InputError,
        match=r"r\.csv, line 3: a quoted value opens \(\"\) on this line \('x\",\"y', in the record that starts "
        r"on line 2\)",
    ):
        read_dataset(write(tmp_path / "r.csv", text))
    with pytest.raises(InputError, match=r"e\.csv, line 3: a quoted value opens"):
        read_dataset(write(tmp_path / "e.csv", 'id,a\n1,x\n2,"no final newline'))


def test_csv_line_numbers_after_multiline_values_and_blank_lines(tmp_path):
    uri = write(tmp_path / "m.csv", 'id,t\r\n1,"a\r\nb"\r\n\r\n2,c\r\n,\r\n')
    ds = read_dataset(uri)
    assert ds.rows == [{"id": "1", "t": "a\r\nb"}, {"id": "2", "t": "c"}, {"id": "", "t": ""}]
    assert [n for _, n in ds.locations] == [2, 5, 6]
    with pytest.raises(InputError, match=r"x\.csv, line 5: has 3 fields but the header has 2 columns \['id', 't'\]"):
        read_dataset(write(tmp_path / "x.csv", 'id,t\n1,"a\nb"\n\n2,c,d\n'))


def test_csv_bom_cr_line_ends_blank_lines_and_no_final_newline(tmp_path):
    # A byte-order mark, old Mac \r line ends, lines of spaces before the header and between records (skipped
    # like JSONL's blank lines; a quoted "  " is a value), no newline after the last record.
    uri = write(tmp_path / "b.csv", b'\xef\xbb\xbf  \rid,t\r1,"a\rb"\r   \r2,"  "\r3,')
    ds = read_dataset(uri)
    assert ds.columns == ["id", "t"]
    assert ds.rows == [{"id": "1", "t": "a\rb"}, {"id": "2", "t": "  "}, {"id": "3", "t": ""}]
    assert [n for _, n in ds.locations] == [3, 6, 7]
    with pytest.raises(InputError, match=r"c\.csv, line 4: has 1 field but the header has 2 columns"):
        read_dataset(write(tmp_path / "c.csv", b"id,t\r1,a\r\r3\r"))


def test_csv_long_field(tmp_path):
    long = "x" * 300_000  # beyond the csv module's default 128 KiB field limit
    assert read_dataset(write(tmp_path / "big.csv", f"id,doc\n1,{long}\n")).rows[0]["doc"] == long


def test_csv_non_utf8(tmp_path):
    uri = write(tmp_path / "d.csv", b"id,text\n1,ok\n2,\xff\n")
    with pytest.raises(InputError, match=r"d\.csv, row 3: is not valid UTF-8"):
        read_dataset(uri)


def test_parquet_values_are_json_compatible(tmp_path):
    import datetime as dt

    table = pa.table(
        {
            "id": ["007", "008"],
            "n": pa.array([1, None], type=pa.int64()),
            "f": [float("nan"), 2.5],
            "when": [dt.datetime(2024, 1, 2, 3, 4, 5), None],
            "tags": [["a"], []],
        }
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    ds = read_dataset(str(path))
    assert ds.rows == [
        {"id": "007", "n": 1, "f": None, "when": "2024-01-02T03:04:05", "tags": ["a"]},
        {"id": "008", "n": None, "f": 2.5, "when": None, "tags": []},
    ]
    assert ds.location(1) == f"{path} row 2"


def test_corrupt_parquet(tmp_path):
    with pytest.raises(InputError, match=r"bad\.parquet: is not a readable Parquet file"):
        read_dataset(write(tmp_path / "bad.parquet", b"not parquet"))


def test_unknown_scheme_and_malformed_bq_uri_are_refused_before_any_client():
    # gs:// and bq:// themselves are tested against emulators in test_io_gcs.py / test_io_bigquery.py.
    with pytest.raises(InputError, match=r"evaluation_dataset: invalid project id 'p' in 'bq://p\.d\.t'"):
        read_dataset("bq://p.d.t")
    with pytest.raises(InputError, match=r"unsupported URI scheme 's3://'; expected one of file://, gs://"):
        read_dataset("s3://b/x.jsonl")


def test_registered_source_reader_slots_in(monkeypatch):
    from autorater_pipelines.io import _read

    monkeypatch.setattr(_read, "_SOURCE_READERS", dict(_read._SOURCE_READERS))

    def fake_bq(uri: str) -> list[SourcePart]:
        return [SourcePart(uri, ParsedFile([(1, {"id": 1}), (2, {"id": 2})], "row"))]

    register_source_reader("bq", fake_bq)
    ds = read_dataset("bq://p.d.t")
    assert ds.rows == [{"id": 1}, {"id": 2}]
    assert ds.location(1) == "bq://p.d.t row 2"


@pytest.mark.skipif(not REAL_DATA.exists(), reason="shared LLMBar MT-Bench data not present")
def test_real_llmbar_mtbench_dataset():
    ds = read_dataset(str(REAL_DATA))
    assert len(ds) == 200
    assert ds.columns == ["input", "output_1", "output_2", "label"]
    assert os.path.basename(ds.location(0)) == "dataset.json item 1"


def test_control_character_message_has_no_doubled_at(tmp_path):
    uri = write(tmp_path / "nul.jsonl", '{"id": 1}\n{"t": "a\x00b"}\n')
    with pytest.raises(
        InputError,
        match=r"nul\.jsonl, row 2: is not valid JSON \(Invalid control character at "
        r"character 9\).*must be escaped",
    ) as info:
        read_dataset(uri)
    assert "at at" not in str(info.value)
    with pytest.raises(InputError) as info:
        read_dataset(write(tmp_path / "u.jsonl", '{"t": "abc\n'))
    assert "Unterminated string starting at character" in str(info.value) and "at at" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("deep.jsonl", '{"id": 1}\n' + "[" * 100_000 + "\n", r"deep\.jsonl, row 2"),
        ("deep.json", "[" * 100_000, r"deep\.json"),
        ("deepobj.jsonl", '{"a": ' * 100_000 + "1" + "}" * 100_000 + "\n", r"deepobj\.jsonl, row 1"),
    ],
)
def test_deeply_nested_json_is_an_input_error(tmp_path, name, text, where):
    with pytest.raises(InputError, match=rf"{where}: is nested too deeply"):
        read_dataset(write(tmp_path / name, text))


def test_crlf_u0085_and_escaped_form_feed_inside_strings(tmp_path):
    uri = write(tmp_path / "d.jsonl", '{"t": "a\u0085b\u2029c\\fd"}\r\n{"t": "e"}\r\n')
    assert read_dataset(uri).rows == [{"t": "a\u0085b\u2029c\fd"}, {"t": "e"}]


def test_comma_in_a_file_name_says_commas_separate_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "d_comma,name.jsonl", '{"id": 1}\n')
    with pytest.raises(
        InputError,
        match=r"^evaluation_dataset: file not found: 'd_comma', but 'd_comma,name\.jsonl' "
        r"is a file\. Commas separate files in evaluation_dataset.*rename the file",
    ):
        read_dataset("d_comma,name.jsonl")
    with pytest.raises(InputError, match=r"^evaluation_dataset: file not found: '.*d_comma'.*Commas separate"):
        read_dataset(f"{tmp_path / 'd_comma,name.jsonl'}")
    assert read_dataset("d_comma?name.jsonl").rows == [{"id": 1}]


def test_missing_part_without_comma_file_keeps_plain_message(tmp_path):
    write(tmp_path / "a.jsonl", '{"id": 1}\n')
    with pytest.raises(InputError, match=r"nope\.jsonl: file not found"):
        read_dataset(f"{tmp_path / 'a.jsonl'},{tmp_path / 'nope.jsonl'}")


def test_a_file_named_like_a_wildcard_is_read_as_that_file(tmp_path):
    """Hostile trial (issue 25): ``d[1].jsonl`` was refused as an unmatched wildcard; a file of that name is read,
    and a pattern that is no file's name is still a wildcard."""
    literal = write(tmp_path / "d[1].jsonl", '{"id": "literal"}\n')
    write(tmp_path / "d1.jsonl", '{"id": "matched by the pattern"}\n')
    assert read_dataset(literal).rows == [{"id": "literal"}]
    assert read_dataset(f"file://{literal}").rows == [{"id": "literal"}]
    write(tmp_path / "what?.jsonl", '{"id": "question mark"}\n')
    assert read_dataset(str(tmp_path / "what?.jsonl")).rows == [{"id": "question mark"}]
    assert [r["id"] for r in read_dataset(str(tmp_path / "d[0-9].jsonl")).rows] == ["matched by the pattern"]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("bq://not a table", r"^evaluation_dataset: expected bq://project\.dataset\.table, got 'bq://not a table'$"),
        ("gs://", r"^evaluation_dataset: gs://: the gs:// URI has no bucket name"),
        ("gs://b/folder/", r"^evaluation_dataset: gs://b/folder/: names a folder, expected a file"),
        ("a.jsonl, ftp://h/x", r"^evaluation_dataset: ftp://h/x: unsupported URI scheme 'ftp://'"),
        ("", r"^evaluation_dataset: expected one or more comma-separated file paths or URIs, got ''$"),
    ],
)
def test_check_sources_refuses_what_read_dataset_refuses_before_any_request(uri, message):
    from autorater_pipelines.io import check_sources

    with pytest.raises(InputError, match=message):
        check_sources(uri)
    with pytest.raises(InputError, match=message):
        read_dataset(uri)


def test_check_sources_reads_nothing(tmp_path):
    from autorater_pipelines.io import check_sources

    check_sources(f"{tmp_path}/missing.jsonl, gs://b/x.jsonl, bq://my-project.evals.t")  # no error: form only
