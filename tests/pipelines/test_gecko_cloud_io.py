"""``autorater run gecko`` exporting its results to the BigQuery emulator (``output_format: bigquery``).

The local runner runs each component in a subprocess: the emulator variables are set in ``os.environ``
(monkeypatch) before the run so the components inherit them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing.cloud_emulators import BigQueryEmulator, missing_emulator

REPO = Path(__file__).resolve().parents[2]
PROJECT = "test-project"
DATASET = "gecko_eval"


@pytest.fixture(scope="module")
def emulator():
    reason = missing_emulator("bigquery")
    if reason:
        pytest.skip(reason)
    with BigQueryEmulator(project=PROJECT) as bq:
        yield bq


@pytest.fixture
def client(emulator, monkeypatch):
    from autorater_pipelines.io import bigquery_client

    for name, value in emulator.env.items():
        monkeypatch.setenv(name, value)
    bq = bigquery_client(PROJECT)
    bq.delete_dataset(f"{PROJECT}.{DATASET}", delete_contents=True, not_found_ok=True)
    bq.create_dataset(f"{PROJECT}.{DATASET}")
    return bq


@pytest.mark.pipeline
def test_vertex_sample_results_into_a_new_bigquery_table(client, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    params = json.loads((REPO / "examples" / "gecko_vertex" / "params.json").read_text())
    params.update(output_format="bigquery", bigquery_destination_prefix=f"{PROJECT}.{DATASET}.blog", project=PROJECT)
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    out = tmp_path / "out"
    assert main(["run", "gecko", "--params", str(path), "--output-dir", str(out), "--quiet"]) == 0, capsys.readouterr()

    tables = [t.table_id for t in client.list_tables(f"{PROJECT}.{DATASET}")]
    assert len(tables) == 1 and re.fullmatch(r"blog_results_\d{8}_\d{6}_[0-9a-f]{6}", tables[0]), tables
    table_id = f"{PROJECT}.{DATASET}.{tables[0]}"
    schema = {f.name: f for f in client.get_table(table_id).schema}
    assert (schema["qa_results"].field_type, schema["qa_results"].mode) == ("RECORD", "REPEATED")
    rows = sorted((dict(r.items()) for r in client.list_rows(table_id)), key=lambda r: r["prompt"])
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    assert [r["final_score"] for r in rows] == [1.0, 0.5] == [r["final_score"] for r in results]
    assert [q["verdict"] for q in rows[1]["qa_results"]] == ["yes", "yes", "no", "no"]
