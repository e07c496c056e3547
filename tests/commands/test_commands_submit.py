"""``autorater submit``: validation against the template, the job spec, and the submit path — all offline."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import tempfile
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.commands._common import template_path
from autorater_pipelines.commands._validate import parameter_type
from autorater_pipelines.commands.submit import console_url
from autorater_pipelines.pipelines import PIPELINE_NAMES
from autorater_pipelines.pipelines._local import template_inputs

DOCS = Path(__file__).resolve().parent / "autosxs_docs"
REPO = Path(__file__).resolve().parents[2]
VERTEX = ["--project", "my-project", "--location", "us-central1", "--pipeline-root", "gs://my-bucket/pipeline-root"]
DOCUMENTED_PARAMETER_SETS = ["compare_models", "compare_predictions", "check_alignment"]
REAL_IMAGE = "us-central1-docker.pkg.dev/my-project/autorater/autorater-pipelines:abc1234"


@functools.cache
def _compiled_with_real_image() -> Path:
    """Both templates compiled with a pushed image's name (what ``autorater compile --image`` runs), once."""
    from autorater_pipelines.pipelines import compile_pipelines

    directory = Path(tempfile.mkdtemp(prefix="submit-templates-"))
    compile_pipelines(str(directory), image=REAL_IMAGE)
    return directory


MEANINGFUL = {
    "autosxs": {
        "evaluation_dataset": "gs://b/x.jsonl",
        "task": "summarization@001",
        "autorater_prompt_parameters": {"inference_context": {"column": "x"}, "inference_instruction": {"column": "y"}},
        "response_column_a": "a",
        "response_column_b": "b",
    },
    "gecko": {"evaluation_dataset": "gs://b/x.jsonl", "prompt_column": "p", "media_column": "m"},
    "arena": {
        "evaluation_dataset": "gs://b/x.jsonl",
        "task": "question_answering@001",
        "autorater_prompt_parameters": {"inference_instruction": {"column": "q"}},
        "response_columns": {"m1": "a", "m2": "b"},
    },
}
"""Values that pass ``validate_run`` (``submit`` runs it), for the inputs whose values the pipeline interprets."""


def _write(tmp_path: Path, params: dict, name: str = "params.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(params))
    return str(path)


def _submit(*args: str) -> int:
    """``autorater submit`` with a template compiled against a real image unless ``--template`` is given."""
    template = [] if "--template" in args else ["--template", str(_compiled_with_real_image() / f"{args[0]}.yaml")]
    return main(["submit", *VERTEX, *args, *template])


def _dry_run(capsys, *args: str) -> tuple[int, dict | None, str]:
    code = _submit(*args, "--dry-run")
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 and captured.out.strip() else None), captured.err


def _sample(ir_type: str | None):
    return {
        "STRING": "gs://b/x",
        "NUMBER_INTEGER": 1,
        "NUMBER_DOUBLE": 0.5,
        "BOOLEAN": True,
        "LIST": ["x"],
        "STRUCT": {},
    }[ir_type]


def _wrong(ir_type: str | None):
    return {"STRING": 1, "NUMBER_INTEGER": True, "NUMBER_DOUBLE": "0.5", "BOOLEAN": "true", "LIST": "x", "STRUCT": []}[
        ir_type
    ]


@pytest.mark.parametrize("name", DOCUMENTED_PARAMETER_SETS)
def test_dry_run_accepts_the_autosxs_documentation_parameter_sets(name, capsys):
    params = json.loads((DOCS / f"{name}.json").read_text())
    code, spec, err = _dry_run(capsys, "autosxs", "--params", str(DOCS / f"{name}.json"))
    assert code == 0, err
    assert spec["runtimeConfig"]["gcsOutputDirectory"] == "gs://my-bucket/pipeline-root"
    assert set(spec["runtimeConfig"]["parameterValues"]) == set(params)
    assert spec["runtimeConfig"]["parameterValues"]["id_columns"] == params["id_columns"]
    job_id = spec["name"].rsplit("/", 1)[1]
    assert spec["name"] == f"projects/my-project/locations/us-central1/pipelineJobs/{job_id}"
    assert re.fullmatch(r"autosxs-template-\d{14}", job_id)
    assert "pipelineSpec" not in spec
    assert f"{len(params)} parameters valid for" in err and "nothing submitted" in err
    assert console_url("my-project", "us-central1", job_id) in err


