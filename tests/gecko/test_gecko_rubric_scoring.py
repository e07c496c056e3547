import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import ScoringOptions, score

YN = ["yes", "no"]


def qa(qid, answer="yes", choices=YN, qtype="object", deps=(), keyword_id=None):
    return {
        "question_id": qid,
        "question": f"question {qid}?",
        "question_type": qtype,
        "choices": list(choices),
        "answer": answer,
        "dependencies": list(deps),
        "keyword_id": keyword_id,
    }


def sample(verdict=None, error=None, probs=None, index=0):
    return {"sample_index": index, "verdict": verdict, "raw": verdict, "error": error, "choice_probs": probs}


NOT_RECORDED = {"kind": "not_recorded", "message": "no recording"}


def row(rid, qas, answers, keywords=None):
    return {"id": rid, "prompt": "p", "keywords": keywords, "qas": qas, "answers": answers}


def test_exact_match_mean_and_per_type_accuracy():
    rows = [
        row(
            1,
            [qa("1"), qa("2", qtype="color"), qa("3", "b) a boat", ["a car", "a boat"], qtype="object")],
            {"1": [sample("Yes.")], "2": [sample("no")], "3": [sample("a")]},
        ),
        row(2, [qa("1", qtype="color")], {"1": [sample("yes")]}),
    ]
    result = score(rows, id_columns=["id"])
    assert [r["final_score"] for r in result.results] == [pytest.approx(1 / 3), 1.0]
    first = result.results[0]
    assert "qas" not in first and "answers" not in first and first["prompt"] == "p"
    assert [q["verdict"] for q in first["qa_results"]] == ["yes", "no", "a car"]
    assert [q["expected"] for q in first["qa_results"]] == ["yes", "yes", "a boat"]
    assert [q["score"] for q in first["qa_results"]] == [1.0, 0.0, 0.0]
    assert first["qa_results"][0]["raw"] == "Yes."
    m = result.metrics
    assert m["mean_final_score"] == pytest.approx((1 / 3 + 1) / 2)
    assert m["accuracy_by_question_type"] == {"color": 0.5, "object": 0.5}
    assert m["rows_scored"] == 2 and m["parse_failures"] == 0 and result.errors == []


def test_unparseable_verdicts_are_counted_not_scored_zero():
    rows = [
        row(
            1,
            [qa("1"), qa("2"), qa("3")],
            {
                "1": [sample("not sure")],
                "2": [sample("yes")],
                "3": [sample(error={"kind": "unmatched_answer", "message": "block 3 matches no question"})],
            },
        )
    ]
    result = score(rows, id_columns=["id"])
    (r,) = result.results
    assert r["final_score"] == 1.0 and r["questions_scored"] == 1 and r["parse_failures"] == 2
    statuses = [(q["status"], q["score"], (q["error"] or {}).get("kind")) for q in r["qa_results"]]
    assert statuses == [
        ("unparseable", None, "unparseable_verdict"),
        ("scored", 1.0, None),
        ("unparseable", None, "unmatched_answer"),
    ]
    assert result.metrics["parse_failures"] == 2 and result.metrics["unparseable_samples"] == 1


def test_a_row_with_nothing_scorable_is_an_error_row():
    result = score([row(7, [qa("1")], {"1": [sample("maybe")]})], id_columns=["id"])
    assert result.results == []
    (e,) = result.errors
    assert (e["id"], e["stage"], e["error_kind"]) == (7, "scoring", "no_scored_questions")
    assert result.metrics["rows_unscored"] == 1 and result.metrics["mean_final_score"] is None


def test_votes_across_samples_and_a_split_vote_scores_the_share_of_the_expected_answer():
    rows = [
        row(
            1,
            [qa("1"), qa("2")],
            {
                "1": [sample("no", index=0), sample("yes", index=1), sample("yes", index=2)],
                "2": [sample("no", index=0), sample("yes", index=1), sample("perhaps", index=2)],
            },
        )
    ]
    (r,) = score(rows, id_columns=["id"]).results
    q1, q2 = r["qa_results"]
    assert (q1["verdict"], q1["votes"], q1["score"]) == ("yes", {"no": 1, "yes": 2}, 1.0)
    # yes×1, no×1 (the third answer names no choice): half the votes name the expected "yes".
    assert (q2["verdict"], q2["score"], q2["unparseable_samples"]) == ("no | yes", 0.5, 1)
    assert q2["tied_vote"] is True and "tied_vote" not in q1


