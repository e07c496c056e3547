"""``autorater run gecko``: the compiled template in the KFP local runner, end to end.

Pipeline runs are few on purpose (each costs 5–20 s): the quickstart example (replayed rubrics and answers),
the TIFA sample (replay, and the Gemini emulator reading the real JPEGs), one generated image row and one
generated video row through the emulator (with bad rows riding along), DSG TIFA160 (replay, 800 rows), and
one run of the template without the CLI's preflight. Bad parameters are caught by the preflight in-process.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.gecko import steps as gecko_steps
from autorater_pipelines.gecko.answer_matching import choice_label
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.gecko_script import scripted_gecko_model, tiny_png

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "gecko_quickstart"
OUTPUT_FILES = [
    "error_messages.jsonl",
    "metrics.json",
    "report.html",
    "results.jsonl",
    "rubrics.jsonl",
    "validations.jsonl",
]
EMULATED = {"cache_dir": "off", "progress": False, "initial_backoff_s": 0.05, "max_backoff_s": 0.2}
GCP = {"project": "test-project", "location": "us-central1"}


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(params: dict, tmp_path: Path, name: str = "out", *flags: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / name
    return main(["run", "gecko", "--params", str(params_path), "--output-dir", str(out), "--quiet", *flags]), out


def _outputs(out: Path) -> tuple[dict, dict, list[dict]]:
    """(results by first id value, metrics, error rows) of a finished run."""
    assert sorted(p.name for p in out.iterdir()) == [".autorater-outputs.json", *OUTPUT_FILES]
    results = _read_jsonl(out / "results.jsonl")
    metrics = json.loads((out / "metrics.json").read_text())
    errors = _read_jsonl(out / "error_messages.jsonl")
    assert metrics["evaluation_count"] == metrics["rows_scored"] + metrics["rows_unscored"]
    assert metrics["rows_scored"] == len(results)
    return {next(iter(r.values())): r for r in results}, metrics, errors


def _public_data():
    path = REPO / "examples" / "gecko_public_data.py"
    spec = importlib.util.spec_from_file_location("gecko_public_data_for_pipelines", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tifa(shared_data, tmp_path):
    public = _public_data()
    data = public.convert_tifa_sample(shared_data, tmp_path / "tifa")
    expected = json.loads((shared_data / "tifa-sample" / "sample_evaluation_result.json").read_text())
    return public, data, expected


def _check_tifa(results: dict, metrics: dict, expected: dict) -> None:
    assert {k: r["final_score"] for k, r in results.items()} == pytest.approx(expected["caption_scores"])
    assert sorted(r["final_score"] for r in results.values()) == [0.625, 1.0]
    assert metrics["mean_final_score"] == pytest.approx(expected["tifa_average"]) == pytest.approx(0.8125)
    assert metrics["accuracy_by_question_type"] == pytest.approx(expected["accuracy_by_type"])
    assert metrics["accuracy_by_question_type"]["counting"] == pytest.approx(1 / 3)
    assert metrics["questions_scored"] == 19 and metrics["parse_failures"] == 0


@pytest.mark.pipeline
def test_quickstart_from_relative_paths(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)  # README runs it from the repository root with relative paths
    out = tmp_path / "gecko"
    params = "examples/gecko_quickstart/params.json"
    assert main(["run", "gecko", "--params", params, "--output-dir", str(out), "--quiet"]) == 0
    results, metrics, errors = _outputs(out)
    # Worked out by hand from the replay files: 3 squares (asked 2), the triangle below the line (asked above).
    assert {k: r["final_score"] for k, r in results.items()} == pytest.approx(
        {"red-circle": 1.0, "two-squares": 0.75, "green-triangle": 0.8}
    )
    assert metrics["mean_final_score"] == pytest.approx(0.85)
    assert metrics["accuracy_by_question_type"] == pytest.approx(
        {"color": 1.0, "counting": 0.0, "object": 1.0, "other": 1.0, "shape": 1.0, "spatial": 0.0}
    )
    assert (metrics["rows_scored"], metrics["questions_scored"], metrics["parse_failures"]) == (3, 13, 0)
    assert metrics["keyword_coverage"] == pytest.approx(13 / 14) and errors == []  # "background" of row 2 unasked
    triangle = results["green-triangle"]
    assert triangle["keywords"] == "A {1}[green] {2}[triangle] {3}[above] a {4}[black] {5}[line]"
    spatial = next(q for q in triangle["qa_results"] if q["question_type"] == "spatial")
    assert (spatial["expected"], spatial["verdict"], spatial["score"]) == ("yes", "no", 0.0)
    rubric = _read_jsonl(out / "rubrics.jsonl")[0]
    assert Path(rubric["image"]) == QUICKSTART / "images" / "red_circle.png"  # resolved against the dataset file
    assert [q["question_id"] for q in rubric["qas"]] == ["q1", "q2", "q3", "q4"]
    validations = _read_jsonl(out / "validations.jsonl")
    assert validations[0]["answers"]["q1"][0]["verdict"] == "yes"
    page = (out / "report.html").read_text()
    # The page names OUT, not the staging folder the pipeline's report step read (deleted when the run ends).
    assert f"<title>Gecko report — {out}</title>" in page and f'<div class="meta">{out} · ' in page
    assert ".partial" not in page and "pipeline_root" not in page
    assert page.count('src="data:image/') == 3  # each row's local image is still embedded
    printed = capsys.readouterr().out
    assert "Gecko: 3 rows, 3 scored, 0 unscored" in printed
    # one line for the mean (metrics.json's mean_final_score = Vertex AI's mean_score), with its interval
    assert "mean final_score   0.8500  95% CI [0.5214, 1.0000]  (stdev 0.1323)  over 3 of 3 rows" in printed
    assert "mean_score" not in printed and "share of questions passed, by type:" in printed


@pytest.mark.pipeline
def test_vertex_sample_blog_example(tmp_path, monkeypatch, capsys):
    """Acceptance: the Vertex AI Gecko sample's coffee prompts with its template shapes and reply format."""
    monkeypatch.chdir(REPO)
    out = tmp_path / "blog"
    params = "examples/gecko_vertex/params.json"
    assert main(["run", "gecko", "--params", params, "--output-dir", str(out), "--quiet"]) == 0
    results, metrics, errors = _outputs(out)
    assert [r["final_score"] for r in results.values()] == [1.0, 0.5]
    assert metrics["mean_final_score"] == 0.75 and errors == []
    assert metrics["parse_failures"] == 0 and metrics["keyword_coverage"] == 1.0
    assert metrics["scoring_options"]["unparseable_answer_policy"] == "skip"
    toast = results["steaming cup of coffee and toast in a cafe"]
    assert [(q["question"], q["verdict"]) for q in toast["qa_results"]][2:] == [
        ("is there toast?", "no"),
        ("is this in a cafe?", "no"),
    ]
    validations = _read_jsonl(out / "validations.jsonl")
    assert validations[1]["raw_responses"][0]["text"].count("<question>\nQuestion: ") == 4
    printed = capsys.readouterr().out
    assert "mean final_score   0.7500" in printed and "parse failures 0" in printed


