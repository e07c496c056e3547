"""The one model-call path for every LLM call (docs/models.md "Model specs").

>>> model = get_model("gemini-2.5-flash", GenerateConfig(project="my-project", temperature=0))
>>> outputs = model.generate([ModelRequest(parts=("Say hi",), key={"id": 1})])

:func:`get_model` resolves a spec through a provider registry (Vertex AI / Gemini API via google-genai,
OpenAI-compatible servers via openai, ``replay/`` recordings); :class:`Model` adds the response cache,
bounded (adaptive) concurrency, a requests-per-minute limiter, retries with backoff honouring
``Retry-After``, usage accounting and a run-level budget of consecutive failures.
"""

from autorater_pipelines.models._cache_store import cache_under_pipeline_root, use_pipeline_root_cache
from autorater_pipelines.models._config import GenerateConfig, GenerationSettings
from autorater_pipelines.models._model import Model
from autorater_pipelines.models._provider import Provider, ProviderError
from autorater_pipelines.models._registry import (
    MediaInput,
    check_model,
    get_model,
    media_input,
    model_identity,
    parse_model_spec,
    provider_prefixes,
    register_provider,
)
from autorater_pipelines.models._shared_pace import SharedPace, shared_pace
from autorater_pipelines.models._stats import CallStats, LatencyHistogram
from autorater_pipelines.models._types import (
    ErrorKind,
    MediaPart,
    ModelError,
    ModelOutput,
    ModelRequest,
    TokenLogprob,
    Usage,
)

__all__ = [
    "CallStats",
    "ErrorKind",
    "GenerateConfig",
    "GenerationSettings",
    "LatencyHistogram",
    "MediaInput",
    "MediaPart",
    "Model",
    "ModelError",
    "ModelOutput",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "SharedPace",
    "TokenLogprob",
    "Usage",
    "cache_under_pipeline_root",
    "check_model",
    "get_model",
    "media_input",
    "model_identity",
    "parse_model_spec",
    "provider_prefixes",
    "register_provider",
    "shared_pace",
    "use_pipeline_root_cache",
]
