"""Text that JSON allows but UTF-8 cannot hold (lone surrogates such as ``"\\ud800"``) never crashes a writer.

Issue 19 item 4: an answer whose JSON held ``"\\ud800"`` crashed the judge and the Gecko validator while writing
(``UnicodeEncodeError``), was cached, and so failed every re-run; ``report``, ``rescore`` and the DataFrame APIs
crashed on the same text. Here the answers come over real HTTP from the emulator, through the response cache.
"""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

from autorater_pipelines import autosxs, gecko, io
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import steps as gecko_steps
from autorater_pipelines.gecko._common import check_rows
from autorater_pipelines.models import GenerateConfig, ModelOutput, ModelRequest, get_model
from autorater_pipelines.models._cache import ResponseCache
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.gecko_script import tiny_png

ESCAPED = '{"explanation": "the answer \\ud800 is longer", "choice": "A"}'  # JSON text: the escape, 6 characters
LONE = "\ud800"  # what json.loads makes of it


def _judge(emu_url: str, cache: str, examples):
    return autosxs.judge_examples(
        examples=examples,
        task="question_answering@001",
        id_columns=["id"],
        autorater_model="openai/judge",
        autorater_parameters={"base_url": emu_url + "/v1", "cache_dir": cache, "progress": False},
    )


def _examples(tmp_path):
    io.write_jsonl(str(tmp_path / "d.jsonl"), [{"id": "1", "q": "Why?", "a": "a long answer", "b": "short"}])
    return autosxs.prepare_examples(
        evaluation_dataset=str(tmp_path / "d.jsonl"),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "q"}},
        response_column_a="a",
        response_column_b="b",
    )


def test_judge_step_writes_and_reruns_an_answer_whose_json_holds_a_lone_surrogate(tmp_path, caplog):
    examples = _examples(tmp_path)
    cache = str(tmp_path / "cache")
    with ModelEmulator(responder=lambda _r: ESCAPED) as emu:
        for run in range(2):  # the second run is served from the cache and must succeed as well
            out = tmp_path / f"run{run}"
            with caplog.at_level(logging.WARNING):
                judgments, errors, summary = autosxs.judge_examples(
                    examples=examples,
                    task="question_answering@001",
                    id_columns=["id"],
                    autorater_model="openai/judge",
                    autorater_parameters={"base_url": emu.url + "/v1", "cache_dir": cache, "progress": False},
                    judgments_path=str(out / "judgments.jsonl"),
                    error_messages_path=str(out / "errors.jsonl"),
                )
            written = io.read_jsonl(str(out / "judgments.jsonl"))
            assert [j["choice"] for j in written] == ["TIE"]  # A in one order, B (= the other model) when flipped
            assert errors == [] and summary.evaluation_count == 1 and summary.error_count == 0
            assert all("the answer \ufffd is longer" in s["explanation"] for s in written[0]["samples"])
            assert LONE not in (out / "judgments.jsonl").read_text(encoding="utf-8")
            assert "lone UTF-16 surrogate escape(s)" in caplog.text
            caplog.clear()
        assert emu.call_count == 2  # two orders, called once; the re-run was answered by the cache


def test_an_answer_carrying_a_lone_surrogate_on_the_wire_is_repaired_counted_and_cached(tmp_path, caplog):
    cache = tmp_path / "cache"
    with ModelEmulator(responder=lambda _r: f"A {LONE} B") as emu:
        model = get_model("openai/m", GenerateConfig(base_url=emu.url + "/v1", cache_dir=str(cache), progress=False))
        with caplog.at_level(logging.WARNING):
            (first,) = model.generate([ModelRequest(parts=("hi",), key={"id": 7})])
        assert first.text == "A \ufffd B" and first.replaced_characters == 1
        assert model.stats.repaired_answers == 1 and "answers with unencodable characters" in model.stats.summary()
        assert "held 1 lone UTF-16 surrogate(s)" in caplog.text and "{'id': 7}" in caplog.text
        (again,) = model.generate([ModelRequest(parts=("hi",), key={"id": 7})])
        assert again.cached and again.text == "A \ufffd B" and emu.call_count == 1
    (entry,) = cache.glob("*/*.json")
    assert json.loads(entry.read_bytes().decode("utf-8"))["text"] == "A \ufffd B"


def test_the_cache_stores_only_entries_it_can_read_back(tmp_path):
    cache = ResponseCache(tmp_path)
    output = ModelOutput(text="ok", raw={"note": "x"})
    object.__setattr__(output, "raw", {"note": LONE})  # got past ModelOutput somehow: still stored readable
    cache.put("k" * 64, output)
    hit = cache.get("k" * 64)
    assert hit is not None and hit.text == "ok" and hit.raw == {"note": "\ufffd"}


