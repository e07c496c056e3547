"""Issue 19 item 5: a validator that cannot see is caught before it scores (gecko/media_probe.py).

The seeing model is the project's emulator (it decodes the PNG it receives); the blind one is the same emulator
behind ImageDroppingProxy, a loopback middleware that forwards every request without its image parts.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from autorater_pipelines import gecko
from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import preflight, steps
from autorater_pipelines.gecko.answer_matching import choice_label
from autorater_pipelines.gecko.media_probe import PROBE_QUESTION, run_probe, solid_png
from autorater_pipelines.models import GenerateConfig, get_model
from autorater_pipelines.testing import ImageDroppingProxy, ModelEmulator


@pytest.fixture(scope="module")
def tifa(shared_data, public_data, tmp_path_factory):
    data = public_data.convert_tifa_sample(shared_data, tmp_path_factory.mktemp("tifa"))
    expected = json.loads((shared_data / "tifa-sample" / "sample_evaluation_result.json").read_text())
    rows = gecko.load_dataset(str(data.dataset), id_columns=["id"], media_column="image", rubrics_column="rubric")
    rubrics = gecko.parse_supplied_rubrics(rows, id_columns=["id"], rubrics_column="rubric")
    return data, expected, rows, rubrics.rows


def _seeing_tifa_responder(rows, rubric_rows, expected):
    """Answers TIFA's questions as recorded, for the image it received (by its bytes); blind: always 'no'."""
    images = {Path(r["image"]).read_bytes(): r["id"] for r in rows}
    by_id = {r["id"]: {qa["question_id"]: qa for qa in r["qas"]} for r in rubric_rows}
    details = expected["question_details"]

    def respond(request):
        ids = re.findall(r"^\[(\w+)\]", request.prompt_text, flags=re.M)
        seen = [images.get(data) for _, data, _ in request.media]
        if not seen or seen[0] is None:
            return json.dumps({"answers": [{"question_id": q, "answer": "no"} for q in ids]})
        qas = by_id[seen[0]]
        answers = []
        for q in ids:
            qa = qas[q]
            recorded = details[seen[0]][qa["question"]]["multiple_choice_vqa"]
            answers.append({"question_id": q, "answer": choice_label(qa["choices"], qa["choices"].index(recorded))})
        return json.dumps({"answers": answers})

    return respond


def _validate(rubric_rows, url, **parameters):
    return gecko.validate(
        rubric_rows,
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=gecko.Validator.of(
            model="openai/vision",
            parameters={"progress": False, "cache_dir": "off", "base_url": url + "/v1", **parameters},
        ),
    )


def test_the_seeing_emulator_passes_the_probe_and_tifa_still_scores_0_8125(tifa, caplog):
    _, expected, rows, rubric_rows = tifa
    with (
        ModelEmulator(responder=_seeing_tifa_responder(rows, rubric_rows, expected)) as emu,
        caplog.at_level(logging.INFO, logger="autorater_pipelines.gecko.media_probe"),
    ):
        validated = _validate(rubric_rows, emu.url)
        probes = emu.probe_requests
        assert emu.call_count == 2  # the two rows; the three probe calls are kept apart
    assert sorted(len(p.media) for p in probes) == [0, 1, 1]
    assert all(PROBE_QUESTION in p.prompt_text for p in probes)
    result = steps.score_rows(validated.rows, id_columns=["id"], earlier_errors=validated.errors)
    probe = result.metrics["media_probe"]
    assert probe["status"] == "passed" and probe["mode"] == "error" and probe["model"] == "openai/vision"
    assert probe["answers"] == {"red": "yes", "blue": "no"}
    # the emulator counts words, and an image as one token
    assert "openai/vision: 20 and 20 prompt tokens with the red and the blue image, 19 without an image" in caplog.text
    assert result.metrics["mean_final_score"] == pytest.approx(expected["tifa_average"])  # 0.8125


def test_a_proxy_that_drops_images_stops_the_run_naming_the_model_and_the_endpoint(tifa):
    _, expected, rows, rubric_rows = tifa
    with (
        ModelEmulator(responder=_seeing_tifa_responder(rows, rubric_rows, expected)) as emu,
        ImageDroppingProxy(emu.url) as proxy,
    ):
        validated = _validate(rubric_rows, proxy.url)
        assert proxy.dropped == 2 and emu.call_count == 0  # no question was asked after the failed probe
        assert all(p.media == [] for p in emu.probe_requests)
        endpoint = re.escape(f"{proxy.url}/v1")
    assert validated.rows == [] and [e["error_kind"] for e in validated.errors] == ["media_not_seen"] * 2
    with pytest.raises(InputError, match=rf"validator 'openai/vision' at {endpoint} does not see the images") as exc:
        steps.score_rows(validated.rows, id_columns=["id"], earlier_errors=validated.errors)
    message = str(exc.value)
    assert "answered 'I cannot see any image" in message and "media_probe to 'warn'" in message
    assert re.search(r"reported (\d+) and \1 prompt tokens with an image and \1 without", message)