@pytest.mark.pipeline
def test_tifa_sample_replay_reproduces_the_published_scores(tifa, tmp_path):
    public, data, expected = tifa
    # questions_per_call and sampling_count reach the steps as floats (KFP struct): they must still work.
    code, out = _run(public.pipeline_params(data), tmp_path)
    assert code == 0
    results, metrics, errors = _outputs(out)
    _check_tifa(results, metrics, expected)
    assert errors == [] and metrics["rows_unscored"] == 0
    row = results["drawbench_52"]
    assert {"id", "keywords", "qa_results", "final_score"} <= set(row)
    assert len(row["qa_results"]) == 8 and {q["status"] for q in row["qa_results"]} == {"scored"}
    assert {q["question_type"] for q in row["qa_results"]} >= {"animal/human", "counting"}  # TIFA's types kept
    assert _read_jsonl(out / "validations.jsonl")[0]["validator"]["questions_per_call"] == 1


@pytest.mark.pipeline
def test_tifa_sample_through_the_gemini_emulator_with_the_real_images_and_bad_rows(tifa, tmp_path):
    _, data, expected = tifa
    details = expected["question_details"]
    rows = _read_jsonl(data.dataset)
    images = {Path(r["image"]).read_bytes(): r["id"] for r in rows}
    qas = {r["id"]: {q["question_id"]: q for q in r["rubric"]["qas"]} for r in rows}
    (tmp_path / "notes.txt").write_text("not an image")
    bad = [
        {**rows[0], "id": "bad-rubric", "rubric": "{'qas': not json"},
        {**rows[0], "id": "missing-file", "image": str(tmp_path / "missing.jpg")},
        {**rows[0], "id": "unknown-type", "image": str(tmp_path / "notes.txt")},
    ]
    dataset = _write_jsonl(tmp_path / "tifa_plus_bad.jsonl", rows + bad)

    def responder(request):
        ((mime, sent, uri),) = request.media
        assert (mime, uri) == ("image/jpeg", None)
        image_id = images[sent]  # which image is identified by the bytes the server received
        ids = re.findall(r"^\[(\w+)\]", request.prompt_text, flags=re.M)
        answers = []
        for qid in ids:
            qa = qas[image_id][qid]
            recorded = details[image_id][qa["question"]]["multiple_choice_vqa"]
            answers.append({"question_id": qid, "answer": choice_label(qa["choices"], qa["choices"].index(recorded))})
        return json.dumps({"answers": answers})

    with ModelEmulator(responder=responder) as emulator:
        params = {
            "evaluation_dataset": str(dataset),
            "id_columns": ["id"],
            "media_column": "image",
            "rubrics_column": "rubric",
            "validator_model": "gemini-2.5-flash",
            "validator_parameters": {**EMULATED, "base_url": emulator.url},
            **GCP,
        }
        code, out = _run(params, tmp_path, "out", "--max-failed-share", "1")
        assert code == 0
        assert emulator.call_count == 2  # all questions of a row in one call; bad rows make no call
        for request in emulator.requests:
            ((mime, sent, _),) = request.media
            assert request.protocol == "vertex" and mime == "image/jpeg"
            assert sent[:3] == b"\xff\xd8\xff" and sent in images
    results, metrics, errors = _outputs(out)
    _check_tifa(results, metrics, expected)
    assert {e["id"]: (e["stage"], e["error_kind"]) for e in errors} == {
        "bad-rubric": ("rubrics", "invalid_rubric"),
        "missing-file": ("media", "unreadable_media"),
        "unknown-type": ("media", "unknown_media_type"),
    }
    assert "not JSON" in next(e for e in errors if e["id"] == "bad-rubric")["error_message"]
    assert metrics["evaluation_count"] == 5 and metrics["unscored_rows_by_stage"] == {"media": 2, "rubrics": 1}