def test_a_split_vote_does_not_depend_on_which_sample_came_first():
    # Found by the hostile trial: {yes: 1, no: 1} scored 0 or 1 depending on the order of the samples.
    orders = [[sample("yes", index=0), sample("no", index=1)], [sample("no", index=0), sample("yes", index=1)]]
    scores = [
        score([row(1, [qa("1")], {"1": answers})], id_columns=["id"]).results[0]["final_score"] for answers in orders
    ]
    assert scores == [0.5, 0.5]
    three = [sample("a", index=0), sample("b", index=1), sample("c", index=2), sample("a", index=3)]
    (r,) = score([row(1, [qa("1", "b", ["x", "y", "z"])], {"1": three})], id_columns=["id"]).results
    assert r["qa_results"][0]["score"] == 0.0  # "a" has 2 of 4 votes: a clear verdict, not a tie


def test_a_split_vote_scores_only_when_the_expected_answer_is_among_the_tied_winners():
    # Found by the hostile trial: a×2, b×2, c×1 with "c" expected scored 0.2 although "c" lost the vote.
    def votes(*answers):
        return [sample(a, index=i) for i, a in enumerate(answers)]

    choices = ["a", "b", "c"]
    cases = [
        (votes("a", "b", "a", "b", "c"), "c", 0.0, "a | b"),  # expected is a runner-up: as in a lost vote
        (votes("a", "b", "a", "b", "c"), "a", 0.5, "a | b"),  # one of 2 tied winners: 1/2, not 2/5
        (votes("a", "b", "c"), "b", 1 / 3, "a | b | c"),  # one of 3 tied winners
        (votes("c", "c", "a"), "a", 0.0, "c"),  # no tie: the runner-up scores 0 as before
    ]
    for answers, expected, want, verdict in cases:
        (r,) = score([row(1, [qa("1", expected, choices)], {"1": answers})], id_columns=["id"]).results
        q = r["qa_results"][0]
        assert (q["verdict"], q["score"]) == (verdict, pytest.approx(want)), (answers, expected)


@pytest.mark.parametrize(
    ("answer", "expected", "choices"),
    [
        ("three", "3", ["2", "3", "4"]),
        ("Three.", "3", ["2", "3", "4"]),
        ("3", "three", ["two", "three", "four"]),
        ("a red apple", "red apple", ["red apple", "green apple"]),
        ("The cat", "cat", ["cat", "dog"]),
        ("twelve birds", "12 birds", ["12 birds", "2 birds"]),
    ],
)
def test_number_words_and_articles_are_normalized(answer, expected, choices):
    (r,) = score([row(1, [qa("1", expected, choices)], {"1": [sample(answer)]})], id_columns=["id"]).results
    assert r["qa_results"][0]["score"] == 1.0, r["qa_results"][0]


@pytest.mark.parametrize(
    ("policy", "scored", "final", "handled"),
    [("error", False, None, None), ("zero", True, 0.5, "scored_zero"), ("skip", True, 1.0, "skipped")],
)
def test_missing_answer_policy(policy, scored, final, handled):
    rows = [row(1, [qa("1"), qa("2")], {"1": [sample("yes")], "2": [sample(error=NOT_RECORDED)]})]
    result = score(rows, id_columns=["id"], options={"missing_answer_policy": policy})
    (e,) = result.errors
    assert (e["stage"], e["error_kind"], e["question_ids"]) == ("validation", "not_recorded", ["2"])
    assert e.get("handled_as") == handled
    assert "no answer for question(s) ['2']: no recording" in e["error_message"]
    if scored:
        (r,) = result.results
        assert r["final_score"] == final and r["missing_answers"] == 1
        assert r["qa_results"][1]["status"] == "missing"
        assert result.metrics["rows_unscored"] == 0
    else:
        assert result.results == [] and result.metrics["rows_unscored"] == 1


