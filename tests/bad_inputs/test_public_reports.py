"""Public bug reports against other LLM-judge tools (``public_report_cases.py``), run through this product.

Parsing reports run on the judge-answer parser with the user's ``autorater_parameters``; row, count and
metric reports run through ``autorater run autosxs`` on tiny datasets (a replay judge, or the protocol
emulator over real HTTP), each report owning one row and one check; the rest run through the step
functions the pipelines call. Every case cites the report it rebuilds.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from public_report_cases import (
    A_WINS,
    BLANK_LABEL_CSV,
    CSV_IDS,
    CSV_RUN,
    GECKO_ANSWER_CASES,
    GECKO_REPLY_CASES,
    JSON_RUN_EXPECTED,
    JSON_RUN_ROWS,
    PARSE_CASES,
    REFUSALS,
    SCALE,
    SCORE_CASES,
    TEMPLATE_TRAP,
    Error,
    ParseCase,
)
from public_report_runs import Run, clean_env, replay_lines, run_autosxs

from autorater_pipelines.gecko.answer_matching import resolve
from autorater_pipelines.pairwise import JudgeSettings, parse_verdict_note
from autorater_pipelines.pairwise.pointwise import parse_scores

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _parse(case: ParseCase) -> tuple[str, str]:
    """(position or "ERROR", explanation or error message)."""
    settings = JudgeSettings.parse(case.params)
    try:
        position, explanation, _ = parse_verdict_note(case.text, settings)
    except ValueError as exc:
        return "ERROR", str(exc)
    return position, explanation


def _params(cases: list[ParseCase]) -> list[Any]:
    return [
        pytest.param(c, id=c.report, marks=[pytest.mark.xfail(strict=True, reason=c.open_in)] if c.open_in else [])
        for c in cases
    ]


@pytest.mark.parametrize("case", _params(PARSE_CASES))
def test_judge_answer_from_a_public_report(case: ParseCase) -> None:
    outcome, message = _parse(case)
    if isinstance(case.expect, Error):
        assert outcome == "ERROR", f"{case.report}: read {outcome!r} from {case.text!r}; expected a parse error"
        assert re.search(case.expect.match, message), f"{case.expect.match!r} not in {message!r}"
    elif isinstance(case.expect, tuple):
        assert outcome in case.expect, f"{case.report}: read {outcome!r}, acceptable {case.expect}: {message}"
    else:
        assert outcome == case.expect, f"{case.report}: read {outcome!r}, expected {case.expect!r}: {message}"


@pytest.mark.parametrize(("report", "text", "expect"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_pointwise_score_from_a_public_report(report: str, text: str, expect: Error) -> None:
    with pytest.raises(ValueError, match=expect.match):
        parse_scores(text, SCALE)


@pytest.mark.parametrize(
    ("report", "answer", "choices", "index"), GECKO_ANSWER_CASES, ids=[c[0] for c in GECKO_ANSWER_CASES]
)
def test_gecko_answer_from_a_public_report(report: str, answer: str, choices: list[str], index: int) -> None:
    assert resolve(answer, choices) == index


@pytest.mark.parametrize(
    ("report", "reply", "acceptable"),
    [
        pytest.param(r, t, a, id=r, marks=[pytest.mark.xfail(strict=True, reason=o)] if o else [])
        for r, t, a, o in GECKO_REPLY_CASES
    ],
)
def test_gecko_validator_reply_from_a_public_report(report: str, reply: str, acceptable: tuple[Any, ...]) -> None:
    from autorater_pipelines.gecko.replies import parse_reply

    parsed = parse_reply(reply, [("q1", "Is the circle red?")])
    assert parsed.answers.get("q1") in acceptable, f"{report}: read {parsed.answers.get('q1')!r}"


def test_gecko_split_vote_is_not_decided_by_sample_order() -> None:
    """UKGovernmentBEIS/inspect_ai#4769: a grader panel's even split was decided by list order (mode). A Gecko
    question with one "yes" and one "no" sample scores the share of votes for the expected answer, 0.5,
    whichever sample came first."""
    from autorater_pipelines.gecko.rubric_scoring import ScoringOptions, score_row

    qas = [{"question_id": "q1", "question": "Is there a cat?", "choices": ["yes", "no"], "answer": "yes"}]
    scores = []
    for votes in (["yes", "no"], ["no", "yes"]):
        row = {"id": "r1", "qas": qas, "answers": {"q1": [{"verdict": v} for v in votes]}}
        result, errors = score_row(row, id_columns=["id"], options=ScoringOptions())
        assert result is not None and not errors
        scores.append((result["qa_results"][0]["score"], result["final_score"]))
    assert scores == [(0.5, 0.5), (0.5, 0.5)]


@pytest.fixture(scope="module")
def json_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    where = tmp_path_factory.mktemp("json-run")
    rows = [{"id": k, **{f: v for f, v in r.items() if f != "replay"}} for k, r in JSON_RUN_ROWS.items()]
    dataset = where / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replay = where / "replay.jsonl"
    replay.write_text(replay_lines({k: r["replay"] for k, r in JSON_RUN_ROWS.items()}), encoding="utf-8")
    return run_autosxs(where, dataset, replay)


def _row_error(run: Run, row_id: str) -> None:
    judgment = run.judgments[row_id]
    assert judgment["choice"] == "ERROR", judgment
    assert run.errors.get(row_id), f"no reason for {row_id} in error_messages.jsonl"


def _check_failed_call_is_an_error_not_a_score(run: Run) -> None:
    # lm-sys/FastChat#2074, danielmiessler/LifeOS#1731: never a -1, a loss or a tie.
    _row_error(run, "judge-down")
    assert "not recorded" in " ".join(run.errors["judge-down"]).lower() or run.errors["judge-down"]


def _check_unparseable_is_excluded_not_the_minimum(run: Run) -> None:
    # openai/evals#1712: the unparseable row is an error, and not counted in the win rates.
    _row_error(run, "unparseable")
    metrics = run.metrics
    assert metrics["evaluation_count"] == len(JSON_RUN_EXPECTED) and metrics["error_count"] == 4
    assert metrics["autorater_model_b_win_rate"] == pytest.approx(2 / 7)


def _check_unknown_not_in_the_accuracy_denominator(run: Run) -> None:
    # open-compass/opencompass#2598: ok-a, ok-b, ok-b2 and template align with their labels; the four ERROR
    # rows have labels but no verdict: counted apart, never as wrong answers.
    metrics = run.metrics
    assert metrics["alignment_count"] == 4 and metrics["accuracy"] == 1.0
    assert metrics["autorater_error_on_human_labeled_count"] == 4
    assert metrics["autorater_tie_on_human_labeled_count"] == 1  # 'biased' (human A, autorater TIE)


def _check_empty_reply(run: Run) -> None:
    _row_error(run, "empty")  # NVIDIA-NeMo/Gym#3510


def _check_malformed_is_not_a_tie(run: Run) -> None:
    _row_error(run, "malformed")  # NVIDIA-NeMo/Gym#2103
    assert run.metrics["autorater_tie_rate"] == pytest.approx(3 / 7)  # only 'tie', 'tie-vs-a' and 'biased'


def _check_tie_kept(run: Run) -> None:
    assert run.judgments["tie"]["choice"] == "TIE"  # ku-nlp/ja-vicuna-qa-benchmark#47


def _check_a_and_tie_across_the_swap(run: Run) -> None:
    assert run.judgments["tie-vs-a"]["choice"] == "TIE"  # lm-sys/FastChat#3252


def _check_one_order_only_excluded(run: Run) -> None:
    # OpenEuroLLM/JudgeArena#4, orq-ai/evaluatorq#56 (review: with judges erroring, "a confident winner from
    # the lone survivor"): the row's verdict is kept but marked, and it is not in the win rates.
    judgment = run.judgments["one-order"]
    assert judgment["complete"] is False and judgment["incomplete_reason"]
    metrics = run.metrics
    assert metrics["one_order_only_count"] == 1
    assert metrics["autorater_model_a_win_rate"] == pytest.approx(2 / 7)
    assert "1 rows judged in one order only: excluded" in run.printed


def _check_flip_with_the_order_is_a_tie(run: Run) -> None:
    # lm-sys/FastChat#3911: the biased row is a TIE, and position consistency counts it: 5 of the 7 complete
    # rows agree across the swap (not 'tie-vs-a', not 'biased').
    assert run.judgments["biased"]["choice"] == "TIE"
    metrics = run.metrics
    assert metrics["position_consistency"] == pytest.approx(5 / 7) and metrics["position_consistency_count"] == 5


def _check_ties_count_half(run: Run) -> None:
    # OpenEuroLLM/JudgeArena#1, lm-sys/FastChat#1886: ties in the denominator but not the numerator.
    # Here the plain rates add up to 1 and the ties-as-half rate is (2 + 0.5 * 3) / 7.
    metrics = run.metrics
    rates = [metrics[f"autorater_{k}"] for k in ("model_a_win_rate", "model_b_win_rate", "tie_rate")]
    assert sum(rates) == pytest.approx(1.0)
    assert metrics["autorater_model_a_win_rate_ties_as_half"] == pytest.approx(3.5 / 7)


def _check_template_syntax_in_data_is_data(run: Run) -> None:
    # promptfoo/promptfoo#1283, promptfoo/promptfoo#6888.
    judgment = run.judgments["template"]
    assert judgment["inference_instruction"] == f"Question: {TEMPLATE_TRAP}"
    assert judgment["response_b"] == "{{ 7*7 }}" and judgment["choice"] == "A"


def _check_every_row_written(run: Run) -> None:
    # All of the above: no row silently dropped, each verdict where expected.
    assert {k: j["choice"] for k, j in run.judgments.items()} == JSON_RUN_EXPECTED
    # 4 ERROR rows + 1 row judged in one order only = 5 of 12 failed: the command says so and exits 1.
    assert run.code == 1 and "5 of 12 rows (42%) ended with an error" in run.printed, run.printed[-2000:]


def _check_failures_are_counted_and_fail_the_run(run: Run) -> None:
    # vibrantlabsai/ragas#3028: a row that errors leaves the denominator, so the score rises as the system
    # degrades, silently. Errors stay out of the rates, but the count is printed and recorded, and past
    # --max-failed-share the command fails.
    assert "12 examples, 7 judged, 4 with errors" in run.printed
    assert run.metrics["error_count"] == 4 and run.metrics["one_order_only_count"] == 1 and run.code == 1


JSON_RUN_CHECKS = [
    ("lm-sys/FastChat#2074", _check_failed_call_is_an_error_not_a_score),
    ("danielmiessler/LifeOS#1731", _check_failed_call_is_an_error_not_a_score),
    ("openai/evals#1712", _check_unparseable_is_excluded_not_the_minimum),
    ("open-compass/opencompass#2598 (denominator)", _check_unknown_not_in_the_accuracy_denominator),
    ("NVIDIA-NeMo/Gym#3510 (run)", _check_empty_reply),
    ("NVIDIA-NeMo/Gym#2103 (run)", _check_malformed_is_not_a_tie),
    ("ku-nlp/ja-vicuna-qa-benchmark#47 (run)", _check_tie_kept),
    ("lm-sys/FastChat#3252", _check_a_and_tie_across_the_swap),
    ("OpenEuroLLM/JudgeArena#4", _check_one_order_only_excluded),
    ("orq-ai/evaluatorq#56", _check_one_order_only_excluded),
    ("lm-sys/FastChat#3911", _check_flip_with_the_order_is_a_tie),
    ("OpenEuroLLM/JudgeArena#1", _check_ties_count_half),
    ("lm-sys/FastChat#1886", _check_ties_count_half),
    ("promptfoo/promptfoo#1283", _check_template_syntax_in_data_is_data),
    ("promptfoo/promptfoo#6888", _check_template_syntax_in_data_is_data),
    ("vibrantlabsai/ragas#3028", _check_failures_are_counted_and_fail_the_run),
    ("all JSON-run rows", _check_every_row_written),
]


@pytest.mark.pipeline
@pytest.mark.parametrize(("report", "check"), JSON_RUN_CHECKS, ids=[r for r, _ in JSON_RUN_CHECKS])
def test_json_run_row_from_a_public_report(report: str, check: Any, json_run: Run) -> None:
    check(json_run)


# --- a CSV dataset ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    where = tmp_path_factory.mktemp("csv-run")
    dataset = where / "data.csv"
    dataset.write_bytes(CSV_RUN.encode("utf-8"))
    replay = where / "replay.jsonl"
    replay.write_text(replay_lines(dict.fromkeys(CSV_IDS, A_WINS)), encoding="utf-8")
    return run_autosxs(where, dataset, replay)


def _check_missing_value_words_stay_text(run: Run) -> None:
    # confident-ai/deepeval#3298: N/A, NA, None, null, NaN stay text; the id 007 keeps its zeros.
    judgments = run.judgments
    assert sorted(judgments) == list(CSV_IDS)
    assert [judgments[i]["response_a"] for i in ("007", "008", "009")] == ["N/A", "null", "None"]
    assert [judgments[i]["response_b"] for i in ("008", "009")] == ["NaN", "NA"]


def _check_multiline_value_kept(run: Run) -> None:
    # Agenta-AI/agenta#924: the quoted value keeps its line break (as written: CRLF inside the quotes).
    value = run.judgments["007"]["response_b"]
    assert value.replace("\r\n", "\n") == "The answer\nspans two lines"


def _check_line_end_not_in_the_last_column(run: Run) -> None:
    # promptfoo/promptfoo#3458: "A\r" would not be a label; all four labels are read and align.
    judgments = run.judgments
    assert [judgments[i]["human"] for i in CSV_IDS] == ["A", "TIE", "B", "A"]
    assert run.metrics["alignment_count"] == 3


def _check_json_in_an_unquoted_field(run: Run) -> None:
    # promptfoo/promptfoo#3069: the quotes inside an unquoted field are text; no row is lost.
    judgment = run.judgments["010"]
    assert judgment["response_a"] == '{"answer":""}' and judgment["response_b"] == '{"answer":"42"}'
    metrics = run.metrics
    assert metrics["dataset_rows_read"] == 4 and metrics["evaluation_count"] == 4
    assert "read 4 data row(s) from evaluation_dataset" in run.printed and run.code == 0


CSV_RUN_CHECKS = [
    ("confident-ai/deepeval#3298", _check_missing_value_words_stay_text),
    ("Agenta-AI/agenta#924", _check_multiline_value_kept),
    ("promptfoo/promptfoo#3458", _check_line_end_not_in_the_last_column),
    ("promptfoo/promptfoo#3069", _check_json_in_an_unquoted_field),
]


@pytest.mark.pipeline
@pytest.mark.parametrize(("report", "check"), CSV_RUN_CHECKS, ids=[r for r, _ in CSV_RUN_CHECKS])
def test_csv_run_row_from_a_public_report(report: str, check: Any, csv_run: Run) -> None:
    check(csv_run)


def test_blank_label_cell_is_refused_naming_row_and_column(tmp_path: Path) -> None:
    """promptfoo/promptfoo#53 (see ``BLANK_LABEL_CSV``)."""
    dataset = tmp_path / "data.csv"
    dataset.write_text(BLANK_LABEL_CSV, encoding="utf-8")
    replay = tmp_path / "replay.jsonl"
    replay.write_text(replay_lines(dict.fromkeys(("011", "012"), A_WINS)), encoding="utf-8")
    run = run_autosxs(tmp_path, dataset, replay)
    assert run.code == 2 and not run.out.exists()
    assert re.search(r"(row|line) 3, column 'human': human preference '' is not one of A, B, TIE", run.printed), (
        run.printed
    )


@pytest.mark.parametrize(("report", "rows", "overrides", "message"), REFUSALS, ids=[c[0] for c in REFUSALS])
def test_refused_input_from_a_public_report(
    report: str, rows: list[dict[str, Any]], overrides: dict[str, Any], message: str, tmp_path: Path
) -> None:
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replay = tmp_path / "replay.jsonl"
    replay.write_text(replay_lines({r.get("id", "?"): A_WINS for r in rows}), encoding="utf-8")
    run = run_autosxs(tmp_path, dataset, replay, **overrides)
    assert run.code == 2 and not run.out.exists(), run.printed[-2000:]
    lines = [line for line in run.printed.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and re.search(message, lines[0]), run.printed[-2000:]
    assert not list(tmp_path.rglob("ssti-was-here.txt")) and not Path("ssti-was-here.txt").exists()


# --- nothing parses ---------------------------------------------------------------------------------------


@pytest.mark.pipeline
def test_nothing_parses_is_a_failed_run_not_a_nan_win_rate(tmp_path: Path) -> None:
    """tatsu-lab/alpaca_eval#446: a custom evaluator whose every answer failed to parse dropped all 805
    outputs ("drop 805 outputs that are not preferences") and printed a NaN win rate. Here: every row is an
    ERROR with its reason, metrics.json holds no NaN, and the command exits 1 saying nothing was judged."""
    ids = ("p1", "p2", "p3")
    rows = [{"id": i, "question": f"{i}?", "a": "x", "b": "yy", "human": "A"} for i in ids]
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replay = tmp_path / "replay.jsonl"
    garbage = "<|im_start|>import numpy as np\n\ndef rank_models(model1, model2):"
    replay.write_text(replay_lines(dict.fromkeys(ids, (garbage, garbage))), encoding="utf-8")
    run = run_autosxs(tmp_path, dataset, replay)
    assert run.code == 1, run.printed[-2000:]
    assert "3 examples, 0 judged, 3 with errors" in run.printed
    assert {j["choice"] for j in run.judgments.values()} == {"ERROR"} and set(run.errors) == set(ids)
    metrics = run.metrics  # parse_constant refuses NaN / Infinity
    assert metrics["judged_count"] == 0 and metrics["error_count"] == 3


# --- Gecko end to end ---------------------------------------------------------------------------------------


GECKO_RUBRIC = {
    "keywords": "A {1}[red] shape",
    "qas": [{"keyword_id": 1, "question": "Is the shape red?", "question_type": "color", "answer": "yes"}],
}


def _run_gecko(where: Path, ids: tuple[str, ...], answers: dict[str, tuple[str, str]]) -> Run:
    """``autorater run gecko --max-failed-share 1`` on image rows ``ids`` (replay rubric generator: one yes/no
    question each; replay validator, 2 samples: ``answers`` by row, none recorded for the other rows)."""
    image = str(Path(__file__).resolve().parents[2] / "examples/gecko_quickstart/images/red_circle.png")
    rows = [{"id": i, "prompt": f"A red {i}", "image": image} for i in ids]
    (where / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rubrics = [{"id": i, "response": json.dumps(GECKO_RUBRIC)} for i in ids]
    (where / "rubric.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rubrics), encoding="utf-8")
    validator = [
        {"id": i, "sample_index": n, "response": json.dumps({"answers": [{"question_id": "q1", "answer": a}]})}
        for i, pair in answers.items()
        for n, a in enumerate(pair)
    ]
    (where / "validator.jsonl").write_text("".join(json.dumps(v) + "\n" for v in validator), encoding="utf-8")
    params = {
        "evaluation_dataset": str(where / "data.jsonl"),
        "id_columns": ["id"],
        "prompt_column": "prompt",
        "media_column": "image",
        "media_type": "image",
        "rubric_generation_model": f"replay/{where / 'rubric.jsonl'}",
        "validator_model": f"replay/{where / 'validator.jsonl'}",
        "validator_parameters": {"questions_per_call": 0, "sampling_count": 2},
    }
    (where / "params.json").write_text(json.dumps(params), encoding="utf-8")
    out = where / "out"
    argv = ["run", "gecko", "--params", str(where / "params.json"), "--output-dir", str(out), "--quiet"]
    proc = subprocess.run(
        [sys.executable, "-m", "autorater_pipelines.cli", *argv, "--max-failed-share", "1"],
        env=clean_env(AUTORATER_CACHE_DIR=str(where / "cache")),
        capture_output=True,
        timeout=900,
        check=False,
    )
    printed = (proc.stdout + proc.stderr).decode("utf-8", errors="replace")
    assert "Traceback" not in printed, printed[-3000:]
    return Run(proc.returncode, printed, out)


@pytest.mark.pipeline
def test_gecko_run_split_votes_decorated_answers_and_a_lost_row(tmp_path: Path) -> None:
    """Three reports through ``autorater run gecko`` (replay rubric generator and validator, 2 samples):

    - UKGovernmentBEIS/inspect_ai#4769: an even split of a grader panel was decided by list order. Row
      ``circle`` gets "yes" then "no": its question scores 0.5.
    - NVIDIA-NeMo/Skills#1082: the judge's "**Judgement**: yes" (Markdown bold) was missed and marked wrong.
      Row ``square`` answers "**Yes**" and "Yes.": both are yes, score 1.
    - vibrantlabsai/ragas#1086: one document whose generation came back empty raised and lost every result
      already computed. Row ``lost`` has no validator answer: it is unscored with its reason, and the other
      rows' results are kept.
    """
    run = _run_gecko(tmp_path, ("circle", "square", "lost"), {"circle": ("yes", "no"), "square": ("**Yes**", "Yes.")})
    assert run.code == 0, run.printed[-3000:]
    results = {r["id"]: r for r in run.jsonl("results.jsonl")}
    assert sorted(results) == ["circle", "square"]
    assert results["circle"]["qa_results"][0]["score"] == 0.5 and results["circle"]["final_score"] == 0.5
    assert results["square"]["final_score"] == 1.0
    errors = run.jsonl("error_messages.jsonl")
    assert [e["id"] for e in errors] == ["lost"] and errors[0]["stage"] == "validation"
    assert "3 rows, 2 scored, 1 unscored" in run.printed


@pytest.mark.pipeline
def test_gecko_run_where_nothing_is_scored_fails_without_a_nan(tmp_path: Path) -> None:
    """vibrantlabsai/ragas#1630: every answer failed to parse ("Failed to parse output ... Returning None"),
    numpy warned "Mean of empty slice" and the report said {'context_utilization': nan}. Here a Gecko run
    whose validator answers nothing: every row is listed with its reason, metrics.json has a null mean (no
    NaN), and the command exits 1 saying no row could be evaluated."""
    run = _run_gecko(tmp_path, ("r1", "r2"), {})
    assert run.code == 1 and "error: no row could be evaluated" in run.printed, run.printed[-3000:]
    assert sorted(e["id"] for e in run.jsonl("error_messages.jsonl")) == ["r1", "r2"]
    metrics = run.metrics  # parse_constant refuses NaN / Infinity
    assert metrics["mean_final_score"] is None and metrics["rows_scored"] == 0 and metrics["rows_unscored"] == 2