IMAGE_RUBRIC = {
    "keywords": "A {1}[red] {2}[bicycle] leaning on a {3}[wall]",
    "qas": [
        {"keyword_id": 1, "question": "Is the bicycle red?", "question_type": "color", "answer": "yes"},
        {"keyword_id": 2, "question": "Is there a bicycle?", "question_type": "vehicle", "answer": "yes"},
    ],
}


def generating_responder(request):
    """Rubric generator (structured output with a ``qas`` schema) and validator in one emulated model."""
    if "qas" in (request.response_schema or {}).get("properties", {}):
        assert request.media == []  # the generator sees the prompt only
    return _SCRIPTED(request)


_SCRIPTED = scripted_gecko_model(IMAGE_RUBRIC)


def _generation_params(dataset: Path, media_type: str, url: str, **validator: object) -> dict:
    return {
        "evaluation_dataset": str(dataset),
        "id_columns": ["uid"],
        "prompt_column": "prompt",
        "media_column": "media",
        "media_type": media_type,
        "rubric_generation_model": "gemini-2.5-flash",
        "rubric_generation_parameters": {**EMULATED, "base_url": url},
        "validator_model": "gemini-2.5-flash",
        "validator_parameters": {**EMULATED, "base_url": url, **validator},
        **GCP,
    }


@pytest.mark.pipeline
def test_generated_image_rubric_end_to_end_through_the_emulator_with_bad_rows(tmp_path):
    png = tiny_png()
    (tmp_path / "bike.png").write_bytes(png)
    (tmp_path / "notes.txt").write_text("not an image")
    rows = [
        {"uid": 1, "prompt": "A red bicycle leaning on a wall", "media": "bike.png"},  # relative to the dataset
        {"uid": 2, "prompt": None, "media": "bike.png"},
        {"uid": 3, "prompt": "REFUSE to describe this", "media": "bike.png"},
        {"uid": 4, "prompt": "A cat", "media": "missing.png"},
        {"uid": 5, "prompt": "A dog", "media": "notes.txt"},
    ]
    dataset = _write_jsonl(tmp_path / "images.jsonl", rows)
    with ModelEmulator(responder=generating_responder) as emulator:
        code, out = _run(_generation_params(dataset, "image", emulator.url), tmp_path, "out", "--max-failed-share", "1")
        assert code == 0
        requests = emulator.requests
    generation = [r for r in requests if r.response_schema and "qas" in r.response_schema["properties"]]
    validation = [r for r in requests if r not in generation]
    assert len(generation) == 4, "every row with a prompt asks the generator once"
    assert any("A red bicycle leaning on a wall" in r.prompt_text for r in generation)
    assert [r.media for r in validation] == [[("image/png", png, None)]]
    results, metrics, errors = _outputs(out)
    row = results[1]
    assert row["final_score"] == 1.0 and row["keywords"] == IMAGE_RUBRIC["keywords"]
    # "vehicle" is not a Gecko question type: kept as "other", with a warning in the rubric row.
    assert [q["question_type"] for q in row["qa_results"]] == ["color", "other"]
    assert any("'vehicle'" in w and "'other'" in w for w in row["rubric_warnings"])
    assert {e["uid"]: (e["stage"], e["error_kind"]) for e in errors} == {
        2: ("rubric_generation", "missing_prompt"),
        3: ("rubric_generation", "unparseable_rubric"),
        4: ("media", "unreadable_media"),
        5: ("media", "unknown_media_type"),
    }
    assert next(e for e in errors if e["uid"] == 3)["raw"].startswith("I'd rather not")
    assert "missing.png" in next(e for e in errors if e["uid"] == 4)["error_message"]
    assert sorted([*results, *(e["uid"] for e in errors)]) == [1, 2, 3, 4, 5], "every row is accounted for"
    assert metrics["unscored_rows_by_stage"] == {"media": 2, "rubric_generation": 2}
    assert [r["uid"] for r in _read_jsonl(out / "rubrics.jsonl")] == [1, 4, 5]


