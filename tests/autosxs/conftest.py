"""Fixtures shared by the AutoSxS judging tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from autorater_pipelines import autosxs

QA_TASK = "question_answering@001"


@pytest.fixture
def qa_examples(tmp_path: Path) -> Callable[[int], list[dict]]:
    """A factory: ``qa_examples(rows)`` prepares ``rows`` question-answering examples (ids ``q0`` …).

    Question ``i`` is ``"question {i}?"``; model A answers with 5–11 words, model B with 8–10 words and an ``x``,
    so a length judge has a verdict for every row. The dataset is written to ``tmp_path/dataset.jsonl``.
    """

    def make(rows: int) -> list[dict]:
        dataset = tmp_path / "dataset.jsonl"
        with open(dataset, "w", encoding="utf-8") as f:
            for i in range(rows):
                a, b = "word " * (5 + i % 7), "word " * (8 + i % 3) + "x"
                f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?", "a": a, "b": b}) + "\n")
        return autosxs.prepare_examples(
            evaluation_dataset=str(dataset),
            task=QA_TASK,
            id_columns=["id"],
            autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
            response_column_a="a",
            response_column_b="b",
        )

    return make
