"""Candidates on the same text rubrics in the ``gecko`` pipeline (issue 23): ``response_columns``, ``response_model``.

Every expected figure is worked out by hand below from the replayed validator answers (never by the code under
test): the rubrics are supplied as Vertex ``rubric_groups``, so the only model answers are the replay lines.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko.preflight import validate_run

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gecko_text_quickstart"


def _rubric(rid: str) -> dict:
    return {"rubric_id": rid, "content": {"property": {"description": f"{rid}?"}}, "type": None, "importance": None}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# Four prompts; p4's rubric_groups has no rubric (an error row of both candidates). Validator answers, rubric by
# rubric (y = passes):
#   p1 (r1-r4): a y y y n -> 3/4   b y n y n -> 2/4   a wins; r2 only a; r4 both fail; r1, r3 both pass
#   p2 (r1-r2): a y y     -> 1     b y y     -> 1     tie; both pass 2
#   p3 (r1-r3): a n y n   -> 1/3   b y y n   -> 2/3   b wins; r1 only b; r2 both pass; r3 both fail
RUBRICS = {"p1": ["r1", "r2", "r3", "r4"], "p2": ["r1", "r2"], "p3": ["r1", "r2", "r3"], "p4": []}
ANSWERS = {"a": {"p1": "yyyn", "p2": "yy", "p3": "nyn"}, "b": {"p1": "ynyn", "p2": "yy", "p3": "yyn"}}


def _candidates_run(tmp_path: Path) -> dict:
    rows = [
        {"id": pid, "prompt": f"Prompt {pid}", "resp_a": f"A says {pid}", "resp_b": f"B says {pid}"}
        | {"rubric_groups": {"general": [_rubric(r) for r in rids]}}
        for pid, rids in RUBRICS.items()
    ]
    lines = [
        {"id": pid, "candidate": name, "response": json.dumps({"answers": [
            {"question_id": f"r{i}", "answer": "yes" if c == "y" else "no"} for i, c in enumerate(said, 1)
        ]})}
        for name, by_prompt in ANSWERS.items()
        for pid, said in by_prompt.items()
    ]  # fmt: skip
    return {
        "evaluation_dataset": str(_write_jsonl(tmp_path / "rows.jsonl", rows)),
        "id_columns": ["id"],
        "prompt_column": "prompt",
        "media_type": "text",
        "response_columns": {"b": "resp_b", "a": "resp_a"},
        "rubrics_column": "rubric_groups",
        "validator_model": f"replay/{_write_jsonl(tmp_path / 'validator.jsonl', lines)}",
    }


def _check_candidates(out: Path) -> None:
    metrics = json.loads((out / "metrics.json").read_text())
    results = {(r["id"], r["candidate"]): r for r in _jsonl(out / "results.jsonl")}
    assert {k: r["score"] for k, r in results.items()} == {
        ("p1", "a"): 0.75, ("p2", "a"): 1.0, ("p3", "a"): pytest.approx(1 / 3),
        ("p1", "b"): 0.5, ("p2", "b"): 1.0, ("p3", "b"): pytest.approx(2 / 3),
    }  # fmt: skip
    assert results[("p1", "a")]["resp_a"] == "A says p1", "text responses are kept as they are, not made paths"
    errors = _jsonl(out / "error_messages.jsonl")
    assert sorted((e["id"], e["candidate"], e["stage"]) for e in errors) == [
        ("p4", "a", "rubrics"),
        ("p4", "b", "rubrics"),
    ]
    assert metrics["evaluation_count"] == 8 and metrics["rows_scored"] == 6  # 4 prompts x 2 candidates
    assert metrics["rubric_prompt_version"] == "supplied"
    assert metrics["response_columns"] == {"a": "resp_a", "b": "resp_b"}
    a, b = metrics["candidates"]["a"], metrics["candidates"]["b"]
    # a: scores 3/4, 1, 1/3: mean 25/36; deviations 2/36, 11/36, -13/36: stdev sqrt((4 + 121 + 169) / 1296 / 2)
    assert a["mean_score"] == pytest.approx(25 / 36)
    assert a["stdev_score"] == pytest.approx((294 / 1296 / 2) ** 0.5)
    # b: scores 1/2, 1, 2/3: mean 13/18; deviations -4/18, 5/18, -1/18: stdev sqrt((16 + 25 + 1) / 324 / 2)
    assert b["mean_score"] == pytest.approx(13 / 18)
    assert b["stdev_score"] == pytest.approx((42 / 324 / 2) ** 0.5)
    assert a["pass_rate"] == pytest.approx(1 / 3) and b["pass_rate"] == pytest.approx(1 / 3)  # p2 only
    assert (a["evaluation_count"], a["rows_scored"], b["evaluation_count"], b["rows_scored"]) == (4, 3, 4, 3)
    wins = metrics["win_rates"]
    assert wins["win_rates"] == {"a": pytest.approx(1 / 3), "b": pytest.approx(1 / 3)}
    assert (wins["tie_rate"], wins["ties"], wins["rows_compared"], wins["rows_not_compared"]) == (
        pytest.approx(1 / 3), 1, 3, 1,
    )  # fmt: skip
    comparison = metrics["per_rubric_comparison"]["a vs b"]
    assert comparison["only_a_rubric_ids"] == ["id=p1: r2"]
    assert comparison["only_b_rubric_ids"] == ["id=p3: r1"]
    assert (comparison["both_pass"], comparison["both_fail"], comparison["rubrics_compared"]) == (5, 2, 9)
    report = (out / "report.html").read_text()
    assert '<h2 id="candidates">Candidates</h2>' in report
    assert '<tr><td>a</td><td>resp_a</td><td class="score">0.6944</td>' in report  # 25/36
    assert "<h3>a vs b: rubric by rubric</h3>" in report and "id=p3: r1" in report


@pytest.mark.pipeline
def test_two_candidates_replayed_through_autorater_run_by_hand(tmp_path, capsys):
    params = _candidates_run(tmp_path)
    (tmp_path / "params.json").write_text(json.dumps(params))
    out = tmp_path / "out"
    flags = ["--output-dir", str(out), "--quiet", "--max-failed-share", "1"]
    assert main(["run", "gecko", "--params", str(tmp_path / "params.json"), *flags]) == 0
    printed = capsys.readouterr().out
    assert "  rubric prompt      supplied" in printed
    assert (
        "  candidate a        mean_score 0.6944  pass_rate 0.3333  win rate 0.3333  (resp_a, 3 of 4 rows scored)"
        in printed
    )
    assert "  tie rate           0.3333  over 3 prompts scored for every candidate" in printed
    assert "  a vs b: rubrics only a passes 1, only b passes 1, both pass 5, both fail 2\n" in printed
    _check_candidates(out)
    rubric_rows = _jsonl(out / "rubrics.jsonl")
    assert [r["id"] for r in rubric_rows] == ["p1", "p2", "p3"], "one rubric row per prompt, not per candidate"

    # autorater rescore recomputes the candidates' figures: a's answer to p1 r4 turned to "yes" in validations.jsonl
    validations = _jsonl(out / "validations.jsonl")
    (edited,) = [v for v in validations if (v["id"], v["candidate"]) == ("p1", "a")]
    edited["answers"]["r4"][0]["verdict"] = "yes"
    _write_jsonl(out / "validations.jsonl", validations)
    assert main(["rescore", str(out), "--params", "{}", "--output-dir", str(tmp_path / "rescored")]) == 0
    metrics = json.loads((tmp_path / "rescored" / "metrics.json").read_text())
    a = metrics["candidates"]["a"]
    # a: scores 1, 1, 1/3 -> mean 7/9, two of three rows at 1.0; b unchanged (13/18)
    assert a["mean_score"] == pytest.approx(7 / 9) and a["pass_rate"] == pytest.approx(2 / 3)
    assert metrics["candidates"]["b"]["mean_score"] == pytest.approx(13 / 18)
    assert metrics["win_rates"]["wins"] == {"a": 1, "b": 1} and metrics["win_rates"]["ties"] == 1  # p1 a, p3 b
    comparison = metrics["per_rubric_comparison"]["a vs b"]
    assert comparison["only_a_rubric_ids"] == ["id=p1: r2", "id=p1: r4"] and comparison["both_fail"] == 1


BAD = [
    (
        {"response_columns": {"a": "resp_a", "b": "nope"}},
        "response_columns",
        r"response_columns names columns not in evaluation_dataset '.*rows\.jsonl': \{'b': 'nope'\}; columns: ",
    ),
    (
        {"response_columns": {"a": "resp_a", "b": "respb"}},
        "response_columns",
        r"not in evaluation_dataset '.*rows\.jsonl': \{'b': 'respb'\}; columns: \[.*\]\. Did you mean 'resp_b'\?$",
    ),
    (
        {"media_column": "resp_a"},
        "response_columns",
        r"set media_column \(one response column\) or response_columns \(one column per candidate\), not both: "
        r"got media_column='resp_a' and response_columns=",
    ),
    (
        {"response_columns": {}},
        "media_column",
        r"media_column is required .* or response_columns \(\{candidate name: column\}\) .* got media_column='', "
        r"response_columns=\{\}",
    ),
    (
        {"response_columns": ["resp_a", "resp_b"]},
        "response_columns",
        r"response_columns must map each candidate's name .* got \['resp_a'",
    ),
    (
        {"response_columns": {"a": ""}},
        "response_columns",
        r"response_columns needs a non-empty candidate name and column name .* \{'a': ''\}",
    ),
    (
        {"response_model": "replay/x.jsonl"},
        "response_columns",
        r"response_columns reads each candidate's responses .* set one of them",
    ),
    ({"id_columns": ["id", "candidate"]}, "id_columns", r"id_columns \['id', 'candidate'\] holds 'candidate'"),
]


@pytest.mark.parametrize(("change", "source", "message"), BAD)
def test_bad_response_columns_are_refused_naming_the_parameter(tmp_path, change, source, message):
    params = {**_candidates_run(tmp_path), **change}
    with pytest.raises(InputError, match=message) as caught:
        validate_run(params)
    assert caught.value.source == source


def test_a_dataset_column_named_candidate_is_refused(tmp_path):
    params = _candidates_run(tmp_path)
    rows = [{**r, "candidate": "x"} for r in _jsonl(Path(params["evaluation_dataset"]))]
    _write_jsonl(Path(params["evaluation_dataset"]), rows)
    with pytest.raises(InputError, match=r"has a column 'candidate', which response_columns adds"):
        validate_run(params)


def _generated_run(tmp_path: Path, **change) -> dict:
    """The text quickstart's prompts; the responses come from response_model (replayed), rubrics generated."""
    rows = [{"id": r["id"], "prompt": r["prompt"]} for r in _jsonl(EXAMPLE / "dataset.jsonl")]
    given = {r["id"]: r["response"] for r in _jsonl(EXAMPLE / "dataset.jsonl")}
    responses = [{"id": i, "model": "response", "response": text} for i, text in given.items() if i != "haiku"]
    return {
        "evaluation_dataset": str(_write_jsonl(tmp_path / "prompts.jsonl", rows)),
        "id_columns": ["id"],
        "prompt_column": "prompt",
        "media_type": "text",
        "response_model": f"replay/{_write_jsonl(tmp_path / 'responses.jsonl', responses)}",
        "rubric_generation_model": f"replay/{EXAMPLE / 'rubric_replay.jsonl'}",
        "validator_model": f"replay/{EXAMPLE / 'validator_replay.jsonl'}",
        **change,
    }