def test_dry_run_rejects_a_wrong_type_naming_parameter_types_and_value(tmp_path, capsys):
    params = json.loads((DOCS / "compare_predictions.json").read_text())
    params["id_columns"] = "id"
    code, _, err = _dry_run(capsys, "autosxs", "--params", _write(tmp_path, params))
    assert code == 2
    assert err.startswith(f"error: {tmp_path / 'params.json'}: parameter 'id_columns' expects LIST (a JSON array), ")
    assert "received a string: 'id'" in err


def test_dry_run_rejects_a_missing_required_parameter(tmp_path, capsys):
    params = json.loads((DOCS / "compare_predictions.json").read_text())
    del params["task"]
    code, _, err = _dry_run(capsys, "autosxs", "--params", _write(tmp_path, params))
    assert code == 2
    assert "missing required pipeline parameters ['task'] (task: STRING)" in err


def test_dry_run_shows_the_integers_given(tmp_path, capsys):
    # protobuf's Value holds every number as a double: the job's parameterValues say 2.0 for the 2 written
    params = {
        **json.loads((DOCS / "compare_predictions.json").read_text()),
        "autorater_parameters": {"sampling_count": 2, "temperature": 1.0, "flip": True},
    }
    code, spec, err = _dry_run(capsys, "autosxs", "--params", _write(tmp_path, params))
    assert code == 0, err
    shown = spec["runtimeConfig"]["parameterValues"]["autorater_parameters"]
    assert shown == {"sampling_count": 2, "temperature": 1.0, "flip": True}
    assert type(shown["sampling_count"]) is int and type(shown["temperature"]) is float


def test_dry_run_rejects_unknown_names_listing_valid_ones(tmp_path, capsys):
    params = {**json.loads((DOCS / "compare_predictions.json").read_text()), "resposne_column_a": "x"}
    code, _, err = _dry_run(capsys, "autosxs", "--params", _write(tmp_path, params))
    assert code == 2
    assert (
        "unknown pipeline parameters ['resposne_column_a'] (did you mean 'response_column_a'?); valid pipeline " in err
    )


@pytest.mark.parametrize("pipeline", PIPELINE_NAMES)
def test_every_template_input_type_is_checked(pipeline, tmp_path, capsys):
    """Required inputs with values of their types pass; each wrong-typed one is named in the error."""
    inputs = template_inputs(template_path(pipeline, None))
    types = {name: parameter_type(spec) for name, spec in inputs.items()}
    good = {name: _sample(t) for name, t in types.items() if t and not inputs[name].optional}
    good.update(MEANINGFUL[pipeline])  # values the pipeline's validate_run accepts, of the same types
    code, spec, err = _dry_run(capsys, pipeline, "--params", _write(tmp_path, good, "good.json"))
    assert code == 0, err
    assert set(spec["runtimeConfig"]["parameterValues"]) == set(good)
    bad = {**good, **{name: _wrong(t) for name, t in types.items() if t}}
    code, _, err = _dry_run(capsys, pipeline, "--params", _write(tmp_path, bad, "bad.json"))
    assert code == 2
    for name, t in types.items():
        if t:
            assert f"parameter {name!r} expects {t} " in err, name


def test_spec_carries_service_account_labels_and_names(capsys):
    code, spec, _ = _dry_run(
        capsys,
        "autosxs",
        "--params",
        str(DOCS / "check_alignment.json"),
        "--service-account",
        "runner@my-project.iam.gserviceaccount.com",
        "--label",
        "team=eval",
        "--job-id",
        "autosxs-nightly-1",
        "--display-name",
        "nightly",
        "--no-cache",
    )
    assert code == 0
    assert spec["serviceAccount"] == "runner@my-project.iam.gserviceaccount.com"
    assert spec["labels"] == {"team": "eval"}
    assert spec["displayName"] == "nightly"
    assert spec["name"].endswith("/pipelineJobs/autosxs-nightly-1")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pipeline-root", "/tmp/root"], r"--pipeline-root: Vertex AI needs a Cloud Storage URI .* got '/tmp/root'"),
        (["--label", "Team=Eval"], r"--label: invalid label 'Team=Eval'"),
        (["--job-id", "Bad_Id"], r"Vertex AI SDK rejected the job: .*Bad_Id"),
        (["--template", "gs://b/t.yaml"], r"--template: gs:// templates are not supported"),
        (["--template", "https://us-kfp.pkg.dev/p/autosxs"], r"--template: expected a template URL"),
        (  # the README's example, copied as written (hostile trial, issue 25: the dry run accepted it)
            ["--template", "https://us-central1-kfp.pkg.dev/my-project/autorater-templates/autosxs-template/sha256:…"],
            r"--template: template URL '.*/sha256:…' still holds the placeholder '…': fill in the real value \(the "
            r"template URL `autorater publish` printed",
        ),
        (
            ["--template", "https://$REGION-kfp.pkg.dev/$PROJECT/autorater-templates/autosxs-template/latest"],
            r"--template: template URL .* still holds the placeholder '\$'",
        ),
        (
            ["--template", "https://us-central1-kfp.pkg.dev/p/r/autosxs-template/sha256:abc"],
            r"--template: template version 'sha256:abc' is not a whole sha256 version \(sha256: and 64 hex digits",
        ),
        (
            ["--template", "https://us-central1-kfp.pkg.dev/p/r/autosxs-template/v1 final"],
            r"--template: template version 'v1 final' is neither sha256:<64 hex digits> nor a tag",
        ),
        (["--template", str(Path("/nonexistent/t.yaml"))], r"compiled template not found: '/nonexistent/t.yaml'"),
    ],
)
def test_bad_options_fail_with_one_clear_line(args, message, capsys):
    code, _, err = _dry_run(capsys, "autosxs", "--params", str(DOCS / "compare_predictions.json"), *args)
    assert code == 2
    assert re.search(message, err), err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("pipeline", PIPELINE_NAMES)
