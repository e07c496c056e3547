"""gs:// through the real google-cloud-storage client against gcp-storage-emulator on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.io import GcsFileSystem, read_dataset, read_jsonl, write_json, write_jsonl
from autorater_pipelines.io._gcs import glob_to_regex
from autorater_pipelines.models import GenerateConfig, ModelRequest, get_model
from autorater_pipelines.testing.cloud_emulators import GCS_TEST_BUCKET

BUCKET = GCS_TEST_BUCKET  # fixtures `storage_emulator` and `bucket`: tests/conftest.py


def upload(bucket, name: str, data: str | bytes) -> None:
    bucket.blob(name).upload_from_string(data)


def test_comma_separated_wildcards_and_local_files_read_as_one_dataset(bucket, tmp_path):
    b, root = bucket
    folder = root[len(f"gs://{BUCKET}/") :]
    upload(b, f"{folder}/part-2.jsonl", '{"id": 3}\n\n{"id": 4}\n')
    upload(b, f"{folder}/part-1.jsonl", '{"id": 1}\n{"id": 2}\n')
    upload(b, f"{folder}/other.csv", "id\n9\n")
    upload(b, f"{folder}/sub/part-3.jsonl", '{"id": 5}\n')
    local = tmp_path / "local.jsonl"
    local.write_text('{"id": 6}\n')

    ds = read_dataset(f"{root}/part-*.jsonl, {local}")

    assert [r["id"] for r in ds.rows] == [1, 2, 3, 4, 6]  # files sorted, subfolder not matched by *
    assert ds.location(3) == f"{root}/part-2.jsonl line 3"
    assert ds.locations[4] == (str(local), 1)


def test_recursive_wildcard_csv_and_parquet_objects(bucket):
    b, root = bucket
    folder = root[len(f"gs://{BUCKET}/") :]
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"id": ["p1"], "n": [1.5]}), sink)
    upload(b, f"{folder}/a/data.parquet", sink.getvalue().to_pybytes())
    upload(b, f"{folder}/a/b/data.csv", "id,n\n007,\n")
    upload(b, f"{folder}/readme.txt", "not data")

    ds = read_dataset(f"{root}/**/data.*")

    assert ds.rows == [{"id": "007", "n": ""}, {"id": "p1", "n": 1.5}]
    assert ds.units == {f"{root}/a/b/data.csv": "line", f"{root}/a/data.parquet": "row"}


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("d/*.jsonl", ["d/a.jsonl", "d/.jsonl"], ["d/x/a.jsonl", "d/a.json"]),
        ("d/**/*.jsonl", ["d/a.jsonl", "d/x/y/a.jsonl"], ["e/a.jsonl"]),
        ("d/**", ["d/a", "d/x/y"], ["da"]),
        ("d/part-?.jsonl", ["d/part-1.jsonl"], ["d/part-10.jsonl", "d/part-/.jsonl"]),
        ("d/[ab].json", ["d/a.json", "d/b.json"], ["d/c.json"]),
        ("d/[!ab].json", ["d/c.json"], ["d/a.json"]),
        ("d/a+b (1).json", ["d/a+b (1).json"], ["d/aab (1).json"]),
    ],
)
def test_glob_semantics_match_local_globs(pattern, matches, misses):
    regex = glob_to_regex(pattern)
    assert all(regex.fullmatch(m) for m in matches)
    assert not any(regex.fullmatch(m) for m in misses)


def test_missing_objects_buckets_and_bad_uris_name_the_uri(bucket):
    _, root = bucket
    with pytest.raises(InputError, match=rf"{root}/nope\.jsonl: not found in Cloud Storage while trying to read it"):
        read_dataset(f"{root}/nope.jsonl")
    with pytest.raises(InputError, match=rf"{root}/\*\.jsonl: the wildcard matched no files"):
        read_dataset(f"{root}/*.jsonl")
    with pytest.raises(
        InputError, match=r"gs://no-such-bucket/\*\.jsonl: not found in Cloud Storage while trying to list"
    ):
        read_dataset("gs://no-such-bucket/*.jsonl")
    with pytest.raises(InputError, match=r"gs://autorater-\*/x\.jsonl: wildcards are not supported in the bucket name"):
        read_dataset("gs://autorater-*/x.jsonl")
    with pytest.raises(InputError, match=r"gs://autorater-test: the gs:// URI names a bucket but no object"):
        read_dataset("gs://autorater-test")
    with pytest.raises(InputError, match=r"gs:///x\.jsonl: the gs:// URI has no bucket name"):
        read_dataset("gs:///x.jsonl")


def test_jsonl_and_json_writes_round_trip(bucket):
    b, root = bucket
    rows = [{"id": 1, "text": "caf\u00e9", "nan": float("nan")}, {"id": 2, "nested": {"a": [1, 2]}}]
    assert write_jsonl(f"{root}/out/judgments.jsonl", iter(rows)) == 2
    assert read_jsonl(f"{root}/out/judgments.jsonl") == [
        {"id": 1, "text": "caf\u00e9", "nan": None},
        {"id": 2, "nested": {"a": [1, 2]}},
    ]
    write_json(f"{root}/out/metrics.json", {"win_rate": 0.5})
    folder = root[len(f"gs://{BUCKET}/") :]
    assert json.loads(b.blob(f"{folder}/out/metrics.json").download_as_bytes()) == {"win_rate": 0.5}


def test_an_explicit_client_is_used_as_given(bucket):
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    b, root = bucket
    client = storage.Client(project="explicit-project", credentials=AnonymousCredentials())
    fs = GcsFileSystem(client)
    fs.write_atomic(f"{root}/x.txt", [b"he", b"llo"])
    assert fs.client() is client
    assert fs.read_bytes(f"{root}/x.txt") == b"hello"
    assert fs.glob(f"{root}/*.txt") == [f"{root}/x.txt"]


def test_replay_file_on_gcs(bucket):
    b, root = bucket
    folder = root[len(f"gs://{BUCKET}/") :]
    upload(b, f"{folder}/replay.jsonl", '{"id": 1, "response": "from gcs"}\n')
    model = get_model(f"replay/{root}/replay.jsonl", GenerateConfig(progress=False))
    assert model.generate([ModelRequest(parts=(), key={"id": 1})])[0].text == "from gcs"
    with pytest.raises(InputError, match=rf"replay file '{root}/missing\.jsonl': .*not found in Cloud Storage"):
        get_model(f"replay/{root}/missing.jsonl")


def test_importing_the_library_loads_no_google_cloud_client():
    code = (
        "import sys, autorater_pipelines.io\n"
        "loaded = [m for m in ('google.cloud.storage', 'google.cloud.bigquery') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_an_object_named_like_a_wildcard_is_read_as_that_object(bucket):
    """As a local file of that name: ``gs://b/d[1].jsonl`` is that object, not the pattern matching d1.jsonl."""
    b, root = bucket
    folder = root[len(f"gs://{BUCKET}/") :]
    upload(b, f"{folder}/d[1].jsonl", '{"id": "literal"}\n')
    upload(b, f"{folder}/d1.jsonl", '{"id": "matched by the pattern"}\n')
    assert read_dataset(f"{root}/d[1].jsonl").rows == [{"id": "literal"}]
    assert [r["id"] for r in read_dataset(f"{root}/d[0-9].jsonl").rows] == ["matched by the pattern"]


