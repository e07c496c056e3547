"""The component image as Vertex AI runs it: the templates in ``kfp.local.DockerRunner``, every step in the image.

Run by ``.ci/docker_image.sh`` (marker ``docker_image``), which builds the image and passes its name in
``AUTORATER_DOCKER_IMAGE`` (and the templates compiled with it in ``AUTORATER_DOCKER_TEMPLATES``). In CI
(``CI=true``) a missing image or engine fails these tests; elsewhere they skip.

The runner mounts only the pipeline root, so inputs are ``gs://`` URIs in the Cloud Storage emulator, which
the containers reach on 127.0.0.1 (host networking, as the CI engine has no bridge). Expected values are the
quickstarts' hand-worked answers (the same as in tests/pipelines).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from autorater_pipelines.cli import main
from autorater_pipelines.models.providers._genai_transport import FALLBACK_MESSAGE
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge
from autorater_pipelines.testing.model_registry import FakeModelRegistry

pytestmark = [
    pytest.mark.docker_image,
    pytest.mark.filterwarnings("ignore:.*have no effect in the current local runner"),
]

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
GECKO_QUICKSTART = REPO / "examples" / "gecko_quickstart"
ARENA_QUICKSTART = REPO / "examples" / "arena_quickstart"
NON_ROOT = "10001:10001"  # the uid a hardened runner (runAsUser) would pick; not in the image's /etc/passwd
QUICKSTART_CHOICES = {"q1": "A", "q2": "B", "q3": "TIE", "q4": "TIE", "q5": "A", "q6": "A"}


def _unavailable(image: str | None) -> str | None:
    if not image:
        return "AUTORATER_DOCKER_IMAGE is not set: build and test the image with `bash .ci/docker_image.sh PYTHON`"
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:  # docker not installed, no engine, no permission
        return f"no Docker engine reachable: {type(exc).__name__}: {exc}"
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return f"image {image!r} is not built (bash .ci/docker_image.sh PYTHON builds it)"
    finally:
        client.close()
    return None


@pytest.fixture(scope="module")
def image() -> str:
    name = os.environ.get("AUTORATER_DOCKER_IMAGE")
    reason = _unavailable(name)
    if reason:
        if os.environ.get("CI") == "true" or os.environ.get("AUTORATER_REQUIRE_DOCKER_IMAGE") == "1":
            pytest.fail(f"CI must test the image: {reason}")
        pytest.skip(reason)
    assert name
    return name


@pytest.fixture(scope="module")
def templates(image: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The templates compiled with the image (``autorater compile --image``), every executor naming it."""
    given = os.environ.get("AUTORATER_DOCKER_TEMPLATES")
    directory = Path(given) if given else tmp_path_factory.mktemp("compiled")
    if not given:
        assert main(["compile", "--image", image, "--output-dir", str(directory)]) == 0
    for name in ("autosxs", "gecko", "arena"):
        spec = yaml.safe_load((directory / f"{name}.yaml").read_text())
        executors = spec["deploymentSpec"]["executors"]
        assert {e["container"]["image"] for e in executors.values()} == {image}, name
    return directory


def _docker_run(image: str, *command: str, user: str | None = None) -> subprocess.CompletedProcess:
    args = ["docker", "run", "--rm", "--network", "host", *(["--user", user] if user else []), image, *command]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def _run_template(template: Path, params: dict, root: Path, env: dict[str, str], user: str | None = None) -> dict:
    """Run a compiled template with every step in its image; return the pipeline outputs."""
    from kfp import local
    from kfp.components import load_component_from_file

    params = {"project": "", "location": "us-central1", **params}  # the defaults only resolve on Vertex AI
    run_args: dict = {"network_mode": "host", "environment": env}
    if user:
        run_args["user"] = user
    local.init(runner=local.DockerRunner(**run_args), pipeline_root=str(root), raise_on_error=True)
    task = load_component_from_file(str(template))(**params)
    return dict(task.outputs)


def _task_file(root: Path, task: str, name: str) -> Path:
    [path] = [p for p in root.rglob(name) if p.parent.name == task]
    return path


