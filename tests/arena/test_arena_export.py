"""The arena's judgments and leaderboard exported as JSON or to new BigQuery tables (bqemulator on 127.0.0.1)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from autorater_pipelines.arena.export import export_arena
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.io import bigquery_client, parse_table_uri, read_jsonl
from autorater_pipelines.testing.cloud_emulators import BigQueryEmulator, missing_emulator

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "arena_quickstart"
PROJECT = "test-project"


def _params(tmp_path: Path, **overrides: object) -> Path:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params.update(
        evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
        autorater_model=f"replay/{QUICKSTART / 'replay.jsonl'}",
        bootstrap_rounds=20,
        **overrides,
    )
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    return path


def _judgment(prompt: str, model_a: str, model_b: str, choice: str, strong: bool) -> dict:
    sample = {
        "sample_index": 0,
        "flipped": False,
        "choice": choice,
        "explanation": "e",
        "raw_response": f"My final verdict is: [[{'A>>B' if strong else 'A>B'}]]",
        "error": None,
        "attempts": 1,
        "cached": False,
        "note": None,
        "strong": strong,
    }
    return {
        "prompt_id": prompt,
        "model_a": model_a,
        "model_b": model_b,
        "inference_instruction": f"{prompt}?",
        "response_a": "a",
        "response_b": "b",
        "choice": choice,
        "confidence": 1.0,
        "explanation": "e",
        "complete": True,
        "incomplete_reason": None,
        "samples": [sample],
        "input_token_count": 10,
        "output_token_count": 3,
    }


LEADERBOARD = [
    {"model": "x", "battles": 4.0, "wins": 3.0, "losses": 0.0, "ties": 1.0, "mean_response_length": 1.0, "score": 0.9,
     "score_ci_lower": 0.1, "score_ci_upper": 1.7, "elo": 1156.3, "elo_ci_lower": 1017.4, "elo_ci_upper": 1295.2,
     "rank": 1, "rank_upper": 1, "rank_lower": 2},
    {"model": "y", "battles": 4.0, "wins": 0.0, "losses": 3.0, "ties": 1.0, "mean_response_length": None,
     "score": -0.9, "score_ci_lower": -1.7, "score_ci_upper": -0.1, "elo": 843.7, "elo_ci_lower": 704.8,
     "elo_ci_upper": 982.6, "rank": 2, "rank_upper": 1, "rank_lower": 2},
]  # fmt: skip


def test_json_format_writes_one_array_per_file_and_refuses_a_bad_format(tmp_path):
    judgments = [_judgment("p1", "x", "y", "A", True)]
    result = export_arena(
        judgments=judgments,
        leaderboard=LEADERBOARD,
        judgments_format="JSON",
        judgments_destination=str(tmp_path / "judgments.json"),
        leaderboard_destination=str(tmp_path / "leaderboard.json"),
    )
    assert json.loads((tmp_path / "judgments.json").read_text()) == judgments
    assert json.loads((tmp_path / "leaderboard.json").read_text()) == LEADERBOARD
    assert (result.judgments.bigquery_table, result.leaderboard.bigquery_table) == ("", "")
    with pytest.raises(InputError, match=r"judgments_format: unsupported judgments_format 'csv'"):
        export_arena(
            judgments=judgments,
            leaderboard=LEADERBOARD,
            judgments_format="csv",
            judgments_destination=str(tmp_path / "j.csv"),
            leaderboard_destination=str(tmp_path / "l.csv"),
        )
    assert not (tmp_path / "j.csv").exists() and not (tmp_path / "l.csv").exists()


@pytest.mark.pipeline
def test_run_with_judgments_format_json_writes_judgments_and_leaderboard_json(tmp_path):
    out = tmp_path / "out"
    params = _params(tmp_path, judgments_format="json")
    assert main(["run", "arena", "--params", str(params), "--output-dir", str(out), "--quiet"]) == 0
    assert json.loads((out / "judgments.json").read_text()) == read_jsonl(str(out / "judgments.jsonl"))
    leaderboard = json.loads((out / "leaderboard.json").read_text())
    assert leaderboard == read_jsonl(str(out / "leaderboard.jsonl"))
    assert [r["model"] for r in leaderboard] == ["tuned-v2", "tuned-v1", "draft", "base"]


@pytest.fixture(scope="module")
def emulator():
    reason = missing_emulator("bigquery")
    if reason:
        pytest.skip(reason)
    with BigQueryEmulator(project=PROJECT) as bq:
        yield bq


@pytest.fixture
def client(emulator, monkeypatch, request):
    """A client of the emulator with its variables set (the pipeline's steps inherit them), a fresh dataset."""
    for name, value in emulator.env.items():
        monkeypatch.setenv(name, value)
    bq = bigquery_client(PROJECT)
    bq.test_dataset = request.node.name[:60]
    bq.delete_dataset(f"{PROJECT}.{bq.test_dataset}", delete_contents=True, not_found_ok=True)
    bq.create_dataset(f"{PROJECT}.{bq.test_dataset}")
    return bq


def test_bigquery_format_loads_two_new_tables_with_one_stamp(client, tmp_path):
    judgments = [_judgment("p1", "x", "y", "A", True), _judgment("p2", "x", "y", "A", False)]
    now = dt.datetime(2026, 12, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    result = export_arena(
        judgments=judgments,
        leaderboard=LEADERBOARD,
        judgments_format="bigquery",
        judgments_destination=str(tmp_path / "judgments.jsonl"),
        leaderboard_destination=str(tmp_path / "leaderboard.jsonl"),
        bigquery_destination_prefix=f"{PROJECT}.{client.test_dataset}.arena",
        project=PROJECT,
        now=now,
    )
    assert read_jsonl(result.judgments.path) == judgments and read_jsonl(result.leaderboard.path) == LEADERBOARD
    j_table, l_table = (
        parse_table_uri(result.judgments.bigquery_table),
        parse_table_uri(result.leaderboard.bigquery_table),
    )
    stamp = re.fullmatch(r"arena_judgments_(20261202_030405_[0-9a-f]{6})", j_table.table)
    assert stamp and l_table.table == f"arena_leaderboard_{stamp.group(1)}"
    j_fields = {f.name: f for f in client.get_table(j_table.table_id).schema}
    assert (j_fields["samples"].field_type, j_fields["samples"].mode) == ("RECORD", "REPEATED")
    assert {f.name: f.field_type for f in j_fields["samples"].fields}["strong"] == "BOOLEAN"
    assert j_fields["model_a"].field_type == "STRING" and j_fields["confidence"].field_type == "FLOAT"
    loaded = sorted((dict(r.items()) for r in client.list_rows(j_table.table_id)), key=lambda r: r["prompt_id"])
    assert loaded == judgments
    l_fields = {f.name: f.field_type for f in client.get_table(l_table.table_id).schema}
    assert l_fields["rank"] == "INTEGER" and l_fields["battles"] == "FLOAT" and l_fields["model"] == "STRING"
    assert l_fields["mean_response_length"] == "FLOAT" and "win_rate_vs_baseline" not in l_fields
    board = sorted((dict(r.items()) for r in client.list_rows(l_table.table_id)), key=lambda r: r["rank"])
    assert board == LEADERBOARD


def test_bigquery_export_checks_the_prefix_and_column_names_before_writing(client, tmp_path):
    paths = {"judgments_destination": str(tmp_path / "j.jsonl"), "leaderboard_destination": str(tmp_path / "l.jsonl")}
    with pytest.raises(InputError, match=r"bigquery_destination_prefix: is required when judgments_format is"):
        export_arena(judgments=[], leaderboard=LEADERBOARD, judgments_format="bigquery", **paths)
    bad = {**_judgment("p1", "x", "y", "A", False), "bad.column": 1}
    with pytest.raises(InputError, match=r"column name 'bad\.column' is not a valid BigQuery column name"):
        export_arena(
            judgments=[bad],
            leaderboard=LEADERBOARD,
            judgments_format="bigquery",
            bigquery_destination_prefix=f"{PROJECT}.{client.test_dataset}",
            **paths,
        )
    assert not (tmp_path / "j.jsonl").exists() and not (tmp_path / "l.jsonl").exists()
    assert list(client.list_tables(f"{PROJECT}.{client.test_dataset}")) == []


@pytest.mark.pipeline
def test_run_exports_the_judgments_and_the_leaderboard_to_bigquery(client, tmp_path, capsys):
    out = tmp_path / "out"
    prefix = f"{PROJECT}.{client.test_dataset}.quickstart"
    params = _params(tmp_path, judgments_format="bigquery", bigquery_destination_prefix=prefix, project=PROJECT)
    assert main(["run", "arena", "--params", str(params), "--output-dir", str(out), "--quiet"]) == 0, (
        capsys.readouterr()
    )
    tables = sorted(t.table_id for t in client.list_tables(f"{PROJECT}.{client.test_dataset}"))
    assert len(tables) == 2, tables
    stamp = re.fullmatch(r"quickstart_judgments_(\d{8}_\d{6}_[0-9a-f]{6})", tables[0])
    assert stamp and tables[1] == f"quickstart_leaderboard_{stamp.group(1)}"
    dataset = f"{PROJECT}.{client.test_dataset}"
    judgments = read_jsonl(str(out / "judgments.jsonl"))
    loaded = [dict(r.items()) for r in client.list_rows(f"{dataset}.{tables[0]}")]
    key = lambda r: (r["question_id"], r["model_a"], r["model_b"])  # noqa: E731
    assert len(loaded) == len(judgments) == 48 and sorted(loaded, key=key) == sorted(judgments, key=key)
    board = sorted((dict(r.items()) for r in client.list_rows(f"{dataset}.{tables[1]}")), key=lambda r: r["rank"])
    assert board == read_jsonl(str(out / "leaderboard.jsonl"))
    assert [r["model"] for r in board] == ["tuned-v2", "tuned-v1", "draft", "base"] and "win_rate_vs_baseline" in board[
        0
    ]
