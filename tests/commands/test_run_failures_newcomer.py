"""``autorater run arena`` when judge samples fail: outputs written, one ``error:`` line, reasons grouped."""

from __future__ import annotations

import json
import pathlib

from autorater_pipelines.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "arena_quickstart"


def _params(tmp_path: pathlib.Path, **changes: object) -> pathlib.Path:
    params = json.loads((QUICKSTART / "params.json").read_text())
    params["evaluation_dataset"] = str(QUICKSTART / "dataset.jsonl")
    params["autorater_model"] = f"replay/{QUICKSTART / 'replay.jsonl'}"
    params.update(changes)
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    return path


def test_an_arena_run_whose_every_sample_fails_writes_its_outputs_and_exits_1(tmp_path, capfd) -> None:
    # the recording answers question_answering's prompt; arena_hard's verdict pattern finds no [[A>B]] in it
    out = tmp_path / "out"
    code = main(
        ["run", "arena", "--params", str(_params(tmp_path, task="arena_hard@001")), "--output-dir", str(out), "--quiet"]
    )
    captured = capfd.readouterr()
    assert code == 1
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "error_messages.jsonl",
        "judgments.jsonl",
        "leaderboard.jsonl",
        "metrics.json",
        "report.html",
    ]
    assert (out / "leaderboard.jsonl").read_text() == ""
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["battle_count"], metrics["sample_count"], metrics["error_sample_count"]) == (0, 96, 96)
    assert metrics["notes"] == [
        "nothing ranked: 0 battles from 96 samples, 96 of them ERROR samples (see error_messages)"
    ]
    assert len((out / "error_messages.jsonl").read_text().splitlines()) == 96
    assert "96 × parse_error: verdict_pattern" in captured.out
    assert "pipeline run failed" not in captured.err and "executor" not in captured.err + captured.out
    assert captured.err == "error: no sample could be evaluated; see error_messages.jsonl\n"


def test_reasons_naming_the_request_key_group_as_one_and_failures_count_samples(tmp_path, capfd) -> None:
    rows = [json.loads(line) for line in (QUICKSTART / "dataset.jsonl").read_text().splitlines()]
    for row in rows[:4]:  # 4 of 8 prompts have no recording under their new id
        row["question_id"] = f"new-{row['question_id']}"
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = _params(tmp_path, evaluation_dataset=str(dataset))
    code = main(["run", "arena", "--params", str(params), "--output-dir", str(tmp_path / "out"), "--quiet"])
    captured = capfd.readouterr()
    assert code == 1
    lines = [line for line in captured.out.splitlines() if line.startswith("  ") and " × " in line]
    assert len(lines) == 1, captured.out
    assert lines[0].startswith("  48 × not_recorded: no recording in ")
    assert " for key {…} (recorded key fields: " in lines[0]
    assert "(e.g. key {'question_id': 'new-q" in lines[0]
    assert "error: 48 of 96 samples (50%) ended with an error, more than --max-failed-share 0.1" in captured.err


