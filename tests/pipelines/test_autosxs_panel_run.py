"""A panel of judges (``autorater_panel``) end to end: recorded jurors on LLMBar's human-labelled MT-Bench split,
and a mixed panel of a Gemini, an OpenAI-compatible and a replay juror through the emulators.

Expected figures are computed here from the raw judge texts with the README's regex
(``(?:^|\\n) ?Output \\((a|b)\\)``), not with the code under test.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from autorater_pipelines.autosxs import judge_examples
from autorater_pipelines.autosxs.export import JUDGMENTS_BIGQUERY_FIELDS, aggregate_judgments
from autorater_pipelines.cli import main
from autorater_pipelines.io import infer_schema, read_jsonl
from autorater_pipelines.testing import ModelEmulator, Refusal
from autorater_pipelines.testing.judges import length_judge, responses_in_prompt

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
VERDICT = re.compile(r"(?:^|\n) ?Output \((a|b)\)")
UNPARSEABLE = "Both outputs are fine."


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _llmbar(shared_data: Path, tmp_path: Path) -> tuple[dict, dict[str, dict[tuple[str, bool], str]], list[dict]]:
    """Params with a 3-juror panel, each juror's raw texts by (row id, flipped), and the dataset rows.

    Jurors: GPT-4 as recorded (both orders); GPT-4's swapped-order verdict mirrored into the original order
    (every 10th row, from the 4th, recorded in the swapped order only: it abstains there); a length judge (the
    longer output shown wins; every 7th row, from the 1st, an unparseable original-order answer: it abstains).
    """
    spec = importlib.util.spec_from_file_location("llmbar", REPO / "examples" / "llmbar_mtbench.py")
    llmbar = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(llmbar)
    params = json.loads(Path(llmbar.convert(str(shared_data / "llmbar-mtbench"), str(tmp_path / "llmbar"))).read_text())
    dataset = _read_jsonl(Path(params["evaluation_dataset"]))
    gpt4 = {(r["id"], r["flipped"]): r["response"] for r in _read_jsonl(Path(params["autorater_model"][7:]))}
    mirrored, length = {}, {}
    for index, row in enumerate(dataset):
        swapped = gpt4[(row["id"], True)]
        found = VERDICT.search(swapped)
        mirrored[(row["id"], True)] = swapped
        if index % 10 != 3:
            mirrored[(row["id"], False)] = f"Output ({'b' if found.group(1) == 'a' else 'a'})" if found else swapped
        for flipped in (False, True):
            first, second = (row["output_2"], row["output_1"]) if flipped else (row["output_1"], row["output_2"])
            length[(row["id"], flipped)] = f"Output ({'a' if len(first) > len(second) else 'b'})"
        if index % 7 == 0:
            length[(row["id"], False)] = UNPARSEABLE
    texts = {"gpt4": gpt4, "mirrored": mirrored, "length": length}
    panel = []
    for name, recorded in texts.items():
        path = tmp_path / f"{name}.jsonl"
        _write_jsonl(path, [{"id": i, "flipped": f, "response": t} for (i, f), t in recorded.items()])
        panel.append(f"replay/{path}")
    params["autorater_panel"] = panel
    params["autorater_model"] = ""
    params["autorater_parameters"]["temperature"] = 0  # a greedy judge: an unparseable answer is not re-asked
    return params, {spec: texts[name] for spec, name in zip(panel, texts, strict=True)}, dataset


def _juror_verdict(texts: dict[tuple[str, bool], str], row_id: str) -> str | None:
    """A juror's row verdict from its raw texts: None (abstains) unless both orders give a verdict."""
    choices = []
    for flipped in (False, True):
        found = VERDICT.search(texts.get((row_id, flipped), ""))
        if found is None:
            return None
        first_wins = found.group(1) == "a"
        choices.append("A" if first_wins != flipped else "B")  # flipped: model B was shown first
    return choices[0] if choices[0] == choices[1] else "TIE"


