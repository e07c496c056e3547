"""Protocol emulators for tests and offline demos (docs/contributing.md "Testing without the cloud").

:class:`ModelEmulator` serves Vertex AI / Gemini API ``generateContent`` and OpenAI chat completions on
127.0.0.1, reached by the real SDK clients through ``base_url``; :class:`ImageDroppingProxy` sits in front of it as a
middleware that silently drops images.
"""

from autorater_pipelines.testing._protocols import (
    Answer,
    EmulatedRequest,
    Refusal,
    Responder,
    default_responder,
    schema_example,
)
from autorater_pipelines.testing._server import ModelEmulator
from autorater_pipelines.testing.proxy import ImageDroppingProxy

__all__ = [
    "Answer",
    "EmulatedRequest",
    "ImageDroppingProxy",
    "ModelEmulator",
    "Refusal",
    "Responder",
    "default_responder",
    "schema_example",
]