def test_gecko_validator_step_writes_and_reruns_a_reply_with_a_lone_surrogate(tmp_path, caplog):
    (tmp_path / "i.png").write_bytes(tiny_png())
    qas = [{"question_id": "1", "question": "Is there a dog?", "choices": ["yes", "no"], "answer": "yes"}]
    io.write_jsonl(str(tmp_path / "d.jsonl"), [{"id": "r1", "image": str(tmp_path / "i.png"), "rubric": {"qas": qas}}])
    reply = '{"answers": [{"question_id": "1", "answer": "yes", "reason": "a dog \\udc80 sits"}]} ' + LONE
    with ModelEmulator(responder=lambda _r: reply) as emu:
        validator_parameters = {
            "base_url": emu.url + "/v1",
            "cache_dir": str(tmp_path / "cache"),
            "progress": False,
            "media_probe": "off",
        }
        params = {
            "evaluation_dataset": str(tmp_path / "d.jsonl"),
            "id_columns": ["id"],
            "media_column": "image",
            "rubrics_column": "rubric",
            "validator_model": "openai/v",
            "validator_parameters": validator_parameters,
        }
        gecko_steps.check_run(params, str(tmp_path / "rows.jsonl"))  # the check and rubric steps of the pipeline
        gecko_steps.rubrics_for_rows(
            rows_path=str(tmp_path / "rows.jsonl"),
            id_columns=["id"],
            rubrics_column="rubric",
            rubrics_path=str(tmp_path / "rubrics.jsonl"),
            errors_path=str(tmp_path / "rubric_errors.jsonl"),
        )
        for run in range(2):
            out = tmp_path / f"run{run}"
            with caplog.at_level(logging.WARNING):
                gecko_steps.validate_media(
                    rubrics_path=str(tmp_path / "rubrics.jsonl"),
                    id_columns=["id"],
                    media_column="image",
                    validator_model="openai/v",
                    validator_parameters={
                        "base_url": emu.url + "/v1",
                        "cache_dir": str(tmp_path / "cache"),
                        "progress": False,
                        "media_probe": "off",
                    },
                    validations_path=str(out / "validations.jsonl"),
                    errors_path=str(out / "errors.jsonl"),
                )
            (row,) = io.read_jsonl(str(out / "validations.jsonl"))
            assert io.read_jsonl(str(out / "errors.jsonl")) == []
            text = (out / "validations.jsonl").read_text(encoding="utf-8")
            assert LONE not in text and "\ufffd" in text
            scored = gecko.score([row], id_columns=["id"])
            assert scored.metrics["mean_final_score"] == 1.0 and scored.errors == []
        assert emu.call_count == 1
    assert "held 1 lone UTF-16 surrogate(s)" in caplog.text