def test_warn_mode_scores_anyway_and_records_the_warning_in_metrics_and_report(tifa, tmp_path, caplog):
    _, expected, rows, rubric_rows = tifa
    (tmp_path / "rubrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rubric_rows))
    out = tmp_path / "out"
    with (
        ModelEmulator(responder=_seeing_tifa_responder(rows, rubric_rows, expected)) as emu,
        ImageDroppingProxy(emu.url) as proxy,
        caplog.at_level(logging.WARNING),
    ):
        steps.validate_media(
            rubrics_path=str(tmp_path / "rubrics.jsonl"),
            id_columns=["id"],
            media_column="image",
            validator_model="openai/vision",
            validator_parameters={"progress": False, "cache_dir": "off", "base_url": proxy.url, "media_probe": "warn"},
            validations_path=str(out / "validations.jsonl"),
            errors_path=str(out / "validation_errors.jsonl"),
        )
        assert emu.call_count == 2
    metrics = steps.score_validations(
        validations_path=str(out / "validations.jsonl"),
        id_columns=["id"],
        earlier_error_paths=[str(out / "validation_errors.jsonl")],
        results_path=str(out / "results.jsonl"),
        error_messages_path=str(out / "error_messages.jsonl"),
        metrics_path=str(out / "metrics.json"),
    )
    assert "gecko media probe failed" in caplog.text
    written = json.loads((out / "metrics.json").read_text())
    assert written["media_probe"]["status"] == "failed" and written["media_probe"]["mode"] == "warn"
    assert metrics["mean_final_score"] < 0.5  # scored blind, as the issue saw (0.06-0.07): hence the warning
    (out / "validation_errors.jsonl").unlink()
    assert main(["report", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "Media probe (warn): failed: the scores may have been given without looking at the media" in page


def test_replay_validators_skip_the_probe(tifa):
    data, expected, _, _ = tifa
    validated = gecko.validate(
        gecko.parse_supplied_rubrics(
            gecko.load_dataset(str(data.dataset), id_columns=["id"], media_column="image", rubrics_column="rubric"),
            id_columns=["id"],
            rubrics_column="rubric",
        ).rows,
        id_columns=["id"],
        media_column="image",
        media_type="image",
        validator=gecko.Validator.of(model=f"replay/{data.replay}", parameters={"questions_per_call": 1}),
    )
    probe = validated.rows[0]["validator"]["media_probe"]
    assert probe["status"] == "skipped" and probe["message"] == "a replay validator reads no media"
    scored = steps.score_rows(validated.rows, id_columns=["id"])
    assert scored.metrics["mean_final_score"] == pytest.approx(expected["tifa_average"])
    assert scored.metrics["media_probe"]["status"] == "skipped"


def test_probe_calls_are_cached_and_counted(tmp_path):
    with ModelEmulator() as emu:
        config = GenerateConfig(base_url=emu.url + "/v1", cache_dir=str(tmp_path), progress=False)
        model = get_model("openai/vision", config)
        first, refused = run_probe(model, mode="error", media_type="image")
        assert refused is None and first["status"] == "passed"
        assert (model.stats.requests, model.stats.calls, model.stats.cache_hits) == (3, 3, 0)
        again, _ = run_probe(get_model("openai/vision", config), mode="error", media_type="video")
        assert len(emu.probe_requests) == 3  # the second probe was answered by the response cache
    assert again == first  # the record does not depend on the cache (cached answers report no usage)


def test_media_probe_off_and_bad_values():
    with ModelEmulator() as emu:
        model = get_model("openai/vision", GenerateConfig(base_url=emu.url + "/v1", cache_dir="off", progress=False))
        assert run_probe(model, mode="off", media_type="image")[0]["status"] == "off"
        assert emu.probe_requests == []
    with pytest.raises(InputError, match=r"media_probe must be one of error, warn, off, got 'maybe'"):
        preflight.validate_parameters(
            {
                "id_columns": ["id"],
                "media_column": "image",
                "rubrics_column": "r",
                "validator_parameters": {"media_probe": "maybe"},
            }
        )


def test_solid_png_is_a_png_of_one_colour():
    import io

    from PIL import Image

    with Image.open(io.BytesIO(solid_png((220, 30, 30)))) as image:
        assert image.size == (64, 64) and image.getcolors() == [(64 * 64, (220, 30, 30))]


def test_a_failed_probe_is_asked_again_once_the_proxy_is_fixed_not_served_from_the_cache(tmp_path):
    # issue 19 hostile trial: run 1 through an image-dropping proxy failed (right), run 2 with the proxy fixed
    # failed again from the blind answers cached by run 1.
    with ModelEmulator() as emu, ImageDroppingProxy(emu.url) as proxy:
        config = GenerateConfig(base_url=proxy.url + "/v1", cache_dir=str(tmp_path), progress=False)
        first, _ = run_probe(get_model("openai/vision", config), mode="error", media_type="image")
        assert first["status"] == "failed" and proxy.dropped == 2
        proxy.drop_media = False
        model = get_model("openai/vision", config)
        again, _ = run_probe(model, mode="error", media_type="image")
        assert again["status"] == "passed" and again["answers"] == {"red": "yes", "blue": "no"}
        assert proxy.dropped == 2 and sorted(len(p.media) for p in emu.probe_requests[-3:]) == [0, 1, 1]
        third, _ = run_probe(get_model("openai/vision", config), mode="error", media_type="image")
        assert len(emu.probe_requests) == 6  # the third probe: the passing answers replaced the blind ones in the cache
    assert third == again


def test_right_answers_pass_the_probe_when_a_gateway_rewrites_the_token_counts(caplog):
    # issue 19 hostile trial: a gateway reporting 42 prompt tokens for every request stopped a validator that
    # answered yes for red and no for blue.
    with (
        ModelEmulator() as emu,
        ImageDroppingProxy(emu.url) as proxy,
        caplog.at_level(logging.WARNING, logger="autorater_pipelines.gecko.media_probe"),
    ):
        proxy.drop_media, proxy.prompt_tokens = False, 42
        config = GenerateConfig(base_url=proxy.url + "/v1", cache_dir="off", progress=False)
        result, _ = run_probe(get_model("openai/vision", config), mode="error", media_type="image")
    assert result["status"] == "passed" and result["answers"] == {"red": "yes", "blue": "no"}
    assert "reported 42 and 42 prompt tokens with an image and 42 without" in result["message"]
    assert "token counts look rewritten" in caplog.text
