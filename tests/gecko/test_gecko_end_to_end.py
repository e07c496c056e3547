"""One image row and one video row, generated end to end against the Gemini emulator."""

import json
import logging

import pytest

from autorater_pipelines import gecko
from autorater_pipelines.errors import InputError
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.gecko_script import scripted_gecko_model

QUIET = {"progress": False, "cache_dir": "off"}
GCP = {"project": "p", "location": "us-central1"}

IMAGE_RUBRIC = {
    "keywords": "A {1}[red] {2}[bicycle] leaning on a {3}[wall]",
    "qas": [
        {
            "keyword_id": 1,
            "question": "Is the bicycle red?",
            "question_type": "color",
            "answer": "yes",
            "justification": "red",
        },
        {
            "keyword_id": 2,
            "question": "Is there a bicycle?",
            "question_type": "vehicle",
            "answer": "yes",
            "justification": "bicycle",
        },
    ],
}
responder = scripted_gecko_model(IMAGE_RUBRIC)


@pytest.mark.parametrize(
    ("media_type", "ext", "mime", "final", "types"),
    [
        ("image", "png", "image/png", 1.0, ["color", "other"]),
        ("video", "mp4", "video/mp4", 2 / 3, ["animal", "activity", "location"]),
    ],
)
def test_generate_validate_score(media_file, caplog, media_type, ext, mime, final, types):
    path = media_file(ext)
    rows = [{"uid": 1, "prompt": "A prompt", "media": str(path)}]
    with ModelEmulator(responder=responder) as emu, caplog.at_level(logging.WARNING):
        rubrics = gecko.generate_rubrics(
            rows,
            id_columns=["uid"],
            prompt_column="prompt",
            media_type=media_type,
            generator=gecko.RubricGenerator.of(
                model="gemini-2.5-flash", parameters={**QUIET, "base_url": emu.url}, **GCP
            ),
        )
        validated = gecko.validate(
            rubrics.rows,
            id_columns=["uid"],
            media_column="media",
            media_type=media_type,
            validator=gecko.Validator.of(model="gemini-2.5-flash", parameters={**QUIET, "base_url": emu.url}, **GCP),
        )
        generation, validation = emu.requests
    assert rubrics.errors == [] and validated.errors == []
    assert "A prompt" in generation.prompt_text and generation.media == []
    assert validation.media == [(mime, path.read_bytes(), None)]
    result = gecko.score(validated.rows, id_columns=["uid"])
    (row,) = result.results
    assert row["final_score"] == pytest.approx(final)
    assert [q["question_type"] for q in row["qa_results"]] == types
    assert row["keyword_coverage"] == pytest.approx(2 / 3 if media_type == "image" else 1.0)
    assert result.metrics["keyword_coverage"] == row["keyword_coverage"]
    if media_type == "image":  # "vehicle" is not a Gecko question type: kept as "other", with a warning
        assert any("'vehicle'" in w for w in row["rubric_warnings"]) and "'vehicle'" in caplog.text
    else:
        assert [q["expected"] for q in row["qa_results"]] == ["a dog", "jumps into water", "a lake"]
        assert row["qa_results"][2]["verdict"] == "a desert"


def test_generation_failures_are_error_rows(tmp_path):
    replay = tmp_path / "rubrics.jsonl"
    replay.write_text(
        json.dumps({"uid": 1, "response": json.dumps(IMAGE_RUBRIC)})
        + "\n"
        + json.dumps({"uid": 2, "response": "I'd rather not."})
        + "\n"
        + json.dumps({"uid": 3, "response": '{"keywords": "x", "qas": []}'})
        + "\n"
    )
    rows = [{"uid": i, "prompt": "p", "media": "gs://b/x.png"} for i in (1, 2, 3, 4)] + [
        {"uid": 5, "prompt": None, "media": "gs://b/x.png"}
    ]
    result = gecko.generate_rubrics(
        rows,
        id_columns=["uid"],
        prompt_column="prompt",
        media_type="image",
        generator=gecko.RubricGenerator.of(model=f"replay/{replay}", parameters=QUIET),
    )
    assert [r["uid"] for r in result.rows] == [1]
    kinds = {e["uid"]: (e["stage"], e["error_kind"]) for e in result.errors}
    assert kinds == {
        2: ("rubric_generation", "unparseable_rubric"),
        3: ("rubric_generation", "empty_rubric"),
        4: ("rubric_generation", "not_recorded"),
        5: ("rubric_generation", "missing_prompt"),
    }
    assert next(e for e in result.errors if e["uid"] == 2)["raw"] == "I'd rather not."


def test_generation_input_errors():
    kwargs = dict(id_columns=["uid"], media_type="image", generator=gecko.RubricGenerator.of("replay/x.jsonl", QUIET))
    with pytest.raises(InputError, match="column 'text' .prompt_column. is not in the dataset"):
        gecko.generate_rubrics([{"uid": 1, "prompt": "p"}], prompt_column="text", **kwargs)
    with pytest.raises(InputError, match="prompt_column is required"):
        gecko.generate_rubrics([{"uid": 1, "prompt": "p"}], prompt_column="", **kwargs)
    with pytest.raises(InputError, match=r"unknown keys \['sampling_count'\]"):
        gecko.generate_rubrics(
            [{"uid": 1, "prompt": "p"}],
            prompt_column="prompt",
            **{**kwargs, "generator": gecko.RubricGenerator.of("replay/x.jsonl", {"sampling_count": 2})},
        )
    with pytest.raises(InputError, match="invalid template syntax"):
        gecko.generate_rubrics(
            [{"uid": 1, "prompt": "p"}],
            prompt_column="prompt",
            **{**kwargs, "generator": gecko.RubricGenerator.of("replay/x.jsonl", QUIET, "{% if %}")},
        )
