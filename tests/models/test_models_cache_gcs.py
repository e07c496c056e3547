"""The response cache on Cloud Storage (gcp-storage-emulator): batched segments, shared prefix, FUSE paths."""

from __future__ import annotations

import pytest

from autorater_pipelines.models import ModelRequest, get_model
from autorater_pipelines.models._cache_store import (
    GcsResponseCache,
    cache_under_pipeline_root,
    open_response_cache,
    use_pipeline_root_cache,
)
from autorater_pipelines.testing import ModelEmulator


def _requests(n: int, tag: str = "q") -> list[ModelRequest]:
    return [ModelRequest(parts=(f"{tag}{i}",), key={"id": i}) for i in range(n)]


def _segments(bucket, uri: str) -> list[str]:
    prefix = uri.split("/", 3)[3] + "/segments/"
    return sorted(b.name for b in bucket.client.list_blobs(bucket.name, prefix=prefix))


def test_a_run_writes_one_segment_and_a_rerun_makes_no_calls(bucket, emulator: ModelEmulator, make_config) -> None:
    gcs_bucket, folder = bucket
    uri = f"{folder}/cache"
    emulator.responder = lambda req: f"answer to {req.prompt_text}"
    model = get_model("gemini-2.5-flash", make_config(cache_dir=uri))
    first = model.generate(_requests(40))
    assert model.cache_dir == uri
    assert len(_segments(gcs_bucket, uri)) == 1  # 40 entries, one object (not one per call)
    del model  # a new process would open the prefix afresh
    emulator.reset()
    fresh = GcsResponseCache(uri)
    assert len(fresh) == 40 and fresh.segments_read == 1
    again = get_model("openai/m", make_config(cache_dir=uri))  # another model: its own entries
    assert again.generate(_requests(1))[0].cached is False
    rerun = get_model("gemini-2.5-flash", make_config(cache_dir=uri))
    second = rerun.generate(_requests(40))
    assert [o.text for o in second] == [o.text for o in first]
    assert all(o.cached for o in second) and emulator.call_count == 1


def test_entries_are_uploaded_in_batches_of_batch_entries(bucket, emulator: ModelEmulator, make_config) -> None:
    gcs_bucket, folder = bucket
    uri = f"{folder}/cache"
    cache = open_response_cache(uri)
    assert isinstance(cache, GcsResponseCache)
    cache.batch_entries = 10
    model = get_model("openai/m", make_config(cache_dir=uri))
    assert model._cache is cache  # one store per prefix and process
    model.generate(_requests(35))
    names = _segments(gcs_bucket, uri)
    sizes = [len(gcs_bucket.blob(n).download_as_bytes().splitlines()) for n in names]
    assert sum(sizes) == 35 and max(sizes) <= 10 and len(names) <= 12  # segments of at most batch_entries
    assert len(GcsResponseCache(uri)) == 35


def test_two_writers_of_one_prefix_never_overwrite_each_other(bucket) -> None:
    from autorater_pipelines.models import ModelOutput

    gcs_bucket, folder = bucket
    uri = f"{folder}/shared"
    a, b = GcsResponseCache(uri), GcsResponseCache(uri)  # e.g. two shards at the same time
    for i in range(5):
        a.put(f"{i:064d}", ModelOutput(text=f"a{i}"))
        b.put(f"{i + 100:064d}", ModelOutput(text=f"b{i}"))
    a.flush()
    b.flush()
    assert len(_segments(gcs_bucket, uri)) == 2
    merged = GcsResponseCache(uri)
    assert len(merged) == 10 and merged.get(f"{103:064d}").text == "b3"