def test_dependency_masking_uses_parents_own_answers():
    # 1 wrong -> 2 masked; 3 depends on 2, whose OWN answer is right -> 3 not masked (DSG reference code).
    qas = [qa("1"), qa("2", deps=["1"]), qa("3", deps=["2"]), qa("4")]
    answers = {"1": [sample("no")], "2": [sample("yes")], "3": [sample("yes")], "4": [sample("yes")]}
    masked = score([row(1, qas, answers)], id_columns=["id"], options={"dependency_masking": True})
    (r,) = masked.results
    assert [q["score"] for q in r["qa_results"]] == [0.0, 0.0, 1.0, 1.0]
    assert r["qa_results"][1]["status"] == "masked" and r["qa_results"][1]["masked_by"] == ["1"]
    assert r["final_score"] == 0.5 and masked.metrics["masked_questions"] == 1
    (plain,) = score([row(1, qas, answers)], id_columns=["id"]).results
    assert plain["final_score"] == 0.75


def test_missing_parent_scored_zero_masks_children():
    qas = [qa("1"), qa("2", deps=["1"])]
    answers = {"1": [sample(error=NOT_RECORDED)], "2": [sample("yes")]}
    opts = {"dependency_masking": True, "missing_answer_policy": "zero"}
    (r,) = score([row(1, qas, answers)], id_columns=["id"], options=opts).results
    assert [q["score"] for q in r["qa_results"]] == [0.0, 0.0]


def test_logprob_weighting():
    qas = [qa("1"), qa("2")]
    answers = {
        "1": [sample("yes", probs={"yes": 0.9, "no": 0.1}), sample("no", probs={"yes": 0.3, "no": 0.7}, index=1)],
        "2": [sample("yes")],
    }
    result = score([row(1, qas, answers)], id_columns=["id"], options={"logprob_weighting": True})
    (r,) = result.results
    assert r["qa_results"][0]["probability"] == pytest.approx(0.6)
    assert r["qa_results"][0]["score"] == pytest.approx(0.6)
    assert r["qa_results"][1]["score"] == 1.0 and r["qa_results"][1]["logprob_fallback"]
    assert r["final_score"] == pytest.approx(0.8)
    assert result.metrics["logprob_fallbacks"] == 1


def test_keyword_coverage_per_row_and_pooled():
    rows = [
        row(
            1,
            [qa("1", keyword_id=1), qa("2", keyword_id=1)],
            {"1": [sample("yes")], "2": [sample("yes")]},
            keywords="{1}[a] {2}[b]",
        ),
        row(2, [qa("1", keyword_id=1)], {"1": [sample("yes")]}, keywords="{1}[c]"),
        row(3, [qa("1")], {"1": [sample("yes")]}),
    ]
    result = score(rows, id_columns=["id"])
    assert [r["keyword_coverage"] for r in result.results] == [0.5, 1.0, None]
    assert result.metrics["keyword_coverage"] == pytest.approx(2 / 3)


def test_free_form_questions_use_normalized_exact_match():
    rows = [
        row(
            1,
            [qa("1", "OPEN", choices=[]), qa("2", "open", choices=[])],
            {"1": [sample(" open. ")], "2": [sample("opened")]},
        )
    ]
    (r,) = score(rows, id_columns=["id"]).results
    assert [q["score"] for q in r["qa_results"]] == [1.0, 0.0]


def test_bad_scoring_options():
    with pytest.raises(InputError, match="valid keys: .*dependency_masking"):
        score([], id_columns=["id"], options={"dependency_mask": True})
    with pytest.raises(InputError, match="missing_answer_policy"):
        ScoringOptions.from_params({"missing_answer_policy": "ignore"})


def test_rows_without_a_rubric_are_error_rows():
    result = score([{"id": 1, "answers": {}}, {"id": 2, "qas": [{"question": "no id"}]}], id_columns=["id"])
    assert result.results == []
    assert [(e["id"], e["stage"], e["error_kind"]) for e in result.errors] == [
        (1, "scoring", "invalid_rubric"),
        (2, "scoring", "invalid_rubric"),
    ]