def _read_jsonl(path: Path | str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _upload(bucket, prefix: str, directory: Path) -> None:
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            bucket.blob(f"{prefix}/{path.relative_to(directory)}").upload_from_filename(str(path))


def _autosxs_params(**overrides) -> dict:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params.update(overrides)
    return params


def _check_quickstart_metrics(metrics: dict) -> None:
    # Worked out from the choices: A wins q1, q5, q6; B wins q2; q3 and q4 are ties.
    assert metrics["autorater_model_a_win_rate"] == pytest.approx(3 / 6)
    assert metrics["autorater_model_b_win_rate"] == pytest.approx(1 / 6)
    assert metrics["autorater_tie_rate"] == pytest.approx(2 / 6)


def test_autosxs_quickstart_runs_in_the_image_as_root_with_gs_data(image, templates, bucket, tmp_path, capfd):
    """The image's default user (root, as Vertex AI runs it) writes every artifact; data and replay on gs://."""
    blobs, prefix = bucket
    folder = prefix.split("/", 3)[3]
    lines = (QUICKSTART / "dataset.jsonl").read_text().splitlines(keepends=True)
    blobs.blob(f"{folder}/data/part-1.jsonl").upload_from_string("".join(lines[:3]))
    blobs.blob(f"{folder}/data/part-2.jsonl").upload_from_string("".join(lines[3:]))
    blobs.blob(f"{folder}/replay.jsonl").upload_from_filename(str(QUICKSTART / "replay.jsonl"))
    params = _autosxs_params(
        evaluation_dataset=f"{prefix}/data/*.jsonl", autorater_model=f"replay/{prefix}/replay.jsonl"
    )
    root = tmp_path / "root"
    root.mkdir()
    env = {"STORAGE_EMULATOR_HOST": os.environ["STORAGE_EMULATOR_HOST"]}
    outputs = _run_template(templates / "autosxs.yaml", params, root, env)

    judgments = _read_jsonl(outputs["judgments"].path)
    assert {j["question_id"]: j["choice"] for j in judgments} == QUICKSTART_CHOICES
    assert _read_jsonl(outputs["error_messages"].path) == []
    _check_quickstart_metrics(
        json.loads(_task_file(root, "model-evaluation-text-generation-pairwise", "metrics_json").read_text())
    )
    report = _task_file(root, "build-autosxs-report", "report").read_text()
    assert report.lstrip().lower().startswith("<!doctype html") and "<svg" in report
    logs = capfd.readouterr().out
    assert f"Found image '{image}'" in logs  # the steps ran in the image, not pulled from anywhere


def test_gecko_quickstart_runs_in_the_image_as_a_non_root_uid(image, templates, bucket, tmp_path, capfd):
    """Any uid works when the runner gives it a writable pipeline root (as Vertex AI's /gcs/ mount does)."""
    blobs, prefix = bucket
    folder = prefix.split("/", 3)[3]
    _upload(blobs, folder, GECKO_QUICKSTART)
    rows = _read_jsonl(GECKO_QUICKSTART / "dataset.jsonl")  # media as gs:// URIs (as `autorater submit` rewrites them)
    dataset = "".join(json.dumps({**r, "image": f"{prefix}/{r['image']}"}) + "\n" for r in rows)
    blobs.blob(f"{folder}/dataset.jsonl").upload_from_string(dataset)
    params = json.loads((GECKO_QUICKSTART / "params.json").read_text())
    params.update(
        evaluation_dataset=f"{prefix}/dataset.jsonl",
        rubric_generation_model=f"replay/{prefix}/rubric_replay.jsonl",
        validator_model=f"replay/{prefix}/validator_replay.jsonl",
    )
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o777)  # what the runner owes a non-root step: a pipeline root it may write
    env = {"STORAGE_EMULATOR_HOST": os.environ["STORAGE_EMULATOR_HOST"]}
    outputs = _run_template(templates / "gecko.yaml", params, root, env, user=NON_ROOT)

    results = {r["id"]: r for r in _read_jsonl(outputs["results"].path)}
    # Worked out by hand from the replay files: 3 squares (asked 2), the triangle below the line (asked above).
    assert {k: r["final_score"] for k, r in results.items()} == pytest.approx(
        {"red-circle": 1.0, "two-squares": 0.75, "green-triangle": 0.8}
    )
    metrics = json.loads(_task_file(root, "score-gecko-validations", "metrics_json").read_text())
    assert metrics["mean_final_score"] == pytest.approx(0.85)
    owners = {p.stat().st_uid for p in root.rglob("*") if p.is_file()}
    assert owners == {10001}, "every artifact was written by the non-root step"
    report = _task_file(root, "build-gecko-report", "report").read_text()
    assert "<svg" in report or "<img" in report
    logs = capfd.readouterr().out
    assert "is not writable" not in logs