@pytest.mark.pipeline
def test_response_model_generates_the_responses_before_validation(tmp_path):
    params = _generated_run(tmp_path)
    (tmp_path / "params.json").write_text(json.dumps(params))
    out = tmp_path / "out"
    flags = ["--output-dir", str(out), "--quiet", "--max-failed-share", "1"]
    assert main(["run", "gecko", "--params", str(tmp_path / "params.json"), *flags]) == 0
    results = {r["id"]: r for r in _jsonl(out / "results.jsonl")}
    # The replayed responses are the quickstart's own, so its validator answers apply: deadlines 4/4, capital 1/2.
    assert {k: r["score"] for k, r in results.items()} == {"deadlines": 1.0, "capital": 0.5}
    assert results["capital"]["response"] == "Sydney"  # generated into media_column's default, "response"
    (error,) = _jsonl(out / "error_messages.jsonl")  # haiku: no recorded response, an error row with the reason
    assert (error["id"], error["stage"], error["error_kind"]) == ("haiku", "inference", "not_recorded")
    assert error["error_message"].startswith(f"response_model {params['response_model']!r}: ")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["rubric_prompt_version"] == "text-rubrics-v1"
    assert "<code>text-rubrics-v1</code>" in (out / "report.html").read_text()


def test_response_model_is_refused_where_it_cannot_apply(tmp_path):
    with pytest.raises(InputError, match=r"media_column 'prompt' is a column of evaluation_dataset .* would overwrite"):
        validate_run(_generated_run(tmp_path, media_column="prompt"))
    with pytest.raises(InputError, match=r"response_model 'replay/.*' generates text responses .* media_type='image'"):
        validate_run(_generated_run(tmp_path, media_type="image"))
    with pytest.raises(InputError, match=r"response_model_parameters") as caught:
        validate_run(_generated_run(tmp_path, response_model_parameters={"temprature": 0}))
    assert caught.value.source == "response_model_parameters"


