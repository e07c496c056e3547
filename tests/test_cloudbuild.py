"""cloudbuild.yaml: its shape, and its non-docker steps run locally against the fake registry.

The harness does what Cloud Build does with each ``bash -c`` step: substitute ``$_VAR`` / ``${VAR}`` (user
substitutions and built-ins; ``$$`` → ``$``; any other ``$NAME`` is an error, as in Cloud Build) and run
the script in a shared workspace (a copy of this repository). Not run: ``install`` (this test's Python
environment stands in for ``/workspace/.venv``) and the docker steps (no Docker daemon here; their
scripts are checked instead). ``_TEST_COMMAND`` is overridden with a tiny test selection and
``_KFP_HOST`` points ``publish`` at :class:`FakeKfpRegistry`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autorater_pipelines import __version__
from autorater_pipelines.pipelines import PIPELINE_NAMES
from autorater_pipelines.testing.registry import FakeKfpRegistry

REPO = Path(__file__).resolve().parents[1]
DOCKER = "gcr.io/cloud-builders/docker"
BUILTINS = {
    "PROJECT_ID": "test-project",
    "PROJECT_NUMBER": "123456789",
    "BUILD_ID": "build-1",
    "LOCATION": "europe-west4",
    "COMMIT_SHA": "abc1234def5678",
    "SHORT_SHA": "abc1234",
    "REVISION_ID": "abc1234def5678",
    "BRANCH_NAME": "main",
    "TAG_NAME": "",
    "REF_NAME": "main",
    "REPO_NAME": "autorater-pipelines",
    "REPO_FULL_NAME": "org/autorater-pipelines",
    "TRIGGER_NAME": "",
    "TRIGGER_BUILD_CONFIG_PATH": "cloudbuild.yaml",
    "SERVICE_ACCOUNT_EMAIL": "",
    "SERVICE_ACCOUNT": "",
}
TINY_TESTS = "python -m pytest -q -p no:cacheprovider tests/test_dockerfile.py -k 'not wheel'"
_REFERENCE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


def _config() -> dict:
    return yaml.safe_load((REPO / "cloudbuild.yaml").read_text())


def substitute(text: str, values: dict[str, str]) -> str:
    """Cloud Build's substitution of one argument."""

    def replace(match: re.Match) -> str:
        if match["escaped"]:
            return "$"
        name = match["braced"] or match["bare"]
        if name not in values:
            raise AssertionError(
                f"Cloud Build rejects ${name}: not a substitution (escape shell variables as $${name})"
            )
        return values[name]

    return _REFERENCE.sub(replace, text)


def _values(**overrides: str) -> dict[str, str]:
    return {**BUILTINS, **{k: str(v) for k, v in _config()["substitutions"].items()}, **overrides}


