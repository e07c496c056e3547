"""The notebook API: AutoSxS on a pandas DataFrame, the pipeline's steps in-process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.errors import InputError

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"
PARAMS = json.loads((QUICKSTART / "params.json").read_text())
QUIET = {"progress": False, "cache_dir": "off"}


def _frame() -> pd.DataFrame:
    return pd.read_json(QUICKSTART / "dataset.jsonl", lines=True)


def _kwargs(**overrides):
    kwargs = {k: v for k, v in PARAMS.items() if k != "evaluation_dataset"}
    kwargs["autorater_model"] = f"replay/{QUICKSTART / 'replay.jsonl'}"
    kwargs["autorater_parameters"] = {**PARAMS["autorater_parameters"], **QUIET}
    kwargs.update(overrides)
    return kwargs


def test_quickstart_gives_the_pipeline_figures():
    df = _frame().set_index("question_id", drop=False)
    judgments, metrics = autosxs.evaluate(df, **_kwargs())
    # The figures of `autorater run autosxs` on the same files (README, tests/pipelines/test_autosxs_run.py).
    assert list(judgments.index) == list(df.index)
    assert judgments["choice"].to_dict() == {"q1": "A", "q2": "B", "q3": "TIE", "q4": "TIE", "q5": "A", "q6": "A"}
    assert metrics["autorater_model_a_win_rate"] == pytest.approx(3 / 6)
    assert metrics["autorater_model_b_win_rate"] == pytest.approx(1 / 6)
    assert metrics["position_consistency"] == pytest.approx(5 / 6)
    assert metrics["alignment_count"] == 4 and metrics["accuracy"] == 1.0
    assert [s["flipped"] for s in judgments.loc["q1", "samples"]] == [False, True]
    assert judgments.loc["q1", "inference_instruction"].startswith("What is the boiling point")
    assert judgments.attrs["error_messages"] == []


def test_generated_responses_and_the_index_as_id_inside_a_running_loop(tmp_path):
    df = _frame().drop(columns=["answer_model_a"])
    # Recorded responses of model A and judgments, keyed by the DataFrame index (no id column given).
    model_a = tmp_path / "model_a.jsonl"
    model_a.write_text(
        "".join(json.dumps({"index": i, "model": "a", "response": f"answer {i}"}) + "\n" for i in range(5))
    )
    judge = tmp_path / "judge.jsonl"
    judge.write_text(
        "".join(
            json.dumps({"index": i, "flipped": flipped, "response": json.dumps({"choice": "A", "explanation": "x"})})
            + "\n"
            for i in range(6)
            for flipped in (False, True)
        )
    )

    async def notebook_cell():
        return autosxs.evaluate(
            df,
            **_kwargs(
                id_columns=None,
                response_column_a="",
                model_a=f"replay/{model_a}",
                model_a_prompt_parameters={"prompt": {"column": "question"}},
                model_a_parameters={"cache_dir": "off"},
                autorater_model=f"replay/{judge}",
            ),
        )

    judgments, metrics = asyncio.run(notebook_cell())
    assert list(judgments.index) == list(range(6)) and "index" not in judgments.columns
    assert judgments.loc[0, "response_a"] == "answer 0"
    # Row 5 has no recorded response for model A: an ERROR judgment with the reason, not a dropped row.
    assert judgments.loc[5, "choice"] == "ERROR" and pd.isna(judgments.loc[5, "response_a"])
    assert [e["index"] for e in judgments.attrs["error_messages"] if e["stage"] == "inference"] == [5]
    # Both samples say "A" = the response shown first: A in the original order, B once swapped → TIE.
    assert set(judgments.loc[:4, "choice"]) == {"TIE"} and metrics["autorater_tie_rate"] == 1.0


def test_bad_input_names_the_dataframe_row():
    df = _frame()
    df.loc[2, "answer_model_b"] = None
    with pytest.raises(InputError, match=r"the DataFrame index 2.*answer_model_b.*model B's response is empty"):
        autosxs.evaluate(df, **_kwargs())
    with pytest.raises(
        InputError,
        match=r"response_column_b: column 'answer_c' is not in the DataFrame; columns found: .* Did you mean 'answer_model_b'",
    ):
        autosxs.evaluate(_frame(), **_kwargs(response_column_b="answer_c"))


def test_a_prompt_refused_by_max_input_tokens_is_no_model_call_attempt():
    """Break-it 25: two samples of a too-long row were 'not sent' yet counted (model_call_attempt_count 4, 2 sent)."""
    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.judges import length_judge

    df = pd.DataFrame({"id": ["short", "long"], "q": ["q", "Q" * 20_000], "ra": ["a", "a"], "rb": ["b", "bb"]})
    with ModelEmulator(responder=length_judge) as emulator:
        judgments, metrics = autosxs.evaluate(
            df,
            task="question_answering",
            id_columns=["id"],
            autorater_prompt_parameters={"inference_instruction": "q"},
            response_column_a="ra",
            response_column_b="rb",
            autorater_model="openai/judge",
            autorater_parameters={"base_url": emulator.url, "sampling_count": 2, "max_input_tokens": 1000, **QUIET},
            progress=False,
        )
        sent = emulator.call_count
    assert sent == 2
    assert metrics["model_call_attempt_count"] == 2
    long_row = judgments.set_index("id").loc["long"]
    assert long_row["choice"] == "ERROR"
    assert all("not sent" in s["error"] and s["attempts"] == 0 for s in long_row["samples"])
