"""Gecko results export: files, and a new BigQuery table through the real client against bqemulator."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from autorater_pipelines import gecko
from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import preflight
from autorater_pipelines.gecko.export import export_results
from autorater_pipelines.io import bigquery_client, parse_table_uri, read_jsonl
from autorater_pipelines.testing.cloud_emulators import BigQueryEmulator, missing_emulator

PROJECT = "test-project"


def _results() -> list[dict]:
    def qa(qid, answer="yes", deps=()):
        return {
            "question_id": qid,
            "question": f"Is there {qid}?",
            "question_type": "object",
            "choices": ["yes", "no"],
            "answer": answer,
            "dependencies": list(deps),
            "keyword_id": int(qid[1:]),
        }

    def sample(verdict, error=None):
        return [{"sample_index": 0, "verdict": verdict, "raw": verdict, "error": error, "choice_probs": None}]

    rows = [
        {
            "item": "coffee-1",
            "prompt": "steaming cup of coffee",
            "keywords": "{1}[steaming] {2}[cup of coffee]",
            "qas": [qa("q1"), qa("q2", deps=["q1"])],
            "answers": {"q1": sample("yes"), "q2": sample("no")},
            "rubric_warnings": [],
        },
        {
            "item": "coffee-2",
            "prompt": "coffee and toast",
            "keywords": "{1}[coffee] and {2}[toast]",
            "qas": [qa("q1"), qa("q2")],
            "answers": {"q1": sample("yes"), "q2": sample("1000000")},
            "rubric_warnings": ["question q9: ignored"],
        },
    ]
    return gecko.score(rows, id_columns=["item"]).results


def test_file_formats_and_bad_formats(tmp_path):
    rows = _results()
    assert export_results(rows, output_format="json", destination=str(tmp_path / "r.json")).bigquery_table == ""
    assert json.loads((tmp_path / "r.json").read_text()) == rows
    export_results(rows, output_format="JSONL", destination=str(tmp_path / "r.jsonl"))
    assert read_jsonl(str(tmp_path / "r.jsonl")) == rows
    with pytest.raises(InputError, match=r"output_format: unsupported output_format 'csv'; valid: \['jsonl', 'json', "):
        export_results(rows, output_format="csv", destination=str(tmp_path / "x"))
    with pytest.raises(InputError, match=r"bigquery_destination_prefix: is required when output_format is 'bigquery'"):
        export_results(rows, output_format="bigquery", destination=str(tmp_path / "x"))
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        ("", r"is required when output_format is 'bigquery'"),
        ("my_project.evals", r"invalid project id 'my_project'"),
        ("my-project.ev-als", r"invalid dataset name 'ev-als'"),
    ],
)
def test_bad_destination_prefixes_fail_before_the_run(prefix, message):
    with pytest.raises(InputError, match=rf"^bigquery_destination_prefix: {message}"):
        preflight.validate_parameters(
            {
                "id_columns": ["item"],
                "media_column": "image",
                "prompt_column": "prompt",
                "output_format": "bigquery",
                "bigquery_destination_prefix": prefix,
            }
        )


@pytest.fixture(scope="module")
def client():
    reason = missing_emulator("bigquery")
    if reason:
        pytest.skip(reason)
    with BigQueryEmulator(project=PROJECT) as emulator, pytest.MonkeyPatch.context() as mp:
        for name, value in emulator.env.items():
            mp.setenv(name, value)
        bq = bigquery_client(PROJECT)
        bq.create_dataset(f"{PROJECT}.gecko_eval", exists_ok=True)
        yield bq


def test_export_results_to_a_new_bigquery_table(client, tmp_path):
    rows = _results()
    before = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d")
    result = export_results(
        rows,
        output_format="bigquery",
        destination=str(tmp_path / "results.jsonl"),
        bigquery_destination_prefix=f"{PROJECT}.gecko_eval.blog",
        project=PROJECT,
    )
    assert read_jsonl(result.path) == rows
    table = parse_table_uri(result.bigquery_table)
    assert (table.project, table.dataset) == (PROJECT, "gecko_eval")
    assert table.table.startswith(f"blog_results_{before}")
    fields = {f.name: f for f in client.get_table(table.table_id).schema}
    assert (fields["qa_results"].field_type, fields["qa_results"].mode) == ("RECORD", "REPEATED")
    sub = {f.name: f.field_type for f in fields["qa_results"].fields}
    assert sub["score"] == "FLOAT" and sub["keyword_id"] == "INTEGER" and sub["votes"] == "JSON"
    assert fields["final_score"].field_type == "FLOAT" and fields["questions_scored"].field_type == "INTEGER"
    loaded = sorted((dict(r.items()) for r in client.list_rows(table.table_id)), key=lambda r: r["item"])
    assert [r["final_score"] for r in loaded] == [0.5, 1.0]
    for got, row in zip(loaded, rows, strict=True):
        assert {k: v for k, v in got.items() if k != "qa_results"} == {
            k: v for k, v in row.items() if k != "qa_results"
        }
        for got_qa, qa in zip(got["qa_results"], row["qa_results"], strict=True):
            # A REPEATED RECORD has every field in every element: keys one question lacks come back null.
            assert {k: got_qa[k] for k in qa} == qa and all(got_qa[k] is None for k in set(got_qa) - set(qa))
    # A second export never appends: it writes a table of its own.
    again = export_results(
        rows,
        output_format="bigquery",
        destination=str(tmp_path / "again.jsonl"),
        bigquery_destination_prefix=f"{PROJECT}.gecko_eval.blog",
        project=PROJECT,
    )
    assert again.bigquery_table != result.bigquery_table
    assert client.get_table(parse_table_uri(result.bigquery_table).table_id).num_rows == 2