def test_gemini_judge_in_the_image_as_a_non_root_uid_uses_the_fast_path_and_the_cache(
    image, templates, bucket, tmp_path, capfd
):
    """The Gemini path in the image (google-genai as locked) against the emulator, as uid 10001: no fallback
    to the slow SDK path, and the image's response cache takes every answer."""
    blobs, prefix = bucket
    folder = prefix.split("/", 3)[3]
    blobs.blob(f"{folder}/dataset.jsonl").upload_from_filename(str(QUICKSTART / "dataset.jsonl"))
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o777)
    with ModelEmulator(responder=length_judge) as emulator:
        params = _autosxs_params(
            evaluation_dataset=f"{prefix}/dataset.jsonl",
            autorater_model="gemini-2.5-flash",
            project="test-project",
            location="us-central1",
            autorater_parameters={"base_url": emulator.url, "progress": False},
        )
        env = {"STORAGE_EMULATOR_HOST": os.environ["STORAGE_EMULATOR_HOST"]}
        outputs = _run_template(templates / "autosxs.yaml", params, root, env, user=NON_ROOT)
        assert emulator.call_count == 12  # 6 examples × 2 samples (both orders)
        assert {r.protocol for r in emulator.requests} == {"vertex"}
    judgments = _read_jsonl(outputs["judgments"].path)
    assert len(judgments) == 6 and all(j["choice"] in ("A", "B", "TIE") for j in judgments)
    logs = capfd.readouterr().out
    assert "is not writable" not in logs, logs[-3000:]
    assert FALLBACK_MESSAGE not in logs, logs[-3000:]


def _generate_or_judge(request):
    """Judge prompts (structured output): the length judge; generation: the model's name and the prompt's last line."""
    if request.response_schema:
        return length_judge(request)
    return f"{request.model} says: {request.prompt_text.strip().splitlines()[-1]}"


def test_compare_models_in_the_image_generates_judges_and_imports_into_the_model_registry(
    image, templates, bucket, tmp_path
):
    """Google's documented compare-models form: both responses generated (Gemini emulator), judged, and the
    evaluation of the registry model imported into the Model Registry (google-cloud-aiplatform in the image)."""
    blobs, prefix = bucket
    folder = prefix.split("/", 3)[3]
    docs = REPO / "examples" / "autosxs_docs"
    blobs.blob(f"{folder}/compare_models.jsonl").upload_from_filename(str(docs / "compare_models.jsonl"))
    params = {
        **json.loads((docs / "compare_models.json").read_text()),
        "evaluation_dataset": f"{prefix}/compare_models.jsonl",
    }
    tuned = params["model_b"]
    root = tmp_path / "root"
    root.mkdir()
    with ModelEmulator(responder=_generate_or_judge) as emulator, FakeModelRegistry(models=[tuned]) as registry:
        env = {"STORAGE_EMULATOR_HOST": os.environ["STORAGE_EMULATOR_HOST"], "GOOGLE_VERTEX_BASE_URL": emulator.url}
        outputs = _run_template(templates / "autosxs.yaml", params, root, {**env, **registry.env})
        generated = [r for r in emulator.requests if not r.response_schema]
        (imported,) = registry.imports
    rows = len(_read_jsonl(docs / "compare_models.jsonl"))
    assert len(generated) == 2 * rows  # model A and model B answered every row
    judgments = _read_jsonl(outputs["judgments"].path)
    assert len(judgments) == rows and all(j["choice"] in ("A", "B", "TIE") for j in judgments)
    assert imported.parent.startswith(tuned) and imported.metrics["modelWinRate"] == pytest.approx(
        sum(j["choice"] == "B" for j in judgments) / rows
    )


def test_arena_quickstart_runs_in_the_image_as_a_non_root_uid_with_gs_data(image, templates, bucket, tmp_path):
    """The arena template, every step in the image as uid 10001: dataset and judge replay on gs://."""
    blobs, prefix = bucket
    folder = prefix.split("/", 3)[3]
    blobs.blob(f"{folder}/dataset.jsonl").upload_from_filename(str(ARENA_QUICKSTART / "dataset.jsonl"))
    blobs.blob(f"{folder}/replay.jsonl").upload_from_filename(str(ARENA_QUICKSTART / "replay.jsonl"))
    params = {
        **json.loads((ARENA_QUICKSTART / "params.json").read_text()),
        "evaluation_dataset": f"{prefix}/dataset.jsonl",
        "autorater_model": f"replay/{prefix}/replay.jsonl",
    }
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o777)
    env = {"STORAGE_EMULATOR_HOST": os.environ["STORAGE_EMULATOR_HOST"]}
    outputs = _run_template(templates / "arena.yaml", params, root, env, user=NON_ROOT)

    board = _read_jsonl(outputs["leaderboard"].path)
    # Wins/losses/ties per model counted from replay.jsonl (48 pairs × 2 samples, verdicts un-flipped by hand).
    assert [(r["model"], r["wins"], r["losses"], r["ties"]) for r in board] == [
        ("tuned-v2", 38, 8, 2),
        ("tuned-v1", 32, 12, 4),
        ("draft", 8, 32, 8),
        ("base", 8, 34, 6),
    ]
    assert board[-1]["score"] == 0.0  # the baseline
    assert len(_read_jsonl(outputs["judgments"].path)) == 48
    assert _read_jsonl(outputs["error_messages"].path) == []
    report = _task_file(root, "build-arena-report", "report").read_text()
    assert report.lstrip().lower().startswith("<!doctype html")
    owners = {p.stat().st_uid for p in root.rglob("*") if p.is_file()}
    assert owners == {10001}, "every artifact was written by the non-root step"


