"""``autorater run gecko`` with hostile validator replies: missing answers, ambiguous answers, quoted example
verdicts, bad rubrics, and counts in the summary and metrics.json that add up (break-it findings).

One pipeline run (replayed rubrics and answers); every figure is worked out by hand from the replies below and
recomputed from results.jsonl / error_messages.jsonl.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from autorater_pipelines.cli import main

REPO = Path(__file__).resolve().parents[2]
IMAGE = REPO / "examples" / "gecko_quickstart" / "images" / "red_circle.png"
QUESTIONS = ["Is the circle red?", "Is there a circle?", "Is the background white?", "Is there a plain background?"]


def _rubric(questions: list[str]) -> str:
    qas = [
        {"keyword_id": 1, "question": q, "question_type": "color", "answer": "yes", "justification": "asked"}
        for q in questions
    ]
    return json.dumps({"keywords": "A {1}[red] circle", "qas": qas})


def _json_answers(*answers: str) -> str:
    return json.dumps({"answers": [{"question_id": f"q{i}", "answer": a} for i, a in enumerate(answers, 1)]})


def _blocks(*verdicts: str) -> str:
    return "\n\n".join(f"{q}\nVerdict: {v}" for q, v in zip(QUESTIONS, verdicts, strict=True))


REPLIES = {
    # 4 of 4 answered yes: 1.0 over 4 questions
    "all_yes": _json_answers("yes", "yes", "yes", "yes"),
    # answers q1 and q2 only: q3 and q4 are MISSING; missing_answer_policy=error (default) refuses the row
    "missing_two": _json_answers("yes", "yes"),
    # "yes, but actually no" is ambiguous (unparseable, left out): 0 + 1 + 1 over 3 -> q1 unparseable,
    # q2 "no" scores 0, q3/q4 yes: (0 + 1 + 1) / 3
    "yes_but_no": _json_answers("yes, but actually no", "no", "yes", "yes"),
    # a preamble quoting the format is not an answer: 4 blocks for 4 questions, 1.0
    "quoted_example": 'Answer with "Verdict: no" format.\n\n' + _blocks("yes", "yes", "yes", "no"),
    # nothing readable: every question unparseable, row unscored
    "nope": _json_answers("nope", "maybe", "perhaps", "unsure"),
}
RUBRICS = {rid: _rubric(QUESTIONS) for rid in REPLIES}
RUBRICS["dup_question"] = _rubric([*QUESTIONS, "is the circle RED"])  # generated: same text, case aside
RUBRICS["many_questions"] = _rubric([f"Is there object number {i}?" for i in range(101)])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("counts")
    ids = list(RUBRICS)
    (tmp / "data.jsonl").write_text(
        "".join(json.dumps({"id": i, "prompt": "A red circle", "image": str(IMAGE)}) + "\n" for i in ids)
    )
    (tmp / "rub.jsonl").write_text("".join(json.dumps({"id": i, "response": RUBRICS[i]}) + "\n" for i in ids))
    (tmp / "val.jsonl").write_text("".join(json.dumps({"id": i, "response": r}) + "\n" for i, r in REPLIES.items()))
    params = {
        "evaluation_dataset": str(tmp / "data.jsonl"),
        "id_columns": ["id"],
        "prompt_column": "prompt",
        "media_column": "image",
        "media_type": "image",
        "rubric_generation_model": f"replay/{tmp / 'rub.jsonl'}",
        "validator_model": f"replay/{tmp / 'val.jsonl'}",
        "rubric_generation_parameters": {"cache_dir": "off"},
        "validator_parameters": {"questions_per_call": 0, "sampling_count": 1, "cache_dir": "off"},
    }
    (tmp / "params.json").write_text(json.dumps(params))
    out = tmp / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["run", "gecko", "--params", str(tmp / "params.json"), "--output-dir", str(out), "--quiet"])
    return code, out, printed.getvalue()


def _read(out: Path):
    results = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    errors = {e["id"]: e for e in map(json.loads, (out / "error_messages.jsonl").read_text().splitlines())}
    return results, errors, json.loads((out / "metrics.json").read_text())


@pytest.mark.pipeline
def test_unanswered_questions_are_missing_and_the_row_is_not_scored_over_the_answered_ones(run):
    _, out, _ = run
    results, errors, _ = _read(out)
    assert "missing_two" not in results  # was final_score 1.0 over 2 of 4 questions
    error = errors["missing_two"]
    assert (error["stage"], error["error_kind"], error["question_ids"]) == (
        "validation",
        "missing_question",
        ["q3", "q4"],
    )
    assert (error["questions"], error["missing_answers"], error["parse_failures"]) == (4, 2, 0)
    assert results["all_yes"]["final_score"] == 1.0 and results["all_yes"]["questions_scored"] == 4


@pytest.mark.pipeline
def test_yes_but_no_is_ambiguous_and_a_quoted_example_verdict_is_not_an_answer(run):
    _, out, _ = run
    results, errors, _ = _read(out)
    row = results["yes_but_no"]
    q1 = row["qa_results"][0]
    assert (q1["status"], q1["score"], q1["raw"]) == ("unparseable", None, "yes, but actually no")
    assert row["final_score"] == pytest.approx(2 / 3) and row["questions_scored"] == 3
    quoted = results["quoted_example"]
    assert [q["verdict"] for q in quoted["qa_results"]] == ["yes", "yes", "yes", "no"]
    assert quoted["final_score"] == 0.75
    assert errors["nope"]["error_kind"] == "no_scored_questions" and errors["nope"]["parse_failures"] == 4


@pytest.mark.pipeline
def test_duplicate_questions_and_oversized_rubrics_are_refused(run):
    _, out, _ = run
    results, errors, _ = _read(out)
    dup, many = errors["dup_question"], errors["many_questions"]
    assert "dup_question" not in results and "many_questions" not in results
    assert dup["error_kind"] == "invalid_rubric" and "q5 repeats q1" in dup["error_message"]
    assert (
        many["error_kind"] == "invalid_rubric" and "101 questions, more than the limit of 100" in many["error_message"]
    )


@pytest.mark.pipeline
def test_every_count_says_over_what_and_adds_up(run):
    code, out, printed = run
    results, errors, metrics = _read(out)
    # By hand: scored rows all_yes (4 questions, 4 scored), yes_but_no (4, 3 scored, 1 unparseable),
    # quoted_example (4, 4); rows unscored at scoring: missing_two (4 questions, 2 missing), nope (4, 4 unparseable).
    expected = {
        "rows_scored": 3,
        "questions_total": 12,
        "questions_scored": 11,
        "questions_left_out": 1,
        "parse_failures_in_scored_rows": 1,
        "missing_answers_in_scored_rows": 0,
        "rows_validated": 5,
        "questions_in_all_rows": 20,
        "parse_failures": 5,
        "missing_answers": 2,
    }
    assert {k: metrics[k] for k in expected} == expected
    assert set(expected) - {"rows_scored"} <= set(metrics["count_definitions"])
    # The same figures recomputed from the output files.
    qas = [q for r in results.values() for q in r["qa_results"]]
    unscored = [e for e in errors.values() if "questions" in e]
    assert len(qas) == metrics["questions_total"] == sum(len(r["qa_results"]) for r in results.values())
    assert sum(q["score"] is not None for q in qas) == metrics["questions_scored"]
    assert metrics["questions_in_all_rows"] == len(qas) + sum(e["questions"] for e in unscored)
    failures = sum(q["status"] == "unparseable" for q in qas) + sum(e["parse_failures"] for e in unscored)
    assert failures == metrics["parse_failures"]
    assert metrics["missing_answers"] == sum(e["missing_answers"] for e in unscored)
    assert "questions scored   11 of 12 in the 3 scored rows, masked 0" in printed
    assert "all 5 validated rows: 20 questions, parse failures 5, missing answers 2" in printed
    report = (out / "report.html").read_text()
    assert "of 12 in the scored rows" in report and "of 20 questions in all 5 validated rows" in report
    assert code == 1  # 4 of 7 rows failed: more than --max-failed-share