@pytest.mark.pipeline
def test_generated_video_rubric_end_to_end_through_the_emulator(tmp_path):
    clip = b"\x00\x00\x00\x18ftypisom" + b"\x00" * 64
    (tmp_path / "clip.mp4").write_bytes(clip)
    dataset = _write_jsonl(
        tmp_path / "videos.jsonl", [{"uid": 7, "prompt": "A dog jumps into a lake", "media": "clip.mp4"}]
    )
    with ModelEmulator(responder=generating_responder) as emulator:
        params = _generation_params(dataset, "video", emulator.url, sampling_count=2, max_concurrency=4)
        code, out = _run(params, tmp_path)
        assert code == 0
        generation, *validation = emulator.requests
    assert "A dog jumps into a lake" in generation.prompt_text
    assert len(validation) == 2, "sampling_count=2 (a float after KFP's struct encoding) asks twice"
    assert all(r.media == [("video/mp4", clip, None)] for r in validation)
    results, metrics, errors = _outputs(out)
    row = results[7]
    assert errors == [] and row["final_score"] == pytest.approx(2 / 3)
    assert [q["expected"] for q in row["qa_results"]] == ["a dog", "jumps into water", "a lake"]
    assert [q["verdict"] for q in row["qa_results"]] == ["a dog", "jumps into water", "a desert"]
    assert row["qa_results"][0]["votes"] == {"a dog": 2}
    assert metrics["accuracy_by_question_type"] == {"activity": 1.0, "animal": 1.0, "location": 0.0}


@pytest.mark.pipeline
def test_dsg_tifa160_replay_reproduces_the_published_correlation_and_rescores_without_calls(shared_data, tmp_path):
    from scipy import stats

    public = _public_data()
    data = public.convert_dsg_tifa160(shared_data, tmp_path / "dsg")
    scoring = {"dependency_masking": True, "missing_answer_policy": "zero"}
    code, out = _run(public.pipeline_params(data, scoring=scoring), tmp_path)
    assert code == 0
    _, metrics, errors = _outputs(out)
    results = _read_jsonl(out / "results.jsonl")

    def spearman(rows):
        return stats.spearmanr([r["final_score"] for r in rows], [r["human_likert"] for r in rows]).statistic

    assert metrics["rows_scored"] == 800 and metrics["masked_questions"] > 0
    assert round(spearman(results), 3) == 0.463
    assert len(errors) == 5 and {e["handled_as"] for e in errors} == {"scored_zero"}  # images without answers
    # The validations artifact is enough to re-score with other options, without any model call.
    rescored = tmp_path / "rescored.jsonl"
    gecko_steps.score_validations(
        validations_path=str(out / "validations.jsonl"),
        id_columns=data.id_columns,
        scoring={"dependency_masking": False, "missing_answer_policy": "zero"},
        results_path=str(rescored),
    )
    assert round(spearman(_read_jsonl(rescored)), 3) == 0.464


@pytest.mark.pipeline
def test_the_template_itself_fails_fast_on_bad_parameters(tmp_path):
    """Without the CLI's preflight, the rubric step rejects a scoring typo before any model call."""
    from autorater_pipelines.pipelines._local import PipelineRunError, run_local

    params = json.loads((QUICKSTART / "params.json").read_text())
    params.update(
        evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
        rubric_generation_model=f"replay/{QUICKSTART / 'rubric_replay.jsonl'}",
        validator_model=f"replay/{QUICKSTART / 'validator_replay.jsonl'}",
        scoring={"dependency_mask": True},
        project="",
        location="us-central1",
    )
    root = tmp_path / "root"
    with pytest.raises(PipelineRunError, match="check-gecko-run"):
        run_local(str(REPO / "compiled" / "gecko.yaml"), params, str(root))
    assert not list(root.rglob("validations")), "the validator step must not run after a failed rubric step"
    shutil.rmtree(root, ignore_errors=True)


