"""bq:// and BigQuery export through the real google-cloud-bigquery client against bqemulator on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import io
import json

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines import io as autorater_io
from autorater_pipelines.errors import InputError
from autorater_pipelines.io import (
    BigQueryTable,
    bigquery_client,
    bigquery_endpoint,
    check_column_names,
    infer_schema,
    judgments_table,
    load_rows_to_new_table,
    parse_destination_prefix,
    parse_table_uri,
    read_dataset,
    read_jsonl,
)
from autorater_pipelines.testing.cloud_emulators import BigQueryEmulator, missing_emulator

PROJECT = "test-project"
NOW = dt.datetime(2025, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc)


# ---- names: no emulator needed -------------------------------------------------------------------------------


def test_table_uris_parse_and_validate():
    assert parse_table_uri(" bq://my-project.my_ds.my-table ") == BigQueryTable("my-project", "my_ds", "my-table")
    assert parse_table_uri("bq://example.com:my-project.ds.t").project == "example.com:my-project"
    assert BigQueryTable("my-project", "ds", "t").uri == "bq://my-project.ds.t"


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("bq://my-project.ds", r"expected bq://project\.dataset\.table, got 'bq://my-project\.ds'"),
        ("bq://my-project:ds.t", r"use '\.' between project and dataset, not ':'"),
        ("bq://My_Project.ds.t", r"invalid project id 'My_Project' in 'bq://My_Project\.ds\.t'"),
        ("bq://my-project.my-ds.t", r"invalid dataset name 'my-ds'"),
        ("bq://my-project.ds.t;drop", r"invalid table name 't;drop'"),
        ("bq://my-project..t", r"expected bq://project\.dataset\.table"),
    ],
)
def test_bad_table_uris_name_the_parameter_and_value(uri, message):
    with pytest.raises(InputError, match=rf"^evaluation_dataset: .*{message}"):
        parse_table_uri(uri)


def test_destination_prefix_forms_and_table_naming():
    assert parse_destination_prefix("my-project.evals") == ("my-project", "evals", "")
    assert parse_destination_prefix("bq://my-project.evals.sxs") == ("my-project", "evals", "sxs")
    table = judgments_table("my-project.evals.sxs", now=NOW, token="a1b2c3")
    assert table.table_id == "my-project.evals.sxs_judgments_20250304_050607_a1b2c3"
    assert judgments_table("my-project.evals", now=NOW, token="a1b2c3").table == "judgments_20250304_050607_a1b2c3"
    first, second = judgments_table("my-project.evals"), judgments_table("my-project.evals")
    assert first.table != second.table  # a random token keeps exports in the same second apart


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        ("", r"is required when judgments_format is 'bigquery'; got ''"),
        ("my-project", r"expected 'project\.dataset' or 'project\.dataset\.table_prefix', got 'my-project'"),
        ("my-project.evals.sxs.x", r"expected .*, got 'my-project\.evals\.sxs\.x'"),
        ("my_project.evals", r"invalid project id 'my_project' in 'my_project\.evals'"),
        ("my-project.ev-als", r"invalid dataset name 'ev-als'"),
        ("my-project.evals.sx$", r"invalid table prefix 'sx\$'"),
        ("my-project.evals." + "t" * 1000, r"invalid table name built from the table prefix"),
    ],
)
def test_bad_destination_prefixes_fail_in_check_run_parameters(prefix, message):
    with pytest.raises(InputError, match=rf"^bigquery_destination_prefix: {message}"):
        autosxs.check_run_parameters("replay/x.jsonl", {}, "bigquery", prefix)


def test_check_run_parameters_keeps_its_old_signature_and_ignores_the_prefix_for_files(tmp_path):
    replay = tmp_path / "x.jsonl"
    replay.write_text('{"id": 1, "flipped": false, "response": "{}"}\n')
    autosxs.check_run_parameters(f"replay/{replay}", {}, "jsonl")
    autosxs.check_run_parameters(f"replay/{replay}", {}, "json", "not a prefix")
    autosxs.check_run_parameters(f"replay/{replay}", {}, "BigQuery", "my-project.evals")
    with pytest.raises(
        InputError,
        match=r"judgments_format: unsupported judgments_format 'csv'; valid: \['jsonl', 'json', 'bigquery'\]",
    ):
        autosxs.check_run_parameters("replay/x.jsonl", {}, "csv")


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["ok", "bad.name"], r"column name 'bad\.name' is not a valid BigQuery column name"),
        (["_PARTITIONTIME"], r"starts with a prefix BigQuery reserves"),
        (["ID", "id"], r"columns 'ID' and 'id' differ only in case"),
    ],
)
def test_column_names(names, message):
    check_column_names(["question_id", "human preference", "a-b", "caf\u00e9"], source="x")
    with pytest.raises(InputError, match=message):
        check_column_names(names, source="x")


def test_endpoint_override_order(monkeypatch):
    monkeypatch.delenv("BIGQUERY_EMULATOR_HOST", raising=False)
    assert bigquery_endpoint() is None
    monkeypatch.setenv("BIGQUERY_EMULATOR_HOST", "127.0.0.1:9050")
    assert bigquery_endpoint() == "http://127.0.0.1:9050"
    assert bigquery_endpoint("https://bq.example:443") == "https://bq.example:443"


def test_schema_inference():
    rows = [
        {
            "id": 1,
            "score": 1,
            "flag": True,
            "text": "a",
            "meta": {"k": 1},
            "tags": ["x"],
            "none": None,
            "mixed": 1,
            "samples": [{"sample_index": 0, "extra": 2.5}],
        },
        {
            "id": 2,
            "score": 0.5,
            "flag": None,
            "text": None,
            "meta": None,
            "tags": [],
            "none": None,
            "mixed": "1",
            "samples": [],
        },
    ]
    hints = {
        "samples": {
            "type": "RECORD",
            "mode": "REPEATED",
            "fields": [{"name": "sample_index", "type": "INTEGER"}, {"name": "choice", "type": "STRING"}],
        }
    }
    schema = infer_schema(rows, hints)
    assert [(f["name"], f["type"]) for f in schema] == [
        ("id", "INTEGER"),
        ("score", "FLOAT"),
        ("flag", "BOOLEAN"),
        ("text", "STRING"),
        ("meta", "JSON"),
        ("tags", "JSON"),
        ("none", "STRING"),
        ("mixed", "JSON"),
        ("samples", "RECORD"),
    ]
    assert schema[-1]["mode"] == "REPEATED"
    assert [(f["name"], f["type"]) for f in schema[-1]["fields"]] == [
        ("sample_index", "INTEGER"),
        ("extra", "FLOAT"),
        ("choice", "STRING"),
    ]


# ---- against the emulator --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def bigquery_emulator():
    reason = missing_emulator("bigquery")
    if reason:
        pytest.skip(reason)
    with BigQueryEmulator(project=PROJECT) as emulator:
        yield emulator


@pytest.fixture
def client(bigquery_emulator, monkeypatch, request):
    """A client of the emulator with BIGQUERY_EMULATOR_HOST set and a fresh dataset named after the test."""
    for name, value in bigquery_emulator.env.items():
        monkeypatch.setenv(name, value)
    bq = bigquery_client(PROJECT)
    dataset = request.node.name.split("[")[0][:100]
    bq.create_dataset(f"{PROJECT}.{dataset}", exists_ok=True)
    bq.test_dataset = dataset
    return bq


def _load(client, table_id: str, schema: list[dict], rows: list[dict]) -> None:
    from google.cloud import bigquery

    config = bigquery.LoadJobConfig(
        schema=[bigquery.SchemaField.from_api_repr(f) for f in schema],
        source_format=bigquery.SourceFormat.NEWLINE_DELIMITED_JSON,
    )
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    client.load_table_from_file(io.BytesIO(data), table_id, job_config=config).result()


def test_read_a_table_as_the_evaluation_dataset(client, tmp_path):
    table_id = f"{PROJECT}.{client.test_dataset}.examples"
    schema = [
        {"name": "id", "type": "INTEGER"},
        {"name": "question", "type": "STRING"},
        {"name": "asked", "type": "TIMESTAMP"},
        {"name": "tags", "type": "STRING", "mode": "REPEATED"},
        {"name": "meta", "type": "RECORD", "fields": [{"name": "source", "type": "STRING"}]},
    ]
    rows = [
        {"id": 1, "question": "q1", "asked": "2025-01-02T03:04:05Z", "tags": ["a", "b"], "meta": {"source": "x"}},
        {"id": 2, "question": None, "asked": None, "tags": [], "meta": None},
    ]
    _load(client, table_id, schema, rows)
    local = tmp_path / "more.jsonl"
    local.write_text('{"id": 3, "question": "q3"}\n')

    ds = read_dataset(f"bq://{table_id}, {local}")

    assert ds.rows[0]["tags"] == ["a", "b"] and ds.rows[0]["meta"] == {"source": "x"}
    assert ds.rows[0]["asked"].startswith("2025-01-02T03:04:05")
    assert ds.rows[1] == {"id": 2, "question": None, "asked": None, "tags": [], "meta": None}
    assert ds.rows[2] == {"id": 3, "question": "q3"}
    assert ds.location(1) == f"bq://{table_id} row 2"


def test_missing_table_is_an_input_error(client):
    with pytest.raises(InputError, match=rf"table {PROJECT}\.{client.test_dataset}\.nope not found"):
        read_dataset(f"bq://{PROJECT}.{client.test_dataset}.nope")


def test_load_creates_a_new_table_and_never_appends(client):
    table = BigQueryTable(PROJECT, client.test_dataset, "t")
    rows = [{"id": "a", "n": 1}, {"id": "b", "n": None}]
    assert load_rows_to_new_table(rows, table, infer_schema(rows), description="test rows") == 2
    assert sorted(dict(r.items())["id"] for r in client.list_rows(table.table_id)) == ["a", "b"]
    with pytest.raises(
        InputError, match=rf"BigQuery rejected the load into {PROJECT}\.{client.test_dataset}\.t: .*not empty"
    ):
        load_rows_to_new_table(rows, table, infer_schema(rows))
    assert client.get_table(table.table_id).num_rows == 2


def test_load_into_a_missing_dataset_names_it(client):
    table = BigQueryTable(PROJECT, "no_such_dataset", "t")
    with pytest.raises(InputError, match=rf"BigQuery dataset {PROJECT}\.no_such_dataset does not exist; create it"):
        load_rows_to_new_table([{"id": 1}], table, infer_schema([{"id": 1}]))


def _judgment(qid: str, choice: str, **extra) -> dict:
    sample = {
        "sample_index": 0,
        "flipped": False,
        "choice": choice,
        "explanation": "e",
        "raw_response": "{}",
        "error": None,
        "attempts": 1,
        "cached": False,
        "note": None,
    }
    return {
        "question_id": qid,
        "inference_instruction": "q?",
        "response_a": "a",
        "response_b": "b",
        "choice": choice,
        "confidence": 1.0,
        "explanation": "why",
        "samples": [sample, {**sample, "sample_index": 1, "flipped": True}],
        "human_preference": "A",
        "input_token_count": 10,
        "output_token_count": 0,
        **extra,
    }


def test_export_judgments_to_bigquery(client, tmp_path):
    judgments = [_judgment("q1", "A"), _judgment("q2", "ERROR", confidence=None, samples=[])]
    prefix = f"{PROJECT}.{client.test_dataset}.run"

    result = autosxs.export_judgments(
        judgments=judgments,
        judgments_format="bigquery",
        destination=str(tmp_path / "judgments.jsonl"),
        bigquery_destination_prefix=prefix,
        project=PROJECT,
    )

    assert result.path == str(tmp_path / "judgments.jsonl")
    assert read_jsonl(result.path) == judgments
    table = parse_table_uri(result.bigquery_table)
    assert table.table.startswith("run_judgments_") and (table.project, table.dataset) == (PROJECT, client.test_dataset)
    bq_table = client.get_table(table.table_id)
    fields = {f.name: f for f in bq_table.schema}
    assert (fields["samples"].field_type, fields["samples"].mode) == ("RECORD", "REPEATED")
    assert [f.name for f in fields["samples"].fields] == [
        "sample_index",
        "flipped",
        "choice",
        "explanation",
        "raw_response",
        "error",
        "attempts",
        "cached",
        "note",
    ]
    assert fields["confidence"].field_type == "FLOAT" and fields["question_id"].field_type == "STRING"
    rows = sorted((dict(r.items()) for r in client.list_rows(table.table_id)), key=lambda r: r["question_id"])
    assert rows == judgments


def test_export_judgments_with_a_fixed_order_and_identical_responses(client, tmp_path):
    # flip "random": every row has its order; identical_responses "tie": only the identical row has the flag.
    judged = _judgment("q1", "B", flipped=True)
    identical = _judgment("q2", "TIE", flipped=False, identical_responses=True, samples=[])
    result = autosxs.export_judgments(
        judgments=[judged, identical],
        judgments_format="bigquery",
        destination=str(tmp_path / "judgments.jsonl"),
        bigquery_destination_prefix=f"{PROJECT}.{client.test_dataset}.order",
        project=PROJECT,
    )
    table = parse_table_uri(result.bigquery_table)
    fields = {f.name: f.field_type for f in client.get_table(table.table_id).schema}
    assert (fields["flipped"], fields["identical_responses"]) == ("BOOLEAN", "BOOLEAN")
    rows = sorted((dict(r.items()) for r in client.list_rows(table.table_id)), key=lambda r: r["question_id"])
    assert [(r["flipped"], r["identical_responses"], r["choice"], len(r["samples"])) for r in rows] == [
        (True, None, "B", 2),
        (False, True, "TIE", 0),
    ]


def test_export_validates_before_writing_anything(client, tmp_path):
    with pytest.raises(InputError, match=r"bigquery_destination_prefix: is required"):
        autosxs.export_judgments(
            judgments=[_judgment("q1", "A")], judgments_format="bigquery", destination=str(tmp_path / "j.jsonl")
        )
    assert not (tmp_path / "j.jsonl").exists()
    with pytest.raises(InputError, match=r"column name 'bad\.column' is not a valid BigQuery column name"):
        autosxs.export_judgments(
            judgments=[_judgment("q1", "A", **{"bad.column": 1})],
            judgments_format="bigquery",
            destination=str(tmp_path / "j.jsonl"),
            bigquery_destination_prefix=f"{PROJECT}.{client.test_dataset}",
        )


def test_streamed_export_loads_the_table_the_in_memory_export_loads(client, tmp_path):
    """``judgments_path``: schema from a first pass, the table loaded from the written file, never held."""
    judgments = [_judgment(f"q{i}", "AB"[i % 2]) for i in range(5)] + [_judgment("q9", "ERROR", samples=[])]
    judgments[2]["extra"] = {"nested": [1, 2]}  # a column of one row only, typed JSON
    autorater_io.write_jsonl(str(tmp_path / "judgments.jsonl"), judgments)
    prefix = f"{PROJECT}.{client.test_dataset}.stream"
    tables = []
    for kind in ("memory", "stream"):
        source = {"judgments": read_jsonl(str(tmp_path / "judgments.jsonl"))}
        if kind == "stream":
            source = {"judgments_path": str(tmp_path / "judgments.jsonl")}
        result = autosxs.export_judgments(
            **source,
            judgments_format="bigquery",
            destination=str(tmp_path / f"{kind}.jsonl"),
            bigquery_destination_prefix=prefix,
            project=PROJECT,
        )
        tables.append(client.get_table(parse_table_uri(result.bigquery_table).table_id))
    assert (tmp_path / "memory.jsonl").read_bytes() == (tmp_path / "stream.jsonl").read_bytes()
    assert [f.to_api_repr() for f in tables[0].schema] == [f.to_api_repr() for f in tables[1].schema]
    assert tables[0].table_id != tables[1].table_id  # each export its own new table
    rows = [sorted((dict(r.items()) for r in client.list_rows(t)), key=lambda r: r["question_id"]) for t in tables]
    assert rows[0] == rows[1] and len(rows[1]) == 6
