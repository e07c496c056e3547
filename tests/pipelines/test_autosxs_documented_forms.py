"""Every documented parameter form is accepted alike by ``autorater run``, ``autorater submit --dry-run`` and the
pipeline's first step, and the forms the documentation's own sets do not show run end to end.

``tests/pipelines/test_autosxs_documented.py`` runs the documentation's sets as written (``examples/autosxs_docs``)
and checks that its slips are refused by run and submit with the same message. Here each form the AutoSxS
documentation and Google's sample notebooks describe, but that those sets do not exercise (a task without a version
or with one, a custom task without a version or with an A/B/SAME rubric, Gemini ``contents`` alone, bare-string
prompt parameters, ``response_column_a: "predictions"``, GCPC's ``maxOutputTokens``/``topP`` model parameters,
every human preference spelling, a Model Registry model with a version, several id columns), goes through:

- ``autorater run``'s check (:func:`autorater_pipelines.commands.run.check_run`: what runs before the pipeline);
- ``autorater submit --dry-run`` on a template compiled with a pushed image's name;
- the first pipeline step as the KFP component calls it (the template's defaults, ``project``/``location``
  resolved to the job's as Vertex AI does).

All three must accept, and agree on the number of examples. Two combined sets run to the end in the KFP local
runner against the Gemini emulator.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from autorater_pipelines.cli import main
from autorater_pipelines.commands.run import check_run
from autorater_pipelines.errors import InputError
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "examples" / "autosxs_docs"
TEMPLATE = REPO / "compiled" / "autosxs.yaml"
REAL_IMAGE = "us-central1-docker.pkg.dev/my-project/autorater/autorater-pipelines:abc1234"
JOB = {"project": "my-project", "location": "us-central1"}
# Every spelling of a human preference the documentation and the notebooks use, with what it means.
PREFERENCES = {
    "Model B": "B",
    "model_a": "A",
    "b": "B",
    "tie": "TIE",
    "MODEL A": "A",
    "B": "B",
    "a": "A",
    "Tie": "TIE",
}
GCPC_MODEL_PARAMETERS = {"temperature": "0.2", "maxOutputTokens": "256", "topP": "0.95"}
AB_SAME_RUBRIC = {"A": "Response A is better.", "B": "Response B is better.", "SAME": "Both are equally good."}


def _doc(name: str) -> dict[str, Any]:
    return json.loads((DOCS / f"{name}.json").read_text())


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _preference_dataset(where: Path) -> str:
    """The 'Check alignment' rows twice, each with one spelling of :data:`PREFERENCES` (ids made unique)."""
    base = _read_jsonl(DOCS / "check_alignment.jsonl")
    rows = []
    for i, value in enumerate(PREFERENCES):
        row = dict(base[i % len(base)])
        row["my_context"] = f"{row['my_context']} (copy {i})"
        row["actual"] = value
        rows.append(row)
    path = where / "preferences.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _custom(task: str, *, pointwise: bool) -> dict[str, Any]:
    params = _doc("custom_task_translation")
    params["task"] = task
    if not pointwise:
        definition = params["experimental_args"]["custom_task_definition"]
        definition["score_rubric"] = dict(AB_SAME_RUBRIC)
        for key in ("response_a_score_column", "response_b_score_column"):
            del definition["few_shot_examples_config"][key]
    return params


def _forms(where: Path) -> dict[str, dict[str, Any]]:
    """Documented forms the documentation's sets leave out, each on top of one of those sets."""
    forms = {
        "custom_without_version": _custom("custom", pointwise=True),
        "custom_ab_same_rubric_with_few_shots": _custom("custom@latest", pointwise=False),
        "gemini_contents_alone_bare_string": {
            **_doc("gemini_contents"),
            "model_a_prompt_parameters": {"contents": "context"},
        },
        "text_prompt_bare_string_predictions": {
            **_doc("docs_dataset_model_a_generated"),
            "model_a_prompt_parameters": {"prompt": "question"},
            "response_column_a": "predictions",
        },
        "autorater_bare_strings": {
            **_doc("rest_body"),
            "autorater_prompt_parameters": {"inference_instruction": "question", "inference_context": "context"},
        },
        "versions_and_gcpc_model_parameters": {
            **_doc("rest_body"),
            "task": "question_answering@latest",
            "model_a_parameters": GCPC_MODEL_PARAMETERS,
        },
        "summarization_001": {**_doc("text_prompt_default_instruction"), "task": "summarization@001"},
        "human_preference_spellings": {**_doc("check_alignment"), "evaluation_dataset": _preference_dataset(where)},
        "model_registry_version": {
            **_doc("compare_models"),
            "model_b": "projects/abc/locations/abc/models/tuned_bison@1",
        },
        "two_id_columns": {**_doc("compare_predictions"), "id_columns": ["my_context", "my_question"]},
    }
    forms.update(_combined(where))
    return forms


def _combined(where: Path) -> dict[str, dict[str, Any]]:
    """Two sets mixing the forms above, which :func:`test_combined_forms_run_end_to_end` runs."""
    qa = {
        **_doc("check_alignment"),
        "evaluation_dataset": _preference_dataset(where),
        "task": "question_answering@latest",
        "autorater_prompt_parameters": {"inference_instruction": "my_question", "inference_context": "my_context"},
        # model A is set, but response_column_a is a dataset column: read from the dataset, not generated
        "model_a": "publishers/google/models/text-bison@002",
        "model_a_prompt_parameters": {"prompt": "my_question"},
        "response_column_b": "",
        "model_b": "publishers/google/models/gemini-2.0-flash-001",
        "model_b_prompt_parameters": {"contents": "my_question"},
        "model_b_parameters": GCPC_MODEL_PARAMETERS,
    }
    custom = _custom("custom", pointwise=False)
    custom.update(
        model_a="publishers/google/models/text-bison@002",
        model_a_prompt_parameters={"prompt": "content"},
        response_column_a="predictions",
    )
    return {"combined_qa": qa, "combined_custom": custom}


@functools.cache
def _template_with_real_image() -> str:
    from autorater_pipelines.pipelines import compile_pipelines

    directory = Path(tempfile.mkdtemp(prefix="documented-forms-templates-"))
    compile_pipelines(str(directory), image=REAL_IMAGE)
    return str(directory / "autosxs.yaml")


def _submit_dry_run(path: Path) -> int:
    return main(
        [
            "submit",
            "autosxs",
            "--params",
            str(path),
            "--project",
            JOB["project"],
            "--location",
            JOB["location"],
            "--pipeline-root",
            "gs://my-bucket/root",
            "--template",
            _template_with_real_image(),
            "--dry-run",
        ]
    )


def _first_step(params: dict[str, Any], where: Path) -> int:
    """The prepare component's function with what KFP passes it: template defaults, then the job's values."""
    from kfp.dsl import Dataset

    from autorater_pipelines.components.prepare_pairwise import prepare_pairwise_examples

    spec = next(yaml.safe_load_all(TEMPLATE.read_text()))
    inputs = spec["root"]["inputDefinitions"]["parameters"]
    values = {name: item["defaultValue"] for name, item in inputs.items() if "defaultValue" in item}
    values.update(JOB)  # Vertex AI resolves the project/location placeholders to the job's
    values.update(copy.deepcopy(params))
    step = prepare_pairwise_examples.python_func
    names = [n for n in inspect.signature(step).parameters if n != "prepared_examples"]
    out = where / "prepared_examples.jsonl"
    count, _, _ = step(**{n: values[n] for n in names}, prepared_examples=Dataset(uri=str(out)))
    assert len(_read_jsonl(out)) == count
    return count


FORMS = [
    "custom_without_version",
    "custom_ab_same_rubric_with_few_shots",
    "gemini_contents_alone_bare_string",
    "text_prompt_bare_string_predictions",
    "autorater_bare_strings",
    "versions_and_gcpc_model_parameters",
    "summarization_001",
    "human_preference_spellings",
    "model_registry_version",
    "two_id_columns",
    "combined_qa",
    "combined_custom",
]


def _responder(request):
    if request.response_schema:
        return length_judge(request)
    return f"{request.model} says: {request.prompt_text.strip().splitlines()[-1]}"