def test_the_checked_in_templates_are_refused_with_the_build_and_push_commands(pipeline, tmp_path, capsys):
    """Their placeholder image cannot be pulled by any project: refused before anything is built or sent."""
    params = {
        "autosxs": DOCS / "compare_models.json",
        "gecko": REPO / "examples/gecko_quickstart/params.json",
        "arena": REPO / "examples/arena_quickstart/params.json",
    }[pipeline]
    for extra in (["--dry-run"], []):
        code = main(["submit", *VERTEX, pipeline, "--params", str(params), *extra])
        captured = capsys.readouterr()
        assert code == 2 and captured.out == ""
        err = captured.err
        assert err.startswith(f"error: {template_path(pipeline, None)}: its steps run in ")
        assert "us-docker.pkg.dev/autorater-pipelines/images/autorater-pipelines:" in err
        assert "the job would fail at image pull on Vertex AI" in err
        assert (
            "gcloud builds submit --config cloudbuild.yaml --region us-central1 "
            "--substitutions=_REGION=us-central1,_COMMIT=$(git rev-parse --short HEAD)" in err
        )
        image = "us-central1-docker.pkg.dev/my-project/autorater/autorater-pipelines:$(git rev-parse --short HEAD)"
        assert f"docker build -t {image} . && docker push {image}" in err
        assert f"autorater compile --image {image} --output-dir build/compiled" in err
        assert f"autorater submit {pipeline} --template build/compiled/{pipeline}.yaml" in err


