"""The fake Artifact Registry KFP endpoint answers kfp's RegistryClient as the real one does."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import requests
from kfp.registry import RegistryClient

from autorater_pipelines.testing.registry import FakeKfpRegistry

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "compiled" / "autosxs.yaml"


@pytest.fixture
def registry():
    with FakeKfpRegistry() as fake:
        yield fake


def test_upload_answers_package_slash_sha256_and_records_fields(registry, tmp_path):
    client = RegistryClient(host=registry.host)
    package, version = client.upload_pipeline(str(TEMPLATE), tags=["v1", "latest"])
    content = TEMPLATE.read_bytes()
    assert (package, version) == ("autosxs-template", "sha256:" + hashlib.sha256(content).hexdigest())
    [upload] = registry.uploads
    assert (upload.tags, upload.filename, upload.content, upload.authorization) == (
        ["v1", "latest"],
        "autosxs.yaml",
        content,
        None,
    )
    for kind in ({"version": version}, {"tag": "v1"}, {"tag": "latest"}):
        target = tmp_path / "t.yaml"
        client.download_pipeline(package, file_name=str(target), **kind)
        assert target.read_bytes() == content


def test_upload_without_tags_and_a_string_of_tags(registry):
    client = RegistryClient(host=registry.host)
    client.upload_pipeline(str(TEMPLATE))
    client.upload_pipeline(str(TEMPLATE), tags="a,b")
    assert [u.tags for u in registry.uploads] == [[], ["a", "b"]]


def test_bad_uploads_are_400_with_a_reason(registry, tmp_path):
    client = RegistryClient(host=registry.host)
    not_a_pipeline = tmp_path / "x.yaml"
    not_a_pipeline.write_text("a: 1\n")
    with pytest.raises(requests.HTTPError) as info:
        client.upload_pipeline(str(not_a_pipeline))
    assert info.value.response.status_code == 400
    assert "no pipelineInfo.name" in info.value.response.text
    with pytest.raises(requests.HTTPError):
        client.upload_pipeline(str(TEMPLATE), tags="a,,b")
    response = requests.post(registry.host, files={"tags": (None, "x")}, timeout=5)
    assert response.status_code == 400 and "missing file field 'content'" in response.text
    response = requests.post(registry.host, data={"tags": "x"}, timeout=5)
    assert response.status_code == 400 and "expected multipart/form-data" in response.text
    assert registry.uploads == []


def test_unknown_paths_are_404(registry):
    base = registry.host.rsplit("/", 2)[0]
    assert requests.get(f"{registry.host}/autosxs-template/latest", timeout=5).status_code == 404
    assert requests.post(f"{base}/other/repo", files={"content": b"x"}, timeout=5).status_code == 404
