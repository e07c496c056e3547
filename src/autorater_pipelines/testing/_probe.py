"""How the emulator answers Gecko's media probe (:mod:`autorater_pipelines.gecko.media_probe`): as a seeing model.

The probe asks "Is this image mostly red?" about a plain red and a plain blue square, and once with no image. The
emulator looks at the bytes it received (decoded with Pillow, so a JPEG works as well as the probe's PNG): "yes"
when red is the image's strongest mean channel, else "no"; with no image it says it sees none, as a vision model
does. A proxy that drops images therefore makes the probe fail, as it would with a real model.
"""

from __future__ import annotations

import io

from autorater_pipelines.testing._protocols import EmulatedRequest

__all__ = ["is_probe", "probe_answer"]


def is_probe(request: EmulatedRequest) -> bool:
    """True when the request is one of the media probe's."""
    from autorater_pipelines.gecko.media_probe import PROBE_MARK

    return PROBE_MARK in request.prompt_text


def probe_answer(request: EmulatedRequest) -> str:
    """The answer a seeing model gives to the probe request (module docstring)."""
    from PIL import Image, ImageStat

    images = [data for _, data, _ in request.media if data]
    if not images:
        return "I cannot see any image in your message, so I cannot tell whether it is mostly red."
    try:
        with Image.open(io.BytesIO(images[0])) as image:
            red, green, blue = ImageStat.Stat(image.convert("RGB")).mean[:3]
    except (OSError, ValueError) as exc:
        return f"I cannot read this image ({type(exc).__name__})."
    return "yes" if red > green and red > blue else "no"
