"""Before validating, check that the validator sees media: two plain squares whose answers are known.

A validator that never receives the image answers every question blind — through a middleware that drops image
parts (seen with a Gemini→OpenAI proxy, LiteLLM's proxy and a test server: the same prompt-token count with and
without the image), TIFA's sample scored 0.06 instead of 0.8125 with no warning. So :func:`run_probe` asks the
validator, through the same model-call layer as the questions (same endpoint and settings, response cache, call
counts), three requests:

- a plain red 64×64 PNG and the question "Is this image mostly red?" (expected: yes);
- a plain blue 64×64 PNG and the same question (expected: no);
- the question without an image (its answer is not read: its prompt-token count is the baseline).

The probe **fails** when either colour is answered wrongly or not at all with yes/no. Right answers pass even when
the endpoint's prompt-token counts say the image never reached the model (a gateway may rewrite them): that is
logged as a warning and noted in the message; with wrong answers the token counts are quoted as evidence. A failed
probe whose answers came from the response cache is asked again (the endpoint may have been fixed since the blind
answers were cached); the new answers replace the cached ones. It is **inconclusive**
(a warning, the run goes on) when a probe call failed for another reason (its rows will show that reason too).
An endpoint that refuses images (a text-only model) is handled as before: every row is a ``media_not_supported``
error.

``validator_parameters.media_probe``: ``"error"`` (default: a failed probe validates no row; the scoring step stops
the run with one error naming the model and the endpoint), ``"warn"`` (log a warning, validate and score anyway;
the warning is in ``metrics.json`` and the report) or ``"off"`` (no probe). Replay validators read no media and
skip it; so do ``media_type: "text"`` runs. Videos: the probe sends the same still images (a model that cannot see
a still image sees no video frame either, and generating a video would need an encoder); a video-only endpoint
should set ``media_probe: "off"``.

The result (``media_probe`` in each validation row's ``validator`` and in ``metrics.json``) is
``{"status": "passed"|"failed"|"inconclusive"|"skipped"|"off", "mode", "model", "endpoint", "answers":
{"red", "blue"}, "message"}``; the three prompt-token counts are logged (and quoted in a failure's message), not
recorded, so that a re-run answered by the response cache (which reports no usage) writes the same rows.
"""

from __future__ import annotations

import logging
import struct
import zlib
from typing import TYPE_CHECKING, Any

from autorater_pipelines.gecko._common import call_model
from autorater_pipelines.gecko.answer_matching import resolve
from autorater_pipelines.models import MediaPart, ModelRequest

if TYPE_CHECKING:
    from autorater_pipelines.models import Model, ModelOutput

__all__ = [
    "MEDIA_UNSEEN",
    "PROBE_COLORS",
    "PROBE_MARK",
    "PROBE_MODES",
    "PROBE_QUESTION",
    "probe_requests",
    "run_probe",
    "solid_png",
]

logger = logging.getLogger(__name__)

PROBE_MODES = ("error", "warn", "off")
"""Values of ``validator_parameters.media_probe``."""

PROBE_MARK = "[gecko media probe]"
"""Starts every probe prompt (the project's protocol emulator recognises probes by it)."""

PROBE_QUESTION = f"{PROBE_MARK} Look at the image. Is this image mostly red? Answer with one word: yes or no."

PROBE_COLORS: dict[str, tuple[tuple[int, int, int], str]] = {
    "red": ((220, 30, 30), "yes"),
    "blue": ((30, 60, 220), "no"),
}
"""Probe images by name: ``(RGB colour, expected answer to PROBE_QUESTION)``."""

MEDIA_UNSEEN = "media_not_seen"
"""Error kind of the validation rows of a run whose validator failed the probe (``media_probe: "error"``): the
scoring step turns it into one error naming the model and the endpoint."""

_YES_NO = ("yes", "no")
_MEDIA_REASON = "media_input_not_supported"  # ModelError.reason of an endpoint that refuses images/videos


def solid_png(rgb: tuple[int, int, int], size: int = 64) -> bytes:
    """A ``size``×``size`` PNG of one colour (8-bit RGB, written with zlib; no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + bytes(rgb) * size  # filter type 0, then the pixels
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    pixels = chunk(b"IDAT", zlib.compress(row * size))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + pixels + chunk(b"IEND", b"")


def probe_requests() -> list[ModelRequest]:
    """The probe's requests: one per colour of :data:`PROBE_COLORS` (image first), then the text alone."""
    requests = [
        ModelRequest(
            parts=(MediaPart(mime_type="image/png", data=solid_png(rgb)), PROBE_QUESTION),
            key={"media_probe": name},
        )
        for name, (rgb, _) in PROBE_COLORS.items()
    ]
    return [*requests, ModelRequest(parts=(PROBE_QUESTION,), key={"media_probe": "text_only"})]


