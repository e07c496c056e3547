"""A scripted Gecko model for the emulator: rubric generator and validator in one, for tests and demos."""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from autorater_pipelines.testing._protocols import EmulatedRequest

__all__ = ["SCRIPTED_ANSWERS", "VIDEO_RUBRIC", "scripted_gecko_model", "tiny_png"]

VIDEO_RUBRIC: dict[str, Any] = {
    "keywords": "A {1}[dog] {2}[jumps] into a {3}[lake]",
    "qas": [
        {
            "keyword_id": 1,
            "question": "Which animal appears?",
            "question_type": "animal",
            "choices": {"a": "a cat", "b": "a dog", "c": "a horse", "d": "a bird"},
            "answer": "b",
        },
        {
            "keyword_id": 2,
            "question": "What does the animal do?",
            "question_type": "activity",
            "choices": {"a": "sleeps", "b": "eats", "c": "runs away", "d": "jumps into water"},
            "answer": "d",
        },
        {
            "keyword_id": 3,
            "question": "Where does it happen?",
            "question_type": "location",
            "choices": {"a": "a lake", "b": "a desert", "c": "a city", "d": "a kitchen"},
            "answer": "a",
        },
    ],
}
"""A generated video rubric (multiple choice a–d) for the prompt "A dog jumps into a lake"."""

SCRIPTED_ANSWERS: dict[str, str] = {
    "Is the bicycle red?": "yes",
    "Is there a bicycle?": "Yes, clearly.",
    "Which animal appears?": "b",
    "What does the animal do?": "d) jumps into water",
    "Where does it happen?": "b",
}
"""What the validator "sees", by question text: everything right except the video's location (b = a desert)."""

_QUESTION_LINE = re.compile(r"^\[(\w+)\] (.*?\?)", flags=re.M)


def scripted_gecko_model(image_rubric: Mapping[str, Any]) -> Callable[[EmulatedRequest], str]:
    """An emulator responder that generates rubrics and answers validation questions.

    Rubric-generation requests (structured output whose schema has ``qas``) get ``image_rubric`` or
    :data:`VIDEO_RUBRIC` (when the schema has ``choices``) inside prose and a code fence; a prompt
    containing ``REFUSE`` gets a refusal. Validation requests get :data:`SCRIPTED_ANSWERS` for each
    ``[question_id] question?`` line of the prompt, matched by question id in the answer.
    """

    def respond(request: EmulatedRequest) -> str:
        schema = request.response_schema or {}
        if "qas" in schema.get("properties", {}):
            if "REFUSE" in request.prompt_text:
                return "I'd rather not write a checklist for this."
            rubric = VIDEO_RUBRIC if "choices" in json.dumps(schema) else image_rubric
            return "Here is the checklist:\n```json\n" + json.dumps(rubric) + "\n```"
        lines = _QUESTION_LINE.findall(request.prompt_text)
        return json.dumps({"answers": [{"question_id": q, "answer": SCRIPTED_ANSWERS[text]} for q, text in lines]})

    return respond


def tiny_png() -> bytes:
    """A valid 1×1 PNG image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )
