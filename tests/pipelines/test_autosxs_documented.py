"""Every parameter set of Google's AutoSxS documentation runs as written, and its results are where Google's are.

The sets are in ``examples/autosxs_docs/`` (placeholders filled with the documentation's own example values).
Each runs with ``autorater run`` on the compiled template in the KFP local runner; every Vertex AI model of a
run (the autorater, model A, model B) reaches the Gemini emulator through ``GOOGLE_VERTEX_BASE_URL`` and the
Model Registry reaches its fake through ``AIPLATFORM_EMULATOR_HOST``, so the parameter files stay as
documented. ``autorater submit --dry-run`` accepts the same files, and refuses the documentation's slips written
literally with the line ``autorater run`` prints (other documented forms: ``test_autosxs_documented_forms.py``).
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge
from autorater_pipelines.testing.model_registry import FakeModelRegistry

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "examples" / "autosxs_docs"
DOCUMENTED = [
    "rest_body",
    "sdk_dict",
    "docs_dataset_model_a_generated",
    "gemini_contents",
    "text_prompt_default_instruction",
    "compare_models",
    "compare_predictions",
    "check_alignment",
]
QA_DEFAULT_INSTRUCTION = "Answer the question."
SUMMARIZATION_DEFAULT_INSTRUCTION = "Summarize the following text."
TUNED_MODEL = "projects/abc/locations/abc/models/tuned_bison"


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _responder(request):
    """Judge prompts (structured output): the length judge. Generation: the model's name and the prompt's last line."""
    if request.response_schema:
        return length_judge(request)
    return f"{request.model} says: {request.prompt_text.strip().splitlines()[-1]}"


@pytest.fixture
def vertex(monkeypatch):
    """The Gemini emulator and the fake Model Registry, with the environment that points every step at them."""
    with ModelEmulator(responder=_responder) as emulator, FakeModelRegistry(models=[TUNED_MODEL]) as registry:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", emulator.url)
        for name, value in registry.env.items():
            monkeypatch.setenv(name, value)
        yield emulator, registry


def _run(name: str, out: Path, *extra: str) -> int:
    return main(["run", "autosxs", "--params", f"examples/autosxs_docs/{name}.json", "--output-dir", str(out), *extra])


def _generation_requests(emulator, model: str) -> list:
    return [r for r in emulator.requests if r.model == model and not r.response_schema]


@pytest.mark.pipeline
@pytest.mark.parametrize("name", DOCUMENTED)
def test_documented_parameter_set_runs(name, vertex, tmp_path, monkeypatch, capsys):
    emulator, registry = vertex
    monkeypatch.chdir(REPO)  # the files name their datasets relative to the repository root
    params = json.loads((DOCS / f"{name}.json").read_text())
    assert _run(name, tmp_path / "out", "--quiet") == 0, capsys.readouterr().err
    out = tmp_path / "out"
    judgments = _read_jsonl(out / "judgments.jsonl")
    dataset = _read_jsonl(REPO / params["evaluation_dataset"])
    assert len(judgments) == len(dataset) == 4
    assert {j["choice"] for j in judgments} <= {"A", "B", "TIE"}
    assert _read_jsonl(out / "error_messages.jsonl") == []
    judge_requests = [r for r in emulator.requests if r.response_schema]
    assert len(judge_requests) == 8 and {r.model for r in judge_requests} == {"gemini-2.5-flash"}

    generated = {side: params.get(f"model_{side}") for side in "ab" if params.get(f"model_{side}")}
    for side, model in generated.items():
        requests = _generation_requests(emulator, model.rsplit("/", 1)[-1])
        assert len(requests) == 4, f"model {side} answered {len(requests)} prompts"
        by_prompt = {r.prompt_text: r for r in requests}
        for j in judgments:  # each judged response is the generated text of that row's prompt
            prompt = j[f"model_{side}_prompt"]
            assert j[f"response_{side}"] == f"{model.rsplit('/', 1)[-1]} says: {prompt.strip().splitlines()[-1]}"
            assert prompt in by_prompt
    if name == "rest_body":
        first = judgments[0]
        assert first["model_a_prompt"] == (
            "Answer the following question from the point of view of a college professor: "
            "What is the hardest material?\nSome might think that steel is the hardest material, or even "
            "titanium. However, diamond is actually the hardest material. }"
        )
        assert first["inference_instruction"] == "Answer the following question: What is the hardest material? }."
    if name == "sdk_dict":
        assert json.loads((out / "judgments.json").read_text()) == judgments
    if name == "gemini_contents":
        (request,) = [r for r in _generation_requests(emulator, "gemini-2.0-flash-001") if "diamond" in r.prompt_text]
        assert request.system_instruction == QA_DEFAULT_INSTRUCTION
        assert request.prompt_text == dataset[0]["context"]
    if name == "text_prompt_default_instruction":
        assert judgments[0]["model_a_prompt"] == f"{SUMMARIZATION_DEFAULT_INSTRUCTION}: {dataset[0]['context']}"
        assert judgments[0]["inference_instruction"] == SUMMARIZATION_DEFAULT_INSTRUCTION
    if name == "compare_models":
        metrics = json.loads((out / "metrics.json").read_text())
        (imported,) = registry.imports
        assert imported.parent == TUNED_MODEL
        assert imported.metrics["modelWinRate"] == metrics["autorater_model_b_win_rate"]
        assert imported.metrics["baselineModelWinRate"] == metrics["autorater_model_a_win_rate"]
        # The judgments as the run left them, not the step's artifact in the deleted staging folder.
        assert imported.evaluation["metadata"]["row_based_metrics_path"] == str(tmp_path / "out" / "judgments.jsonl")
        written = json.loads((out / "model_evaluations.json").read_text())
        assert written == {"b": {"model": TUNED_MODEL, "resource_name": imported.name, "error": None}}
        assert f"ModelEvaluation of model B: {imported.name}" in capsys.readouterr().out
    else:
        assert registry.imports == []
    if name == "check_alignment":
        metrics = json.loads((out / "metrics.json").read_text())
        # Worked out by hand: the longer response wins; humans said Model A, model_b, A, TIE.
        assert [j["choice"] for j in judgments] == ["A", "B", "A", "B"]
        assert [j["actual"] for j in judgments] == ["A", "B", "A", "TIE"]
        assert (metrics["alignment_count"], metrics["human_tie_count"], metrics["accuracy"]) == (3, 1, 1.0)
        assert (metrics["true_positive_count"], metrics["true_negative_count"]) == (2, 1)


REAL_IMAGE = "us-central1-docker.pkg.dev/my-project/autorater/autorater-pipelines:abc1234"


@functools.cache
def _template_with_real_image() -> Path:
    from autorater_pipelines.pipelines import compile_pipelines

    directory = Path(tempfile.mkdtemp(prefix="documented-templates-"))
    compile_pipelines(str(directory), image=REAL_IMAGE)
    return directory / "autosxs.yaml"


def _submit_dry_run(params: Path | str) -> int:
    """``autorater submit autosxs --dry-run`` of a parameters file, on the template compiled with a real image."""
    return main(
        [
            "submit",
            "autosxs",
            "--params",
            str(params),
            "--project",
            "my-project",
            "--location",
            "us-central1",
            "--pipeline-root",
            "gs://my-bucket/root",
            "--template",
            str(_template_with_real_image()),
            "--dry-run",
        ]
    )


@pytest.mark.parametrize("name", [*DOCUMENTED, "custom_task_translation"])
def test_submit_dry_run_accepts_each_documented_set(name, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    code = _submit_dry_run(f"examples/autosxs_docs/{name}.json")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    spec = json.loads(captured.out)
    values = spec["runtimeConfig"]["parameterValues"]
    params = json.loads((DOCS / f"{name}.json").read_text())
    assert set(values) == set(params)
    assert values["evaluation_dataset"].startswith("gs://my-bucket/root/autorater-inputs/")
    if "experimental_args" in params:  # the few-shot dataset is a local file too: staged beside the dataset
        few_shot = values["experimental_args"]["custom_task_definition"]["few_shot_examples_config"]
        assert few_shot["dataset"].startswith("gs://my-bucket/root/autorater-inputs/")


@pytest.mark.pipeline
def test_results_read_the_way_google_notebooks_read_them(vertex, tmp_path, monkeypatch, capsys):
    """Task ``online-evaluation-pairwise`` → ``judgments`` (one JSONL file, ``pandas.read_json(lines=True)``);
    task ``model-evaluation-text-generation-pairwise`` → ``autosxs_metrics`` metadata and the evaluation paths."""
    emulator, registry = vertex
    monkeypatch.chdir(REPO)
    out = tmp_path / "out"
    assert _run("compare_models", out, "--quiet", "--keep-pipeline-root") == 0, capsys.readouterr().err
    (run_dir,) = (out / "pipeline_root").iterdir()

    def task_outputs(task_name: str) -> dict:
        return json.loads((run_dir / task_name / "executor_output.json").read_text())

    autorater = task_outputs("online-evaluation-pairwise")
    judgments_uri = autorater["artifacts"]["judgments"]["artifacts"][0]["uri"]
    judgments_df = pd.read_json(judgments_uri, lines=True)
    assert {"response_a", "response_b", "choice", "confidence", "explanation"} <= set(judgments_df.columns)
    assert len(judgments_df) == 4
    errors_df_uri = autorater["artifacts"]["error_messages"]["artifacts"][0]["uri"]
    assert Path(errors_df_uri).read_text() == ""
    assert autorater["parameterValues"]["judgments_uri"] == judgments_uri

    metrics_task = task_outputs("model-evaluation-text-generation-pairwise")
    win_rate_metrics = metrics_task["artifacts"]["autosxs_metrics"]["artifacts"][0]["metadata"]
    choices = list(judgments_df["choice"])
    judged = [c for c in choices if c != "ERROR"]
    assert win_rate_metrics["autosxs_model_a_win_rate"] == pytest.approx(judged.count("A") / len(judged))
    assert win_rate_metrics["autosxs_model_b_win_rate"] == pytest.approx(judged.count("B") / len(judged))
    assert win_rate_metrics["autorater_model_a_win_rate"] == win_rate_metrics["autosxs_model_a_win_rate"]
    (imported,) = registry.imports
    assert metrics_task["parameterValues"]["model_b_evaluation_path"] == imported.name
    assert metrics_task["parameterValues"]["model_a_evaluation_path"] == ""  # a publisher model: no evaluation


@pytest.mark.pipeline
def test_custom_task_in_google_sample_form_with_score_rubric_and_few_shot_examples(
    vertex, tmp_path, monkeypatch, capsys
):
    """Google's custom-task notebook: task custom@001, bare-string prompt parameters, criteria with step lists and
    step mappings, a 1-5 score_rubric and few_shot_examples_config; the judge prompt the emulator received
    holds the worked examples."""
    emulator, _ = vertex
    monkeypatch.chdir(REPO)
    out = tmp_path / "out"
    assert _run("custom_task_translation", out, "--quiet") == 0, capsys.readouterr().err
    judgments = _read_jsonl(out / "judgments.jsonl")
    # Worked out by hand: the longer translation scores 5, the shorter 2 (rows 1 and 3: A; row 2: B).
    assert [(j["choice"], j["response_a_score"], j["response_b_score"]) for j in judgments] == [
        ("A", 5.0, 2.0),
        ("B", 2.0, 5.0),
        ("A", 5.0, 2.0),
    ]
    shots = _read_jsonl(DOCS / "translation_few_shots.jsonl")
    assert len(emulator.requests) == 6
    for request in emulator.requests:
        text = request.prompt_text
        assert "## Worked examples" in text and "Score each response on its own, on a scale from 1 to 5" in text
        for shot in shots:
            assert shot["explanation"] in text and shot["response_a"] in text
        assert '"response_a_score": 2, "response_b_score": 4}' in text  # the first example's scores
        assert request.response_schema["properties"]["response_b_score"]["minimum"] == 1
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["autorater_model_a_win_rate"], metrics["autorater_model_b_win_rate"]) == (2 / 3, 1 / 3)


@pytest.mark.pipeline
def test_a_prompt_longer_than_the_autorater_context_is_an_error_row(vertex, tmp_path, monkeypatch, capsys):
    """The autorater's own context limit (the emulator's max_input_tokens) and max_input_tokens: error rows that
    say so, never a silent truncation; the other rows are judged."""
    emulator, _ = vertex
    emulator.max_input_tokens = 3000  # the model's own limit, in words as the emulator counts tokens
    rows = _read_jsonl(DOCS / "compare_predictions.jsonl")
    rows[1]["my_context"] = "word " * 4000  # ~24,000 characters: sent (under max_input_tokens), refused by the model
    rows[2]["my_context"] = "x" * 40000  # over max_input_tokens at 6 characters per token: refused before sending
    data = tmp_path / "long.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = json.loads((DOCS / "compare_predictions.json").read_text())
    params.update(evaluation_dataset=str(data), autorater_parameters={"max_input_tokens": 5000, "sampling_count": 1})
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    code = main(["run", "autosxs", "--params", str(path), "--output-dir", str(tmp_path / "out"), "--quiet"])
    assert code == 1  # 2 of 4 rows failed: more than --max-failed-share
    judgments = _read_jsonl(tmp_path / "out" / "judgments.jsonl")
    assert [j["choice"] for j in judgments][0::3] == ["A", "B"]
    for j in judgments[1:3]:
        assert j["choice"] == "ERROR"
        assert "the prompt is longer than the model's context window" in j["explanation"], j["explanation"]
    assert "for a window of 5000 tokens" in judgments[2]["explanation"]  # our check, before any call
    assert "exceeds the maximum number of tokens allowed (3000)" in judgments[1]["explanation"]  # the model's
    errors = _read_jsonl(tmp_path / "out" / "error_messages.jsonl")
    assert [e["my_context"] for e in errors] == [rows[1]["my_context"], rows[2]["my_context"]]
    assert all("context window" in e["error"] for e in errors)
    assert sum(len(r.prompt_text) > 20000 for r in emulator.requests) == 1  # the 40,000-character row was never sent


def test_a_bad_few_shot_row_stops_the_run_before_any_model_call(vertex, tmp_path, monkeypatch, capsys):
    emulator, _ = vertex
    monkeypatch.chdir(REPO)
    shots = _read_jsonl(DOCS / "translation_few_shots.jsonl")
    shots[1]["response_b_score"] = 6  # off the 1-5 scale
    bad = tmp_path / "shots.jsonl"
    bad.write_text("".join(json.dumps(s) + "\n" for s in shots))
    params = json.loads((DOCS / "custom_task_translation.json").read_text())
    params["experimental_args"]["custom_task_definition"]["few_shot_examples_config"]["dataset"] = str(bad)
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    code = main(["run", "autosxs", "--params", str(path), "--output-dir", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{bad} line 2, column 'response_b_score': few-shot score 6 is not on the score_rubric's scale" in err
    assert "Traceback" not in err and emulator.call_count == 0 and not (tmp_path / "out").exists()


def _literal_mistakes(tmp_path: Path) -> dict[str, tuple[dict, str]]:
    """Parameter sets exactly as the documentation's text writes them where it slips, with what must be said."""
    rest = json.loads((DOCS / "rest_body.json").read_text())
    predictions = json.loads((DOCS / "compare_predictions.json").read_text())
    schema_only = tmp_path / "compare_predictions_schema.jsonl"  # the documented schema: no 'content' column
    schema_only.write_text(
        "".join(
            json.dumps({k: v for k, v in r.items() if k != "content"}) + "\n"
            for r in _read_jsonl(DOCS / "compare_predictions.jsonl")
        )
    )
    typo = json.loads((DOCS / "docs_dataset_model_a_generated.json").read_text())
    return {
        # the REST example's response shows id_columns ["context"]; rows 3 and 4 of its dataset share a context
        "rest_id_columns_context": (
            {**rest, "evaluation_dataset": str(DOCS / "qa_dataset.jsonl"), "id_columns": ["context"]},
            "duplicate",
        ),
        "compare_predictions_schema": (
            {**predictions, "evaluation_dataset": str(schema_only)},
            "response_column_a: column 'content' is not in evaluation_dataset",
        ),
        "response_column_typo": (
            {**typo, "evaluation_dataset": str(DOCS / "qa_dataset.jsonl"), "response_column_a": "contnet"},
            "response_column_a: 'contnet' is neither a column of evaluation_dataset (columns: ['id', 'question', "
            "'context', 'model_b_response']) nor a field of model A's output",
        ),
    }


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("name", ["rest_id_columns_context", "compare_predictions_schema", "response_column_typo"])
def test_sets_that_do_not_run_are_refused_before_any_model_call(name, vertex, tmp_path, capsys):
    """The documentation's slips, written literally, stop ``autorater run`` in its check, naming the problem, and
    ``autorater submit --dry-run`` refuses them with the same message (one check: ``validate_run``)."""
    emulator, _ = vertex
    params, message = _literal_mistakes(tmp_path)[name]
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    assert main(["run", "autosxs", "--params", str(path), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 2
    run_err = capsys.readouterr().err
    assert message in run_err and emulator.call_count == 0 and "Traceback" not in run_err
    assert len(_error_lines(run_err)) == 1, run_err

    assert _submit_dry_run(path) == 2
    submit = capsys.readouterr()
    assert submit.out == "" and "Traceback" not in submit.err  # no job spec printed
    assert _error_lines(submit.err) == _error_lines(run_err)
    assert emulator.call_count == 0


@pytest.mark.pipeline
def test_a_failed_model_evaluation_import_is_a_message_not_a_lost_run(vertex, tmp_path, monkeypatch, capsys):
    """'Compare models' with a Model Registry that refuses the import: the run finishes with its judgments and
    metrics, the evaluation name stays empty and the reason is printed and kept in model_evaluations.json."""
    emulator, registry = vertex
    monkeypatch.chdir(REPO)
    registry.fail_next(5, status=403, message="Permission 'aiplatform.modelEvaluations.import' denied")
    out = tmp_path / "out"
    assert _run("compare_models", out, "--quiet", "--keep-pipeline-root") == 0
    printed = capsys.readouterr().out
    assert registry.imports == []
    assert len(_read_jsonl(out / "judgments.jsonl")) == 4 and (out / "metrics.json").exists()
    written = json.loads((out / "model_evaluations.json").read_text())
    assert written["b"]["model"] == TUNED_MODEL and written["b"]["resource_name"] == ""
    assert "aiplatform.modelEvaluations.import" in written["b"]["error"]
    assert f"warning: no ModelEvaluation written to model B ({TUNED_MODEL}): {written['b']['error']}" in printed
    (run_dir,) = (out / "pipeline_root").iterdir()
    metrics_task = json.loads(
        (run_dir / "model-evaluation-text-generation-pairwise" / "executor_output.json").read_text()
    )
    assert metrics_task["parameterValues"]["model_b_evaluation_path"] == ""