def test_prompt_version_of_a_custom_template_is_its_hash():
    from autorater_pipelines.gecko.generation import prompt_version
    from autorater_pipelines.gecko.params import RubricGenerator

    template = "Rubrics for: {{ prompt }}"
    expected = "custom-" + hashlib.sha256(template.encode()).hexdigest()[:12]
    assert prompt_version(RubricGenerator.of(prompt_template=template), media_type="text") == expected
    assert prompt_version(RubricGenerator.of(), media_type="text") == "text-rubrics-v1"
    assert prompt_version(RubricGenerator.of(), media_type="image") == "image-rubrics-builtin"
    assert prompt_version(None, media_type="text") == "supplied"


@pytest.mark.pipeline
def test_two_candidates_through_the_compiled_template_in_the_kfp_local_runner(tmp_path):
    """compiled/gecko.yaml itself (no CLI preflight): the same run, the same figures."""
    from autorater_pipelines.pipelines._local import artifact_path, run_local

    params = {**_candidates_run(tmp_path), "project": "", "location": "us-central1"}  # the CLI's placeholders
    outputs = run_local(str(REPO / "compiled" / "gecko.yaml"), params, str(tmp_path / "root"))
    assert outputs["evaluation_count"] == 8
    out = tmp_path / "files"
    out.mkdir()
    for name, key in (("results.jsonl", "results"), ("error_messages.jsonl", "error_messages")):
        (out / name).write_text(Path(artifact_path(outputs[key])).read_text())
    (metrics_file,) = (tmp_path / "root").rglob("score-gecko-validations/metrics_json")
    (out / "metrics.json").write_text(metrics_file.read_text())
    (report,) = (tmp_path / "root").rglob("build-gecko-report/report")
    (out / "report.html").write_text(report.read_text())
    _check_candidates(out)


