from __future__ import annotations

import sys

import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.models import (
    CallStats,
    GenerateConfig,
    get_model,
    parse_model_spec,
    provider_prefixes,
)

LOOPBACK = "http://127.0.0.1:9"  # never contacted: these tests only build models


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("gemini-2.5-flash", ("google", "gemini-2.5-flash")),
        ("  gemini-2.5-flash ", ("google", "gemini-2.5-flash")),
        ("publishers/google/models/gemini-2.5-flash", ("google", "publishers/google/models/gemini-2.5-flash")),
        ("projects/p/locations/us-east1/models/123@2", ("google", "projects/p/locations/us-east1/models/123@2")),
        ("projects/p/locations/us-east1/endpoints/456", ("google", "projects/p/locations/us-east1/endpoints/456")),
        ("vertex/gemini-2.5-pro", ("vertex", "gemini-2.5-pro")),
        ("gemini/gemini-2.5-pro", ("gemini", "gemini-2.5-pro")),
        ("openai/Qwen/Qwen2.5-7B-Instruct", ("openai", "Qwen/Qwen2.5-7B-Instruct")),
        ("replay//tmp/rec.jsonl", ("replay", "/tmp/rec.jsonl")),
        ("replay/gs://bucket/rec.jsonl", ("replay", "gs://bucket/rec.jsonl")),
    ],
)
def test_parse_model_spec(spec: str, expected: tuple[str, str]) -> None:
    assert parse_model_spec(spec) == expected


def test_unknown_provider_lists_the_valid_ones() -> None:
    with pytest.raises(
        InputError,
        match=r"unknown model provider 'anthropic' in model spec 'anthropic/claude'; valid specs are "
        r"'gemini/<model>', 'openai/<model>', 'replay/<model>', 'vertex/<model>', a Gemini model name",
    ):
        get_model("anthropic/claude")
    assert provider_prefixes() == ["gemini", "openai", "replay", "vertex"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", r"model spec must be a non-empty string, got ''"),
        ("openai/", r"model spec 'openai/' names no model after 'openai/'"),
        ("projects/p/models/x", r"malformed Vertex AI resource name 'projects/p/models/x'"),
        ("gemini 2.5", r"invalid model name 'gemini 2.5'"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_model_spec(spec)


def test_gemini_without_project_or_key_asks_for_one() -> None:
    with pytest.raises(InputError, match=r"no Google Cloud project was given and neither GEMINI_API_KEY"):
        get_model("gemini-2.5-flash")


def test_vertex_with_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")  # an explicit project wins over a key
    model = get_model("gemini-2.5-flash", GenerateConfig(project="p", location="europe-west4"))
    assert (model.spec, model.provider, model.name) == ("gemini-2.5-flash", "vertex", "gemini-2.5-flash")
    assert model.config.project == "p"
    assert model.stats == CallStats()


def test_api_key_without_project_uses_gemini_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    model = get_model("publishers/google/models/gemini-2.5-flash")
    assert (model.provider, model.name) == ("gemini_api", "gemini-2.5-flash")


def test_resource_name_supplies_the_project() -> None:
    model = get_model("projects/p/locations/europe-west4/endpoints/456")
    assert (model.provider, model.name) == ("vertex", "projects/p/locations/europe-west4/endpoints/456")


def test_loopback_base_url_needs_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_model("gemini-2.5-flash", GenerateConfig(base_url=LOOPBACK)).provider == "vertex"
    assert get_model("gemini-2.5-flash", GenerateConfig(base_url="http://localhost:9")).provider == "vertex"
    assert get_model("gemini/gemini-2.5-flash", GenerateConfig(base_url=LOOPBACK)).provider == "gemini_api"
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert get_model("gemini-2.5-flash", GenerateConfig(base_url=LOOPBACK)).provider == "gemini_api"


def test_explicit_prefixes_check_their_requirements() -> None:
    with pytest.raises(InputError, match=r"Vertex AI model 'gemini-2.5-pro' needs a Google Cloud project"):
        get_model("vertex/gemini-2.5-pro")
    with pytest.raises(InputError, match=r"needs an API key: set GEMINI_API_KEY"):
        get_model("gemini/gemini-2.5-pro")
    with pytest.raises(InputError, match=r"is a Vertex AI model; the Gemini Developer API cannot call it"):
        get_model("gemini/projects/p/locations/l/endpoints/1", GenerateConfig(base_url=LOOPBACK))


def test_openai_needs_key_or_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match=r"OpenAI model 'gpt-4o-mini' needs an API key: set OPENAI_API_KEY"):
        get_model("openai/gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    model = get_model("openai/gpt-4o-mini")
    assert (model.provider, model.name) == ("openai", "gpt-4o-mini")
    assert model._backend.base_url == "http://127.0.0.1:8000/v1"
    assert get_model("openai/m", GenerateConfig(base_url="http://127.0.0.1:8000"))._backend.base_url == (
        "http://127.0.0.1:8000/v1"
    )


def test_missing_sdk_names_the_pip_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # `import openai` now raises ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "autorater_pipelines.models.providers.openai", raising=False)
    with pytest.raises(
        InputError,
        match=r"model spec 'openai/gpt-4o' needs the Python package 'openai', which is not installed "
        r"\(No module named 'openai'\): pip install openai",
    ):
        get_model("openai/gpt-4o", GenerateConfig(base_url=LOOPBACK))
