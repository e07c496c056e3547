"""The same bad value gets the same answer in both pipelines, and in each place a run is checked.

Each value goes through ``autorater run`` (the CLI preflight), ``autorater submit --dry-run`` and the pipeline's
first step (``autosxs.prepare_run`` / ``gecko_steps.prepare_run``, what the KFP components call), for AutoSxS's
``autorater_parameters`` and Gecko's ``validator_parameters``. A refused value must be refused everywhere with the
same message (after the parameter name); an accepted value must be accepted everywhere.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from bad_input_cases import GECKO_ROWS, REPLAY, autosxs_params, gecko_params, jsonl

from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError

REPO = Path(__file__).resolve().parents[2]
VERTEX = ["--project", "my-project", "--location", "us-central1", "--pipeline-root", "gs://my-bucket/root"]
AUTOSXS_ROWS = [
    {"id": "q1", "question": "2+2?", "a": "4", "b": "5", "human": "A"},
    {"id": "q2", "question": "Capital of France?", "a": "Lyon", "b": "Paris", "human": "B"},
]
# The option dict of each pipeline where the same-named settings live.
OPTIONS = {"autosxs": "autorater_parameters", "gecko": "validator_parameters"}

REFUSED = [
    ({"sampling_count": 0}, r"sampling_count must be an integer from 1 to 64, got 0$"),
    ({"sampling_count": 1000}, r"sampling_count must be an integer from 1 to 64, got 1000$"),
    ({"sampling_count": "x"}, r"sampling_count must be an integer from 1 to 64, got 'x'$"),
    ({"sampling_count": 2.5}, r"sampling_count must be an integer from 1 to 64, got 2.5$"),
    ({"sampling_count": True}, r"sampling_count must be an integer from 1 to 64, got True$"),
    ({"max_concurrency": 100_000_000}, r"max_concurrency must be an integer from 1 to 1024, got 100000000$"),
    ({"max_concurrency": 0}, r"max_concurrency must be an integer from 1 to 1024, got 0$"),
    ({"temperature": "hot"}, r"temperature must be a number from 0 to 2, got 'hot'$"),
    ({"temperature": 5}, r"temperature must be a number from 0 to 2, got 5$"),
    ({"timeout_s": 0}, r"timeout_s must be a number greater than 0 and at most 86400, got 0$"),
    ({"max_retries": "lots"}, r"max_retries must be an integer from 0 to 100, got 'lots'$"),
    ({"progress": "yes"}, r"progress must be true or false, got 'yes'$"),
    ({"temprature": 0.2}, r"unknown keys \['temprature'\] \(did you mean 'temperature'\?\); valid keys: \["),
    (  # hostile trial (issue 25): these passed both preflights, then stalled 20-26 s
        {"base_url": "not a url"},
        r"invalid model parameters: base_url='not a url': is not an http\(s\) URL \(it has no http\(s\):// scheme\); "
        r"write it as http://HOST:PORT\[/path\] or https://HOST\[/path\], e.g\. 'http://127\.0\.0\.1:8080/v1'$",
    ),
    (
        {"base_url": "ftp://127.0.0.1:8080/v1"},
        r"invalid model parameters: base_url='ftp://127\.0\.0\.1:8080/v1': is not an http\(s\) URL \(its scheme is "
        r"'ftp://'\)",
    ),
    ({"base_url": "127.0.0.1:8080"}, r"base_url='127\.0\.0\.1:8080': is not an http\(s\) URL \(it has no http"),
]
ACCEPTED = [
    {"sampling_count": "2"},
    {"sampling_count": 2.0},
    {"sampling_count": " 2 "},
    {"temperature": "0.2", "max_concurrency": "4", "max_retries": 3.0},
    {"progress": "false"},
]


@functools.cache
def _template(pipeline: str) -> str:
    """The pipeline compiled with a pushed image's name (``submit`` refuses the placeholder image)."""
    from autorater_pipelines.pipelines import compile_pipelines

    directory = Path(tempfile.mkdtemp(prefix="same-answer-templates-"))
    compile_pipelines(str(directory), image="us-central1-docker.pkg.dev/my-project/autorater/autorater-pipelines:abc1")
    return str(directory / f"{pipeline}.yaml")


