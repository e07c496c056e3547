"""GenerationSettings: hashed whole into the cache key, and every field reaches the server through every provider.

The tests iterate over the model's fields, so a setting added to GenerationSettings is covered without
editing them (and fails here until the cache and the providers handle it).
"""

from __future__ import annotations

import typing
from typing import Any

import pytest

from autorater_pipelines.models import GenerateConfig, GenerationSettings, ModelRequest, get_model
from autorater_pipelines.models._cache import cache_key
from autorater_pipelines.models.providers.vertex import GeminiProvider
from autorater_pipelines.testing import EmulatedRequest, ModelEmulator
from autorater_pipelines.testing._protocols import parse_request

IDENTITY = {"provider": "vertex", "model": "m", "base_url": None}
REQUEST = ModelRequest(parts=("p",), key={"id": 1})
GENERATION = list(GenerationSettings.model_fields)
EXECUTION = [name for name in GenerateConfig.model_fields if name not in GenerationSettings.model_fields]
CANDIDATES: list[Any] = [
    3,
    0.25,
    2.5,
    True,
    False,
    "json_schema",
    "batch",
    "gs://bucket/prefix",
    "x",
    "http://127.0.0.1:1",
]


def _other_value(name: str) -> Any:
    """A valid value of field ``name`` other than its default (the first candidate that validates)."""
    default = GenerateConfig.model_fields[name].default
    for candidate in CANDIDATES:
        try:
            value = getattr(GenerateConfig(**{name: candidate}), name)
        except ValueError:
            continue
        if value != default:
            return value
    raise AssertionError(f"no candidate value for {name}: extend CANDIDATES")


def test_the_generation_fields_are_those_of_generate_config() -> None:
    assert {"temperature", "max_output_tokens", "top_p", "seed", "logprobs"} <= set(GENERATION)
    assert set(GENERATION) < set(GenerateConfig.model_fields)
    config = GenerateConfig(temperature=0.5, seed=2, max_concurrency=3)
    assert config.generation == GenerationSettings(temperature=0.5, seed=2)


@pytest.mark.parametrize("name", GENERATION)
def test_changing_any_generation_setting_changes_the_cache_key(name: str) -> None:
    base = cache_key(IDENTITY, REQUEST, GenerateConfig())
    changed = GenerateConfig(**{name: _other_value(name)})
    assert cache_key(IDENTITY, REQUEST, changed) != base


def test_each_generation_setting_gives_its_own_key() -> None:
    keys = {cache_key(IDENTITY, REQUEST, GenerateConfig(**{name: _other_value(name)})) for name in GENERATION}
    assert len(keys) == len(GENERATION)


@pytest.mark.parametrize("name", EXECUTION)
def test_execution_settings_leave_the_cache_key(name: str) -> None:
    value = _other_value(name)
    extra = {"batch_staging_uri": "gs://bucket/prefix"} if name == "mode" else {}
    config = GenerateConfig(**{name: value, **extra})
    assert cache_key(IDENTITY, REQUEST, config) == cache_key(IDENTITY, REQUEST, GenerateConfig())


def _sent_value(name: str) -> int | float:
    """A value for ``name`` that every provider sends as is (int or float by the field's type)."""
    types = typing.get_args(GenerationSettings.model_fields[name].annotation)
    return 0.25 if float in types else 3


@pytest.mark.parametrize("spec", ["gemini-2.5-flash", "openai/m"])
@pytest.mark.parametrize("name", GENERATION)
def test_every_generation_setting_reaches_the_server(emulator: ModelEmulator, make_config, spec: str, name: str):
    value = _sent_value(name)
    [out] = get_model(spec, make_config(**{name: value})).generate([REQUEST])
    assert out.ok, out.error
    [req] = emulator.requests
    assert req.generation == {name: value}


@pytest.mark.parametrize("name", GENERATION)
def test_every_generation_setting_is_in_a_batch_request_line(make_config, name: str) -> None:
    value = _sent_value(name)
    provider = GeminiProvider("gemini-2.5-flash", make_config(**{name: value}))
    body = provider.batch_request(REQUEST, {"id": "1"})
    seen = parse_request(EmulatedRequest(protocol="vertex", model="m", path="/", headers={}, body=body))
    assert seen.generation == {name: value}
