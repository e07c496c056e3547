"""The panel's vote over its jurors' row verdicts, and the agreement between jurors."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise.agreement import cohens_kappa, fleiss_kappa, juror_agreement
from autorater_pipelines.pairwise.panel import check_panel, check_panel_vote, juror_vote, panel_verdict

VOTES = {  # votes → (majority, mean), worked out by hand from the rules in the issue
    ("A", "A", "B"): ("A", "A"),
    ("A", "B", None): ("TIE", "TIE"),  # a 1–1 split with one abstention
    ("A", None, None): ("A", "A"),  # 1 of 1 voters is a strict majority
    (None, None, None): ("ERROR", "ERROR"),
    ("A", "TIE", "TIE"): ("TIE", "A"),  # mean 2/3
    ("B", "TIE", "TIE"): ("TIE", "B"),  # mean 1/6
    ("A", "B", "TIE"): ("TIE", "TIE"),  # mean exactly 1/2
    ("A", "A", "B", "B"): ("TIE", "TIE"),
    ("A", "A", "B", "TIE"): ("TIE", "A"),  # 2 of 4 is no strict majority; mean 5/8
    ("TIE", "TIE", "A"): ("TIE", "A"),
}


@pytest.mark.parametrize("votes", sorted(VOTES, key=str))
def test_majority_and_mean_votes(votes):
    majority, mean = VOTES[votes]
    assert panel_verdict(votes, "majority")[0] == majority
    assert panel_verdict(votes, "mean")[0] == mean


def test_confidence_is_the_share_of_voters_agreeing_and_preference_the_mean():
    assert panel_verdict(["A", "A", "B", None], "majority") == ("A", pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert panel_verdict(["A", "B", None], "majority") == ("TIE", 0.0, 0.5)
    assert panel_verdict([None, None], "mean") == ("ERROR", None, None)


def test_a_juror_abstains_on_an_error_or_a_one_order_row():
    assert juror_vote({"choice": "A", "complete": True}) == "A"
    assert juror_vote({"choice": "TIE", "complete": True}) == "TIE"
    assert juror_vote({"choice": "A", "complete": False}) is None  # judged in one order only
    assert juror_vote({"choice": "ERROR", "complete": False}) is None


def test_fleiss_kappa_reproduces_the_worked_example():
    # The 10 subjects × 14 raters × 5 categories example of Fleiss' kappa on Wikipedia (after Fleiss 1971):
    # P̄ = 0.378, P̄e = 0.213, κ = 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.2099, abs=1e-4)
    assert fleiss_kappa([[3, 0], [0, 3]]) == 1.0
    assert fleiss_kappa([[2, 0], [2, 0]]) is None  # every rating the same category: undefined
    with pytest.raises(ValueError, match=r"same number of ratings, got totals \[2, 3\]"):
        fleiss_kappa([[2, 0], [2, 1]])


def test_pairwise_cohens_kappa_equals_scikit_learn():
    left = ["A", "B", "TIE", "A", "A", "B", "TIE", "B"]
    right = ["A", "B", "A", "A", "TIE", "B", "TIE", "A"]
    assert cohens_kappa(left, right) == pytest.approx(cohen_kappa_score(left, right), abs=1e-12)
    assert cohens_kappa(["A", "A"], ["A", "A"]) is None


def test_agreement_matrix_counts_rows_both_jurors_rated():
    ratings = [["A", "A", None], ["B", "A", "B"], ["TIE", "TIE", "TIE"], [None, "B", "B"]]
    out = juror_agreement(["x", "y", "z"], ratings)
    assert out["fleiss_kappa_row_count"] == 2  # rows every juror rated
    assert out["pairwise_agreement_count"]["x"] == {"x": 3, "y": 3, "z": 2}
    assert out["pairwise_agreement"]["x"]["y"] == pytest.approx(2 / 3)
    assert out["pairwise_agreement"]["y"]["z"] == pytest.approx(2 / 3)
    assert out["pairwise_agreement"]["x"]["z"] == 1.0
    assert out["pairwise_agreement"]["x"]["x"] == 1.0


def test_panel_shape_errors_name_the_item():
    with pytest.raises(InputError, match=r"autorater_panel\[2\]: model spec must be a non-empty string, got 3"):
        check_panel(["replay/a", "replay/b", 3])
    with pytest.raises(
        InputError, match=r"autorater_panel\[1\]: ' replay/a' is the same model as autorater_panel\[0\]"
    ):
        check_panel(["replay/a", " replay/a"])
    assert check_panel(["replay/a ", "openai/b"], autorater_model="gemini-2.5-flash") == ["replay/a", "openai/b"]


@pytest.mark.parametrize(
    ("panel", "index", "first"),
    [
        (["gemini-2.5-flash", "vertex/gemini-2.5-flash"], 1, 0),
        (["openai/x", "gemini-2.5-flash", "GEMINI-2.5-flash"], 2, 1),
        (["gemini/gemini-2.5-pro", "publishers/google/models/Gemini-2.5-Pro"], 1, 0),
        (["openai/GPT-4o", "openai/gpt-4o"], 1, 0),
    ],
)
def test_two_spellings_of_one_model_are_refused_naming_both(panel, index, first):
    with pytest.raises(
        InputError,
        match=rf"autorater_panel\[{index}\]: {panel[index]!r} is the same model as "
        rf"autorater_panel\[{first}\] \({panel[first]!r}\)",
    ):
        check_panel(panel)


def test_replay_paths_naming_one_file_are_refused(tmp_path, monkeypatch):
    (tmp_path / "quickstart").mkdir()
    (tmp_path / "x").mkdir()
    monkeypatch.chdir(tmp_path)
    relative, absolute = "replay/quickstart/replay.jsonl", f"replay/{tmp_path}/x/../quickstart/replay.jsonl"
    with pytest.raises(InputError, match=r"autorater_panel\[1\]: .* is the same model as autorater_panel\[0\]"):
        check_panel([relative, absolute])
    with pytest.raises(InputError, match=r"autorater_panel\[1\]: .* is the same model as autorater_panel\[0\]"):
        check_panel([f"replay/{tmp_path}/x/a.jsonl", f"replay/{tmp_path}/x/./a.jsonl"])
    with pytest.raises(InputError, match=r"autorater_panel\[1\]: .* is the same model as autorater_panel\[0\]"):
        check_panel(["replay/gs://b/r/a.jsonl", "replay/gs://b/r//x/../a.jsonl"])
    # different files, a different Gemini model, and a case-differing replay file stay distinct jurors
    specs = ["replay/quickstart/a.jsonl", "replay/quickstart/A.jsonl", "gemini-2.5-flash", "gemini-2.5-pro"]
    assert check_panel(specs) == specs
    assert check_panel([]) == [] and check_panel(None) == []
    assert check_panel_vote(" Mean ") == "mean" and check_panel_vote("") == ""
