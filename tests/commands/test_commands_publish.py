"""``autorater publish`` against the fake Artifact Registry KFP endpoint (real RegistryClient, real HTTP)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from autorater_pipelines.cli import main
from autorater_pipelines.commands._common import template_path
from autorater_pipelines.pipelines import PIPELINE_NAMES


def _package(path: str) -> str:
    return yaml.safe_load(Path(path).read_text())["pipelineInfo"]["name"]


def test_publish_uploads_every_template_with_every_tag(registry, capsys):
    assert set(PIPELINE_NAMES) == {"autosxs", "gecko"}
    code = main(["publish", "--host", registry.host, "--tag", "0.1.0", "--tag", "latest"])
    out = capsys.readouterr().out
    assert code == 0
    assert len(registry.uploads) == len(PIPELINE_NAMES)
    for name, upload in zip(PIPELINE_NAMES, registry.uploads, strict=True):
        path = template_path(name, None)
        content = Path(path).read_bytes()
        assert upload.package == _package(path)
        assert upload.tags == ["0.1.0", "latest"]
        assert upload.content == content
        assert upload.filename == f"{name}.yaml"
        assert upload.version == "sha256:" + hashlib.sha256(content).hexdigest()
        assert registry.tags(upload.package) == {"0.1.0": upload.version, "latest": upload.version}
        assert registry.get(upload.package, "latest") == content
        assert f"published {path} as {upload.package} {upload.version} (tags: 0.1.0, latest)" in out
        assert f"template URL: {registry.host}/{upload.package}/{upload.version}" in out


def test_publish_from_a_template_dir_moves_latest_to_the_new_version(registry, tmp_path, capsys):
    from autorater_pipelines.pipelines import compile_pipelines

    assert main(["publish", "--host", registry.host, "--tag", "0.1.0", "--tag", "latest"]) == 0
    compile_pipelines(str(tmp_path), image="europe-docker.pkg.dev/p/r/autorater-pipelines:abc1234")
    assert (
        main(
            [
                "publish",
                "--host",
                registry.host + "/",
                "--template-dir",
                str(tmp_path),
                "--tag",
                "0.1.1",
                "--tag",
                "latest",
            ]
        )
        == 0
    )
    assert "image: europe-docker.pkg.dev/p/r/autorater-pipelines:abc1234" in capsys.readouterr().out
    for upload in registry.uploads[len(PIPELINE_NAMES) :]:
        tags = registry.tags(upload.package)
        assert tags["latest"] == tags["0.1.1"] == upload.version != tags["0.1.0"]
        assert len(registry.versions(upload.package)) == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tag", "a,b"], r"--tag: invalid tag 'a,b'"),
        (["--tag", "sha256:abc"], r"--tag: invalid tag 'sha256:abc'"),
        (["--tag", ""], r"--tag: invalid tag ''"),
    ],
)
def test_bad_tags_fail_before_any_upload(registry, args, message, capsys):
    import re

    assert main(["publish", "--host", registry.host, *args]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert registry.uploads == []


@pytest.mark.parametrize(
    "host, message",
    [
        ("us-central1-kfp.pkg.dev/p/r", "--host: expected https://REGION-kfp.pkg.dev/PROJECT/REPO"),
        ("https://us-central1-kfp.pkg.dev/p", "--host: an Artifact Registry KFP host is"),
    ],
)
def test_bad_hosts_fail_with_the_expected_form(host, message, capsys):
    assert main(["publish", "--host", host, "--tag", "x"]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_template_fails_before_any_upload(registry, tmp_path, capsys):
    shutil.copy(template_path("autosxs", None), tmp_path / "autosxs.yaml")
    assert main(["publish", "--host", registry.host, "--template-dir", str(tmp_path), "--tag", "x"]) == 2
    assert "compiled template not found" in capsys.readouterr().err
    assert registry.uploads == []


def test_a_registry_error_is_reported_with_status_and_answer(registry, capsys):
    wrong_repo = registry.host.rsplit("/", 1)[0] + "/other-repo"
    assert main(["publish", "--host", wrong_repo, "--tag", "x"]) == 1
    err = capsys.readouterr().err
    assert f"to {wrong_repo} failed: HTTP 404 Not Found: no repository at" in err


def test_an_unreachable_registry_is_an_error_not_a_traceback(capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["publish", "--host", f"http://127.0.0.1:{port}/p/r", "--tag", "x"]) == 1
    assert "failed: " in capsys.readouterr().err
