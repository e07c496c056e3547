"""Replay AlpacaEval 2.0's weighted GPT-4 Turbo annotations and compare with the leaderboard's win rate.

Source: tatsu-lab/alpaca_eval (Apache-2.0), ``results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json``
(805 rows: ``instruction``, ``output_1`` = the baseline gpt4_1106_preview, ``output_2`` = the model,
``preference`` in [1, 2], ``raw_completion`` = GPT-4 Turbo's one-token answer ``m``/``M`` with
``logprobs.content[0].top_logprobs``) and ``src/alpaca_eval/leaderboards/data_AlpacaEval_2/
weighted_alpaca_eval_gpt4_turbo_leaderboard.csv`` (``win_rate``, ``standard_error`` in percent). Not shipped:
fetch them yourself. Usage::

    python benchmarks/alpaca_eval_weighted.py annotations.json /tmp/alpaca --leaderboard leaderboard.csv

writes ``dataset.jsonl``, ``replay.jsonl`` and ``params.json`` into the output folder, runs
``autorater run autosxs`` (model A = the model, model B = the baseline, one sample per row in the order
AlpacaEval showed it, ``preference: "probability"``) and prints our weighted win rate and standard error
beside the leaderboard's.

The order AlpacaEval showed each pair in is its ``RandomSwitchTwoColumnsProcessor``'s seeded choice:
``random.Random("is_switched_outputs" + instruction + "0").choices([False, True])[0]`` (True: the model's
output shown first, as ``m``); checked here against each recorded preference (``2 - p`` unswitched, ``1 + p``
switched, with p = P(m) / (P(m) + P(M))). Rows whose two outputs are identical have no judge answer (AlpacaEval
sets them to 1.5, a tie).

The recorded order needs ``autorater_parameters.flip_column`` and identical responses need
``identical_responses: "tie"``; when the installed package lacks them (``--no-flip-column``), the rows shown
baseline-first are written with ``m`` and ``M`` exchanged in the answer and its logprobs under the unswapped
order (the same probabilities for the same response), and identical rows get a recorded 50/50 answer.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import subprocess
import sys
from typing import Any

FLIP_COLUMN = "baseline_shown_first"
"""Dataset column for ``flip_column``: True when AlpacaEval showed the baseline (model B here) first, i.e. model A
shown second."""


def shown_model_first(instruction: str) -> bool:
    """AlpacaEval's seeded order: True when ``output_2`` (the model) was shown first, as ``m``."""
    return bool(random.Random("is_switched_outputs" + instruction + "0").choices([False, True], k=1)[0])


def _logprobs_of(row: dict[str, Any]) -> list[dict[str, Any]] | None:
    completion = row.get("raw_completion") or {}
    return (completion.get("logprobs") or {}).get("content")


def _p_first(content: list[dict[str, Any]]) -> float:
    top = {t["token"]: t["logprob"] for t in content[0]["top_logprobs"]}
    pm, pM = (math.exp(top[t]) if t in top else 0.0 for t in ("m", "M"))
    return pm / (pm + pM)


