"""Gecko rubric generation from text prompts, answered live by a real OpenAI-compatible server."""

from __future__ import annotations

import pytest

from autorater_pipelines.gecko.generation import generate_rubrics
from autorater_pipelines.gecko.params import RubricGenerator
from autorater_pipelines.models._structured import MODES

pytestmark = pytest.mark.real_server

PROMPTS = ["A red bicycle leaning on a white wall", "Two cats sleeping on a blue sofa", "A lighthouse at night"]
RETRYABLE_KINDS = ("transient", "rate_limit", "budget")


def test_rubrics_generated_live_from_text_prompts(real_server, tmp_path) -> None:
    rows = [{"uid": i, "prompt": p} for i, p in enumerate(PROMPTS)]
    parameters = real_server.params(max_output_tokens=320, cache_dir=str(tmp_path / "cache"))

    def generate():
        return generate_rubrics(
            rows,
            id_columns=["uid"],
            prompt_column="prompt",
            media_type="image",
            generator=RubricGenerator.of(model=f"openai/{real_server.model}", parameters=parameters),
        )

    rubrics, errors = generate()
    # Every row has a rubric or one error row with a specific kind and message; none failed as if busy.
    assert sorted([r["uid"] for r in rubrics] + [e["uid"] for e in errors]) == [0, 1, 2]
    for error in errors:
        assert error["stage"] == "rubric_generation" and error["error_kind"] not in RETRYABLE_KINDS, error
        assert error["error_message"], error
    for rubric in rubrics:
        assert rubric["qas"], rubric  # a row never gets an empty rubric
        assert all(q["answer"] in ("yes", "no") for q in rubric["qas"])
    endpoint = ("openai", f"{real_server.url}/v1", real_server.model)
    assert MODES.detected(endpoint) is not None
    print(
        f"\ngecko live: {len(rubrics)} rubrics, errors {[(e['error_kind'], e['error_message'][:60]) for e in errors]}"
    )
    again, again_errors = generate()  # parseable or not, answers come from the cache now
    assert [r["uid"] for r in again] == [r["uid"] for r in rubrics]
    assert [(e["uid"], e["error_kind"]) for e in again_errors] == [(e["uid"], e["error_kind"]) for e in errors]
