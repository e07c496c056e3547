"""Running ``autorater run autosxs`` on a tiny dataset for the public-report tests, and reading its outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


class Run:
    """One finished ``autorater run autosxs``: exit code, printed text and the output files."""

    def __init__(self, code: int, printed: str, out: Path) -> None:
        self.code, self.printed, self.out = code, printed, out

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.out / name).read_text(encoding="utf-8").splitlines() if line]

    @property
    def judgments(self) -> dict[str, dict[str, Any]]:
        return {j["id"]: j for j in self.jsonl("judgments.jsonl")}

    @property
    def errors(self) -> dict[str, list[str]]:
        by_row: dict[str, list[str]] = {}
        for error in self.jsonl("error_messages.jsonl"):
            by_row.setdefault(error["id"], []).append(error["error"])
        return by_row

    @property
    def metrics(self) -> dict[str, Any]:
        def refuse(token: str) -> Any:
            raise AssertionError(f"metrics.json holds {token}: not JSON, and not a number anyone can use")

        return json.loads((self.out / "metrics.json").read_text(encoding="utf-8"), parse_constant=refuse)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "OPENAI_"))}
    return {**env, **extra}


def run_autosxs(
    where: Path, dataset: Path, replay: Path | None, env: dict[str, str] | None = None, **overrides: Any
) -> Run:
    params: dict[str, Any] = {
        "evaluation_dataset": str(dataset),
        "task": "question_answering@001",
        "id_columns": ["id"],
        "autorater_prompt_parameters": {"inference_instruction": {"template": "Question: {{ question }}"}},
        "response_column_a": "a",
        "response_column_b": "b",
        "human_preference_column": "human",
        "autorater_parameters": {"sampling_count": 2, "flip": True},
    }
    if replay is not None:
        params["autorater_model"] = f"replay/{replay}"
    params.update(overrides)
    params = {k: v for k, v in params.items() if v is not None}
    params_path = where / "params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    out = where / "out"
    argv = ["run", "autosxs", "--params", str(params_path), "--output-dir", str(out), "--quiet"]
    proc = subprocess.run(
        [sys.executable, "-m", "autorater_pipelines.cli", *argv],
        env=clean_env(AUTORATER_CACHE_DIR=str(where / "cache"), **(env or {})),
        capture_output=True,
        timeout=900,
        check=False,
    )
    printed = (proc.stdout + proc.stderr).decode("utf-8", errors="replace")
    assert "Traceback" not in printed, printed[-3000:]
    return Run(proc.returncode, printed, out)


def replay_lines(answers: dict[str, tuple[str, str] | None]) -> str:
    """Replay file: row id → raw judge outputs (original order, swapped order); None records nothing."""
    records = [
        {"id": row_id, "flipped": flipped, "response": pair[flipped]}
        for row_id, pair in answers.items()
        if pair is not None
        for flipped in (False, True)
    ]
    return "".join(json.dumps(r) + "\n" for r in records)
