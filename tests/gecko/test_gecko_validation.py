import json
import math
import re

import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import Validator, parse_all_answers, score, validate
from autorater_pipelines.testing import ModelEmulator

QAS = [
    {
        "question_id": "q1",
        "question": "Is there a cat?",
        "question_type": "animal",
        "choices": ["yes", "no"],
        "answer": "yes",
        "dependencies": [],
        "keyword_id": None,
    },
    {
        "question_id": "q2",
        "question": "What color is the cat?",
        "question_type": "color",
        "choices": ["black", "white", "orange", "grey"],
        "answer": "orange",
        "dependencies": ["q1"],
        "keyword_id": None,
    },
]


def rubric_rows(n=2, media="gs://bucket/cat.png"):
    return [{"id": f"r{i}", "image": media, "keywords": None, "qas": QAS, "rubric_warnings": []} for i in range(n)]


def write_replay(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return f"replay/{path}"


QUIET = {"progress": False, "cache_dir": "off"}


def test_parse_all_answers_matches_by_question_id_never_by_text():
    text = (
        'Here you go:\n```json\n{"answers": [{"question_id": "[Q2]", "question": "Is there a cat?", '
        '"answer": "c"}, {"question_id": "q1", "answer": "yes"},]}\n```'
    )
    assert parse_all_answers(text, ["q1", "q2"]) == {"q1": "yes", "q2": "c"}
    assert parse_all_answers('{"q1": "no", "q9": "yes"}', ["q1", "q2"]) == {"q1": "no"}
    assert parse_all_answers('[{"question_id": 1, "answer": true}]', ["1"]) == {"1": True}
    ambiguous = '{"answers": [{"question_id": "q1", "answer": "yes"}, {"question_id": "q1", "answer": "no"}]}'
    assert parse_all_answers(ambiguous, ["q1"]) == {}


def test_all_questions_in_one_call_with_replay(tmp_path):
    spec = write_replay(
        tmp_path / "v.jsonl",
        [
            {
                "id": "r0",
                "response": '{"answers": [{"question_id": "q1", "answer": "Yes"}, '
                '{"question_id": "q2", "answer": "c"}]}',
            },
            {"id": "r1", "response": "Sorry, I can't see the image."},
        ],
    )
    result = validate(
        rubric_rows(3),
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=Validator.of(model=spec, parameters=QUIET),
    )
    assert result.errors == []
    r0, r1, r2 = result.rows
    assert r0["answers"]["q2"][0]["verdict"] == "c"
    assert r0["raw_responses"][0]["text"].startswith('{"answers"')
    skipped = {
        "status": "skipped",
        "mode": "error",
        "model": spec,
        "endpoint": None,
        "answers": None,
        "message": "a replay validator reads no media",
    }
    assert r0["validator"] == {"model": spec, "questions_per_call": 0, "sampling_count": 1, "media_probe": skipped}
    assert r1["answers"]["q1"][0]["error"]["kind"] == "unparseable_response"
    assert r2["answers"]["q1"][0]["error"]["kind"] == "not_recorded"

    scored = score(result.rows, id_columns=["id"])
    assert [r["final_score"] for r in scored.results] == [1.0]
    assert {(e["id"], e["stage"], e["error_kind"]) for e in scored.errors} == {
        ("r1", "scoring", "no_scored_questions"),
        ("r2", "validation", "not_recorded"),
    }


def test_one_question_per_call_with_replay_and_votes(tmp_path):
    records = [{"id": "r0", "question_id": "q1", "response": "yes"}]  # answers every sample
    records += [{"id": "r0", "question_id": "q2", "sample_index": i, "response": v} for i, v in enumerate("cbc")]
    spec = write_replay(tmp_path / "v.jsonl", records)
    params = {**QUIET, "questions_per_call": 1, "sampling_count": 3}
    result = validate(
        rubric_rows(1),
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=Validator.of(model=spec, parameters=params),
    )
    (row,) = result.rows
    assert [s["verdict"] for s in row["answers"]["q2"]] == ["c", "b", "c"]
    assert "raw_responses" not in row
    (r,) = score(result.rows, id_columns=["id"]).results
    assert r["qa_results"][1]["votes"] == {"orange": 2, "white": 1}
    assert r["final_score"] == 1.0


def test_media_errors_become_error_rows_and_nothing_is_lost(tmp_path):
    spec = write_replay(tmp_path / "v.jsonl", [{"id": "r0", "response": "{}"}])
    rows = rubric_rows(1) + [
        {"id": "bad1", "image": str(tmp_path / "missing.png"), "qas": QAS},
        {"id": "bad2", "image": "gs://bucket/file.xyz", "qas": QAS},
        {"id": "bad3", "image": "gs://bucket/a.png", "qas": []},
    ]
    result = validate(
        rows,
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=Validator.of(model=spec, parameters=QUIET),
    )
    assert [r["id"] for r in result.rows] == ["r0"]
    assert [(e["id"], e["stage"], e["error_kind"]) for e in result.errors] == [
        ("bad1", "media", "unreadable_media"),
        ("bad2", "media", "unknown_media_type"),
        ("bad3", "validation", "invalid_rubric"),
    ]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"questions_per_call": 2}, "questions_per_call must be 0 .* or 1"),
        ({"questions_per_call": True}, "questions_per_call must be"),
        ({"sampling_count": 0}, r"sampling_count must be an integer from 1 to 64, got 0"),
        ({"sampling_count": 1000}, r"sampling_count must be an integer from 1 to 64, got 1000"),
        ({"sampling_count": "x"}, r"sampling_count must be an integer from 1 to 64, got 'x'"),
        ({"temprature": 0.2}, r"unknown keys \['temprature'\]"),
        ({"temperature": "hot"}, r"temperature must be a number from 0 to 2, got 'hot'"),
    ],
)
def test_bad_validator_parameters(params, message):
    with pytest.raises(InputError, match=message):
        validate(
            rubric_rows(1),
            id_columns=["id"],
            media_column="image",
            media_type="image",
            validator=Validator.of(model="replay/none.jsonl", parameters=params),
        )