def test_the_call_count_of_sampled_pairing_says_what_the_pairs_are(tmp_path, capfd) -> None:
    params = _params(tmp_path, pairing="sampled")
    code = main(["run", "arena", "--params", str(params), "--output-dir", str(tmp_path / "out"), "--quiet"])
    printed = capfd.readouterr().out
    judgments = (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()
    # 4 models × 8 prompts each draw 1 opponent; a pair drawn by both of its models is judged once
    assert code == 0 and len(judgments) == 27
    assert (
        "54 judge calls: 27 pairs (1 opponent per model and prompt, 4 models × 8 prompts, pairing 'sampled') "
        "× 2 samples, both orders"
    ) in printed


def test_rao_kupper_after_a_style_controlled_rescoring_says_where_style_control_comes_from(tmp_path, capfd) -> None:
    out = tmp_path / "out"
    assert main(["run", "arena", "--params", str(_params(tmp_path)), "--output-dir", str(out), "--quiet"]) == 0
    styled = '{"bootstrap_rounds": 20, "seed": 7, "style_control": true}'
    assert main(["rescore", str(out), "--params", styled]) == 0
    capfd.readouterr()
    code = main(["rescore", str(out), "--params", '{"ties": "rao_kupper"}', "--output-dir", str(tmp_path / "t1")])
    err = capfd.readouterr().err
    assert code == 2
    assert "style_control is true from an earlier re-scoring" in err
    assert 'add "style_control": false to the options' in err and "(ties='half')" not in err
    fixed = '{"ties": "rao_kupper", "style_control": false}'
    assert main(["rescore", str(out), "--params", fixed, "--output-dir", str(tmp_path / "t2")]) == 0
    metrics = json.loads((tmp_path / "t2" / "metrics.json").read_text())
    assert metrics["ranking_options"]["ties"] == "rao_kupper" and metrics["tie_parameter"] is not None


AUTOSXS = ROOT / "examples" / "quickstart"


def _autosxs(tmp_path: pathlib.Path, judge: dict[str, object], dataset: pathlib.Path | None = None) -> pathlib.Path:
    params = json.loads((AUTOSXS / "params.json").read_text())
    params["evaluation_dataset"] = str(dataset or AUTOSXS / "dataset.jsonl")
    params["autorater_model"] = f"replay/{AUTOSXS / 'replay.jsonl'}"
    params["autorater_parameters"] = judge
    path = tmp_path / "params.json"
    path.write_text(json.dumps(params))
    return path


def test_autosxs_says_which_position_order_it_used_with_flip_random(tmp_path, capfd) -> None:
    out = tmp_path / "out"
    params = _autosxs(tmp_path, {"flip": "random", "seed": 7})
    assert main(["run", "autosxs", "--params", str(params), "--output-dir", str(out), "--quiet"]) == 0
    printed = capfd.readouterr().out
    swapped = sum(json.loads(line)["flipped"] for line in (out / "judgments.jsonl").read_text().splitlines())
    assert swapped == 3  # ⌊6/2⌋ rows shown swapped
    assert (
        '  position order: flip "random" (seed 7): 3 of 6 rows shown swapped (model B\'s response first); no row '
        "judged in both orders, so no position consistency\n"
    ) in printed
    report = next(out.glob("report*.html")).read_text()
    assert "0 of 0 rows judged in both orders: each row judged in one order fixed before judging (flip &#34;random" in (
        report
    )


def test_autosxs_says_which_position_order_it_used_with_flip_false_and_flip_column(tmp_path, capfd) -> None:
    params = _autosxs(tmp_path, {"flip": False})
    assert main(["run", "autosxs", "--params", str(params), "--output-dir", str(tmp_path / "f"), "--quiet"]) == 0
    assert "  position order: flip false: model A's response shown first in every row; no row judged" in (
        capfd.readouterr().out
    )
    report = next((tmp_path / "f").glob("report*.html")).read_text()
    assert "rows judged in both orders: model A shown first in every row (flip false)" in report
    rows = [json.loads(line) for line in (AUTOSXS / "dataset.jsonl").read_text().splitlines()]
    for i, row in enumerate(rows):
        row["swap"] = i < 2
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = _autosxs(tmp_path, {"flip_column": "swap"}, dataset)
    assert main(["run", "autosxs", "--params", str(params), "--output-dir", str(tmp_path / "c"), "--quiet"]) == 0
    assert "  position order: flip_column 'swap': 2 of 6 rows shown swapped (model B's response first); no row" in (
        capfd.readouterr().out
    )


def test_quiet_counts_every_logged_failure_and_says_further_ones_are_not_logged(tmp_path, capfd) -> None:
    rows = [json.loads(line) for line in (QUICKSTART / "dataset.jsonl").read_text().splitlines()]
    for row in rows[:4]:
        row["question_id"] = f"new-{row['question_id']}"
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = _params(tmp_path, evaluation_dataset=str(dataset))
    main(["run", "arena", "--params", str(params), "--output-dir", str(tmp_path / "q"), "--quiet"])
    quiet = capfd.readouterr().err.splitlines()
    main(["run", "arena", "--params", str(params), "--output-dir", str(tmp_path / "loud")])
    loud = capfd.readouterr()
    # without --quiet: the 5 first failures and the line saying further ones are not logged, each on its own line
    logged = [line for line in (loud.out + loud.err).splitlines() if "WARNING]: judging" in line]
    assert len(logged) == 6 and all(line.strip().startswith("[KFP Executor") for line in logged), logged
    warnings = [line for line in quiet if line.startswith("WARNING")]
    assert len(warnings) == 2, quiet
    assert warnings[0].startswith("WARNING ×5: judging (replay/") and "(and 4 more like it;" in warnings[0]
    assert warnings[1].endswith(
        "further failed requests are not logged one by one (the step's summary line counts "
        "them, error_messages lists each)"
    )