@pytest.mark.parametrize("pipeline", PIPELINE_NAMES)
def test_a_dry_run_with_the_checked_in_template_reports_a_bad_parameter_first(pipeline, tmp_path, capsys, monkeypatch):
    """A bad parameter is what the dry run reports first, not the placeholder image that hides it."""
    source = {
        "autosxs": DOCS / "compare_models.json",
        "gecko": REPO / "examples/gecko_quickstart/params.json",
        "arena": REPO / "examples/arena_quickstart/params.json",
    }
    params = json.loads(source[pipeline].read_text())
    monkeypatch.chdir(REPO)  # the Gecko and arena quickstarts' files are relative to the repository
    options = {"autosxs": "autorater_parameters", "gecko": "validator_parameters", "arena": "autorater_parameters"}[
        pipeline
    ]
    params[options] = {**params.get(options, {}), "sampling_count": 1000}
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    code = main(["submit", *VERTEX, pipeline, "--params", str(path), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == f"error: {options}: sampling_count must be an integer from 1 to 64, got 1000", err


def test_a_template_compiled_with_a_real_image_passes(tmp_path, capsys):
    assert main(["compile", "--image", REAL_IMAGE, "--output-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    code, spec, err = _dry_run(
        capsys, "autosxs", "--params", str(DOCS / "compare_models.json"), "--template", str(tmp_path / "autosxs.yaml")
    )
    assert code == 0, err
    assert "placeholder" not in err


def _object(bucket, uri: str) -> bytes:
    return bucket.blob(uri.split("/", 3)[3]).download_as_bytes()


def _staged_uri(root: str, path: Path, name: str | None = None) -> str:
    """Where submit puts a local file: under the pipeline root, named by the first 16 hex of its sha256."""
    return f"{root}/autorater-inputs/{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}/{name or path.name}"


def _quickstart_with_few_shot(tmp_path: Path) -> Path:
    params = json.loads((REPO / "examples/quickstart/params.json").read_text())
    few_shot = tmp_path / "few_shot.jsonl"
    few_shot.write_text('{"question": "2+2?", "a": "4", "b": "5", "choice": "A", "why": "4 is right"}\n')
    definition = {
        "evaluation_criteria": [{"name": "Correct", "definition": "Answers the question correctly."}],
        "score_rubric": {"A": "A is better", "B": "B is better", "SAME": "equally good"},
        "autorater_prompt_parameter_keys": ["inference_instruction"],
        "few_shot_examples_config": {
            "dataset": str(few_shot),
            "autorater_prompt_parameters": {"inference_instruction": {"column": "question"}},
            "response_a_column": "a",
            "response_b_column": "b",
            "choice_column": "choice",
            "explanation_column": "why",
        },
    }
    params["task"] = "custom@001"
    params["experimental_args"] = {"custom_task_definition": definition}
    return Path(_write(tmp_path, params))


def test_submit_uploads_local_files_under_the_pipeline_root_and_rewrites_the_parameters(
    vertex, bucket, tmp_path, monkeypatch, capsys
):
    blobs, root = bucket
    monkeypatch.chdir(REPO)  # the quickstart names its files relative to the repository
    params = _quickstart_with_few_shot(tmp_path)
    assert _submit("autosxs", "--params", str(params), "--pipeline-root", root) == 0
    out = capsys.readouterr().out
    [call] = vertex
    values = call["job"].runtime_config.parameter_values
    dataset, replay = REPO / "examples/quickstart/dataset.jsonl", REPO / "examples/quickstart/replay.jsonl"
    few_shot = tmp_path / "few_shot.jsonl"
    assert values["evaluation_dataset"] == _staged_uri(root, dataset)
    assert values["autorater_model"] == "replay/" + _staged_uri(root, replay)
    staged_few_shot = values["experimental_args"]["custom_task_definition"]["few_shot_examples_config"]["dataset"]
    assert staged_few_shot == _staged_uri(root, few_shot)
    for path, uri in (
        (dataset, values["evaluation_dataset"]),
        (replay, _staged_uri(root, replay)),
        (few_shot, staged_few_shot),
    ):
        assert _object(blobs, uri) == path.read_bytes()
    assert f"uploaded evaluation_dataset examples/quickstart/dataset.jsonl -> {_staged_uri(root, dataset)}" in out
    assert f"uploaded autorater_model examples/quickstart/replay.jsonl -> {_staged_uri(root, replay)}" in out
    assert "uploaded experimental_args.custom_task_definition.few_shot_examples_config.dataset" in out


def test_submit_uploads_a_gecko_dataset_with_its_local_media(vertex, bucket, monkeypatch, capsys):
    blobs, root = bucket
    monkeypatch.chdir(REPO)
    assert _submit("gecko", "--params", "examples/gecko_quickstart/params.json", "--pipeline-root", root) == 0
    [call] = vertex
    values = call["job"].runtime_config.parameter_values
    quickstart = REPO / "examples/gecko_quickstart"
    rows = [json.loads(line) for line in _object(blobs, values["evaluation_dataset"]).decode().splitlines()]
    originals = [json.loads(line) for line in (quickstart / "dataset.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in originals]
    for row, original in zip(rows, originals, strict=True):
        assert row["image"] == _staged_uri(root, quickstart / original["image"])
        assert _object(blobs, row["image"]) == (quickstart / original["image"]).read_bytes()
        assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in original.items() if k != "image"}
    for key in ("rubric_generation_model", "validator_model"):
        assert values[key].startswith(f"replay/{root}/autorater-inputs/")
    assert "uploaded evaluation_dataset (dataset.jsonl, column 'image') " in capsys.readouterr().out


def test_an_unreadable_media_file_is_a_warning_and_its_row_an_error_row_as_in_run(vertex, bucket, tmp_path, capsys):
    """Hostile trial (issue 25): with one unreadable media file `run` scored the other rows and `submit` refused the
    whole run. Both now give the Gecko answer: the run goes ahead, that row becomes an error row (on Vertex AI its
    path cannot be read either), and `submit` names it in a warning."""
    blobs, root = bucket
    quickstart = REPO / "examples/gecko_quickstart"
    rows = [json.loads(line) for line in (quickstart / "dataset.jsonl").read_text().splitlines()]
    for row in rows:
        row["image"] = str(quickstart / row["image"])
    rows[1]["image"] = str(tmp_path / "missing.png")
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = json.loads((quickstart / "params.json").read_text())
    for key in ("rubric_generation_model", "validator_model"):
        params[key] = "replay/" + str(REPO / params[key].removeprefix("replay/"))
    params_path = _write(tmp_path, {**params, "evaluation_dataset": str(dataset)})
    assert _submit("gecko", "--params", params_path, "--pipeline-root", root) == 0
    out = capsys.readouterr().out
    assert re.search(
        rf"warning: {re.escape(str(dataset))} line 2, column 'image': media file '{re.escape(str(tmp_path))}/"
        r"missing\.png' cannot be read \(No such file or directory\); the run scores the other rows and lists this "
        r"one in error_messages\.jsonl, as `autorater run` does",
        out,
    ), out
    [call] = vertex
    staged = [
        json.loads(line)
        for line in _object(blobs, call["job"].runtime_config.parameter_values["evaluation_dataset"])
        .decode()
        .splitlines()
    ]
    assert staged[1]["image"] == str(tmp_path / "missing.png")  # left as it is: the step's error row names it
    assert staged[0]["image"].startswith(f"{root}/autorater-inputs/") and staged[2]["image"].startswith(root)


def _gecko_candidates(tmp_path: Path, root: str) -> tuple[list[dict], list[Path], str]:
    """Quickstart prompts with two image candidates per row (columns ``img_a``/``img_b``, relative paths; the same
    image in both columns across rows), ``img_b`` of row 1 relative, of row 3 missing; params with ``response_columns``."""
    quickstart = REPO / "examples/gecko_quickstart"
    originals = [json.loads(line) for line in (quickstart / "dataset.jsonl").read_text().splitlines()]
    images = [quickstart / r["image"] for r in originals]
    rows = [
        {"id": r["id"], "prompt": r["prompt"], "img_a": str(images[i]), "img_b": str(images[(i + 1) % len(images)])}
        for i, r in enumerate(originals)
    ]
    (tmp_path / "b_copy.png").write_bytes(images[1].read_bytes())
    rows[0]["img_b"] = "b_copy.png"  # relative to the dataset's folder, as media_column's paths
    rows[2]["img_b"] = "missing_b.png"
    dataset = tmp_path / "candidates.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = json.loads((quickstart / "params.json").read_text())
    del params["media_column"]
    for key in ("rubric_generation_model", "validator_model"):
        params[key] = "replay/" + str(REPO / params[key].removeprefix("replay/"))
    params.update(evaluation_dataset=str(dataset), response_columns={"model_a": "img_a", "model_b": "img_b"})
    return rows, images, _write(tmp_path, params)


def test_submit_uploads_the_local_media_of_every_candidate_column(vertex, bucket, tmp_path, capsys):
    """Gecko image candidates (``response_columns``): each column's local files are uploaded like media_column's."""
    blobs, root = bucket
    rows, images, params_path = _gecko_candidates(tmp_path, root)
    assert _submit("gecko", "--params", params_path, "--pipeline-root", root) == 0
    out = capsys.readouterr().out
    [call] = vertex
    values = call["job"].runtime_config.parameter_values
    staged = [json.loads(line) for line in _object(blobs, values["evaluation_dataset"]).decode().splitlines()]
    assert [r["id"] for r in staged] == [r["id"] for r in rows]
    expected = {"img_a": images, "img_b": [tmp_path / "b_copy.png", images[2], None]}
    for column, files in expected.items():
        for row, image in zip(staged, files, strict=True):
            if image is None:
                continue
            assert row[column] == _staged_uri(root, image)
            assert _object(blobs, row[column]) == image.read_bytes()
    assert staged[2]["img_b"] == "missing_b.png"  # left as it is: that candidate's row becomes an error row
    assert dict(values["response_columns"]) == {"model_a": "img_a", "model_b": "img_b"}
    for column in ("img_a", "img_b"):
        assert f"uploaded evaluation_dataset (candidates.jsonl, column {column!r}) " in out
    assert out.count(f"-> {_staged_uri(root, images[2])}") == 1  # one image in both columns: uploaded once
    assert re.search(
        rf"warning: {re.escape(str(tmp_path))}/candidates\.jsonl line 3, column 'img_b': media file "
        rf"'{re.escape(str(tmp_path))}/missing_b\.png' cannot be read \(No such file or directory\)",
        out,
    ), out


def test_no_upload_lists_every_candidate_column_s_local_media(vertex, bucket, tmp_path, capsys):
    blobs, root = bucket
    _, images, params_path = _gecko_candidates(tmp_path, root)
    assert _submit("gecko", "--params", params_path, "--pipeline-root", root, "--no-upload") == 2 and vertex == []
    err = capsys.readouterr().err
    for image in [*images, tmp_path / "b_copy.png"]:  # img_a's three images, img_b's own file
        assert f"gcloud storage cp {image} {root}/autorater-inputs/  # evaluation_dataset (candidates.jsonl" in err
    assert list(blobs.list_blobs(prefix=root.split("/", 3)[3])) == []


def test_an_arena_s_response_columns_hold_text_and_its_dataset_is_uploaded_unchanged(bucket, tmp_path, capsys):
    blobs, root = bucket
    dataset = tmp_path / "arena.jsonl"
    dataset.write_text(
        "".join(json.dumps({"id": i, "q": f"Q{i}?", "a": f"answer{i}.png", "b": f"b{i}"}) + "\n" for i in range(3))
    )
    params = {**MEANINGFUL["arena"], "evaluation_dataset": str(dataset), "id_columns": ["id"]}
    code, spec, err = _dry_run(capsys, "arena", "--params", _write(tmp_path, params), "--pipeline-root", root)
    assert code == 0, err
    assert spec["runtimeConfig"]["parameterValues"]["evaluation_dataset"] == _staged_uri(root, dataset)
    assert "(arena.jsonl, column" not in err and "warning:" not in err  # the text "answer0.png" is no media path


def test_a_local_dataset_named_like_a_wildcard_is_uploaded_as_that_file(bucket, tmp_path, capsys):
    blobs, root = bucket
    dataset = tmp_path / "d[1].jsonl"
    dataset.write_bytes((REPO / "examples/quickstart/dataset.jsonl").read_bytes())
    params = json.loads((REPO / "examples/quickstart/params.json").read_text())
    params["autorater_model"] = "replay/" + str(REPO / params["autorater_model"].removeprefix("replay/"))
    code, spec, err = _dry_run(
        capsys,
        "autosxs",
        "--params",
        _write(tmp_path, {**params, "evaluation_dataset": str(dataset)}),
        "--pipeline-root",
        root,
    )
    assert code == 0, err
    assert spec["runtimeConfig"]["parameterValues"]["evaluation_dataset"] == _staged_uri(root, dataset)


def test_dry_run_shows_the_rewritten_parameters_and_uploads_nothing(bucket, monkeypatch, capsys):
    blobs, root = bucket
    monkeypatch.chdir(REPO)
    code, spec, err = _dry_run(
        capsys, "autosxs", "--params", "examples/quickstart/params.json", "--pipeline-root", root
    )
    assert code == 0, err
    dataset = REPO / "examples/quickstart/dataset.jsonl"
    assert spec["runtimeConfig"]["parameterValues"]["evaluation_dataset"] == _staged_uri(root, dataset)
    assert f"would upload evaluation_dataset examples/quickstart/dataset.jsonl -> {_staged_uri(root, dataset)}" in err
    assert list(blobs.list_blobs(prefix=root.split("/", 3)[3])) == []


def test_no_upload_refuses_local_files_with_the_upload_commands(vertex, bucket, monkeypatch, capsys):
    blobs, root = bucket
    monkeypatch.chdir(REPO)
    code = _submit("autosxs", "--params", "examples/quickstart/params.json", "--pipeline-root", root, "--no-upload")
    assert code == 2 and vertex == []
    err = capsys.readouterr().err
    assert "local files cannot be read by steps on Vertex AI" in err
    assert f"gcloud storage cp examples/quickstart/dataset.jsonl {root}/autorater-inputs/  # evaluation_dataset" in err
    assert f"gcloud storage cp examples/quickstart/replay.jsonl {root}/autorater-inputs/  # autorater_model" in err
    assert list(blobs.list_blobs(prefix=root.split("/", 3)[3])) == []


def test_a_missing_local_file_is_refused_naming_the_parameter(tmp_path, capsys):
    params = {**json.loads((DOCS / "compare_predictions.json").read_text()), "evaluation_dataset": "data/x.jsonl"}
    code, _, err = _dry_run(capsys, "autosxs", "--params", _write(tmp_path, params))
    assert code == 2
    assert "evaluation_dataset: data/x.jsonl: file not found (resolved to " in err


def test_dry_run_of_an_artifact_registry_template_checks_the_local_package_and_says_so(capsys):
    url = f"https://us-central1-kfp.pkg.dev/my-project/templates/autosxs-template/sha256:{'ab12' * 16}"
    code, spec, err = _dry_run(capsys, "autosxs", "--params", str(DOCS / "compare_models.json"), "--template", url)
    assert code == 0
    assert spec["templateUri"] == url
    assert "parameters checked against the local" in err and "same package 'autosxs-template'" in err
    assert (
        "the remote template is not downloaded in --dry-run" in err and "Vertex AI validates it at submit time" in err
    )
    params = {**json.loads((DOCS / "compare_models.json").read_text()), "id_columns": "question_id"}
    code, _, err = _dry_run(capsys, "autosxs", "--params", _write_tmp(params), "--template", url)
    assert code == 2 and "'id_columns' expects LIST" in err


def test_dry_run_of_an_unknown_remote_package_is_not_validated_and_says_so(capsys):
    url = "https://us-central1-kfp.pkg.dev/my-project/templates/other-template/latest"
    code, spec, err = _dry_run(capsys, "autosxs", "--params", str(DOCS / "compare_models.json"), "--template", url)
    assert code == 0
    assert "parameters NOT validated" in err and "Vertex AI validates it at submit time" in err
    assert spec["templateUri"] == url
    assert spec["runtimeConfig"]["parameterValues"]["model_a"].startswith("publishers/google/models/")


def _write_tmp(params: dict) -> str:
    import tempfile

    handle = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    with handle:
        json.dump(params, handle)
    return handle.name


# --- the submit path: real PipelineJob, real validation; only the credentials and the API call are stand-ins ---


@pytest.fixture
def vertex(monkeypatch):
    """Anonymous credentials as ADC, and ``PipelineJob.submit`` recording instead of calling the API."""
    import google.auth
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import aiplatform
    from google.cloud.aiplatform import initializer

    monkeypatch.setattr(initializer.global_config, "_credentials", None)
    monkeypatch.setattr(google.auth, "default", lambda *a, **k: (AnonymousCredentials(), "my-project"))
    submitted = []

    def submit(self, service_account=None, network=None, **kwargs):
        submitted.append({"job": self, "service_account": service_account})

    monkeypatch.setattr(aiplatform.PipelineJob, "submit", submit)
    monkeypatch.setattr(
        aiplatform.PipelineJob, "resource_name", property(lambda self: f"projects/p/pipelineJobs/{self.job_id}")
    )
    return submitted


def test_submit_builds_the_job_with_adc_and_prints_the_console_url(vertex, capsys):
    code = _submit(
        "autosxs",
        "--params",
        str(DOCS / "compare_predictions.json"),
        "--service-account",
        "sa@p.iam.gserviceaccount.com",
    )
    out = capsys.readouterr().out
    assert code == 0
    [call] = vertex
    job = call["job"]
    assert call["service_account"] == "sa@p.iam.gserviceaccount.com"
    assert job.project == "my-project" and job.location == "us-central1"
    values = job.runtime_config.parameter_values
    assert values["response_column_a"] == "response_a"
    assert list(values["id_columns"]) == ["id", "document"]
    url = f"https://console.cloud.google.com/vertex-ai/locations/us-central1/pipelines/runs/{job.job_id}?project=my-project"
    assert f"console: {url}" in out


def test_submit_validates_before_creating_anything(vertex, tmp_path, capsys):
    params = {**json.loads((DOCS / "compare_predictions.json").read_text()), "task": ["summarization"]}
    assert _submit("autosxs", "--params", _write(tmp_path, params)) == 2
    assert "'task' expects STRING (a JSON string), received an array: ['summarization']" in capsys.readouterr().err
    assert vertex == []


def test_submit_without_credentials_says_how_to_get_them(monkeypatch, capsys):
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError
    from google.cloud.aiplatform import initializer

    def no_adc(*args, **kwargs):
        raise DefaultCredentialsError("Your default credentials were not found.")

    monkeypatch.setattr(initializer.global_config, "_credentials", None)
    monkeypatch.setattr(google.auth, "default", no_adc)
    assert _submit("autosxs", "--params", str(DOCS / "compare_predictions.json")) == 1
    assert "gcloud auth application-default login" in capsys.readouterr().err


def test_submit_downloads_and_validates_a_registry_template(vertex, registry, tmp_path, capsys):
    from kfp.registry import RegistryClient

    package, version = RegistryClient(host=registry.host).upload_pipeline(
        str(_compiled_with_real_image() / "autosxs.yaml"), tags=["0.1.0", "latest"]
    )
    for ref in (version, "latest"):
        code = _submit(
            "autosxs",
            "--params",
            str(DOCS / "compare_predictions.json"),
            "--template",
            f"{registry.host}/{package}/{ref}",
        )
        assert code == 0, capsys.readouterr().err
    assert "pin a sha256: version" in capsys.readouterr().err
    assert len(vertex) == 2
    bad = {**json.loads((DOCS / "compare_predictions.json").read_text()), "id_columns": "id"}
    code = _submit("autosxs", "--params", _write(tmp_path, bad), "--template", f"{registry.host}/{package}/latest")
    assert code == 2 and "'id_columns' expects LIST" in capsys.readouterr().err
    code = _submit(
        "autosxs", "--params", str(DOCS / "compare_predictions.json"), "--template", f"{registry.host}/{package}/nope"
    )
    assert code == 1
    assert f"could not download template {registry.host}/{package}/nope: HTTP 404" in capsys.readouterr().err
    assert len(vertex) == 2


@pytest.mark.parametrize("where", ["file", "below_a_file"])
def test_dry_run_refuses_a_local_cache_dir_that_cannot_hold_the_cache(where, tmp_path, capsys):
    """An unusable cache_dir was accepted and the run then went without its cache, warning only in a step log."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    cache_dir = afile if where == "file" else afile / "cache"
    params = json.loads((DOCS / "compare_predictions.json").read_text())
    params["autorater_parameters"] = {"cache_dir": str(cache_dir)}
    code, _, err = _dry_run(capsys, "autosxs", "--params", _write(tmp_path, params))
    assert code == 2
    problem = "exists and is not a directory" if where == "file" else f"cannot be created: {afile} is not a directory"
    assert err.strip() == (
        f"error: autorater_parameters: cache_dir '{cache_dir}' {problem}; "
        'the response cache needs a writable directory (or "off")'
    ), err


def test_dry_run_leaves_a_cloud_storage_cache_dir_to_the_step_and_says_so(tmp_path, capsys):
    params = {**json.loads((DOCS / "compare_predictions.json").read_text())}
    params["autorater_parameters"] = {**params.get("autorater_parameters", {}), "cache_dir": "gs://b/cache"}
    code, spec, err = _dry_run(capsys, "autosxs", "--params", _write(tmp_path, params))
    assert code == 0, err
    assert spec is not None
    assert "autorater_parameters cache_dir gs://b/cache not checked from here" in err


def test_a_params_file_with_a_utf8_byte_order_mark_is_read_as_datasets_are(tmp_path, capsys):
    path = tmp_path / "params.json"
    path.write_bytes(b"\xef\xbb\xbf" + (DOCS / "compare_predictions.json").read_bytes())
    code, spec, err = _dry_run(capsys, "autosxs", "--params", str(path))
    assert code == 0, err
    assert spec is not None and json.dumps(spec).count("summarization") >= 1


def _translation_with_few_shot_dataset(tmp_path: Path, dataset: str) -> str:
    params = json.loads((REPO / "examples/autosxs_docs/custom_task_translation.json").read_text())
    params["evaluation_dataset"] = str(REPO / params["evaluation_dataset"])
    params["experimental_args"]["custom_task_definition"]["few_shot_examples_config"]["dataset"] = dataset
    return _write(tmp_path, params)


def test_a_dry_run_reads_no_cloud_few_shot_dataset_and_says_the_first_step_checks_it(tmp_path, capsys):
    # No Cloud Storage answers here (no emulator, no credentials): a read would fail the dry run.
    code, spec, err = _dry_run(
        capsys, "autosxs", "--params", _translation_with_few_shot_dataset(tmp_path, "gs://my-bucket/shots.jsonl")
    )
    assert code == 0, err
    assert (
        "few_shot_examples_config.dataset gs://my-bucket/shots.jsonl not read from here: its rows are checked by the pipeline's first step"
        in err
    )
    config = spec["runtimeConfig"]["parameterValues"]["experimental_args"]["custom_task_definition"]
    assert config["few_shot_examples_config"]["dataset"] == "gs://my-bucket/shots.jsonl"


def test_a_dry_run_still_refuses_a_malformed_few_shot_uri(tmp_path, capsys):
    code, _, err = _dry_run(
        capsys, "autosxs", "--params", _translation_with_few_shot_dataset(tmp_path, "gs://My Bucket/shots.jsonl")
    )
    assert code == 2
    assert re.search(
        r"few_shot_examples_config\.dataset: gs://My Bucket/shots\.jsonl: invalid bucket name 'My Bucket'", err
    ), err
