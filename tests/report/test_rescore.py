"""Re-scoring finished runs without model calls: only the figures that depend on an option change."""

from __future__ import annotations

import json
import shlex

import pytest
from doc_pages import DOCS, fenced
from report_helpers import gecko_run, mixed_gecko_params

from autorater_pipelines import gecko, io
from autorater_pipelines.autosxs.metrics import pairwise_metrics
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.report import ABSENT, changes, rescore, validation_rows_from_results, write_rescore

TIE_DEPENDENT = {
    "autorater_model_a_win_rate",
    "autorater_model_a_win_rate_ci_lower",
    "autorater_model_a_win_rate_ci_upper",
    "autorater_model_b_win_rate",
    "autorater_model_b_win_rate_ci_lower",
    "autorater_model_b_win_rate_ci_upper",
}


def _metrics(out):
    return json.loads((out / "metrics.json").read_text())


def test_llmbar_ties_as_half_changes_only_tie_dependent_figures(llmbar_out, copy_out, no_network):
    out = copy_out(llmbar_out)
    before = _metrics(out)
    judgments_before = (out / "judgments.jsonl").read_bytes()
    result = rescore(str(out), {"ties_as_half": True})
    written = write_rescore(result, str(out))
    after = _metrics(out)
    assert no_network == []  # zero model calls: nothing even tried to connect
    assert {k for k, _, _ in changes(before, after)} - {"ties_as_half"} == TIE_DEPENDENT | {
        f"rescore_options.{k}"
        for k in ("ties_as_half", "include_incomplete", "human_preference_column", "human_labels_from")
    } | {f"rescore_options.original.{k}" for k in TIE_DEPENDENT}
    for key in set(before) - TIE_DEPENDENT:
        assert after[key] == before[key], key
    # 87 A + 26 ties of 200 judged rows: (87 + 13) / 200
    assert after["autorater_model_a_win_rate"] == after["autorater_model_a_win_rate_ties_as_half"] == 0.5
    assert after["autorater_model_b_win_rate"] == pytest.approx(0.5)
    assert after["autorater_model_a_win_rate_ci_lower"] == before["autorater_model_a_win_rate_ties_as_half_ci_lower"]
    assert after["ties_as_half"] is True
    assert after["rescore_options"] == {
        "ties_as_half": True,
        "include_incomplete": False,
        "human_preference_column": "human_preference",
        "human_labels_from": "judgments.jsonl",
        "original": {k: before[k] for k in TIE_DEPENDENT},  # the run's own values, for the report
    }
    # the old metrics are kept; the judgments are untouched
    assert json.loads((out / "metrics.1.json").read_text()) == before
    assert (out / "judgments.jsonl").read_bytes() == judgments_before
    assert sorted(p.rsplit("/", 1)[1] for p in written) == ["metrics.1.json", "metrics.json"]
    # A second re-scoring keeps the original too (it used to overwrite the one .previous copy).
    second = rescore(str(out), {"ties_as_half": False})
    assert sorted(p.rsplit("/", 1)[1] for p in write_rescore(second, str(out))) == ["metrics.2.json", "metrics.json"]
    assert json.loads((out / "metrics.1.json").read_text()) == before
    assert json.loads((out / "metrics.2.json").read_text()) == after
    assert (
        json.loads((out / "metrics.json").read_text())["autorater_model_a_win_rate"]
        == before["autorater_model_a_win_rate"]
    )


def test_the_llmbar_rescore_of_the_reports_page_prints_what_it_shows(llmbar_out, copy_out, capsys):
    # The page shows it as a `$ `-prompted text block on the LLMBar run, whose params file a script writes to /tmp
    # (not a repository file), so tests/commands/test_documented_commands.py cannot run it: it is checked here.
    (block,) = [b for lang, b in fenced(DOCS / "reports.md") if b.startswith("$ autorater rescore /tmp/llmbar/out ")]
    command, _, shown = block.partition("\n")
    args = shlex.split(command.removeprefix("$ autorater "))
    out = copy_out(llmbar_out)
    assert main(["report", str(out)]) == 0  # `autorater run` writes report.html too; this fixture does not
    capsys.readouterr()
    assert main([args[0], str(out), *args[2:]]) == 0
    assert capsys.readouterr().out.replace(str(out), "/tmp/llmbar/out") == shown