# Emulator (demo_models.gecko_model): one "Does the response mention '<word>'?" rubric per content word of the
# prompt; a rubric passes when the word is in the response (any case).
#   fruit "Describe apples and pears" (Describe, apples, pears):
#     a "Apples are sweet; pears are softer." -> no yes yes = 2/3;  b "Pears only." -> no no yes = 1/3;  a wins
#   sky "Explain why skies look blue" (Explain, why, skies, look, blue):
#     a "Sunlight scatters in the air." -> 0/5;  b "Blue skies look blue." -> no no yes yes yes = 3/5;  b wins
EMULATED_ROWS = [
    {
        "id": "fruit",
        "prompt": "Describe apples and pears",
        "a": "Apples are sweet; pears are softer.",
        "b": "Pears only.",
    },
    {
        "id": "sky",
        "prompt": "Explain why skies look blue",
        "a": "Sunlight scatters in the air.",
        "b": "Blue skies look blue.",
    },
]


@pytest.mark.pipeline
def test_generated_text_rubrics_for_two_candidates_through_the_emulator(tmp_path):
    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.demo_models import gecko_model

    with ModelEmulator(responder=gecko_model) as emulator:
        settings = {"base_url": emulator.url, "cache_dir": "off", "progress": False}
        params = {
            "evaluation_dataset": str(_write_jsonl(tmp_path / "rows.jsonl", EMULATED_ROWS)),
            "id_columns": ["id"],
            "prompt_column": "prompt",
            "media_type": "text",
            "response_columns": {"a": "a", "b": "b"},
            "rubric_generation_model": "gemini-2.5-flash",
            "rubric_generation_parameters": settings,
            "validator_model": "gemini-2.5-flash",
            "validator_parameters": settings,
            "project": "test-project",
            "location": "us-central1",
        }
        (tmp_path / "params.json").write_text(json.dumps(params))
        out = tmp_path / "out"
        assert (
            main(["run", "gecko", "--params", str(tmp_path / "params.json"), "--output-dir", str(out), "--quiet"]) == 0
        )
        requests = emulator.requests
    generation = [r for r in requests if r.response_schema and "qas" in r.response_schema["properties"]]
    assert len(generation) == 2, "rubrics are generated once per prompt, not once per candidate"
    assert len(requests) - len(generation) == 4  # one validator call per prompt and candidate
    shown = sorted(r.prompt_text.split("\nResponse:\n")[1].split("\n")[0] for r in requests if r not in generation)
    assert shown == sorted(v for row in EMULATED_ROWS for k, v in row.items() if k in ("a", "b"))
    results = {(r["id"], r["candidate"]): r["score"] for r in _jsonl(out / "results.jsonl")}
    assert results == {
        ("fruit", "a"): pytest.approx(2 / 3), ("fruit", "b"): pytest.approx(1 / 3),
        ("sky", "a"): 0.0, ("sky", "b"): 0.6,
    }  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["rubric_prompt_version"] == "text-rubrics-v1"
    assert metrics["candidates"]["a"]["mean_score"] == pytest.approx(1 / 3)  # (2/3 + 0) / 2
    assert metrics["candidates"]["b"]["mean_score"] == pytest.approx(7 / 15)  # (1/3 + 3/5) / 2
    assert metrics["win_rates"]["win_rates"] == {"a": 0.5, "b": 0.5} and metrics["win_rates"]["ties"] == 0
    comparison = metrics["per_rubric_comparison"]["a vs b"]
    assert comparison["only_a_rubric_ids"] == ["id=fruit: q2"]  # apples
    assert comparison["only_b_rubric_ids"] == ["id=sky: q3", "id=sky: q4", "id=sky: q5"]  # skies, look, blue
    assert (comparison["both_pass"], comparison["both_fail"]) == (1, 3)  # pears; Describe, Explain, why