def _quickstart_params() -> dict:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params["evaluation_dataset"] = str(QUICKSTART / "dataset.jsonl")
    params["rubric_generation_model"] = f"replay/{QUICKSTART / 'rubric_replay.jsonl'}"
    params["validator_model"] = f"replay/{QUICKSTART / 'validator_replay.jsonl'}"
    return params


BAD_PARAMETERS = {
    "prompt column not in data": ({"prompt_column": "caption"}, r"prompt_column: column 'caption' is not in"),
    "media column not in data": ({"media_column": "picture"}, r"media_column: column 'picture' is not in"),
    "media column empty": ({"media_column": ""}, r"media_column is required"),
    "unknown media type": (
        {"media_type": "audio"},
        r"media_type must be one of \['image', 'video', 'text'\], got 'audio'",
    ),
    "neither prompts nor rubrics": ({"prompt_column": ""}, r"set prompt_column .* or rubrics_column"),
    "rubrics column not in data": ({"rubrics_column": "rubric"}, r"rubrics_column: column 'rubric' is not in"),
    "questions_per_call 2": (
        {"validator_parameters": {"questions_per_call": 2}},
        r"validator_parameters: questions_per_call must be 0 .* or 1 .*, got 2",
    ),
    "validator key typo": (
        {"validator_parameters": {"sampling_cont": 2}},
        r"validator_parameters: unknown keys \['sampling_cont'\]",
    ),
    "generator has no sampling": (
        {"rubric_generation_parameters": {"sampling_count": 2}},
        r"rubric_generation_parameters: unknown keys \['sampling_count'\]",
    ),
    "scoring typo": (
        {"scoring": {"dependency_mask": True}},
        r"scoring: unknown keys \['dependency_mask'\] \(did you mean 'dependency_masking'\?\)",
    ),
    "scoring policy": ({"scoring": {"missing_answer_policy": "drop"}}, r"missing_answer_policy='drop'"),
    "validator provider": ({"validator_model": "anthropic/claude"}, r"validator_model: .*unknown model provider"),
    "replay file missing": (
        {"validator_model": "replay/nowhere.jsonl"},
        r"validator_model: .*nowhere.jsonl' not found \(resolved to ",
    ),
    "template variable typo": (
        {"rubric_generation_prompt_template": "Prompt: {{ promt }}"},
        r"rubric_generation_prompt_template: cannot render template: 'promt' is undefined",
    ),
    "template syntax": ({"validator_prompt_template": "{% if %}"}, r"validator_prompt_template: invalid template"),
    "bigquery without prefix": (
        {"output_format": "bigquery"},
        r"bigquery_destination_prefix: is required when output_format is 'bigquery'",
    ),
    "no id columns": ({"id_columns": []}, r"id_columns must be a non-empty list"),
    "unknown parameter": ({"rubric_column": "rubric"}, r"unknown pipeline parameters \['rubric_column'\]"),
}


@pytest.mark.parametrize("case", sorted(BAD_PARAMETERS))
def test_bad_parameters_fail_before_the_run_with_one_clear_line(case, tmp_path, capsys):
    overrides, message = BAD_PARAMETERS[case]
    code, out = _run({**_quickstart_params(), **overrides}, tmp_path)
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(message, err), err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_bad_datasets_fail_before_the_run(tmp_path, capsys):
    rows = _read_jsonl(QUICKSTART / "dataset.jsonl")
    for name, data, message in [
        ("dup", rows + [rows[0]], r"duplicate.*red-circle"),
        ("noid", [{k: v for k, v in r.items() if k != "id"} for r in rows], r"column 'id'"),
        ("empty", [], r"empty"),
    ]:
        dataset = _write_jsonl(tmp_path / f"{name}.jsonl", data)
        code, out = _run({**_quickstart_params(), "evaluation_dataset": str(dataset)}, tmp_path, name)
        err = capsys.readouterr().err
        assert code == 2 and re.search(message, err), (name, err)
        assert not out.exists()
    params = _quickstart_params()
    del params["media_column"]
    code, _ = _run(params, tmp_path, "nomedia")
    err = capsys.readouterr().err  # media_column is optional in the template (response_columns replaces it)
    assert code == 2 and "error: media_column: media_column is required (the column with the image/video" in err
    assert "got media_column='', response_columns={}" in err
