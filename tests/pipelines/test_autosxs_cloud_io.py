"""``autorater run autosxs`` reading from the Cloud Storage emulator and exporting to the BigQuery emulator.

The local runner runs each component in a subprocess: the emulator variables are set in ``os.environ``
(monkeypatch) before the run so the components inherit them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing.cloud_emulators import BigQueryEmulator, StorageEmulator, missing_emulator

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
BUCKET = "autorater-pipeline-test"
PROJECT = "test-project"
DATASET = "autosxs_eval"


@pytest.fixture(scope="module")
def emulators():
    reasons = [r for r in (missing_emulator("gcs"), missing_emulator("bigquery")) if r]
    if reasons:
        pytest.skip("; ".join(reasons))
    with StorageEmulator(bucket=BUCKET) as gcs, BigQueryEmulator(project=PROJECT) as bq:
        yield gcs, bq


@pytest.fixture
def cloud(emulators, monkeypatch):
    """Quickstart data in the bucket (two files + replay), an empty BigQuery dataset, emulator env set."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    from autorater_pipelines.io import bigquery_client

    gcs, bq = emulators
    for name, value in {**gcs.env, **bq.env}.items():
        monkeypatch.setenv(name, value)
    bucket = storage.Client(project=None, credentials=AnonymousCredentials()).bucket(BUCKET)
    lines = (QUICKSTART / "dataset.jsonl").read_text().splitlines(keepends=True)
    bucket.blob("quickstart/part-1.jsonl").upload_from_string("".join(lines[:3]))
    bucket.blob("quickstart/part-2.jsonl").upload_from_string("".join(lines[3:]))
    bucket.blob("recordings/replay.jsonl").upload_from_string((QUICKSTART / "replay.jsonl").read_bytes())
    client = bigquery_client(PROJECT)
    client.delete_dataset(f"{PROJECT}.{DATASET}", delete_contents=True, not_found_ok=True)
    client.create_dataset(f"{PROJECT}.{DATASET}")
    return client


def _params(**overrides) -> dict:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params.update(
        evaluation_dataset=f"gs://{BUCKET}/quickstart/*.jsonl",
        autorater_model=f"replay/gs://{BUCKET}/recordings/replay.jsonl",
        judgments_format="bigquery",
        bigquery_destination_prefix=f"{PROJECT}.{DATASET}.quickstart",
        project=PROJECT,
    )
    params.update(overrides)
    return params


def _run(params: dict, tmp_path: Path) -> tuple[int, Path]:
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    out = tmp_path / "out"
    return main(["run", "autosxs", "--params", str(path), "--output-dir", str(out), "--quiet"]), out


@pytest.mark.pipeline
def test_gcs_wildcard_dataset_and_replay_in_bigquery_judgments_out(cloud, tmp_path, capsys):
    code, out = _run(_params(), tmp_path)
    assert code == 0, capsys.readouterr()

    tables = [t.table_id for t in cloud.list_tables(f"{PROJECT}.{DATASET}")]
    assert len(tables) == 1 and re.fullmatch(r"quickstart_judgments_\d{8}_\d{6}_[0-9a-f]{6}", tables[0]), tables
    table_id = f"{PROJECT}.{DATASET}.{tables[0]}"
    schema = {f.name: f for f in cloud.get_table(table_id).schema}
    assert (schema["samples"].field_type, schema["samples"].mode) == ("RECORD", "REPEATED")

    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines() if line.strip()]
    rows = [dict(row.items()) for row in cloud.list_rows(table_id)]
    assert len(rows) == len(judgments) == 6
    assert sorted(rows, key=lambda r: r["question_id"]) == sorted(judgments, key=lambda r: r["question_id"])
    assert {j["question_id"]: j["choice"] for j in judgments} == {
        "q1": "A",
        "q2": "B",
        "q3": "TIE",
        "q4": "TIE",
        "q5": "A",
        "q6": "A",
    }


@pytest.mark.pipeline
def test_bad_destination_prefix_fails_before_the_pipeline_starts(cloud, tmp_path, capsys):
    code, out = _run(_params(bigquery_destination_prefix=f"{PROJECT}.bad-dataset"), tmp_path)
    assert code == 2
    assert "bigquery_destination_prefix: invalid dataset name 'bad-dataset'" in capsys.readouterr().err
    assert not out.exists()
    assert list(cloud.list_tables(f"{PROJECT}.{DATASET}")) == []
