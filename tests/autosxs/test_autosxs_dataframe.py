"""The notebook API: AutoSxS on a pandas DataFrame, the pipeline's steps in-process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.errors import InputError

REPO = Path(__file__).resolve().parents[2]
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


def test_a_dataframe_response_that_is_an_object_is_refused_and_a_number_is_judged_as_its_text():
    df = _frame().astype({"answer_model_a": object})
    df.at[1, "answer_model_a"] = {"x": 1}
    with pytest.raises(
        InputError,
        match=r"the DataFrame index 1, column 'answer_model_a': response_column_a 'answer_model_a' holds "
        r"\{'x': 1\} \(an object\), expected text",
    ):
        autosxs.evaluate(df, **_kwargs())
    df.at[1, "answer_model_a"] = 42
    judgments, _ = autosxs.evaluate(df, **_kwargs())
    assert judgments.loc[1, "response_a"] == "42"


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


BAD_MODEL_PARAMETERS = [
    ({"temperature": 5}, r"^model_b_parameters: temperature must be a number from 0 to 2, got 5$"),
    (
        {"temprature": 0.2},
        r"^model_b_parameters: unknown keys \['temprature'\] \(did you mean 'temperature'\?\); valid keys: \[",
    ),
    ({"base_url": "ftp://127.0.0.1:1/v1"}, r"^model_b_parameters: invalid model parameters: base_url='ftp://"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_MODEL_PARAMETERS, ids=[json.dumps(b) for b, _ in BAD_MODEL_PARAMETERS])
def test_a_bad_model_b_parameter_is_refused_before_model_a_is_called(bad, message):
    """Hostile trial (issue 25): model A was called for every row, then model B's parameters were refused. The
    DataFrame API now checks the whole run with the pipeline's validate_run first: no request reaches the server."""
    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.judges import length_judge

    df = pd.DataFrame({"id": ["r1", "r2", "r3"], "q": ["q1", "q2", "q3"]})
    with ModelEmulator(responder=length_judge) as emulator:
        options = {"base_url": f"{emulator.url}/v1", **QUIET}
        kwargs = dict(
            task="question_answering",
            id_columns=["id"],
            autorater_prompt_parameters={"inference_instruction": "q"},
            model_a="openai/model-a",
            model_b="openai/model-b",
            model_a_prompt_parameters={"prompt": "q"},
            model_b_prompt_parameters={"prompt": "q"},
            model_a_parameters=options,
            autorater_model="openai/judge",
            autorater_parameters=options,
            progress=False,
        )
        with pytest.raises(InputError, match=message):
            autosxs.evaluate(df, model_b_parameters={**options, **bad}, **kwargs)
        assert emulator.call_count == 0
        # Control: the same call with model B's parameters fixed generates both sides and judges every row.
        judgments, _ = autosxs.evaluate(df, model_b_parameters=options, **kwargs)
        assert len(judgments) == 3 and emulator.call_count == 3 + 3 + 3 * 2


def test_a_base_url_where_nothing_listens_is_refused_before_any_call():
    """The DataFrame API probes an explicit base_url as `autorater run` does (a TCP connection, no request)."""
    import socket

    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.judges import length_judge

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    df = pd.DataFrame({"id": ["r1"], "q": ["q1"]})
    with ModelEmulator(responder=length_judge) as emulator:
        with pytest.raises(InputError, match=rf"model_b_parameters: cannot connect to http://127\.0\.0\.1:{closed}"):
            autosxs.evaluate(
                df,
                task="question_answering",
                id_columns=["id"],
                autorater_prompt_parameters={"inference_instruction": "q"},
                model_a="openai/model-a",
                model_b="openai/model-b",
                model_a_prompt_parameters={"prompt": "q"},
                model_b_prompt_parameters={"prompt": "q"},
                model_a_parameters={"base_url": f"{emulator.url}/v1", **QUIET},
                model_b_parameters={"base_url": f"http://127.0.0.1:{closed}/v1", **QUIET},
                autorater_model="openai/judge",
                autorater_parameters={"base_url": f"{emulator.url}/v1", **QUIET},
                progress=False,
            )
        assert emulator.call_count == 0


def test_a_string_id_column_is_one_column():
    """Hostile trial (issue 25): id_columns="ab" was split into the columns 'a' and 'b'."""
    as_string, _ = autosxs.evaluate(_frame(), **_kwargs(id_columns="question_id"))
    as_list, _ = autosxs.evaluate(_frame(), **_kwargs(id_columns=["question_id"]))
    assert list(as_string["choice"]) == list(as_list["choice"]) == ["A", "B", "TIE", "TIE", "A", "A"]
    with pytest.raises(InputError, match=r"id_columns\[0\]: column 'qid' is not in the DataFrame"):
        autosxs.evaluate(_frame().assign(q="x", i="y", d="z"), **_kwargs(id_columns="qid"))


def test_an_empty_frame_says_it_has_no_rows():
    with pytest.raises(InputError, match=r"^df: the DataFrame has no rows \(0 rows, no columns\); pass a DataFrame"):
        autosxs.evaluate(pd.DataFrame(), **_kwargs())
    with pytest.raises(InputError, match=r"^df: the DataFrame has no rows \(0 rows, columns \['question_id', "):
        autosxs.evaluate(_frame().iloc[:0], **_kwargs())


def test_an_infinite_response_says_what_it_is():
    """Hostile trial (issue 25): a response of ``inf`` was "empty" (it had been turned into None)."""
    df = _frame().set_index("question_id", drop=False)
    df["answer_model_a"] = df["answer_model_a"].astype(object)
    df.loc["q2", "answer_model_a"] = float("inf")
    with pytest.raises(
        InputError,
        match=r"^the DataFrame position 1 \(index 'q2'\), column 'answer_model_a': holds the number inf \(infinity\), "
        r"which a row cannot carry: rows are JSON values, and JSON has no infinity; replace it with",
    ):
        autosxs.evaluate(df, **_kwargs())
    import numpy as np

    scores = _frame().assign(score=np.array([1, 2, 3, np.inf, 5, 6], dtype=np.float32))  # any column, numpy floats
    with pytest.raises(InputError, match=r"^the DataFrame index 3, column 'score': holds the number inf \(infinity\)"):
        autosxs.evaluate(scores, **_kwargs())