def _skipped(status: str, mode: str, model: str, reason: str) -> dict[str, Any]:
    return {"status": status, "mode": mode, "model": model, "endpoint": None, "answers": None, "message": reason}


def run_probe(model: Model, *, mode: str, media_type: str) -> tuple[dict[str, Any], ModelOutput | None]:
    """Ask ``model`` the probe (module docstring) unless ``mode`` is ``off`` or the model reads no media.

    Args:
        model: The validator, as built for the questions (its cache and call counts are used).
        mode: ``error``, ``warn`` or ``off`` (``validator_parameters.media_probe``).
        media_type: The run's media type; ``text`` skips the probe.

    Returns:
        ``(result, refused)``: the result dict (module docstring) and, when the endpoint refused the probe's image
        (a text-only model), that failed output — the caller reports the refusal as it does for the questions.
    """
    if mode == "off":
        return _skipped("off", mode, model.spec, "media_probe is off"), None
    if model.provider == "replay":
        return _skipped("skipped", mode, model.spec, "a replay validator reads no media"), None
    if media_type == "text":
        return _skipped("skipped", mode, model.spec, "media_type is text"), None
    red, blue, text_only = call_model(model, probe_requests(), desc="gecko media probe")
    if any(o.cached for o in (red, blue)) and _wrong(red, blue):
        # A failed probe answered from the response cache: ask again (the endpoint may have been fixed since),
        # so that fixing a proxy is not undone by the blind answers it cached. The new answers replace them.
        logger.info("gecko media probe of %s: cached answers fail the probe; asking the endpoint again", model.spec)
        red, blue, text_only = call_model(model, probe_requests(), desc="gecko media probe", reask=lambda _o: True)
    refused = next((o for o in (red, blue) if o.error is not None and o.error.reason == _MEDIA_REASON), None)
    result = _skipped("inconclusive", mode, model.spec, "")
    result.update(endpoint=model.endpoint_url, answers={"red": red.text, "blue": blue.text})
    if refused is not None:
        result.update(status="failed", message=f"the endpoint refused the probe image: {refused.error.message}")  # type: ignore[union-attr]
        return result, refused
    failed = [(name, o) for name, o in (("red", red), ("blue", blue)) if not o.ok]
    if failed:
        name, output = failed[0]
        reason = output.error.message if output.error is not None else "no text"
        result["message"] = f"the probe call with the {name} image failed, so the probe tells nothing: {reason}"
        _log(result)
        return result, None
    wrong = _wrong(red, blue)
    tokens = [o.usage.input_tokens for o in (red, blue, text_only)]
    reported = text_only.ok and all(t > 0 for t in tokens)
    if reported:  # logged, not recorded: a re-run answered by the response cache has no usage to compare
        logger.info(
            "gecko media probe of %s: %d and %d prompt tokens with the red and the blue image, %d without an image",
            model.spec,
            *tokens,
        )
    flat = reported and min(tokens[:2]) <= tokens[2]
    if not wrong:  # right answers win over token counts (a gateway may rewrite or round them)
        message = "the validator told a plain red square from a plain blue one"
        if flat:
            message += (
                f" (note: the endpoint reported {tokens[0]} and {tokens[1]} prompt tokens with an image and "
                f"{tokens[2]} without; its token counts look rewritten or wrong)"
            )
            logger.warning("gecko media probe of %s passed: %s", model.spec, message)
        result.update(status="passed", message=message)
        return result, None
    said = f"answered {red.text!r} for a plain red square and {blue.text!r} for a plain blue one (expected yes, no)"
    evidence = (
        f"; the endpoint reported {tokens[0]} and {tokens[1]} prompt tokens with an image and {tokens[2]} without"
        if reported
        else ""
    )
    result.update(
        status="failed",
        message=(
            f"the validator {model.spec!r} at {model.endpoint_url} does not see the images it is sent: asked "
            f"{PROBE_QUESTION.removeprefix(PROBE_MARK).strip()!r}, it {said}{evidence}. A proxy or gateway between "
            "here and the model may drop image parts, or the model cannot read images. Fix: point base_url at an "
            "endpoint that passes images to a vision model; or set validator_parameters.media_probe to 'warn' to "
            "score anyway, or 'off' to skip the probe."
        ),
    )
    _log(result)
    return result, None


def _wrong(red: ModelOutput, blue: ModelOutput) -> list[str]:
    """The colours whose answers are not the expected yes/no (a failed call counts as wrong)."""
    return [
        name
        for name, output in (("red", red), ("blue", blue))
        if not output.ok or (index := resolve(output.text, _YES_NO)) is None or _YES_NO[index] != PROBE_COLORS[name][1]
    ]


def _log(result: dict[str, Any]) -> None:
    if result["status"] == "failed" and result["mode"] == "error":
        logger.error("gecko media probe failed: %s", result["message"])
    else:
        logger.warning("gecko media probe %s: %s", result["status"], result["message"])