def test_fuse_paths_and_pipeline_roots_map_to_the_storage_client(bucket, monkeypatch) -> None:
    _, folder = bucket
    fuse = "/gcs/" + folder[len("gs://") :] + "/fuse-cache"
    cache = open_response_cache(fuse)
    assert isinstance(cache, GcsResponseCache) and cache.location == folder + "/fuse-cache"
    assert cache_under_pipeline_root("gs://b/root/") == "gs://b/root/autorater-cache"
    assert cache_under_pipeline_root("/gcs/b/root") == "gs://b/root/autorater-cache"
    assert cache_under_pipeline_root("/tmp/local-root") is None
    assert cache_under_pipeline_root("{{$.pipeline_root}}") is None
    monkeypatch.delenv("AUTORATER_CACHE_DIR", raising=False)
    assert use_pipeline_root_cache("gs://b/root") == "gs://b/root/autorater-cache"
    monkeypatch.setenv("AUTORATER_CACHE_DIR", "/explicit")
    assert use_pipeline_root_cache("gs://b/root") == "/explicit"  # an explicit setting wins


def test_an_unreachable_bucket_is_a_warning_not_a_failure(
    emulator: ModelEmulator, make_config, monkeypatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:9")  # nothing listens
    monkeypatch.setattr(GcsResponseCache, "retry_deadline_s", 0.5)
    model = get_model("openai/m", make_config(cache_dir="gs://no-such-bucket/cache"))
    assert all(o.ok for o in model.generate(_requests(3)))
    assert "continuing without it" in caplog.text


def test_no_form_of_a_key_the_model_repeats_is_uploaded(bucket, emulator: ModelEmulator, make_config, monkeypatch):
    """A model that repeats its request's key (every echo form) in its answers: the segments hold it redacted."""
    from autorater_pipelines.redaction import REDACTED
    from autorater_pipelines.testing.judges import ECHO_FORMS

    key = "Tq8Xv3Jm/5Lw2+rTn7pKd4=sHc6yB9Qz"
    monkeypatch.setenv("GEMINI_API_KEY", key)
    gcs_bucket, folder = bucket
    uri = f"{folder}/cache"
    emulator.responder = lambda req: "headers: " + ECHO_FORMS[req.prompt_text](req.headers["x-goog-api-key"])
    model = get_model("gemini-2.5-flash", make_config(cache_dir=uri))
    outputs = model.generate([ModelRequest(parts=(form,), key={"id": form}) for form in ECHO_FORMS])
    assert all(o.ok for o in outputs), [o.error for o in outputs]
    assert outputs[0].text == f"headers: API key not valid: {key.upper()}"  # in memory, as the model said it
    stored = b"".join(gcs_bucket.blob(n).download_as_bytes() for n in _segments(gcs_bucket, uri)).decode()
    assert stored.count(REDACTED) >= len(ECHO_FORMS)
    runs = ("tq8xv3jm", "rtn7pkd4", "shc6yb9qz", "5471385876334a6d", "72546e37704b6434", "73486336794239517a")
    assert [run for run in runs if run in stored.lower()] == []
    assert "VHE4WHYzSm0vNUx3MityVG43cEtkND1zSGM2eUI5UX" not in stored  # base64 of apikey:KEY at offset 0 mod 3


def test_each_answer_is_stored_before_its_call_finishes_and_small_segments_are_merged(bucket) -> None:
    """Answers written one by one (as calls finish): each is in the bucket when put's future is done; the
    small segments this makes are merged (``merge_fan`` of one size class → one) and deleted by their writer."""
    from autorater_pipelines.models import ModelOutput

    gcs_bucket, folder = bucket
    uri = f"{folder}/stream"
    cache = GcsResponseCache(uri, merge_fan=4)
    most_left = 0
    for i in range(20):
        stored = cache.put(f"{i:064d}", ModelOutput(text=f"t{i}"))
        assert stored is not None
        stored.result(timeout=30)
        assert GcsResponseCache(uri).get(f"{i:064d}").text == f"t{i}"  # a fresh reader (a resumed task) has it
        most_left = max(most_left, len(_segments(gcs_bucket, uri)))
    assert cache.segments_written > 20 and cache.segments_merged >= 16  # one upload each, then merges
    assert most_left <= 3 * 2  # never more than merge_fan - 1 per size class (levels 0 and 1 here) + merged
    cache.flush()
    assert len(_segments(gcs_bucket, uri)) == 1
    fresh = GcsResponseCache(uri)
    assert len(fresh) == 20 and fresh.get(f"{7:064d}").text == "t7"