def test_dataframe_evaluate_takes_rubric_group(tmp_path):
    import pandas as pd

    from autorater_pipelines import gecko

    groups = {"general": [_rubric("polite"), _rubric("dates")], "other": [_rubric("unused")]}
    df = pd.DataFrame([{"id": "mail", "response": "Hi, May 2.", "rubric_groups": groups}])
    replay = _write_jsonl(
        tmp_path / "validator.jsonl",
        [
            {"id": "mail", "question_id": "polite", "response": "yes"},
            {"id": "mail", "question_id": "dates", "response": "no"},
        ],
    )
    results, metrics = gecko.evaluate(
        df,
        media_column="response",
        media_type="text",
        rubrics_column="rubric_groups",
        rubric_group="general",
        id_columns=["id"],
        validator_model=f"replay/{replay}",
        validator_parameters={"questions_per_call": 1},
        progress=False,
    )
    # polite yes, dates no -> 1/2; the "other" group is not asked
    assert [v["evaluated_rubric"]["rubric_id"] for v in results.loc[0, "rubric_verdicts"]] == ["polite", "dates"]
    assert results.loc[0, "score"] == 0.5 and metrics["rubric_prompt_version"] == "supplied"
    missing, _ = gecko.evaluate(
        df,
        media_column="response",
        media_type="text",
        rubrics_column="rubric_groups",
        rubric_group="nope",
        id_columns=["id"],
        validator_model=f"replay/{replay}",
        progress=False,
    )
    assert (missing.loc[0, "error_stage"], missing.loc[0, "error_kind"]) == ("rubrics", "missing_rubric")
    assert missing.loc[0, "error_message"] == "rubric_groups has no group 'nope'; groups present: ['general', 'other']"


@pytest.mark.pipeline
def test_dataframe_generate_rubrics_output_round_trips_into_autorater_run(tmp_path):
    """generate_rubrics' rubric_groups column, saved as JSONL, is the rubrics_column of a pipeline run."""
    import pandas as pd

    from autorater_pipelines import gecko

    df = pd.DataFrame(_jsonl(EXAMPLE / "dataset.jsonl")).set_index("id")
    with_rubrics = gecko.generate_rubrics(
        df, media_type="text", rubric_generation_model=f"replay/{EXAMPLE / 'rubric_replay.jsonl'}", progress=False
    )
    assert with_rubrics.attrs["rubric_prompt_version"] == "text-rubrics-v1"
    dataset = tmp_path / "with_rubrics.jsonl"
    with_rubrics.reset_index().to_json(dataset, orient="records", lines=True)
    params = {
        "evaluation_dataset": str(dataset),
        "id_columns": ["id"],
        "media_column": "response",
        "media_type": "text",
        "rubrics_column": "rubric_groups",
        "validator_model": f"replay/{EXAMPLE / 'validator_replay.jsonl'}",
    }
    (tmp_path / "params.json").write_text(json.dumps(params))
    out = tmp_path / "out"
    assert main(["run", "gecko", "--params", str(tmp_path / "params.json"), "--output-dir", str(out), "--quiet"]) == 0
    results = {r["id"]: r for r in _jsonl(out / "results.jsonl")}
    # As the quickstart run (test_gecko_text): deadlines 4/4, haiku 2/2, capital 1/2 ("Sydney")
    assert {k: r["score"] for k, r in results.items()} == {"deadlines": 1.0, "haiku": 1.0, "capital": 0.5}
    assert [v["evaluated_rubric"] for v in results["capital"]["rubric_verdicts"]] == (
        with_rubrics.loc["capital", "rubric_groups"]["gecko_rubrics"]
    )
    assert _jsonl(out / "error_messages.jsonl") == []