def _script(step: dict, values: dict[str, str]) -> str:
    assert step.get("entrypoint") == "bash" and step["args"][0] == "-c", f"step {step['id']} is not `bash -c`"
    return substitute(step["args"][1], values)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A copy of the repository as /workspace, with this environment as .venv."""
    root = tmp_path_factory.mktemp("workspace") / "workspace"
    ignore = shutil.ignore_patterns(".git", ".venv", "venv", "build", "out*", "*_cache", "__pycache__", "*.egg-info")
    shutil.copytree(REPO, root, ignore=ignore)
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, command in (
        ("python", f'"{sys.executable}"'),
        ("autorater", f'"{sys.executable}" -m autorater_pipelines.cli'),
    ):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        (bin_dir / name).chmod(0o755)
    return root


def _run(step: dict, values: dict[str, str], workspace: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
    return subprocess.run(
        ["bash", "-c", _script(step, values)], cwd=workspace, env=env, capture_output=True, text=True, timeout=300
    )


def test_shape_logging_substitutions_and_builders():
    config = _config()
    assert config["options"]["logging"] == "CLOUD_LOGGING_ONLY"
    steps = {step["id"]: step for step in config["steps"]}
    assert list(steps) == ["install", "describe", "test", "build-image", "push-image", "compile", "publish"]
    header = (REPO / "cloudbuild.yaml").read_text().split("\nsubstitutions:")[0]
    for name in config["substitutions"]:
        assert re.fullmatch(r"_[A-Z0-9_]+", name), f"user substitutions start with _: {name}"
        assert re.search(rf"^#\s+{name}\s", header, re.MULTILINE), f"substitution {name} is not documented"
    for step in config["steps"]:
        assert "kaniko" not in step["name"]  # archived (NOTES.md)
        _script(step, _values())  # every $reference is a known substitution
    assert {s["id"] for s in config["steps"] if s["name"] == DOCKER} == {"build-image", "push-image"}
    values = _values(_COMMIT="abc1234")
    build = _script(steps["build-image"], values)
    assert 'docker build --tag "$IMAGE:$VERSION" --tag "$IMAGE:$COMMIT" .' in build
    push = _script(steps["push-image"], values)
    assert 'docker push "$IMAGE:$VERSION"' in push and 'docker push "$IMAGE:$COMMIT"' in push
    assert 'autorater compile --image "$IMAGE:$COMMIT"' in _script(steps["compile"], values)
    assert '--tag "$VERSION" --tag latest' in _script(steps["publish"], values)


def test_undeclared_shell_variables_are_caught():
    with pytest.raises(AssertionError, match=r"Cloud Build rejects \$HOME"):
        substitute("echo $HOME", _values())
    assert substitute("echo $$HOME ${_REGION}", _values()) == "echo $HOME us-central1"


def test_non_docker_steps_build_and_publish_to_the_fake_registry(workspace):
    steps = _config()["steps"]
    with FakeKfpRegistry(project="test-project", repository="autorater-templates") as registry:
        values = _values(_REGION="europe-west4", _KFP_HOST=registry.host, _TEST_COMMAND=TINY_TESTS)
        for step in steps:
            if step["id"] == "install" or step["name"] == DOCKER:
                continue
            result = _run(step, values, workspace)
            assert result.returncode == 0, f"step {step['id']} failed:\n{result.stdout}\n{result.stderr}"
            if step["id"] == "test":
                assert re.search(r"\d+ passed", result.stdout), result.stdout
        image = "europe-west4-docker.pkg.dev/test-project/autorater/autorater-pipelines"
        release = (workspace / "build" / "release.env").read_text().split()
        assert release == [f"VERSION={__version__}", "COMMIT=abc1234", f"IMAGE={image}", f"KFP_HOST={registry.host}"]
        assert len(registry.uploads) == len(PIPELINE_NAMES)
        for name, upload in zip(PIPELINE_NAMES, registry.uploads, strict=True):
            assert upload.tags == [__version__, "latest"]
            assert upload.filename == f"{name}.yaml"
            spec = yaml.safe_load(upload.content)
            images = {e["container"]["image"] for e in spec["deploymentSpec"]["executors"].values()}
            assert images == {f"{image}:abc1234"}


def test_describe_derives_the_kfp_host_and_takes_the_commit_override(workspace):
    describe = next(s for s in _config()["steps"] if s["id"] == "describe")
    result = _run(describe, _values(_COMMIT="feedbee", SHORT_SHA=""), workspace)
    assert result.returncode == 0, result.stderr
    assert "COMMIT=feedbee" in result.stdout
    assert "KFP_HOST=https://us-central1-kfp.pkg.dev/test-project/autorater-templates" in result.stdout


def test_a_manual_build_without_a_commit_stops_with_the_fix(workspace):
    describe = next(s for s in _config()["steps"] if s["id"] == "describe")
    result = _run(describe, _values(SHORT_SHA=""), workspace)
    assert result.returncode == 1
    assert "pass --substitutions=_COMMIT=<short sha>" in result.stderr
