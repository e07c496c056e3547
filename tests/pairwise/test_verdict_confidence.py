"""Confidence from logprobs is read at the token of the verdict the parser used, through the emulators.

The answers are tokenized the way chat models tokenize them (a leading space on word tokens, ``[[`` and
``]]`` as their own tokens, JSON punctuation merged with quotes); the expected probabilities are worked out
by hand from the numbers in each payload.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.models import ModelOutput, ModelRequest, TokenLogprob
from autorater_pipelines.pairwise import JudgeSettings, combine_samples, to_sample
from autorater_pipelines.testing import ModelEmulator

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

FASTCHAT = {"verdict_pattern": r"\[\[(A|B|C)\]\]", "verdict_map": {"A": "A", "B": "B", "C": "TIE"}}


def _p(first: float, *others: float) -> float:
    """exp(first) / (exp(first) + Σ exp(others)): the renormalized probability of the first logprob."""
    return math.exp(first) / (math.exp(first) + sum(math.exp(o) for o in others))


def _examples(tmp_path: Path) -> list[dict[str, Any]]:
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps({"id": "r0", "question": "Capital of France?", "a": "Paris.", "b": "Lyon."}) + "\n")
    return autosxs.prepare_examples(
        evaluation_dataset=str(dataset),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_a="a",
        response_column_b="b",
    )


def _judge(tmp_path: Path, model: str, url: str, **params: Any) -> dict[str, Any]:
    judgments, _, _ = autosxs.judge_examples(
        examples=_examples(tmp_path),
        task="question_answering@001",
        id_columns=["id"],
        autorater_model=model,
        autorater_parameters={
            "base_url": url,
            "cache_dir": "off",
            "progress": False,
            "max_retries": 0,
            "sampling_count": 1,
            "flip": False,
            "logprobs": 5,
            **params,
        },
    )
    assert len(judgments) == 1
    return judgments[0]


# "[[A]]" concluded, then reasoning that names B: the old reader took the last A/B-like token (" B").
VERDICT_THEN_B = [
    ("Verdict", -0.2, []),
    (":", -0.01, []),
    (" [[", -0.02, []),
    ("A", -0.4, [("A", -0.4), ("B", -1.3), ("C", -2.9)]),
    ("]]", -0.001, []),
    (" Because", -0.3, []),
    (" B", -0.05, [(" B", -0.05), (" A", -3.2)]),
    (" is", -0.1, []),
    (" worse", -0.2, []),
    (".", -0.01, []),
]


def _responder(pieces: list[tuple[str, float, list[tuple[str, float]]]]) -> Any:
    return lambda request: {"text": "".join(t for t, _, _ in pieces), "logprobs": pieces}


def test_openai_judge_confidence_comes_from_the_verdict_token_not_a_later_b(tmp_path):
    with ModelEmulator(_responder(VERDICT_THEN_B)) as emu:
        row = _judge(tmp_path, "openai/judge", emu.url + "/v1", **FASTCHAT)
    assert row["choice"] == "A"
    assert row["confidence"] == pytest.approx(
        _p(-0.4, -1.3, -2.9), abs=1e-6
    )  # 0.672; the later " B" token gave A 0.041
    assert row["samples"][0]["note"] is None


# The JSON answer's choice is B; the explanation after it starts with a lone "A" token.
JSON_B_THEN_A = [
    ('{"', -0.001, []),
    ("choice", -0.001, []),
    ('":', -0.001, []),
    (' "', -0.01, []),
    ("B", -0.7, [("B", -0.7), ("A", -0.9), ("SAME", -2.5), ("The", -3.0)]),
    ('",', -0.001, []),
    (' "', -0.01, []),
    ("explanation", -0.001, []),
    ('":', -0.001, []),
    (' "', -0.01, []),
    ("A", -0.02, [("A", -0.02), ("B", -4.0)]),
    (" is", -0.1, []),
    (" wrong", -0.1, []),
    ('."}', -0.01, []),
]


def test_gemini_judge_confidence_comes_from_the_json_choice_token(tmp_path):
    with ModelEmulator(_responder(JSON_B_THEN_A)) as emu:
        row = _judge(tmp_path, "gemini-2.5-flash", emu.url)
    assert row["choice"] == "B"
    # "The" names no verdict and leaves the normalization; SAME is a tie.
    assert row["confidence"] == pytest.approx(_p(-0.7, -0.9, -2.5), abs=1e-6)


# A first [[B]], a reconsidered [[A]] in the middle, and a concluding [[B]].
THREE_VERDICTS = [
    ("[[", -0.01, []),
    ("B", -0.9, [("B", -0.9), ("A", -0.6)]),
    ("]]", -0.001, []),
    (" hmm,", -0.5, []),
    (" [[", -0.02, []),
    ("A", -0.3, [("A", -0.3), ("B", -1.5)]),
    ("]]", -0.001, []),
    ("?", -0.4, []),
    (" Final", -0.2, []),
    (":", -0.01, []),
    (" [[", -0.02, []),
    ("B", -0.1, [("B", -0.1), ("A", -2.5), ("C", -4.0)]),
    ("]]", -0.001, []),
]


@pytest.mark.parametrize(
    "match, expected",
    [
        ("last", _p(-0.1, -2.5, -4.0)),
        ("first", _p(-0.9, -0.6)),
    ],
)
def test_verdict_match_picks_the_token_whose_probability_is_used(tmp_path, match, expected):
    with ModelEmulator(_responder(THREE_VERDICTS)) as emu:
        row = _judge(tmp_path, "openai/judge", emu.url + "/v1", **FASTCHAT, verdict_match=match)
    assert row["choice"] == "B"
    assert row["confidence"] == pytest.approx(expected, abs=1e-6)
    assert "took B" in row["samples"][0]["note"]


def test_unique_matches_that_agree_use_the_last_one():
    pieces = [("[[", -0.01, ()), ("B", -0.9, (("B", -0.9), ("A", -0.6))), ("]]", 0.0, ()), (" so", -1.0, ())]
    pieces += [(" [[", -0.01, ()), ("B", -0.2, (("B", -0.2), ("A", -1.7))), ("]]", 0.0, ())]
    sample = _sample(pieces, {**FASTCHAT, "verdict_match": "unique"})
    assert sample.distribution == pytest.approx({"B": _p(-0.2, -1.7), "A": _p(-1.7, -0.2)})


def _sample(pieces: list[tuple[str, float, tuple]], params: dict[str, Any] | None = None, flipped: bool = False):
    output = ModelOutput(
        text="".join(t for t, _, _ in pieces), logprobs=tuple(TokenLogprob(t, lp, tuple(top)) for t, lp, top in pieces)
    )
    return to_sample(_request(flipped), output, JudgeSettings.parse(params))


def _request(flipped: bool = False) -> ModelRequest:
    return ModelRequest(parts=("p",), key={"id": "r0", "flipped": flipped, "sample_index": 0}, sample_index=0)


def test_a_verdict_token_that_carries_brackets_is_read_in_its_frame():
    # some tokenizers merge "[[" with the letter: alternatives "[[B" / "[[C" are read as B / TIE
    pieces = [("Verdict", -0.1, ()), (":", 0.0, ()), (" [[A", -0.5, ((" [[A", -0.5), (" [[B", -1.0), (" [[C", -3.0)))]
    pieces += [("]]", 0.0, ())]
    sample = _sample(pieces, FASTCHAT)
    assert sample.choice == "A"
    assert sample.distribution == pytest.approx(
        {"A": _p(-0.5, -1.0, -3.0), "B": _p(-1.0, -0.5, -3.0), "TIE": _p(-3.0, -0.5, -1.0)}
    )


def test_swapped_sample_probabilities_are_mapped_back_to_models():
    pieces = [('{"choice": "', -0.01, ()), ("A", -0.2, (("A", -0.2), ("B", -1.8))), ('"}', 0.0, ())]
    sample = _sample(pieces, flipped=True)
    assert sample.choice == "B"
    assert sample.distribution == pytest.approx({"B": _p(-0.2, -1.8), "A": _p(-1.8, -0.2)})


@pytest.mark.parametrize(
    "text, pieces, reason",
    [
        # SAME split over two tokens: neither token's probability is the verdict's
        (
            None,
            [('{"choice": "', 0.0, ()), ("S", -0.7, (("S", -0.7), ("A", -1.0))), ('AME"}', 0.0, ())],
            r"the verdict 'SAME' is not one token \(tokens \['S', 'AME\"}'\]\)",
        ),
        # the tokens do not spell the answer (logprobs of another candidate, or of a rewritten text)
        (
            "I pick [[A]] over B",
            [("[[", 0.0, ()), ("B", -0.1, (("B", -0.1), ("A", -2.0))), ("]]", 0.0, ())],
            r"the 3 log-probability tokens do not spell the answer text around the verdict",
        ),
        # chosen-token logprobs only (top_logprobs 0): no alternatives to weigh against
        (
            None,
            [("[[", 0.0, ()), ("A", -0.1, ()), ("]]", 0.0, ())],
            r"the verdict token 'A' came without alternatives",
        ),
    ],
)
def test_a_verdict_token_that_cannot_be_located_gives_no_confidence_and_says_why(text, pieces, reason):
    output = ModelOutput(
        text=text or "".join(t for t, _, _ in pieces),
        logprobs=tuple(TokenLogprob(t, lp, tuple(top)) for t, lp, top in pieces),
    )
    params = None if pieces[0][0].startswith("{") else FASTCHAT
    sample = to_sample(_request(), output, JudgeSettings.parse(params))
    assert sample.choice in ("A", "TIE")
    assert sample.distribution is None
    assert re.search(reason, sample.to_dict()["note"]), sample.to_dict()["note"]
    choice, confidence, _ = combine_samples([sample])
    assert (choice, confidence) == (sample.choice, None)


def test_without_logprobs_the_confidence_is_the_vote_share():
    sample = _sample([("[[", 0.0, ()), ("A", -0.1, ()), ("]]", 0.0, ())], FASTCHAT)
    bare = to_sample(_request(), ModelOutput(text="[[A]]"), JudgeSettings.parse(FASTCHAT))
    assert sample.choice == bare.choice == "A"
    assert bare.distribution is None and bare.confidence_reason is None
    assert combine_samples([bare, bare]) == ("A", 1.0, "[[A]]")


def test_a_character_split_over_two_tokens_elsewhere_does_not_hide_the_verdict_token():
    # OpenAI-style tokens of an emoji split over two byte tokens show as U+FFFD and do not spell the text
    after = [("[[", 0.0, ()), ("B", -0.3, (("B", -0.3), ("A", -1.6))), ("]]", 0.0, ()), (" \ufffd", -0.1, ())]
    after += [("\ufffd", -0.1, ())]
    before = [("Great", -0.1, ()), (" \ufffd", -0.1, ()), ("\ufffd", -0.1, ()), (" [[", 0.0, ())]
    before += [("B", -0.3, (("B", -0.3), ("A", -1.6))), ("]]", 0.0, ())]
    for pieces, text in ((after, "[[B]] \U0001f44d"), (before, "Great \U0001f44d [[B]]")):
        output = ModelOutput(text=text, logprobs=tuple(TokenLogprob(t, lp, tuple(top)) for t, lp, top in pieces))
        sample = to_sample(_request(), output, JudgeSettings.parse(FASTCHAT))
        assert sample.distribution == pytest.approx({"B": _p(-0.3, -1.6), "A": _p(-1.6, -0.3)}), text


# A judge that always names the first position: with flip on, its two samples split (A, then B once mapped back).
FIRST_POSITION = [("[[", -0.01, []), ("A", -0.2, [("A", -0.2), ("B", -1.9), ("C", -2.3)]), ("]]", -0.001, [])]


@pytest.mark.parametrize("with_logprobs", [True, False])
def test_a_split_vote_tie_has_one_meaning_of_confidence_with_or_without_logprobs(tmp_path, with_logprobs):
    # Found by the newcomer trial: the same split-vote TIE had confidence 1.0 without logprobs, 0.059 with.
    params: dict[str, Any] = {**FASTCHAT, "sampling_count": 2, "flip": True}
    if not with_logprobs:
        params["logprobs"] = None
    with ModelEmulator(_responder(FIRST_POSITION)) as emulator:
        row = _judge(tmp_path, "openai/judge", emulator.url + "/v1", **params)
    assert [s["choice"] for s in sorted(row["samples"], key=lambda s: s["flipped"])] == ["A", "B"]
    assert row["choice"] == "TIE"
    # Support for TIE: mean P(TIE) (the "C" token) over the two samples with logprobs; the TIE vote share
    # (no sample said TIE) without.
    expected = _p(-2.3, -0.2, -1.9) if with_logprobs else 0.0
    assert row["confidence"] == pytest.approx(expected, abs=1e-6)
    assert row["confidence"] < 0.1


def test_confidence_is_the_mean_support_for_the_choice_when_only_some_samples_have_logprobs():
    settings = JudgeSettings.parse(FASTCHAT)
    pieces = tuple(TokenLogprob(t, lp, tuple(top)) for t, lp, top in FIRST_POSITION)
    with_lp = to_sample(_request(), ModelOutput(text="[[A]]", logprobs=pieces), settings)
    bare = to_sample(_request(), ModelOutput(text="[[A]]"), settings)
    choice, confidence, _ = combine_samples([with_lp, bare])
    assert choice == "A"
    assert confidence == pytest.approx((_p(-0.2, -1.9, -2.3) + 1.0) / 2, abs=1e-6)