def _majority(votes: list[str | None]) -> str:
    cast = [v for v in votes if v is not None]
    if not cast:
        return "ERROR"
    label, count = Counter(cast).most_common(1)[0]
    return label if count * 2 > len(cast) else "TIE"


def _mean(votes: list[str | None]) -> str:
    cast = [{"A": 1.0, "TIE": 0.5, "B": 0.0}[v] for v in votes if v is not None]
    if not cast:
        return "ERROR"
    mean = sum(cast) / len(cast)
    return "TIE" if math.isclose(mean, 0.5) else "A" if mean > 0.5 else "B"


def _accuracy(choices: list[str], human: list[str]) -> tuple[int, int]:
    pairs = [(h, c) for h, c in zip(human, choices, strict=True) if c in ("A", "B")]
    return sum(h == c for h, c in pairs), len(pairs)


def _fleiss(ratings: list[list[str]]) -> float:
    """Fleiss (1971), eqs. 2–9, written out again for the check."""
    n, rows = len(ratings[0]), len(ratings)
    cats = ("A", "B", "TIE")
    agreement = [(sum(r.count(c) ** 2 for c in cats) - n) / (n * (n - 1)) for r in ratings]
    p = {c: sum(r.count(c) for r in ratings) / (rows * n) for c in cats}
    p_bar, p_e = sum(agreement) / rows, sum(v * v for v in p.values())
    return (p_bar - p_e) / (1 - p_e)


@pytest.mark.pipeline
def test_llmbar_panel_of_recorded_judges_equals_the_raw_texts(tmp_path, shared_data, capsys):
    params, texts, dataset = _llmbar(shared_data, tmp_path)
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / "out"
    run = ["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"]
    # the length juror abstains on every 7th row (1/7 > the default --max-failed-share 0.1), as a single judge would
    assert main([*run, "--max-failed-share", "0.2"]) == 0

    human = [r["human_preference"] for r in dataset]
    votes = {spec: [_juror_verdict(t, r["id"]) for r in dataset] for spec, t in texts.items()}
    expected = [_majority([votes[s][k] for s in texts]) for k in range(len(dataset))]
    judgments = _read_jsonl(out / "judgments.jsonl")
    metrics = json.loads((out / "metrics.json").read_text())
    assert [j["choice"] for j in judgments] == expected
    correct, count = _accuracy(expected, human)
    assert (metrics["alignment_count"], metrics["accuracy"]) == (count, pytest.approx(correct / count))
    assert metrics["evaluation_count"] == 200 and metrics["judged_count"] == sum(c != "ERROR" for c in expected)
    assert metrics["panel_vote"] == "majority" and metrics["panel_size"] == 3

    abstained = {spec: sum(v is None for v in vs) for spec, vs in votes.items()}
    assert list(abstained.values()) == [0, 20, 29]  # 20 rows recorded in one order; 29 unparseable answers
    for spec, juror_votes in votes.items():
        section = metrics["jurors"][spec]
        own_correct, own_count = _accuracy([v or "ERROR" for v in juror_votes], human)
        assert section["abstention_count"] == abstained[spec]
        assert (section["alignment_count"], section["accuracy"]) == (own_count, pytest.approx(own_correct / own_count))
    gpt4 = metrics["jurors"][params["autorater_panel"][0]]  # alone, GPT-4 gives the published figures
    assert (gpt4["original_order_correct_count"], gpt4["swapped_order_correct_count"]) == (159, 165)
    assert gpt4["position_consistency_count"] == 174 and gpt4["autorater_tie_rate"] == pytest.approx(26 / 200)

    full = [[votes[s][k] for s in texts] for k in range(len(dataset))]
    full = [r for r in full if None not in r]
    agreement = metrics["juror_agreement"]
    assert agreement["fleiss_kappa_row_count"] == len(full)
    assert agreement["fleiss_kappa"] == pytest.approx(_fleiss(full), abs=1e-12)
    first, second = params["autorater_panel"][:2]
    both = [(a, b) for a, b in zip(votes[first], votes[second], strict=True) if a and b]
    assert agreement["pairwise_agreement"][first][second] == pytest.approx(sum(a == b for a, b in both) / len(both))
    assert agreement["pairwise_agreement_count"][second][first] == len(both)

    # Samples name their juror; error rows name the juror whose answer failed.
    assert [s["juror"] for s in judgments[0]["samples"]] == [s for s in params["autorater_panel"] for _ in (0, 1)]
    errors = _read_jsonl(out / "error_messages.jsonl")
    assert Counter(e["juror"] for e in errors) == {params["autorater_panel"][1]: 20, params["autorater_panel"][2]: 29}
    page = (out / "report.html").read_text()
    assert 'id="panel-agreement"' in page and f"Fleiss' kappa {agreement['fleiss_kappa']:.3f} over the" in page
    assert f"<td>{100 * gpt4['accuracy']:.1f}%</td>" in page and f"<td>{100 * metrics['accuracy']:.1f}%</td>" in page
    printed = capsys.readouterr().out
    assert (
        f"panel of 3 jurors (majority vote): Fleiss' kappa {agreement['fleiss_kappa']:.3f} over {len(full)} rows"
        in (printed)
    )
    mirrored = params["autorater_panel"][1]
    assert f"    {mirrored}: 180 votes, 20 abstained, accuracy " in printed

    # autorater rescore keeps the panel's sections, re-scored (ties as half a win, for each juror too).
    assert main(["rescore", str(out), "--params", '{"ties_as_half": true}']) == 0
    rescored = json.loads((out / "metrics.json").read_text())
    assert rescored["juror_agreement"] == agreement and rescored["jurors"][mirrored]["ties_as_half"] is True
    assert rescored["jurors"][mirrored]["abstention_count"] == 20