def test_ties_as_half_counts_human_ties_as_half(quickstart_out):
    result = rescore(str(quickstart_out), {"ties_as_half": True})
    m, before = result.metrics, result.previous
    # humans: 3 A, 2 B, 1 TIE of 6 labels
    assert (before["human_preference_model_a_win_rate"], m["human_preference_model_a_win_rate"]) == (0.5, 3.5 / 6)
    assert m["human_preference_model_b_win_rate"] == 2.5 / 6
    assert m["human_preference_tie_rate"] == before["human_preference_tie_rate"]


def test_ties_as_half_takes_the_flag_forms_of_the_run_parameters(quickstart_out):
    """ "yes" was accepted here (pydantic's bool) while every run flag refuses it."""
    for value in ("yes", 1, "on"):
        with pytest.raises(InputError, match=rf"ties_as_half must be true or false, got {value!r}"):
            rescore(str(quickstart_out), {"ties_as_half": value})
    assert rescore(str(quickstart_out), {"ties_as_half": "TRUE"}).metrics["ties_as_half"] is True


def test_rescore_is_relative_to_the_run_and_can_be_undone(quickstart_out, copy_out):
    out = copy_out(quickstart_out)
    original = _metrics(out)
    write_rescore(rescore(str(out), {"ties_as_half": True}), str(out))
    again = rescore(str(out), {})  # options left out keep the last values
    assert again.metrics["ties_as_half"] is True
    undone = rescore(str(out), {"ties_as_half": False}).metrics
    assert {k for k, _, _ in changes(original, undone)} == {
        "rescore_options.ties_as_half",
        "rescore_options.include_incomplete",
        "rescore_options.human_preference_column",
        "rescore_options.human_labels_from",
    }


def test_dropping_human_labels(quickstart_out):
    result = rescore(str(quickstart_out), {"human_preference_column": ""})
    assert "accuracy" not in result.metrics and "original_order_accuracy" not in result.metrics
    assert result.metrics["autorater_model_a_win_rate"] == result.previous["autorater_model_a_win_rate"]
    assert ("accuracy", result.previous["accuracy"], ABSENT) in changes(result.previous, result.metrics)


def test_another_label_column_from_the_original_dataset(quickstart_out, copy_out, tmp_path, no_network):
    out = copy_out(quickstart_out)
    rows = io.read_jsonl(str(quickstart_out.parent / "dataset.jsonl"))
    flip = {"A": "model_b", "B": "model_a", "TIE": "tie"}  # aliases are normalized as the pipeline does
    for row in rows:
        row["second_rater"] = flip[row["human_preference"]]
    io.write_jsonl(str(tmp_path / "relabelled.jsonl"), rows)
    params = {
        "human_preference_column": "second_rater",
        "evaluation_dataset": str(tmp_path / "relabelled.jsonl"),
        "id_columns": ["question_id"],
    }
    result = rescore(str(out), params)
    write_rescore(result, str(out))
    judgments = io.read_jsonl(str(out / "judgments.jsonl"))
    # the new labels replace the old column, where the pipeline writes the human column
    assert list(judgments[0])[list(judgments[0]).index("response_b") + 1] == "second_rater"
    assert "human_preference" not in judgments[0]
    assert [j["second_rater"] for j in judgments] == [
        {"A": "B", "B": "A", "TIE": "TIE"}[r["human_preference"]] for r in rows
    ]
    m = _metrics(out)
    original = m["rescore_options"].pop("original")
    before = _metrics(quickstart_out)
    assert original == {k: before[k] for k, old, _ in changes(before, m) if k in before and "." not in k}
    assert original["accuracy"] == before["accuracy"] != m["accuracy"]
    assert m == {
        **pairwise_metrics(judgments, human_preference_column="second_rater"),
        "rescore_options": {
            "ties_as_half": False,
            "include_incomplete": False,
            "human_preference_column": "second_rater",
            "human_labels_from": str(tmp_path / "relabelled.jsonl"),
        },
    }
    assert m["accuracy"] == 0.0 and m["cohens_kappa"] < 0  # every label flipped
    assert (out / "judgments.1.jsonl").exists()
    assert no_network == []