def test_bad_columns_media_type_and_template():
    kwargs = dict(id_columns=["id"], media_type="image", validator=Validator.of("replay/none.jsonl", QUIET))
    with pytest.raises(InputError, match="column 'img' .media_column. is not in the dataset"):
        validate(rubric_rows(1), media_column="img", **kwargs)
    with pytest.raises(InputError, match="media_column is required"):
        validate(rubric_rows(1), media_column="", **kwargs)
    with pytest.raises(InputError, match="media_type must be one of"):
        validate(rubric_rows(1), media_column="image", **{**kwargs, "media_type": "audio"})
    with pytest.raises(InputError, match="available variables"):
        validate(
            rubric_rows(1),
            media_column="image",
            **{**kwargs, "validator": Validator.of("replay/none.jsonl", QUIET, "{{ nope }}")},
        )


def _answer_all(request):
    ids = re.findall(r"^\[(q\d+)\]", request.prompt_text, flags=re.M)
    return json.dumps({"answers": [{"question_id": q, "answer": {"q1": "yes", "q2": "C"}[q]} for q in ids]})


def test_emulator_all_in_one_sends_media_and_schema(media_file):
    png = media_file("png")
    rows = rubric_rows(1, media=str(png)) + rubric_rows(1, media="gs://b/x.webp")
    rows[1]["id"] = "r1"
    with ModelEmulator(responder=_answer_all) as emu:
        params = {**QUIET, "base_url": emu.url}
        result = validate(
            rows,
            id_columns=["id"],
            media_column="image",
            media_type="image",
            validator=Validator.of(model="gemini-2.5-flash", parameters=params, project="p", location="us-central1"),
        )
        requests = list(emu.requests)
    assert emu.call_count == 2
    media = sorted(m for r in requests for m in r.media)
    assert media == sorted([("image/png", png.read_bytes(), None), ("image/webp", None, "gs://b/x.webp")])
    assert all(r.response_schema and "answers" in r.response_schema["properties"] for r in requests)
    results = score(result.rows, id_columns=["id"]).results
    assert [r["final_score"] for r in results] == [1.0, 1.0]