def _exchanged(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The logprobs with ``m`` and ``M`` exchanged (the same answer about the other presentation order)."""
    swap = {"m": "M", "M": "m"}

    def one(item: dict[str, Any]) -> dict[str, Any]:
        return {**item, "token": swap.get(item["token"], item["token"])}

    return [{**one(c), "top_logprobs": [one(t) for t in c.get("top_logprobs") or []]} for c in content]


def convert(annotations_path: str, out_dir: str, *, flip_column: bool) -> dict[str, Any]:
    """Write ``dataset.jsonl``, ``replay.jsonl`` and ``params.json``; return counts."""
    with open(annotations_path, encoding="utf-8") as fh:
        rows = json.load(fh)
    os.makedirs(out_dir, exist_ok=True)
    counts = {"rows": len(rows), "identical": 0, "order_checked": 0, "order_disagrees": 0, "baseline_first": 0}
    counts["no_verdict_token"] = 0  # answers that are not m/M: AlpacaEval reads m/M among their alternatives
    missing = [i for i, r in enumerate(rows) if r["output_1"] != r["output_2"] and not _logprobs_of(r)]
    if missing:
        raise SystemExit(
            f"{annotations_path}: {len(missing)} of {len(rows)} annotations carry no raw_completion logprobs (row "
            f"{missing[0]} has keys {sorted(rows[missing[0]])}): only the preference floats were released, so "
            "there is nothing to replay"
        )
    data_path, replay_path = os.path.join(out_dir, "dataset.jsonl"), os.path.join(out_dir, "replay.jsonl")
    with open(data_path, "w", encoding="utf-8") as data, open(replay_path, "w", encoding="utf-8") as replay:
        for index, row in enumerate(rows):
            baseline_first = not shown_model_first(row["instruction"])
            counts["baseline_first"] += baseline_first
            record = {
                "id": index,
                "instruction": row["instruction"],
                "output_model": row["output_2"],
                "output_baseline": row["output_1"],
                FLIP_COLUMN: baseline_first,
            }
            data.write(json.dumps(record) + "\n")
            completion = row.get("raw_completion")
            if row["output_1"] == row["output_2"]:
                counts["identical"] += 1
                if not flip_column:  # no identical_responses "tie": a recorded 50/50 answer stands in
                    even = [{"token": "m", "logprob": math.log(0.5), "top_logprobs": []}]
                    even[0]["top_logprobs"] = [{"token": t, "logprob": math.log(0.5)} for t in ("m", "M")]
                    replay.write(json.dumps({"id": index, "flipped": False, "response": "m", "logprobs": even}) + "\n")
                continue
            content = completion["logprobs"]["content"]
            p = _p_first(content)
            expected = 2 - p if baseline_first else 1 + p
            counts["order_checked"] += 1
            counts["order_disagrees"] += abs(expected - float(row["preference"])) > 1e-6
            text = completion.get("text") or completion["message"]["content"]
            counts["no_verdict_token"] += text not in ("m", "M")
            flipped = baseline_first
            if not flip_column and baseline_first:  # the same answer, told about the unswapped order
                text, content, flipped = {"m": "M", "M": "m"}.get(text, text), _exchanged(content), False
            replay.write(json.dumps({"id": index, "flipped": flipped, "response": text, "logprobs": content}) + "\n")
    autorater: dict[str, Any] = {
        "sampling_count": 1,
        "logprobs": 5,
        "preference": "probability",
        "verdict_pattern": "(m|M)",
        "verdict_map": {"m": "A", "M": "B"},
        "cache_dir": "off",
    }
    if flip_column:
        autorater.update(flip_column=FLIP_COLUMN, identical_responses="tie")
    else:
        autorater.update(flip=False)
    params = {
        "evaluation_dataset": data_path,
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "instruction"}},
        "response_column_a": "output_model",
        "response_column_b": "output_baseline",
        "autorater_model": f"replay/{replay_path}",
        "autorater_parameters": autorater,
    }
    with open(os.path.join(out_dir, "params.json"), "w", encoding="utf-8") as fh:
        json.dump(params, fh, indent=2)
    return counts


def _has_flip_column() -> bool:
    from autorater_pipelines.pairwise.settings import JudgeSettings

    return "flip_column" in JudgeSettings.model_fields and "identical_responses" in JudgeSettings.model_fields


def main(argv: list[str] | None = None) -> int:
    """Convert, run ``autorater run autosxs``, print our figures beside the leaderboard's."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("annotations", help="results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json")
    parser.add_argument("out_dir")
    parser.add_argument("--leaderboard", help="weighted_alpaca_eval_gpt4_turbo_leaderboard.csv")
    parser.add_argument("--model", help="leaderboard row (default: the annotations' generator_2)")
    parser.add_argument("--no-flip-column", action="store_true", help="do not use flip_column/identical_responses")
    args = parser.parse_args(argv)
    flip_column = _has_flip_column() and not args.no_flip_column
    counts = convert(args.annotations, args.out_dir, flip_column=flip_column)
    print(f"converted: {counts} (flip_column {'used' if flip_column else 'not available: m/M exchanged'})")
    out = os.path.join(args.out_dir, "out")
    run = [sys.executable, "-m", "autorater_pipelines.cli", "run", "autosxs"]
    run += ["--params", os.path.join(args.out_dir, "params.json"), "--output-dir", out, "--quiet"]
    result = subprocess.run(run, capture_output=True, text=True, check=False)
    printed = [line for line in result.stdout.splitlines() if "weighted win rate" in line]
    print("\n".join(printed) or result.stdout + result.stderr)
    if result.returncode:
        print(result.stderr, file=sys.stderr)
        return result.returncode
    with open(os.path.join(out, "metrics.json"), encoding="utf-8") as fh:
        metrics = json.load(fh)
    ours = (
        100 * metrics["autorater_model_a_weighted_win_rate"],
        100 * metrics["autorater_model_a_weighted_win_rate_standard_error"],
    )
    print(f"ours:        win_rate {ours[0]:.4f}  standard_error {ours[1]:.4f}  ({metrics['judged_count']} rows)")
    if args.leaderboard:
        with open(args.annotations, encoding="utf-8") as fh:
            model = args.model or json.load(fh)[0]["generator_2"]
        with open(args.leaderboard, encoding="utf-8", newline="") as fh:
            board = {r[""] or r.get("name", ""): r for r in csv.DictReader(fh)}
        if model not in board:
            print(f"{model!r} (generator_2) is not a row of {args.leaderboard}: pass --model <results/ folder name>")
            return 1
        row = board[model]
        theirs = float(row["win_rate"]), float(row["standard_error"])
        same = all(f"{a:.4f}" == f"{b:.4f}" for a, b in zip(ours, theirs, strict=True))
        print(
            f"leaderboard: win_rate {theirs[0]:.4f}  standard_error {theirs[1]:.4f}  ({model}, n_total "
            f"{row['n_total']}): {'same to 4 decimals' if same else 'DIFFERENT'}"
        )
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