def test_llmbar_panel_mean_vote_equals_the_raw_texts(tmp_path, shared_data):
    params, texts, dataset = _llmbar(shared_data, tmp_path)
    examples = [
        {
            "id": r["id"],
            "inference_instruction": r["input"],
            "response_a": r["output_1"],
            "response_b": r["output_2"],
            "human_preference": r["human_preference"],
        }
        for r in dataset
    ]
    judgments, errors, summary = judge_examples(
        examples=examples,
        task=params["task"],
        id_columns=["id"],
        autorater_parameters=params["autorater_parameters"],
        autorater_panel=params["autorater_panel"],
        panel_vote="mean",
    )
    votes = [[_juror_verdict(t, r["id"]) for t in texts.values()] for r in dataset]
    assert [j["choice"] for j in judgments] == [_mean(v) for v in votes]
    assert [j["choice"] for j in judgments] != [_majority(v) for v in votes]  # A, TIE, TIE: mean A, majority TIE
    metrics = aggregate_judgments(judgments=judgments, human_preference_column="human_preference")
    correct, count = _accuracy([_mean(v) for v in votes], [r["human_preference"] for r in dataset])
    assert (metrics["alignment_count"], metrics["accuracy"]) == (count, pytest.approx(correct / count))
    assert metrics["panel_vote"] == "mean" and summary.evaluation_count == 200 and len(errors) == 49
    for spec in params["autorater_panel"]:  # each juror's section is what a run with that juror alone gives
        alone, _, _ = judge_examples(
            examples=examples,
            task=params["task"],
            id_columns=["id"],
            autorater_model=spec,
            autorater_parameters=params["autorater_parameters"],
        )
        single = aggregate_judgments(judgments=alone, human_preference_column="human_preference")
        section = {k: v for k, v in metrics["jurors"][spec].items() if k not in ("vote_count", "abstention_count")}
        assert section == single
    schema = {f["name"]: f for f in infer_schema(judgments, JUDGMENTS_BIGQUERY_FIELDS)}  # a BigQuery export's
    assert (schema["jurors"]["type"], schema["jurors"]["mode"]) == ("RECORD", "REPEATED")
    assert {f["name"]: f["type"] for f in schema["samples"]["fields"]}["juror"] == "STRING"
    assert {f["name"]: f["type"] for f in schema["jurors"]["fields"]}["confidence"] == "FLOAT"