def test_arena_models_generated_in_the_image_by_gemini_and_openai_then_judged(image, templates, bucket, tmp_path):
    """Arena ``models``: responses generated in the image's generation step (Gemini and OpenAI emulators), judged."""
    blobs, prefix = bucket
    folder = prefix.split("/", 3)[3]
    rows = [
        {"id": f"p{i}", "question": f"Question {i}?", "ref": "A reference answer, long enough to win."}
        for i in range(4)
    ]
    blobs.blob(f"{folder}/dataset.jsonl").upload_from_string("".join(json.dumps(r) + "\n" for r in rows))
    root = tmp_path / "root"
    root.mkdir()
    with ModelEmulator(responder=_generate_or_judge) as emulator:
        params = {
            "evaluation_dataset": f"{prefix}/dataset.jsonl",
            "task": "question_answering@001",
            "id_columns": ["id"],
            "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
            "response_columns": {"reference": "ref"},
            "models": {
                "gem": {
                    "model": "gemini-2.5-flash",
                    "prompt_parameters": {"contents": {"column": "question"}},
                    "parameters": {"base_url": emulator.url},
                },
                "oai": {
                    "model": "openai/small",
                    "prompt_parameters": {"prompt": {"column": "question"}},
                    "parameters": {"base_url": emulator.url},
                },
            },
            "project": "test-project",
            "autorater_model": "gemini-2.5-flash",
            "autorater_parameters": {"base_url": emulator.url, "progress": False},
            "bootstrap_rounds": 10,
        }
        env = {"STORAGE_EMULATOR_HOST": os.environ["STORAGE_EMULATOR_HOST"]}
        outputs = _run_template(templates / "arena.yaml", params, root, env)
        generated = [r for r in emulator.requests if not r.response_schema]
    assert sorted((r.protocol, r.prompt_text) for r in generated) == sorted(
        [("openai", f"Question {i}?") for i in range(4)] + [("vertex", f"Question {i}?") for i in range(4)]
    )
    judgments = _read_jsonl(outputs["judgments"].path)
    assert len(judgments) == 3 * 4 and all(j["choice"] in ("A", "B", "TIE") for j in judgments)
    gem = {j["response_a"] for j in judgments if j["model_a"] == "gem"}
    assert gem == {f"gemini-2.5-flash says: Question {i}?" for i in range(4)}
    board = _read_jsonl(outputs["leaderboard"].path)
    assert {r["model"] for r in board} == {"reference", "gem", "oai"}


@pytest.mark.parametrize("user", [None, NON_ROOT, "4242:4242"])
def test_what_steps_write_besides_artifacts_is_writable_for_any_user(image, user):
    """Response cache (the image's AUTORATER_CACHE_DIR) and temp files, for any uid."""
    script = (
        "import os, tempfile, warnings\n"
        "warnings.simplefilter('error')\n"
        "from autorater_pipelines.models._cache import ResponseCache, resolve_cache_dir\n"
        "from autorater_pipelines.models._types import ModelOutput\n"
        "cache = ResponseCache(resolve_cache_dir(None))\n"
        "cache.put('ab' * 32, ModelOutput(text='cached'))\n"
        "assert cache.get('ab' * 32).text == 'cached', 'cache entry not written'\n"
        "with tempfile.NamedTemporaryFile() as handle: handle.write(b'x')\n"
        "print(os.getuid(), cache.directory)\n"
    )
    result = _docker_run(image, "python3", "-c", script, user=user)
    assert result.returncode == 0, result.stderr
    uid, directory = result.stdout.split()
    assert uid == (user.split(":")[0] if user else "0")
    assert directory == "/var/cache/autorater-pipelines/responses"
    assert "is not writable" not in result.stderr