def test_label_column_errors(quickstart_out, tmp_path):
    with pytest.raises(InputError, match=r"'second_rater' is not in judgments.jsonl .*add evaluation_dataset"):
        rescore(str(quickstart_out), {"human_preference_column": "second_rater"})
    rows = io.read_jsonl(str(quickstart_out.parent / "dataset.jsonl"))
    for row in rows:
        row["second_rater"] = row["human_preference"]
    rows[2]["second_rater"] = "maybe"
    io.write_jsonl(str(tmp_path / "bad.jsonl"), rows)
    params = {"human_preference_column": "second_rater", "evaluation_dataset": str(tmp_path / "bad.jsonl")}
    with pytest.raises(InputError, match=r"bad.jsonl line 3, column 'second_rater': human preference 'maybe'"):
        rescore(str(quickstart_out), params)
    io.write_jsonl(str(tmp_path / "short.jsonl"), rows[:2])
    with pytest.raises(InputError, match=r"judgment \{'question_id': 'q3'\} has no row in this dataset"):
        rescore(str(quickstart_out), {**params, "evaluation_dataset": str(tmp_path / "short.jsonl")})
    with pytest.raises(
        InputError, match=r"invalid re-scoring options for an AutoSxS run: unknown keys \['scoring'\]; valid keys: \["
    ):
        rescore(str(quickstart_out), {"scoring": {"dependency_masking": True}})
    with pytest.raises(InputError, match=r"ties_as_half='often'"):
        rescore(str(quickstart_out), {"ties_as_half": "often"})


def test_output_dir_leaves_the_run_untouched(quickstart_out, tmp_path):
    before = {p.name: p.read_bytes() for p in quickstart_out.iterdir()}
    target = tmp_path / "rescored"
    write_rescore(rescore(str(quickstart_out), {"ties_as_half": True}), str(quickstart_out), str(target))
    assert {p.name: p.read_bytes() for p in quickstart_out.iterdir()} == before
    written = ["error_messages.jsonl", "judgments.jsonl", "metrics.json"]
    assert sorted(p.name for p in target.iterdir()) == [".autorater-outputs.json", *written]
    assert json.loads((target / ".autorater-outputs.json").read_text())["files"] == written  # a run may replace them
    assert _metrics(target)["ties_as_half"] is True


def test_gecko_dependency_masking_off_equals_scoring_from_scratch(mixed_gecko_out, copy_out, tmp_path, no_network):
    out = copy_out(mixed_gecko_out)
    before = _metrics(out)
    result = rescore(str(out), {"scoring": {"dependency_masking": False}})
    write_rescore(result, str(out))
    assert no_network == []
    assert result.metrics["rescore_options"]["rows_from"] == "validations.jsonl"
    # the same as a run with masking off from the start
    params = mixed_gecko_params(mixed_gecko_out.parent, write=False)
    params["scoring"] = {"dependency_masking": False, "missing_answer_policy": "zero"}
    fresh = gecko_run(tmp_path / "fresh", params)
    assert {k: v for k, v in _metrics(out).items() if k != "rescore_options"} == _metrics(fresh)
    assert io.read_jsonl(str(out / "results.jsonl")) == io.read_jsonl(str(fresh / "results.jsonl"))
    assert io.read_jsonl(str(out / "error_messages.jsonl")) == io.read_jsonl(str(fresh / "error_messages.jsonl"))
    changed = {k for k, _, _ in changes(before, _metrics(out)) if not k.startswith("rescore_options")}
    assert changed == {
        "mean_final_score",
        "stdev_final_score",
        "masked_questions",
        "accuracy_by_question_type.color",
        "accuracy_by_question_type_ci_upper.color",  # its 95 % interval moves with it
        "scoring_options.dependency_masking",
        "final_score_denominator",  # says in words that masked questions are no longer counted as 0
        "mean_score",  # Vertex AI's names of the same mean, its interval and spread
        "mean_score_ci_lower",
        "mean_score_ci_upper",
        "stdev_score",
    }
    assert (out / "results.1.jsonl").exists() and (out / "metrics.1.json").exists()