def _shorter_judge(request) -> str:
    responses = responses_in_prompt(request.prompt_text)
    first, second = len(responses.get("A", "")), len(responses.get("B", ""))
    choice = "A" if first < second else "B" if second < first else "SAME"
    return json.dumps({"explanation": "The shorter one wins.", "choice": choice})


@pytest.mark.pipeline
def test_mixed_panel_of_gemini_openai_and_replay_jurors(tmp_path, monkeypatch):
    with ModelEmulator(responder=length_judge) as gemini, ModelEmulator(responder=_shorter_judge) as openai:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.url)
        monkeypatch.setenv("OPENAI_BASE_URL", openai.url + "/v1")
        params = json.loads((QUICKSTART / "params.json").read_text())
        replay = f"replay/{QUICKSTART / 'replay.jsonl'}"
        params.update(
            evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
            autorater_model="",
            autorater_panel=["gemini-2.5-flash", "openai/shorter-judge", replay],
            project="test-project",
            location="us-central1",
            autorater_parameters={"cache_dir": str(tmp_path / "cache"), "progress": False},
        )
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(params))
        out = tmp_path / "out"
        assert main(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"]) == 0
        assert {r.protocol for r in gemini.requests} == {"vertex"} and gemini.call_count == 12
        assert {r.protocol for r in openai.requests} == {"openai"} and openai.call_count == 12

    rows = read_jsonl(str(QUICKSTART / "dataset.jsonl"))
    judgments = {j["question_id"]: j for j in _read_jsonl(out / "judgments.jsonl")}
    replayed = {"q1": "A", "q2": "B", "q3": "TIE", "q4": "TIE", "q5": "A", "q6": "A"}  # test_autosxs_run's figures
    for row in rows:
        a, b = len(row["answer_model_a"]), len(row["answer_model_b"])
        longer = "A" if a > b else "B" if b > a else "TIE"
        shorter = {"A": "B", "B": "A", "TIE": "TIE"}[longer]
        juror_choices = [j["choice"] for j in judgments[row["question_id"]]["jurors"]]
        assert juror_choices == [longer, shorter, replayed[row["question_id"]]]
        assert judgments[row["question_id"]]["choice"] == _majority(juror_choices)
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics["jurors"]) == params["autorater_panel"]
    assert metrics["jurors"]["gemini-2.5-flash"]["model_call_attempt_count"] == 12
    assert metrics["jurors"]["openai/shorter-judge"]["input_token_count"] > 0
    assert metrics["juror_agreement"]["pairwise_agreement"]["gemini-2.5-flash"]["openai/shorter-judge"] == 0.0


@pytest.mark.pipeline
def test_a_failing_juror_is_held_to_max_failed_share(tmp_path, monkeypatch, capsys):
    rows = read_jsonl(str(QUICKSTART / "dataset.jsonl"))
    refused = {r["answer_model_a"] for r in rows[:3]}  # the server refuses the first 3 of 6 rows, in both orders

    def half_refused(request):
        if refused & set(responses_in_prompt(request.prompt_text).values()):
            raise Refusal(400, "Request contains an invalid argument.")
        return length_judge(request)

    with ModelEmulator(responder=half_refused) as gemini:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.url)
        params = json.loads((QUICKSTART / "params.json").read_text())
        params.update(
            evaluation_dataset=str(QUICKSTART / "dataset.jsonl"),
            autorater_model="",
            autorater_panel=[f"replay/{QUICKSTART / 'replay.jsonl'}", "gemini-2.5-flash"],
            project="test-project",
            location="us-central1",
            autorater_parameters={"cache_dir": str(tmp_path / "cache"), "progress": False},
        )
        params_path = tmp_path / "params.json"
        params_path.write_text(json.dumps(params))
        run = ["run", "autosxs", "--params", str(params_path), "--quiet"]
        capsys.readouterr()
        assert main([*run, "--output-dir", str(tmp_path / "out")]) == 1
        printed = capsys.readouterr()
        # the replay juror votes on every row, so the panel itself judged all 6
        assert "AutoSxS: 6 examples, 6 judged, 0 with errors (panel); juror errors: gemini-2.5-flash 3" in printed.out
        assert (
            "error: juror 'gemini-2.5-flash': 3 of 6 rows (50%) ended with an error, more than --max-failed-share "
            "0.1; see error_messages.jsonl"
        ) in printed.err
        metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
        assert metrics["error_count"] == 0 and metrics["jurors"]["gemini-2.5-flash"]["error_count"] == 3
        # a share the juror stays within: exit 0
        assert main([*run, "--output-dir", str(tmp_path / "out2"), "--max-failed-share", "0.5"]) == 0