def test_streamed_reads_and_writes_on_gcs_match_the_whole_file_ones(bucket, monkeypatch):
    """``iter_jsonl``/``DatasetScan`` read objects in ranged chunks; ``JsonlWriter`` uploads one whole object."""
    from autorater_pipelines.io import DatasetScan, JsonlWriter, _gcs, iter_jsonl

    monkeypatch.setattr(_gcs, "_READ_CHUNK_BYTES", 256 * 1024)  # several chunks, lines across chunk edges
    b, root = bucket
    folder = root[len(f"gs://{BUCKET}/") :]
    rows = [{"id": i, "text": "caf\u00e9 " * (i % 97)} for i in range(3000)]  # 0.9 MB
    write_jsonl(f"{root}/big.jsonl", rows)
    assert len(b.blob(f"{folder}/big.jsonl").download_as_bytes()) > 3 * 256 * 1024
    assert list(iter_jsonl(f"{root}/big.jsonl")) == read_jsonl(f"{root}/big.jsonl") == rows
    scan = DatasetScan(f"{root}/big.jsonl")
    assert (len(scan), scan.columns) == (3000, ["id", "text"])
    assert [s.row for s in scan.rows()] == rows
    with JsonlWriter(f"{root}/copy.jsonl") as writer:
        for row in rows:
            writer.write(row)
        assert not b.blob(f"{folder}/copy.jsonl").exists()
        writer.commit()
    assert b.blob(f"{folder}/copy.jsonl").download_as_bytes() == b.blob(f"{folder}/big.jsonl").download_as_bytes()
    upload(b, f"{folder}/bad.jsonl", '{"id": 1}\n' * 40000 + '{"id": \n')
    with pytest.raises(InputError, match=rf"{root}/bad\.jsonl, row 40001: is not valid JSON"):
        list(iter_jsonl(f"{root}/bad.jsonl"))
    with pytest.raises(InputError, match=rf"{root}/nope\.jsonl: not found in Cloud Storage while trying to read it"):
        list(iter_jsonl(f"{root}/nope.jsonl"))
