"""``autorater publish`` against the fake Artifact Registry KFP endpoint (real RegistryClient, real HTTP)."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest
import yaml

from autorater_pipelines.cli import main
from autorater_pipelines.commands._common import template_path
from autorater_pipelines.pipelines import PIPELINE_NAMES

IMAGE = "us-central1-docker.pkg.dev/my-project/autorater/autorater-pipelines:abc1234"


def _package(path: str) -> str:
    return yaml.safe_load(Path(path).read_text())["pipelineInfo"]["name"]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    """The templates compiled with a pushed image's name (the checked-in ones name the placeholder image)."""
    from autorater_pipelines.pipelines import compile_pipelines

    directory = tmp_path_factory.mktemp("compiled")
    compile_pipelines(str(directory), image=IMAGE)
    return directory


def test_publish_uploads_every_template_with_every_tag(registry, compiled, capsys):
    assert set(PIPELINE_NAMES) == {"autosxs", "gecko", "arena"}
    code = main(
        ["publish", "--host", registry.host, "--template-dir", str(compiled), "--tag", "0.1.0", "--tag", "latest"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert len(registry.uploads) == len(PIPELINE_NAMES)
    for name, upload in zip(PIPELINE_NAMES, registry.uploads, strict=True):
        path = str(compiled / f"{name}.yaml")
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


def test_publish_from_a_template_dir_moves_latest_to_the_new_version(registry, compiled, tmp_path, capsys):
    from autorater_pipelines.pipelines import compile_pipelines

    first = ["--template-dir", str(compiled), "--tag", "0.1.0", "--tag", "latest"]
    assert main(["publish", "--host", registry.host, *first]) == 0
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
def test_bad_tags_fail_before_any_upload(registry, compiled, args, message, capsys):
    import re

    assert main(["publish", "--host", registry.host, "--template-dir", str(compiled), *args]) == 2
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


def test_a_missing_template_fails_before_any_upload(registry, compiled, tmp_path, capsys):
    shutil.copy(compiled / "autosxs.yaml", tmp_path / "autosxs.yaml")
    assert main(["publish", "--host", registry.host, "--template-dir", str(tmp_path), "--tag", "x"]) == 2
    assert "compiled template not found" in capsys.readouterr().err
    assert registry.uploads == []


def test_a_registry_error_is_reported_with_status_and_answer(registry, compiled, capsys):
    wrong_repo = registry.host.rsplit("/", 1)[0] + "/other-repo"
    assert main(["publish", "--host", wrong_repo, "--template-dir", str(compiled), "--tag", "x"]) == 1
    err = capsys.readouterr().err
    assert f"to {wrong_repo} failed: HTTP 404 Not Found: no repository at" in err


def test_an_unreachable_registry_is_an_error_not_a_traceback(compiled, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert (
        main(["publish", "--host", f"http://127.0.0.1:{port}/p/r", "--template-dir", str(compiled), "--tag", "x"]) == 1
    )
    assert "failed: " in capsys.readouterr().err


def test_templates_of_the_placeholder_image_are_refused_and_nothing_is_uploaded(registry, compiled, tmp_path, capsys):
    """Hostile trial (issue 25): `publish` uploaded the checked-in templates, whose image no project can pull,
    without a word, though `submit` refuses them. Now the same check refuses them before the first upload, even
    when only one of the two templates names the placeholder."""
    from autorater_pipelines.components import IMAGE as PLACEHOLDER

    assert main(["publish", "--host", registry.host, "--tag", "0.1.0"]) == 2  # this installation's templates
    err = capsys.readouterr().err
    assert re.search(
        rf"autosxs\.yaml: its steps run in {re.escape(PLACEHOLDER)}, the placeholder image of the checked-in "
        r"templates, which no project can pull: .* Nothing was uploaded\.",
        err,
    ), err
    assert f"autorater publish --host {registry.host} --template-dir build/compiled --tag ..." in err
    shutil.copy(compiled / "autosxs.yaml", tmp_path / "autosxs.yaml")  # a real image
    shutil.copy(template_path("gecko", None), tmp_path / "gecko.yaml")  # the placeholder
    shutil.copy(compiled / "arena.yaml", tmp_path / "arena.yaml")  # a real image
    assert main(["publish", "--host", registry.host, "--template-dir", str(tmp_path), "--tag", "0.1.0"]) == 2
    assert re.search(r"gecko\.yaml: its steps run in .*placeholder image", capsys.readouterr().err)
    assert registry.uploads == []


def test_an_artifact_registry_host_names_its_region_and_project_in_the_fix(capsys):
    host = "https://europe-west4-kfp.pkg.dev/my-proj/autorater-templates"
    assert main(["publish", "--host", host, "--tag", "0.1.0"]) == 2
    err = capsys.readouterr().err
    assert "docker build -t europe-west4-docker.pkg.dev/my-proj/autorater/autorater-pipelines:" in err
    assert "--region europe-west4 --substitutions=_REGION=europe-west4" in err