BAD_PANELS = {
    "empty panel with a vote": ({"autorater_panel": [], "panel_vote": "mean"}, r"panel_vote: is set to 'mean'"),
    "one juror": ({"autorater_panel": ["gemini-2.5-flash"]}, r"autorater_panel: a panel needs at least 2 jurors"),
    "panel and autorater_model": (
        {"autorater_panel": ["replay/a.jsonl", "replay/b.jsonl"], "autorater_model": "openai/gpt-4o"},
        r"autorater_model: 'openai/gpt-4o' cannot be combined with autorater_panel",
    ),
    "bad spec": (
        {"autorater_panel": [f"replay/{QUICKSTART / 'replay.jsonl'}", "nosuch/judge"]},
        r"autorater_panel\[1\]: unknown model provider 'nosuch'",
    ),
    "missing recording": (
        {"autorater_panel": [f"replay/{QUICKSTART / 'replay.jsonl'}", "replay/missing.jsonl"]},
        r"autorater_panel\[1\]: replay file 'missing.jsonl' not found \(resolved to '/.*/missing\.jsonl'\); check the path",
    ),
    "bad vote": (
        {"autorater_panel": ["replay/a.jsonl", "replay/b.jsonl"], "panel_vote": "median"},
        r"panel_vote: unsupported panel_vote 'median'; valid: \['majority', 'mean'\]",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_PANELS))
def test_bad_panels_fail_before_any_call_naming_the_parameter(case, tmp_path, capsys):
    overrides, message = BAD_PANELS[case]
    params = json.loads((QUICKSTART / "params.json").read_text())
    params.update({"evaluation_dataset": str(QUICKSTART / "dataset.jsonl"), "autorater_model": "", **overrides})
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / "out"
    assert main(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"]) != 0
    assert re.search(message, capsys.readouterr().err)
    assert not out.exists()


@pytest.mark.pipeline
@pytest.mark.parametrize("vote", ["majority", "mean"])
def test_dataframe_panel_gives_the_pipeline_metrics(vote, tmp_path, shared_data):
    """``autosxs.evaluate(df, autorater_panel=…)`` judges through the pipeline's step: the same metrics.json."""
    import pandas as pd

    from autorater_pipelines import autosxs

    params, texts, dataset = _llmbar(shared_data, tmp_path)
    params["panel_vote"] = vote
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / "out"
    run = ["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"]
    assert main([*run, "--max-failed-share", "0.2"]) == 0  # the length juror abstains on 1/7 of the rows
    expected = json.loads((out / "metrics.json").read_text())

    df = pd.read_json(params["evaluation_dataset"], lines=True, dtype=False)
    kwargs = {k: v for k, v in params.items() if k != "evaluation_dataset"}
    judgments, metrics = autosxs.evaluate(df, **kwargs, progress=False)
    assert metrics == expected
    assert metrics["panel_vote"] == vote and set(metrics["jurors"]) == set(texts)
    votes = [[_juror_verdict(t, r["id"]) for t in texts.values()] for r in dataset]
    assert list(judgments["choice"]) == [(_mean if vote == "mean" else _majority)(v) for v in votes]
    assert list(judgments["panel_vote"]) == [vote] * len(dataset)
    assert [[j["juror"] for j in row] for row in judgments["jurors"]] == [params["autorater_panel"]] * len(dataset)
