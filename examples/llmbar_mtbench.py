"""Turn LLMBar's MT-Bench split into an AutoSxS dataset, a replay file and pipeline parameters.

Source: princeton-nlp/LLMBar (MIT), ``Dataset/Processed/MT-Bench`` and the recorded GPT-4 judge
completions of ``evaluators/GPT-4/Vanilla_NoRules`` — a copy lives in ``../shared/data/llmbar-mtbench``.

Usage::

    python examples/llmbar_mtbench.py ../shared/data/llmbar-mtbench /tmp/llmbar
    autorater run autosxs --params /tmp/llmbar/params.json --output-dir /tmp/llmbar/out

Writes ``dataset.jsonl`` (``id``, ``input``, ``output_1``, ``output_2``, ``human_preference`` A/B),
``replay.jsonl`` (``id``, ``flipped``, ``response``: ``flipped=false`` ← ``swap = False`` and
``flipped=true`` ← ``swap = True``) and ``params.json``.
"""

from __future__ import annotations

import json
import os

VERDICT_PATTERN = r"(?:^|\n) ?Output \((a|b)\)"


def convert(source_dir: str, out_dir: str) -> str:
    """Write the dataset, replay file and params into ``out_dir``; return the params path."""
    with open(os.path.join(source_dir, "gpt4_vanilla_result.json"), encoding="utf-8") as fh:
        items = json.load(fh)
    os.makedirs(out_dir, exist_ok=True)
    dataset_path = os.path.join(out_dir, "dataset.jsonl")
    replay_path = os.path.join(out_dir, "replay.jsonl")
    with open(dataset_path, "w", encoding="utf-8") as data, open(replay_path, "w", encoding="utf-8") as replay:
        for index, item in enumerate(items):
            row_id = f"mtbench-{index:03d}"
            row = {
                "id": row_id,
                "input": item["input"],
                "output_1": item["output_1"],
                "output_2": item["output_2"],
                "human_preference": {1: "A", 2: "B"}[int(item["label"])],
            }
            data.write(json.dumps(row) + "\n")
            for flipped, key in ((False, "swap = False"), (True, "swap = True")):
                completion = item["results"][0][key]["completion"][0]
                replay.write(json.dumps({"id": row_id, "flipped": flipped, "response": completion}) + "\n")
    params = {
        "evaluation_dataset": dataset_path,
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"column": "input"}},
        "response_column_a": "output_1",
        "response_column_b": "output_2",
        "human_preference_column": "human_preference",
        "autorater_model": f"replay/{replay_path}",
        "autorater_parameters": {
            "sampling_count": 2,
            "flip": True,
            "verdict_pattern": VERDICT_PATTERN,
            "verdict_map": {"a": "A", "b": "B"},
        },
    }
    params_path = os.path.join(out_dir, "params.json")
    with open(params_path, "w", encoding="utf-8") as fh:
        json.dump(params, fh, indent=2)
    return params_path


def main() -> None:
    """Command line: ``python examples/llmbar_mtbench.py SOURCE_DIR OUT_DIR``."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "source_dir", help="folder with LLMBar's gpt4_vanilla_result.json (e.g. ../shared/data/llmbar-mtbench)"
    )
    parser.add_argument("out_dir", help="where to write dataset.jsonl, replay.jsonl and params.json")
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.source_dir, "gpt4_vanilla_result.json")):
        parser.error(
            f"{args.source_dir!r} holds no gpt4_vanilla_result.json (LLMBar MT-Bench, see this file's docstring)"
        )
    print(convert(args.source_dir, args.out_dir))


if __name__ == "__main__":
    main()
