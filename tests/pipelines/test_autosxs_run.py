"""``autorater run autosxs``: the compiled template in the KFP local runner, end to end."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _run(params: dict, tmp_path: Path, name: str = "out", *flags: str) -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params))
    out = tmp_path / name
    return main(["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet", *flags]), out


def _quickstart_params() -> dict:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params["evaluation_dataset"] = str(QUICKSTART / "dataset.jsonl")
    params["autorater_model"] = f"replay/{QUICKSTART / 'replay.jsonl'}"
    return params


@pytest.mark.pipeline
def test_quickstart_from_relative_paths(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)  # README runs it from the repository root with relative paths
    out = tmp_path / "quickstart"
    code = main(["run", "autosxs", "--params", "examples/quickstart/params.json", "--output-dir", str(out), "--quiet"])
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".autorater-outputs.json",  # the marker: what this run wrote (a re-run replaces only those)
        "error_messages.jsonl",
        "judgments.jsonl",
        "metrics.json",
        "report.html",
    ]
    page = (out / "report.html").read_text()
    # The page names OUT, not the staging folder the pipeline's report step read (deleted when the run ends).
    assert f"<title>AutoSxS report — {out}</title>" in page and f'<div class="meta">{out} · ' in page
    assert ".partial" not in page and "pipeline_root" not in page
    judgments = {j["question_id"]: j for j in _read_jsonl(out / "judgments.jsonl")}
    # Expected choices worked out by hand from replay.jsonl (verdicts are positions; flipped samples swap).
    assert {k: j["choice"] for k, j in judgments.items()} == {
        "q1": "A",
        "q2": "B",
        "q3": "TIE",
        "q4": "TIE",
        "q5": "A",
        "q6": "A",
    }
    assert judgments["q3"]["explanation"].startswith("Samples disagreed")
    assert [s["flipped"] for s in judgments["q1"]["samples"]] == [False, True]
    assert judgments["q1"]["inference_instruction"].startswith("What is the boiling point")
    assert _read_jsonl(out / "error_messages.jsonl") == []
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["autorater_model_a_win_rate"] == pytest.approx(3 / 6)
    assert metrics["autorater_model_b_win_rate"] == pytest.approx(1 / 6)
    assert metrics["autorater_tie_rate"] == pytest.approx(2 / 6)
    assert metrics["position_consistency"] == pytest.approx(5 / 6)
    assert metrics["alignment_count"] == 4 and metrics["accuracy"] == 1.0
    printed = capsys.readouterr().out
    assert "model A win rate   50.0%" in printed and "Cohen's kappa 1.000" in printed


@pytest.mark.pipeline
def test_gemini_autorater_through_the_emulator_survives_429s_and_caches(tmp_path):
    cache = tmp_path / "cache"
    with ModelEmulator(responder=length_judge) as emulator:
        params = _quickstart_params()
        params.update(
            autorater_model="gemini-2.5-flash",
            project="test-project",
            location="us-central1",
            autorater_parameters={
                "base_url": emulator.url,
                "cache_dir": str(cache),
                "initial_backoff_s": 0.05,
                "max_backoff_s": 0.2,
                "progress": False,
            },
        )
        emulator.inject_failures(3, status=429, retry_after_s=0.2)
        code, out = _run(params, tmp_path, "first")
        assert code == 0
        # 6 examples × 2 samples, plus the 3 injected 429s that were retried.
        assert emulator.call_count == 12 + 3
        assert {r.protocol for r in emulator.requests} == {"vertex"}
        assert all(r.response_schema and "choice" in r.response_schema["properties"] for r in emulator.requests)
        judgments = _read_jsonl(out / "judgments.jsonl")
        dataset = {r["question_id"]: r for r in _read_jsonl(QUICKSTART / "dataset.jsonl")}
        for j in judgments:  # the length judge prefers the longer answer in both orders
            a, b = len(dataset[j["question_id"]]["answer_model_a"]), len(dataset[j["question_id"]]["answer_model_b"])
            assert j["choice"] == ("A" if a > b else "B" if b > a else "TIE")
            assert j["confidence"] == 1.0
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["model_call_attempt_count"] == 15 and metrics["cached_sample_count"] == 0
        assert metrics["input_token_count"] > 0

        # Second run in 2 parallel shards: served from the cache, merged back into dataset order.
        params["autorater_parameters"] = {**params["autorater_parameters"], "shards": 2}
        code, again = _run(params, tmp_path, "second")
        assert code == 0
        assert emulator.call_count == 15, "the second run must be served from the cache"
        second = json.loads((again / "metrics.json").read_text())
        assert second["cached_sample_count"] == 12 and second["model_call_attempt_count"] == 0
        assert _read_jsonl(again / "judgments.jsonl") == [
            {
                **j,
                "samples": [{**s, "attempts": 0, "cached": True} for s in j["samples"]],
                "input_token_count": 0,  # tokens spent by this run: none
                "output_token_count": 0,
            }
            for j in judgments
        ]


@pytest.mark.pipeline
def test_llmbar_mtbench_replay_reproduces_the_published_figures(tmp_path, shared_data):
    import importlib.util

    spec = importlib.util.spec_from_file_location("llmbar", REPO / "examples" / "llmbar_mtbench.py")
    llmbar = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(llmbar)
    params_path = llmbar.convert(str(shared_data / "llmbar-mtbench"), str(tmp_path / "llmbar"))
    out = tmp_path / "out"
    assert main(["run", "autosxs", "--params", params_path, "--output-dir", str(out), "--quiet"]) == 0

    judgments = _read_jsonl(out / "judgments.jsonl")
    metrics = json.loads((out / "metrics.json").read_text())
    assert len(judgments) == 200 and metrics["error_count"] == 0
    assert (metrics["original_order_correct_count"], metrics["original_order_sample_count"]) == (159, 200)
    assert (metrics["swapped_order_correct_count"], metrics["swapped_order_sample_count"]) == (165, 200)
    assert metrics["original_order_accuracy"] == pytest.approx(0.795)
    assert metrics["swapped_order_accuracy"] == pytest.approx(0.825)
    assert metrics["both_orders_correct_count"] == 149
    assert metrics["position_consistency_count"] == 174
    assert sum(j["choice"] == "TIE" for j in judgments) == 26

    # Cohen's kappa computed independently from the judgments, on rows where both chose A or B.
    pairs = [(j["human_preference"], j["choice"]) for j in judgments if j["choice"] in ("A", "B")]
    n = len(pairs)
    observed = sum(h == c for h, c in pairs) / n
    expected = sum(
        (sum(h == label for h, _ in pairs) / n) * (sum(c == label for _, c in pairs) / n) for label in ("A", "B")
    )
    assert metrics["alignment_count"] == n == 174
    assert math.isclose(metrics["cohens_kappa"], (observed - expected) / (1 - expected), abs_tol=1e-12)


BAD_INPUTS = {
    "missing id column": (
        lambda rows: [{k: v for k, v in r.items() if k != "question_id"} if i == 2 else r for i, r in enumerate(rows)],
        {},
        r"data.jsonl, row 3, column 'question_id'",
    ),
    "duplicate ids": (
        lambda rows: rows[:3] + [dict(rows[3], question_id="q1")] + rows[4:],
        {},
        r"duplicate.*q1",
    ),
    "unknown template variable": (
        lambda rows: rows,
        {
            "autorater_prompt_parameters": {
                "inference_instruction": {"template": "{{ default_instruction }} {{ quesiton }}"}
            }
        },
        r"quesiton",
    ),
    "human label maybe": (
        lambda rows: rows[:4] + [dict(rows[4], human_preference="maybe")] + rows[5:],
        {},
        r"line 5, column 'human_preference': human preference 'maybe' is not one of A, B, TIE",
    ),
    "empty dataset": (lambda rows: [], {}, r"empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_inputs_fail_fast_with_a_clear_message_and_no_outputs(case, tmp_path, capsys):
    mutate, overrides, message = BAD_INPUTS[case]
    rows = _read_jsonl(QUICKSTART / "dataset.jsonl")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in mutate(rows)))
    params = {**_quickstart_params(), "evaluation_dataset": str(data), **overrides}
    code, out = _run(params, tmp_path)
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    import re

    assert re.search(message, err), err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_malformed_jsonl_line_names_file_and_line(tmp_path, capsys):
    data = tmp_path / "data.jsonl"
    lines = (QUICKSTART / "dataset.jsonl").read_text().splitlines()
    lines[3] = lines[3][:-5]
    data.write_text("\n".join(lines) + "\n")
    code, out = _run({**_quickstart_params(), "evaluation_dataset": str(data)}, tmp_path)
    assert code == 2
    err = capsys.readouterr().err
    assert "data.jsonl, row 4: is not valid JSON" in err
    assert not out.exists()


@pytest.mark.parametrize(
    "params, message",
    [
        ({"judgments_format": "csv"}, r"unsupported judgments_format 'csv'"),
        ({"autorater_parameters": {"samplig_count": 2}}, r"unknown keys \['samplig_count'\]"),
        ({"autorater_model": "anthropic/claude"}, r"anthropic"),
        ({"response_column_b": "answer_c"}, r"answer_c"),
        ({"not_a_parameter": 1}, r"unknown pipeline parameters \['not_a_parameter'\]"),
    ],
)
def test_bad_parameters_fail_before_any_step(params, message, tmp_path, capsys):
    import re

    code, out = _run({**_quickstart_params(), **params}, tmp_path)
    assert code == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert not out.exists()


def test_missing_required_parameter_and_bad_params_file(tmp_path, capsys):
    params = _quickstart_params()
    del params["task"]
    code, _ = _run(params, tmp_path)
    assert code == 2
    assert "missing required pipeline parameters ['task']" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["run", "autosxs", "--params", str(bad), "--output-dir", str(tmp_path / "o")]) == 2
    assert "not valid JSON" in capsys.readouterr().err


@pytest.mark.pipeline
def test_the_template_itself_fails_fast_on_bad_rows(tmp_path):
    """Without the CLI's preflight, the prepare step fails and no judging happens."""
    from autorater_pipelines.pipelines._local import PipelineRunError, run_local

    rows = _read_jsonl(QUICKSTART / "dataset.jsonl")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows + [rows[0]]))
    params = {**_quickstart_params(), "evaluation_dataset": str(data), "project": "", "location": "us-central1"}
    root = tmp_path / "root"
    with pytest.raises(PipelineRunError, match="prepare-pairwise-examples"):
        run_local(str(REPO / "compiled" / "autosxs.yaml"), params, str(root))
    assert not list(root.rglob("judgments")), "the judge step must not run after a failed prepare step"
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.pipeline
def test_model_a_responses_are_generated_when_the_dataset_has_none(tmp_path):
    """Compare-models mode: model A's answers come from a (replayed) model, then are judged."""
    rows = _read_jsonl(QUICKSTART / "dataset.jsonl")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "answer_model_a"}) + "\n" for r in rows))
    answers = tmp_path / "model_a.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"question_id": r["question_id"], "model": "a", "response": r["answer_model_a"]}) + "\n"
            for r in rows[:5]
        )
    )
    params = {
        **_quickstart_params(),
        "evaluation_dataset": str(data),
        "response_column_a": "",
        "model_a": f"replay/{answers}",
        "model_a_prompt_parameters": {"prompt": {"column": "question"}},
        "judgments_format": "json",
    }
    code, out = _run(params, tmp_path, "out", "--max-failed-share", "0.2")
    assert code == 0
    assert json.loads((out / "judgments.json").read_text()) == _read_jsonl(out / "judgments.jsonl")
    judgments = {j["question_id"]: j for j in _read_jsonl(out / "judgments.jsonl")}
    assert judgments["q1"]["response_a"] == rows[0]["answer_model_a"]
    assert judgments["q1"]["choice"] == "A"
    # q6 has no recorded model A answer: an ERROR judgment and an inference error, not a dropped row.
    assert judgments["q6"]["choice"] == "ERROR" and judgments["q6"]["response_a"] is None
    errors = _read_jsonl(out / "error_messages.jsonl")
    assert [(e["question_id"], e["stage"], e["model"]) for e in errors] == [("q6", "inference", "a")]
    assert "not_recorded" in errors[0]["error"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["error_count"] == 1 and metrics["judged_count"] == 5


@pytest.mark.pipeline
def test_a_run_where_no_row_could_be_judged_exits_1_and_says_why(tmp_path, capsys):
    replay = tmp_path / "other.jsonl"
    replay.write_text(json.dumps({"question_id": "zz", "flipped": False, "response": "{}"}) + "\n")
    code, out = _run({**_quickstart_params(), "autorater_model": f"replay/{replay}"}, tmp_path)
    assert code == 1
    captured = capsys.readouterr()
    assert "error: no row could be evaluated; see error_messages.jsonl" in captured.err
    assert "12 error message(s) in error_messages.jsonl; most common:" in captured.out
    assert "not_recorded" in captured.out
    assert len(_read_jsonl(out / "judgments.jsonl")) == 6  # every row kept, as ERROR
