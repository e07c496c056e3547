"""Acceptance: TIFA's public sample (2 images, 19 supplied questions, recorded VQA answers)."""

import json
import re
from pathlib import Path

import pytest

from autorater_pipelines import gecko
from autorater_pipelines.gecko.answer_matching import choice_label
from autorater_pipelines.testing import ModelEmulator

QUIET = {"progress": False, "cache_dir": "off"}


@pytest.fixture(scope="module")
def tifa(shared_data, public_data, tmp_path_factory):
    data = public_data.convert_tifa_sample(shared_data, tmp_path_factory.mktemp("tifa"))
    expected = json.loads((shared_data / "tifa-sample" / "sample_evaluation_result.json").read_text())
    return data, expected


def _check(result, expected):
    assert result.errors == []
    assert {r["id"]: r["final_score"] for r in result.results} == pytest.approx(expected["caption_scores"])
    assert result.metrics["mean_final_score"] == pytest.approx(expected["tifa_average"])  # 0.8125
    assert result.metrics["stdev_final_score"] == pytest.approx(expected["tifa_stdev"])
    assert result.metrics["accuracy_by_question_type"] == pytest.approx(expected["accuracy_by_type"])
    assert result.metrics["questions_scored"] == 19 and result.metrics["parse_failures"] == 0


def test_tifa_sample_with_replayed_vqa_answers(tifa, public_data):
    data, expected = tifa
    rubric_errors, validation_errors, result = public_data.run(data)
    assert rubric_errors == [] and validation_errors == []
    assert [r["final_score"] for r in result.results] == [1.0, 0.625]
    assert result.metrics["accuracy_by_question_type"]["counting"] == pytest.approx(1 / 3)
    _check(result, expected)


@pytest.mark.parametrize("questions_per_call", [0, 1])
def test_tifa_sample_through_the_gemini_emulator_with_the_real_images(tifa, questions_per_call):
    data, expected = tifa
    details = expected["question_details"]
    rows = gecko.load_dataset(str(data.dataset), id_columns=["id"], media_column="image", rubrics_column="rubric")
    images = {Path(r["image"]).read_bytes(): r["id"] for r in rows}
    rubrics = gecko.parse_supplied_rubrics(rows, id_columns=["id"], rubrics_column="rubric")
    by_id = {r["id"]: {qa["question_id"]: qa for qa in r["qas"]} for r in rubrics.rows}

    def answer(image_id, qa):
        recorded = details[image_id][qa["question"]]["multiple_choice_vqa"]
        return choice_label(qa["choices"], qa["choices"].index(recorded))  # "yes"/"no" or a letter

    def responder(request):
        ((mime, data_bytes, uri),) = request.media
        assert (mime, uri) == ("image/jpeg", None)
        image_id = images[data_bytes]  # identifies the image by the bytes it received
        qas = by_id[image_id]
        if questions_per_call == 1:
            question = re.search(r"^Question: (.*)$", request.prompt_text, flags=re.M).group(1)
            (qa,) = [q for q in qas.values() if q["question"] == question]
            return answer(image_id, qa)
        ids = re.findall(r"^\[(\w+)\]", request.prompt_text, flags=re.M)
        return json.dumps({"answers": [{"question_id": q, "answer": answer(image_id, qas[q])} for q in ids]})

    with ModelEmulator(responder=responder) as emu:
        validated = gecko.validate(
            rubrics.rows,
            id_columns=["id"],
            media_column="image",
            media_type="image",
            validator=gecko.Validator.of(
                model="gemini-2.5-flash",
                parameters={**QUIET, "base_url": emu.url, "questions_per_call": questions_per_call},
                project="p",
                location="us-central1",
            ),
        )
        assert emu.call_count == (2 if questions_per_call == 0 else 19)
        for request in emu.requests:
            ((mime, sent, _),) = request.media
            assert mime == "image/jpeg" and sent[:3] == b"\xff\xd8\xff" and sent in images
    assert validated.errors == []
    _check(gecko.score(validated.rows, id_columns=["id"]), expected)