def test_unparseable_answer_policy_zero_counts_non_choices_as_wrong():
    # A VQA model that answers with no choice: TIFA/DSG count anything but the expected answer as wrong.
    qas = [qa("1"), qa("2"), qa("3", deps=["1"]), qa("4", deps=["2"])]
    answers = {"1": [sample("yes")], "2": [sample("1000000000")], "3": [sample("")], "4": [sample("yes")]}
    skipped = score([row(1, qas, answers)], id_columns=["id"])
    (r,) = skipped.results
    assert r["final_score"] == 1.0 and r["questions_scored"] == 2 and r["parse_failures"] == 2
    assert skipped.metrics["scoring_options"]["unparseable_answer_policy"] == "skip"
    assert "Left out: questions whose answers name no choice" in skipped.metrics["final_score_denominator"]

    zero = score([row(1, qas, answers)], id_columns=["id"], options={"unparseable_answer_policy": "zero"})
    (r,) = zero.results
    assert [q["score"] for q in r["qa_results"]] == [1.0, 0.0, 0.0, 1.0]
    assert [q["status"] for q in r["qa_results"]] == ["scored", "unparseable", "unparseable", "scored"]
    assert r["final_score"] == 0.5 and r["questions_scored"] == 4 and r["parse_failures"] == 2
    assert zero.metrics["parse_failures"] == 2 and zero.metrics["questions_scored"] == 4
    assert "name no choice (scored 0, unparseable_answer_policy=zero)" in zero.metrics["final_score_denominator"]
    assert zero.metrics["final_score_denominator"].startswith(
        "mean question score over questions whose answer names a choice and questions whose answers name no choice "
        "(scored 0, unparseable_answer_policy=zero)"
    )

    # With DSG's dependency masking a parent answered with a non-choice fails its children too.
    masked = score(
        [row(1, qas, answers)],
        id_columns=["id"],
        options={"unparseable_answer_policy": "zero", "dependency_masking": True},
    )
    (r,) = masked.results
    assert [q["score"] for q in r["qa_results"]] == [1.0, 0.0, 0.0, 0.0]
    assert r["qa_results"][3]["masked_by"] == ["2"] and r["final_score"] == 0.25
    with pytest.raises(InputError, match="unparseable_answer_policy"):
        ScoringOptions.from_params({"unparseable_answer_policy": "error"})


def test_zero_policy_counts_samples_naming_no_choice_as_wrong_votes():
    qas = [qa("1"), qa("2")]
    answers = {
        "1": [sample("yes", index=0), sample("unsuitable", index=1)],
        "2": [sample("", index=0), sample("n/a", index=1), sample("yes", index=2)],
    }
    (skipped,) = score([row(1, qas, answers)], id_columns=["id"]).results
    assert [q["score"] for q in skipped["qa_results"]] == [1.0, 1.0]
    (zero,) = score([row(1, qas, answers)], id_columns=["id"], options={"unparseable_answer_policy": "zero"}).results
    first, second = zero["qa_results"]
    assert first["votes"] == {"yes": 1, "(no choice)": 1} and first["score"] == 0.5  # a split vote: share of "yes"
    assert second["verdict"] == "(no choice)" and second["score"] == 0.0 and zero["final_score"] == 0.25


@pytest.mark.parametrize(("policy", "final"), [("error", None), ("zero", pytest.approx(1 / 3)), ("skip", 1.0)], ids=str)
def test_a_question_the_reply_leaves_out_is_missing_not_unparseable(policy, final):
    # The reply answered q1 only: q2 and q3 are missing (policy applies), never "1.0 over the answered one".
    left_out = {"kind": "missing_question", "message": "the reply has no answer for this question_id"}
    answers = {"1": [sample("yes")], "2": [sample(error=left_out)], "3": [sample(error=left_out)]}
    result = score(
        [row(1, [qa("1"), qa("2"), qa("3")], answers)], id_columns=["id"], options={"missing_answer_policy": policy}
    )
    (e,) = result.errors
    assert (e["error_kind"], e["question_ids"]) == ("missing_question", ["2", "3"])
    m = result.metrics
    assert (m["missing_answers"], m["parse_failures"], m["questions_in_all_rows"], m["rows_validated"]) == (2, 0, 3, 1)
    if final is None:
        assert result.results == [] and (e["questions"], e["missing_answers"]) == (3, 2)
        assert (m["questions_total"], m["missing_answers_in_scored_rows"]) == (0, 0)
    else:
        (r,) = result.results
        assert r["final_score"] == final and [q["status"] for q in r["qa_results"]] == ["scored", "missing", "missing"]
        assert m["missing_answers_in_scored_rows"] == 2