def test_emulator_one_question_per_call_with_logprobs():
    def responder(request):
        if "Is there a cat?" in request.prompt_text:
            return {
                "text": "yes",
                "logprobs": [
                    {"token": "yes", "logprob": math.log(0.8), "top": [["yes", math.log(0.8)], ["no", math.log(0.2)]]}
                ],
            }
        return {
            "text": "c",
            "logprobs": [{"token": "c", "logprob": math.log(0.5), "top": [["c", math.log(0.5)], ["b", math.log(0.5)]]}],
        }

    with ModelEmulator(responder=responder) as emu:
        params = {**QUIET, "base_url": emu.url, "questions_per_call": 1, "logprobs": 2}
        result = validate(
            rubric_rows(1),
            id_columns=["id"],
            media_column="image",
            media_type="image",
            validator=Validator.of(model="gemini-2.5-flash", parameters=params, project="p", location="us-central1"),
        )
        assert emu.call_count == 2
        assert all(r.response_schema is None for r in emu.requests)
    (row,) = result.rows
    assert row["answers"]["q1"][0]["choice_probs"] == pytest.approx({"yes": 0.8, "no": 0.2})
    (r,) = score(result.rows, id_columns=["id"], options={"logprob_weighting": True}).results
    assert [q["score"] for q in r["qa_results"]] == [pytest.approx(0.8), pytest.approx(0.5)]


def test_block_replies_are_scored_and_unmatched_blocks_are_parse_failures(tmp_path):
    blocks = (
        "<question>\nQuestion: Is there a cat?\nVerdict: yes\n</question>\n"
        "<question>\nQuestion: What color is the cat?\nVerdict: orange\n</question>"
    )
    spec = write_replay(
        tmp_path / "v.jsonl",
        [
            {"id": "r0", "response": blocks},
            # one block for two questions, echoing neither: nothing can be placed safely
            {"id": "r1", "response": "<question>Question: Is there a dog?\nVerdict: yes</question>"},
        ],
    )
    result = validate(
        rubric_rows(2),
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=Validator.of(
            model=spec,
            parameters=QUIET,
            prompt_template="{image}\n{rubrics}\nAnswer as <question>Question: …\nVerdict: …</question>",
        ),
    )
    r0, r1 = result.rows
    assert [s["verdict"] for q in ("q1", "q2") for s in r0["answers"][q]] == ["yes", "orange"]
    assert {s["error"]["kind"] for q in ("q1", "q2") for s in r1["answers"][q]} == {"unmatched_answer"}
    assert "'Is there a dog?'" in r1["answers"]["q1"][0]["error"]["message"]
    scored = score(result.rows, id_columns=["id"])
    assert [r["final_score"] for r in scored.results] == [1.0]
    assert scored.metrics["rows_scored"] == 1 and scored.metrics["parse_failures"] == 2
    (error,) = scored.errors
    assert error["id"] == "r1" and error["error_kind"] == "no_scored_questions"


def test_one_question_per_call_reads_a_block_reply(tmp_path):
    spec = write_replay(
        tmp_path / "v.jsonl",
        [
            {
                "id": "r0",
                "question_id": "q1",
                "response": "<question>Question: Is there a cat?\nVerdict: Yes</question>",
            },
            {"id": "r0", "question_id": "q2", "response": "Question: Is there a cat?\nVerdict: b"},
        ],
    )
    result = validate(
        rubric_rows(1),
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=Validator.of(model=spec, parameters={**QUIET, "questions_per_call": 1}),
    )
    (row,) = result.rows
    assert row["answers"]["q1"][0]["verdict"] == "Yes"
    assert row["answers"]["q2"][0]["error"]["kind"] == "unmatched_answer"  # it echoes the other question