@pytest.fixture
def emulator(monkeypatch):
    """The Gemini emulator, where ``autorater run`` sends Vertex AI calls (the sets name no project)."""
    with ModelEmulator(responder=_responder) as server:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", server.url)
        yield server


@pytest.mark.parametrize("name", FORMS)
def test_a_documented_form_is_accepted_by_run_submit_and_the_first_step(name, emulator, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)  # the sets name their datasets relative to the repository root
    forms = _forms(tmp_path)
    assert sorted(forms) == sorted(FORMS)
    params = forms[name]
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    _, rows, _ = check_run("autosxs", str(path), str(TEMPLATE))
    code = _submit_dry_run(path)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert set(json.loads(captured.out)["runtimeConfig"]["parameterValues"]) == set(params)
    assert _first_step(params, tmp_path) == rows == len(_read_jsonl(Path(params["evaluation_dataset"])))
    assert emulator.call_count == 0  # checked, never called


@pytest.mark.pipeline
@pytest.mark.parametrize("name", ["combined_qa", "combined_custom"])
def test_combined_forms_run_end_to_end(name, emulator, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    params = _combined(tmp_path)[name]
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    out = tmp_path / "out"
    code = main(["run", "autosxs", "--params", str(path), "--output-dir", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    judgments = _read_jsonl(out / "judgments.jsonl")
    dataset = _read_jsonl(Path(params["evaluation_dataset"]))
    assert len(judgments) == len(dataset) and _read_jsonl(out / "error_messages.jsonl") == []
    generated = [r for r in emulator.requests if not r.response_schema]
    assert len(generated) == len(dataset)
    if name == "combined_qa":  # model B: Gemini, contents = the bare column, no system instruction; A from the data
        assert {r.model for r in generated} == {"gemini-2.0-flash-001"}
        assert sorted(r.prompt_text for r in generated) == sorted(row["my_question"] for row in dataset)
        assert all(not r.system_instruction for r in generated)
        assert [j["actual"] for j in judgments] == list(PREFERENCES.values())
        for j, row in zip(judgments, dataset, strict=True):
            assert j["response_b"] == f"gemini-2.0-flash-001 says: {row['my_question']}"
            assert j["response_a"] == row["response_a"]  # pre-generated: model A is never called
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["human_tie_count"] == 2
    else:  # model A: a text model, prompt = the bare column, its 'predictions' field judged; A/B/SAME rubric
        assert {r.model for r in generated} == {"text-bison@002"}
        for j, row in zip(judgments, dataset, strict=True):
            assert j["response_a"] == f"text-bison@002 says: {row['content'].strip().splitlines()[-1]}"
            assert j["choice"] in ("A", "B", "TIE") and "response_a_score" not in j
        judge = [r for r in emulator.requests if r.response_schema]
        assert all("## Worked examples" in r.prompt_text for r in judge)
        assert all(r.response_schema["properties"]["choice"]["enum"] == ["A", "B", "SAME"] for r in judge)


def test_an_explicit_empty_project_is_refused_alike(tmp_path, monkeypatch, capsys):
    """``"project": ""`` reaches the first step as "" (not the job's project): a Vertex AI autorater has no project
    there, so ``submit --dry-run`` refuses the set too, with the first step's and ``autorater run``'s message."""
    for key in ("GOOGLE_VERTEX_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(REPO)
    params = {**_doc("compare_predictions"), "project": ""}
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    message = "autorater_model: cannot choose how to call Gemini model 'gemini-2.5-flash': no Google Cloud project"
    with pytest.raises(InputError, match=f"^{message}") as run_error:
        check_run("autosxs", str(path), str(TEMPLATE))
    with pytest.raises(InputError) as step_error:
        _first_step(params, tmp_path)
    assert _submit_dry_run(path) == 2
    submit_err = capsys.readouterr().err
    assert str(step_error.value) == str(run_error.value)
    assert submit_err.strip() == f"error: {run_error.value}"
    # left out, the template's default is the job's project: accepted by submit and the first step
    del params["project"]
    path.write_text(json.dumps(params))
    assert _submit_dry_run(path) == 0 and _first_step(params, tmp_path) == 4