def test_datasets_report_rescore_and_dataframes_replace_lone_surrogates_with_a_warning(tmp_path, caplog):
    row = '{"id": "1", "q": "Why \\ud800?", "a": "long answer", "b": "b"}\n'
    (tmp_path / "d.jsonl").write_text(row, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        dataset = io.read_dataset(str(tmp_path / "d.jsonl"))
    assert dataset.rows[0]["q"] == "Why \ufffd?"
    assert f"{tmp_path / 'd.jsonl'}, line 1: 1 lone UTF-16 surrogate escape(s)" in caplog.text

    # report and rescore read a run's files that hold the escape (written by another tool or by hand)
    out = tmp_path / "out"
    with ModelEmulator(responder=lambda _r: ESCAPED) as emu:
        judgments, _, _ = _judge(emu.url, "off", _examples(tmp_path))
    io.write_jsonl(str(out / "judgments.jsonl"), judgments)
    lines = (out / "judgments.jsonl").read_text(encoding="utf-8").replace("\ufffd", "\\ud800")
    (out / "judgments.jsonl").write_text(lines, encoding="utf-8")
    autosxs.aggregate_judgments(judgments=judgments, human_preference_column="", metrics_path=str(out / "metrics.json"))
    (out / "error_messages.jsonl").write_text("", encoding="utf-8")
    assert main(["report", str(out)]) == 0
    assert "\ufffd" in (out / "report.html").read_text(encoding="utf-8")
    assert main(["rescore", str(out), "--params", '{"ties_as_half": true}']) == 0

    # the DataFrame API: a value holding the surrogate itself, and a judge answer holding its escape
    # (pandas 3's default string dtype refuses such text itself; an object column holds it)
    df = pd.DataFrame({"id": ["1"], "q": [f"Why {LONE}?"], "a": ["long answer"], "b": ["b"]}, dtype=object)
    caplog.clear()
    with ModelEmulator(responder=lambda _r: ESCAPED) as emu, caplog.at_level(logging.WARNING):
        frame, metrics = autosxs.evaluate(
            df,
            task="question_answering@001",
            id_columns=["id"],
            autorater_prompt_parameters={"inference_instruction": {"column": "q"}},
            response_column_a="a",
            response_column_b="b",
            autorater_model="openai/judge",
            autorater_parameters={"base_url": emu.url + "/v1", "cache_dir": "off"},
            progress=False,
        )
        assert "Why \ufffd?" in emu.requests[0].prompt_text
    assert frame["choice"].tolist() == ["TIE"] and metrics["autorater_tie_rate"] == 1.0
    assert "df, the row at index 0: 1 lone UTF-16 surrogate(s)" in caplog.text
    assert "the answer \ufffd is longer" in frame["samples"][0][0]["explanation"]


@pytest.mark.parametrize("text", ['{"a": "\\ud800"}', '["\\udfff", {"\\ud800": 1}]'])
def test_extracted_answer_json_never_holds_a_lone_surrogate(text):
    from autorater_pipelines.evaluation.json_extraction import extract_json_values

    values = extract_json_values(text, expect=type(json.loads(text)))
    assert LONE not in json.dumps(values, ensure_ascii=False) and "\ufffd" in json.dumps(values, ensure_ascii=False)
    assert json.dumps(values, ensure_ascii=False).encode("utf-8")
    # a correct surrogate pair is one character and is kept
    assert extract_json_values('{"e": "\\ud83d\\ude00"}') == [{"e": "\U0001f600"}]


@pytest.mark.pipeline
def test_autorater_run_autosxs_twice_on_a_judge_whose_json_holds_a_lone_surrogate(tmp_path, capsys):
    """The reported case: the judge step crashed after 3 task attempts and every re-run failed on the cached answer."""
    from pathlib import Path

    quickstart = Path(__file__).resolve().parents[1] / "examples" / "quickstart"
    params = json.loads((quickstart / "params.json").read_text())
    with ModelEmulator(responder=lambda _r: ESCAPED) as emu:
        params.update(
            evaluation_dataset=str(quickstart / "dataset.jsonl"),
            autorater_model="openai/judge",
            autorater_parameters={"base_url": emu.url, "cache_dir": str(tmp_path / "cache"), "progress": False},
        )
        (tmp_path / "params.json").write_text(json.dumps(params))
        runs = []
        for name in ("first", "again"):
            argv = ["run", "autosxs", "--params", str(tmp_path / "params.json"), "--output-dir", str(tmp_path / name)]
            runs.append((main([*argv, "--quiet"]), emu.call_count))
    rows = len(io.read_jsonl(str(quickstart / "dataset.jsonl")))
    assert runs == [(0, 2 * rows), (0, 2 * rows)]  # the re-run is answered by the cache: no new call
    for name in ("first", "again"):
        judgments = io.read_jsonl(str(tmp_path / name / "judgments.jsonl"))
        assert len(judgments) == rows and {j["choice"] for j in judgments} <= {"A", "B", "TIE"}
        assert all("the answer \ufffd is longer" in s["explanation"] for j in judgments for s in j["samples"])
    first, again = (io.read_jsonl(str(tmp_path / name / "judgments.jsonl")) for name in ("first", "again"))
    assert [(j["choice"], j["explanation"]) for j in first] == [(j["choice"], j["explanation"]) for j in again]


def test_ids_that_differ_only_in_lone_surrogates_are_refused_saying_why(tmp_path):
    # Hostile trial (issue 19): two ids differing only in a lone surrogate become the same id once repaired; the
    # duplicate-id message says so instead of showing two identical-looking ids.
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(
        '{"id": "q\\ud800", "q": "Why?", "a": "x", "b": "y"}\n{"id": "q\\udc00", "q": "How?", "a": "x", "b": "y"}\n',
        encoding="utf-8",
    )
    with pytest.raises(
        InputError,
        match=r"duplicate id \{'id': 'q\ufffd'\}: .*d\.jsonl line 1 and .*line 2 .* U\+FFFD stands for a lone UTF-16 "
        r"surrogate in the data, which UTF-8 cannot hold and is replaced on reading",
    ):
        autosxs.prepare_examples(
            evaluation_dataset=str(dataset),
            task="question_answering@001",
            id_columns=["id"],
            autorater_prompt_parameters={"inference_instruction": {"column": "q"}},
            response_column_a="a",
            response_column_b="b",
        )
    rows = [{"id": "q\ufffd", "prompt": "p1", "image": "a.png"}, {"id": "q\ufffd", "prompt": "p2", "image": "b.png"}]
    with pytest.raises(InputError, match=r"duplicate id .* U\+FFFD stands for a lone UTF-16 surrogate"):
        check_rows(rows, id_columns=["id"], required={"prompt_column": "prompt"})
