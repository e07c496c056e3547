"""The persistent response cache."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest

from autorater_pipelines.models import GenerateConfig, MediaPart, ModelOutput, ModelRequest, Usage, get_model
from autorater_pipelines.models._cache import ResponseCache, cache_key, resolve_cache_dir
from autorater_pipelines.testing import ModelEmulator

IDENTITY = {"provider": "vertex", "model": "m", "base_url": None}


def _requests(n: int) -> list[ModelRequest]:
    return [ModelRequest(parts=(f"q{i}", MediaPart("image/png", data=bytes([i]))), key={"id": i}) for i in range(n)]


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*/*.json"))


@pytest.mark.parametrize("spec", ["gemini-2.5-flash", "openai/m"])
def test_second_run_makes_no_calls(emulator: ModelEmulator, make_config, tmp_path: Path, spec: str) -> None:
    emulator.responder = lambda req: f"answer to {req.prompt_text}"
    config = make_config(cache_dir=str(tmp_path / "cache"), logprobs=1)
    first = get_model(spec, config).generate(_requests(3))
    assert len(_entries(tmp_path / "cache")) == 3
    emulator.reset()
    model = get_model(spec, config)
    second = model.generate(_requests(3))
    assert emulator.call_count == 0
    assert [o.text for o in second] == [o.text for o in first]
    assert [o.logprobs for o in second] == [o.logprobs for o in first]
    assert all(o.cached and o.attempts == 0 and o.usage == Usage() and o.latency_s == 0 for o in second)
    assert model.stats.cache_hits == 3 and model.stats.calls == 0


def test_key_is_not_part_of_the_cache_key(emulator: ModelEmulator, make_config, tmp_path: Path) -> None:
    config = make_config(cache_dir=str(tmp_path))
    model = get_model("gemini-2.5-flash", config)
    model.generate([ModelRequest(parts=("same",), key={"id": 1})])
    [out] = model.generate([ModelRequest(parts=("same",), key={"id": 2, "flipped": True})])
    assert out.cached and emulator.call_count == 1


def test_cache_key_covers_what_the_provider_sees() -> None:
    base = ModelRequest(parts=("p", MediaPart("image/png", data=b"1")), key={"id": 1})
    config = GenerateConfig()
    key = cache_key(IDENTITY, base, config)
    assert len(key) == 64
    assert cache_key(IDENTITY, dataclasses.replace(base, key={"id": 2}), config) == key
    variants = [
        cache_key(IDENTITY, dataclasses.replace(base, sample_index=1), config),
        cache_key(IDENTITY, dataclasses.replace(base, parts=("p", MediaPart("image/png", data=b"2"))), config),
        cache_key(IDENTITY, dataclasses.replace(base, parts=("p", MediaPart("image/jpeg", data=b"1"))), config),
        cache_key(IDENTITY, dataclasses.replace(base, system_instruction="s"), config),
        cache_key(IDENTITY, dataclasses.replace(base, response_schema={"type": "string"}), config),
        cache_key(IDENTITY, base, GenerateConfig(temperature=0.5)),
        cache_key(IDENTITY, base, GenerateConfig(logprobs=2)),
        cache_key({**IDENTITY, "model": "other"}, base, config),
        cache_key({**IDENTITY, "base_url": "http://127.0.0.1:1"}, base, config),
    ]
    assert len({key, *variants}) == len(variants) + 1
    # execution settings do not change answers
    assert cache_key(IDENTITY, base, GenerateConfig(max_concurrency=2, timeout_s=5)) == key


def test_corrupt_entry_is_a_miss(emulator: ModelEmulator, make_config, tmp_path: Path) -> None:
    config = make_config(cache_dir=str(tmp_path))
    get_model("openai/m", config).generate(_requests(3))
    entries = _entries(tmp_path)
    entries[0].write_text('{"v": 1, "key": "')  # torn JSON
    entries[1].write_text("")  # empty
    entries[2].write_text('{"v": 1, "key": "not-this-key", "text": "x"}')  # wrong key
    emulator.reset()
    outputs = get_model("openai/m", config).generate(_requests(3))
    assert emulator.call_count == 3 and all(o.ok and not o.cached for o in outputs)
    emulator.reset()
    assert all(o.cached for o in get_model("openai/m", config).generate(_requests(3)))  # rewritten
    assert emulator.call_count == 0
    assert not list(tmp_path.rglob("*.tmp"))


def test_failures_are_not_cached(emulator: ModelEmulator, make_config, tmp_path: Path) -> None:
    config = make_config(cache_dir=str(tmp_path))
    emulator.inject_failures(1, status=400, retry_after_s=None)
    assert not get_model("gemini-2.5-flash", config).generate(_requests(1))[0].ok
    emulator.responder = lambda req: {"text": None, "finish_reason": "safety"}
    assert not get_model("gemini-2.5-flash", config).generate(_requests(1))[0].ok
    assert _entries(tmp_path) == []


def test_cache_dir_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AUTORATER_CACHE_DIR", str(tmp_path / "env"))
    assert resolve_cache_dir(None) == tmp_path / "env"
    assert resolve_cache_dir(str(tmp_path / "explicit")) == tmp_path / "explicit"
    assert resolve_cache_dir("off") is None and resolve_cache_dir("OFF") is None
    monkeypatch.setenv("AUTORATER_CACHE_DIR", "off")
    assert resolve_cache_dir(None) is None
    monkeypatch.delenv("AUTORATER_CACHE_DIR")
    assert resolve_cache_dir(None) == Path.home() / ".cache" / "autorater-pipelines"
    assert get_model("openai/m", GenerateConfig(base_url="http://127.0.0.1:9", cache_dir="off")).cache_dir is None


def test_unwritable_cache_is_skipped_with_one_warning(
    emulator: ModelEmulator, make_config, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with caplog.at_level(logging.WARNING, logger="autorater_pipelines"):
        outputs = get_model("openai/m", make_config(cache_dir=str(blocker))).generate(_requests(3))
    assert all(o.ok for o in outputs)
    assert len([r for r in caplog.records if "is not writable" in r.getMessage()]) == 1


def test_cache_roundtrip_keeps_raw_and_finish_reason(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    output = ModelOutput(text="A", finish_reason="stop", usage=Usage(3, 1), attempts=2, raw={"x": [1]})
    cache.put("ab" * 32, output)
    hit = cache.get("ab" * 32)
    assert hit == ModelOutput(text="A", finish_reason="stop", attempts=0, cached=True, raw={"x": [1]})
    assert cache.get("cd" * 32) is None


def test_background_writes_are_visible_at_once_and_on_disk_after_flush(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c", background=True)
    output = ModelOutput(text="A", finish_reason="stop", raw={"x": 1})
    for i in range(50):
        cache.put(f"{i:02d}" + "k" * 62, output)
    hit = cache.get("00" + "k" * 62)  # served while (or after) it is written
    assert hit == ModelOutput(text="A", finish_reason="stop", attempts=0, cached=True, raw={"x": 1})
    cache.flush()
    assert len(list((tmp_path / "c").glob("*/*.json"))) == 50
    assert not list((tmp_path / "c").glob("*/*.tmp"))
    assert ResponseCache(tmp_path / "c").get("49" + "k" * 62) == hit


def test_an_endpoint_named_by_the_environment_is_part_of_the_cache_key(tmp_path, monkeypatch):
    """Answers cached from an emulator reached through $GOOGLE_VERTEX_BASE_URL are not served for another endpoint.

    A newcomer trial found a run with the variable unset (Google's endpoint) answered from an emulator's entries.
    """
    config = GenerateConfig(project="p", cache_dir=str(tmp_path / "cache"), progress=False)
    request = ModelRequest(parts=("same prompt",))
    with ModelEmulator() as first, ModelEmulator() as second:
        first.responder = lambda req: "from the first endpoint"
        second.responder = lambda req: "from the second endpoint"
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", first.url)
        [out] = get_model("gemini-2.5-flash", config).generate([request])
        assert out.text == "from the first endpoint" and first.call_count == 1
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", second.url)
        [out] = get_model("gemini-2.5-flash", config).generate([request])
        assert out.text == "from the second endpoint" and second.call_count == 1
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", first.url)
        [out] = get_model("gemini-2.5-flash", config).generate([request])
        assert out.text == "from the first endpoint" and first.call_count == 1  # its own entry, from the cache