def _submit_dry_run(pipeline: str, params_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    args = ["submit", pipeline, "--params", str(params_path), *VERTEX, "--template", _template(pipeline), "--dry-run"]
    return _cli(args, capsys)


def _files(pipeline: str, where: Path) -> None:
    where.mkdir(parents=True, exist_ok=True)
    if pipeline == "autosxs":
        (where / "data.jsonl").write_text(jsonl(AUTOSXS_ROWS), encoding="utf-8")
        (where / "replay.jsonl").write_text(REPLAY, encoding="utf-8")
    else:
        rows = [{k: v.replace("{repo}", str(REPO)) for k, v in r.items()} for r in GECKO_ROWS]
        (where / "data.jsonl").write_text(jsonl(rows), encoding="utf-8")


def _params(pipeline: str, where: Path, **overrides: Any) -> dict[str, Any]:
    base = autosxs_params(**overrides) if pipeline == "autosxs" else gecko_params(**overrides)
    text = json.dumps(base).replace("{dir}", str(where)).replace("{repo}", str(REPO))
    return json.loads(text)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def _first_step(pipeline: str, params: dict[str, Any], where: Path) -> None:
    if pipeline == "autosxs":
        from autorater_pipelines import autosxs

        autosxs.prepare_run(params, str(where / "prepared.jsonl"))
    else:
        from autorater_pipelines.gecko import steps as gecko_steps

        rows = str(where / "rows.jsonl")  # the pipeline's check step, then its rubric step
        gecko_steps.check_run(params, rows)
        keys = ("id_columns", "media_type", "prompt_column", "rubrics_column", "project", "location")
        gecko_steps.rubrics_for_rows(
            rows_path=rows,
            rubrics_path=str(where / "rubrics.jsonl"),
            errors_path=str(where / "rubric_errors.jsonl"),
            **{k: params[k] for k in keys if k in params},
            **{k: params[k] for k in params if k.startswith("rubric_generation_")},
        )


def _answers(pipeline: str, options: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The one error line (after the parameter name) of each place, or "accepted"."""
    where = tmp_path / pipeline
    _files(pipeline, where)
    params = _params(pipeline, where, **{OPTIONS[pipeline]: options})
    params_path = where / "params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    answers = []
    code, err = _submit_dry_run(pipeline, params_path, capsys)
    answers.append("accepted" if code == 0 else err.strip().splitlines()[-1])
    out = where / "out"
    if options in ACCEPTED:  # a full run is covered by the pipeline tests; the preflight is what decides
        from autorater_pipelines.commands._common import validate_run

        validate_run(pipeline, params)
        answers.append("accepted")
    else:
        code, err = _cli(["run", pipeline, "--params", str(params_path), "--output-dir", str(out), "--quiet"], capsys)
        assert code == 2 and not out.exists(), err
        answers.append(err.strip().splitlines()[-1])
    try:
        _first_step(pipeline, params, where)
        answers.append("accepted")
    except InputError as exc:
        answers.append(f"error: {exc}")
    return [re.sub(r"^error: (params\.json: )?", "", a).replace(str(params_path) + ": ", "") for a in answers]


@pytest.mark.parametrize(("options", "message"), REFUSED, ids=[json.dumps(o) for o, _ in REFUSED])
def test_a_bad_value_gets_the_same_answer_in_both_pipelines_everywhere(options, message, tmp_path, capsys):
    seen = {}
    for pipeline, source in OPTIONS.items():
        answers = _answers(pipeline, options, tmp_path, capsys)
        for answer in answers:
            assert answer.startswith(f"{source}: "), answers
            assert re.search(message, answer), f"{message!r} not in {answer!r}"
        seen[pipeline] = {a.removeprefix(f"{source}: ").split("; valid keys")[0] for a in answers}
        assert len(seen[pipeline]) == 1, f"{pipeline}: run, submit --dry-run and the first step disagree: {answers}"
    assert seen["autosxs"] == seen["gecko"], seen


@pytest.mark.parametrize("options", ACCEPTED, ids=[json.dumps(o) for o in ACCEPTED])
def test_a_good_value_in_kfp_form_is_accepted_by_both_pipelines_everywhere(options, tmp_path, capsys):
    for pipeline in OPTIONS:
        assert _answers(pipeline, options, tmp_path, capsys) == ["accepted"] * 3, pipeline


@pytest.mark.parametrize("pipeline", sorted(OPTIONS))
def test_submit_dry_run_refuses_a_missing_id_column_of_a_local_dataset(pipeline, tmp_path, capsys):
    where = tmp_path / pipeline
    _files(pipeline, where)
    params_path = where / "params.json"
    params_path.write_text(json.dumps(_params(pipeline, where, id_columns=["uid"])), encoding="utf-8")
    code, err = _submit_dry_run(pipeline, params_path, capsys)
    assert code == 2 and re.search(r"id_columns\[0\]: column 'uid' is not in", err), err


@pytest.mark.parametrize("pipeline", sorted(OPTIONS))
def test_submit_dry_run_leaves_a_cloud_dataset_to_the_first_step_and_says_so(pipeline, tmp_path, capsys):
    where = tmp_path / pipeline
    _files(pipeline, where)
    params = _params(pipeline, where, evaluation_dataset="gs://my-bucket/data.jsonl")
    params_path = where / "params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    code, err = _submit_dry_run(pipeline, params_path, capsys)
    assert code == 0 and "gs://my-bucket/data.jsonl not read from here" in err, err


@pytest.mark.parametrize("pipeline", sorted(OPTIONS))
def test_a_vertex_model_with_no_project_is_refused_by_both_pipelines(pipeline, tmp_path, capsys, monkeypatch):
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    where = tmp_path / pipeline
    _files(pipeline, where)
    model = "autorater_model" if pipeline == "autosxs" else "validator_model"
    params_path = where / "params.json"
    params_path.write_text(json.dumps(_params(pipeline, where, **{model: "gemini-2.5-flash"})), encoding="utf-8")
    out = where / "out"
    code, err = _cli(["run", pipeline, "--params", str(params_path), "--output-dir", str(out), "--quiet"], capsys)
    assert code == 2 and re.search(rf"{model}: cannot choose how to call Gemini model 'gemini-2.5-flash'", err), err


VERDICT_REFUSED = [
    ({"verdict_pattern": "()", "verdict_map": {"": "A"}}, r"verdict_pattern '\(\)' can find an empty verdict: "),
    ({"verdict_pattern": r"Verdict: (A?)", "verdict_map": {"A": "A"}}, r"verdict_pattern .* can find an empty verd"),
    (
        {"verdict_pattern": r"\[\[(A|B)\]\]", "verdict_map": {"A": "A", "B": "B", " ": "TIE"}},
        r"verdict_map has an empty key ' ': a verdict is never empty",
    ),
    (
        {"verdict_pattern": "AB", "verdict_map": {"A": "A"}},
        r"verdict_map keys \['A'\] can never be found by verdict_pattern 'AB': the verdict is its whole match, "
        r"'AB' \(it has no group\), which must match a key in full",
    ),
    (
        {"verdict_pattern": r"(A)|(B)", "verdict_map": {"A": "A", "B": "B"}},
        r"verdict_map keys \['B'\] can never be found by verdict_pattern '\(A\)\|\(B\)': the verdict is the text "
        r"of its first group, 'A'",
    ),
    (
        {"verdict_pattern": r"\[\[(A|B|C)\]\]", "verdict_map": {"A": "A", "B": "B", "tie": "TIE"}},
        r"verdict_map keys \['tie'\] can never be found",
    ),
    (
        {"verdict_pattern": r"\[\[(A|B|C)\]\]", "verdict_map": {"A": "A", "C": "TIE"}},
        r"verdict_map \{'A': 'A', 'C': 'TIE'\} never gives B: the judge could never prefer the response shown second",
    ),
    ({"verdict_match": "first"}, r"verdict_match 'first' applies only with verdict_pattern"),
]
VERDICT_ACCEPTED = [
    {"verdict_pattern": r"\[\[(A|B|C)\]\]", "verdict_map": {"a": "A", "b": "B", "c": "TIE"}},  # looked up in any case
    {"verdict_pattern": r"(?i)GRADE\s*:\s*([CPI])", "verdict_map": {"c": "A", "I": "B", "P": "TIE"}},
    {"verdict_pattern": r"(?:^|\n) ?Output \((a|b)\)", "verdict_map": {"a": "A", "b": "B"}},  # LLMBar: no tie
    {"verdict_pattern": r"\[\[(?P<v>[AB]|tie)\]\]", "verdict_map": {"A": "A", "B": "B", "TIE": "TIE"}},
    {"verdict_pattern": r"A|B", "verdict_map": {"A": "A", "B": "B"}, "verdict_match": "unique"},
    {"verdict_pattern": r"[(]x[)] \[\[(A|B)\]\]", "verdict_map": {"A": "A", "B": "B"}, "verdict_match": ""},
]


@pytest.mark.parametrize(("options", "message"), VERDICT_REFUSED, ids=[json.dumps(o) for o, _ in VERDICT_REFUSED])
def test_a_verdict_pattern_that_cannot_work_is_refused_everywhere_before_any_model_call(
    options, message, tmp_path, capsys
):
    """``autorater run`` (exit 2, no output), ``submit --dry-run`` and the first step give the same message."""
    answers = _answers("autosxs", options, tmp_path, capsys)
    assert all(a.startswith("autorater_parameters: ") for a in answers), answers
    assert re.search(message, answers[0]), f"{message!r} not in {answers[0]!r}"
    assert len(set(answers)) == 1, f"run, submit --dry-run and the first step disagree: {answers}"


@pytest.mark.parametrize("options", VERDICT_ACCEPTED, ids=[json.dumps(o) for o in VERDICT_ACCEPTED])
def test_a_verdict_pattern_that_can_find_each_key_is_accepted_everywhere(options, tmp_path, capsys):
    from autorater_pipelines.commands._common import validate_run

    where = tmp_path / "autosxs"
    _files("autosxs", where)
    params = _params("autosxs", where, autorater_parameters=options)
    params_path = where / "params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    assert _submit_dry_run("autosxs", params_path, capsys)[0] == 0
    validate_run("autosxs", params)
    _first_step("autosxs", params, where)


# --- malformed gs:// and bq:// URIs: `submit --dry-run` reads no cloud data, but refuses what `run` refuses -------
# ``MODEL`` stands for the pipeline's judge: ``autorater_model`` (AutoSxS), ``validator_model`` (Gecko).
MALFORMED_URIS = [
    (
        {"evaluation_dataset": "bq://not a table"},
        r"^evaluation_dataset: expected bq://project\.dataset\.table, got 'bq://not a table'$",
    ),
    (
        {"evaluation_dataset": "gs://"},
        r"^evaluation_dataset: gs://: the gs:// URI has no bucket name; write gs://BUCKET/path/to/file\.jsonl$",
    ),
    ({"evaluation_dataset": "gs://my-bucket"}, r"^evaluation_dataset: gs://my-bucket: the gs:// URI names a bucket"),
    ({"evaluation_dataset": "gs://my-bucket/data/"}, r"^evaluation_dataset: gs://my-bucket/data/: names a folder"),
    (
        {"evaluation_dataset": "gs://My-Bucket/data.jsonl"},
        r"^evaluation_dataset: gs://My-Bucket/data\.jsonl: invalid bucket name 'My-Bucket': Cloud Storage bucket names "
        r"use lowercase letters",
    ),
    (
        {"evaluation_dataset": "gs://my bucket/data.jsonl"},
        r"^evaluation_dataset: gs://my bucket/data\.jsonl: invalid bucket name 'my bucket'",
    ),
    (
        {"evaluation_dataset": "gs://my-*/data.jsonl"},
        r"^evaluation_dataset: gs://my-\*/data\.jsonl: wildcards are not supported in the bucket name",
    ),
    ({"evaluation_dataset": "bq://my-project.my_dataset"}, r"^evaluation_dataset: expected bq://project\.dataset\."),
    ({"evaluation_dataset": "bq://My_Project.evals.t"}, r"^evaluation_dataset: invalid project id 'My_Project'"),
    ({"evaluation_dataset": "bq://my-project.my-evals.t"}, r"^evaluation_dataset: invalid dataset name 'my-evals'"),
    (
        {"evaluation_dataset": "gs://my-bucket/a.jsonl, s3://my-bucket/b.jsonl"},
        r"^evaluation_dataset: s3://my-bucket/b\.jsonl: unsupported URI scheme 's3://'; expected one of file://, "
        r"gs://, or a local path$",
    ),
    ({"MODEL": "replay/gs://"}, r"^MODEL: replay file 'gs://': gs://: the gs:// URI has no bucket name"),
    ({"MODEL": "replay/gs://my-bucket/"}, r"^MODEL: replay file 'gs://my-bucket/': .*names a bucket but no object"),
    ({"MODEL": "replay/s3://my-bucket/r.jsonl"}, r"^MODEL: replay file 's3://my-bucket/r\.jsonl': .*unsupported URI"),
]
JUDGE = {"autosxs": "autorater_model", "gecko": "validator_model"}


@pytest.mark.parametrize("pipeline", sorted(OPTIONS))
@pytest.mark.parametrize(("overrides", "message"), MALFORMED_URIS, ids=[json.dumps(o) for o, _ in MALFORMED_URIS])
def test_the_dry_run_refuses_every_malformed_cloud_uri_that_run_refuses(pipeline, overrides, message, tmp_path, capsys):
    """Hostile trial (issue 25): ``submit --dry-run`` said "9 parameters valid" for ``bq://not a table`` and
    ``gs://``, which ``run`` refuses at once. Each malformed URI is refused by ``run`` (exit 2, no output), by the
    dry run and by the pipeline's first step, with one message."""
    where = tmp_path / pipeline
    _files(pipeline, where)
    overrides = {JUDGE[pipeline] if k == "MODEL" else k: v for k, v in overrides.items()}
    params = _params(pipeline, where, **overrides)
    params_path = where / "params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    code, err = _submit_dry_run(pipeline, params_path, capsys)
    assert code == 2, err
    answers = [err.strip().splitlines()[-1]]
    out = where / "out"
    code, err = _cli(["run", pipeline, "--params", str(params_path), "--output-dir", str(out), "--quiet"], capsys)
    assert code == 2 and not out.exists(), err
    answers.append(err.strip().splitlines()[-1])
    with pytest.raises(InputError) as refused:
        _first_step(pipeline, params, where)
    answers.append(f"error: {refused.value}")
    answers = [re.sub(r"^error: (params\.json: )?", "", a).replace(str(params_path) + ": ", "") for a in answers]
    assert re.search(message.replace("MODEL", JUDGE[pipeline]), answers[0]), answers
    assert len(set(answers)) == 1, f"submit --dry-run, run and the first step disagree: {answers}"


@pytest.mark.parametrize("pipeline", sorted(OPTIONS))
def test_a_dry_run_still_leaves_a_well_formed_cloud_dataset_to_the_first_step(pipeline, tmp_path, capsys):
    """The control of the test above: a well-formed bq:// table is not read from here, and not refused."""
    where = tmp_path / pipeline
    _files(pipeline, where)
    params_path = where / "params.json"
    params = _params(pipeline, where, evaluation_dataset="bq://my-project.my_dataset.my_table")
    params_path.write_text(json.dumps(params), encoding="utf-8")
    code, err = _submit_dry_run(pipeline, params_path, capsys)
    assert code == 0 and "bq://my-project.my_dataset.my_table not read from here" in err, err


_CONFIG_REFUSED = [(s, m) for s, m in REFUSED if next(iter(s)) in ("max_concurrency", "temperature", "timeout_s")]


@pytest.mark.parametrize(("setting", "message"), _CONFIG_REFUSED, ids=[m[:40] for _, m in _CONFIG_REFUSED])
def test_generate_config_in_python_has_the_same_bound_and_message(setting: dict[str, Any], message: str) -> None:
    """One bound, one message: ``GenerateConfig(max_concurrency=10**8)`` was accepted while the parameter refused it."""
    import pydantic

    from autorater_pipelines.models import GenerateConfig

    with pytest.raises(pydantic.ValidationError, match=message.removesuffix("$")):
        GenerateConfig(**setting)
    with pytest.raises(InputError, match=message.removesuffix("$")):
        GenerateConfig.from_params(setting)