def test_gecko_rescore_from_results_alone_matches_validations(mixed_gecko_out, copy_out):
    """Without validations.jsonl, result rows re-create the answers: the same results, raw answers included."""
    with_validations = rescore(str(mixed_gecko_out), {"scoring": {"dependency_masking": False}})
    out = copy_out(mixed_gecko_out)
    (out / "validations.jsonl").unlink()
    from_results = rescore(str(out), {"scoring": {"dependency_masking": False}})
    assert from_results.metrics["rescore_options"]["rows_from"] == "results.jsonl"
    assert from_results.files["results.jsonl"] == with_validations.files["results.jsonl"]
    assert from_results.files["error_messages.jsonl"] == with_validations.files["error_messages.jsonl"]
    strip = lambda m: {k: v for k, v in m.items() if k != "rescore_options"}  # noqa: E731
    assert strip(from_results.metrics) == strip(with_validations.metrics)
    # a stricter missing-answer policy turns the row scored as zero into an unscored error row
    strict = rescore(str(out), {"scoring": {"missing_answer_policy": "error"}})
    assert strict.metrics["rows_scored"] == 2 and strict.metrics["rows_unscored"] == 2
    assert [e["id"] for e in strict.files["error_messages.jsonl"]] == ["r4", "r3"]
    with pytest.raises(InputError, match=r"logprob_weighting needs the validator's choice probabilities"):
        rescore(str(out), {"scoring": {"logprob_weighting": True}})
    with pytest.raises(InputError, match=r"unknown keys \['masking'\]; valid keys: \['dependency_masking'"):
        rescore(str(out), {"scoring": {"masking": True}})


def test_tifa_results_round_trip_through_recreated_answers(tifa_out):
    results = io.read_jsonl(str(tifa_out / "results.jsonl"))
    rescored = gecko.score(validation_rows_from_results(results), id_columns=["id"])
    assert rescored.results == results
    assert rescored.metrics["mean_final_score"] == 0.8125


def test_gecko_unparseable_answer_policy_zero_rescores_without_model_calls(mixed_gecko_out, copy_out, no_network):
    out = copy_out(mixed_gecko_out)
    before = _metrics(out)
    result = rescore(str(out), {"scoring": {"unparseable_answer_policy": "zero"}})
    write_rescore(result, str(out))
    assert no_network == []
    results = {r["id"]: r for r in io.read_jsonl(str(out / "results.jsonl"))}
    # r2: "yes" right, "it is hard to say" names no choice, "c" (3 dogs) wrong: 1/2 when skipped, 1/3 at zero
    r2 = results["r2"]
    assert [q["status"] for q in r2["qa_results"]] == ["scored", "unparseable", "scored"]
    assert [q["score"] for q in r2["qa_results"]] == [1.0, 0.0, 0.0] and r2["final_score"] == pytest.approx(1 / 3)
    after = _metrics(out)
    assert after["parse_failures"] == before["parse_failures"] == 1
    assert after["questions_scored"] == before["questions_scored"] + 1
    assert after["scoring_options"]["unparseable_answer_policy"] == "zero"
    assert "unparseable_answer_policy=zero" in after["final_score_denominator"]
