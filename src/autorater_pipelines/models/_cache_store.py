"""Where the response cache lives: a local directory, or Cloud Storage with batched writes.

:func:`open_response_cache` turns ``GenerateConfig.cache_dir`` (or ``$AUTORATER_CACHE_DIR``) into a store:

- a local path: :class:`~autorater_pipelines.models._cache.ResponseCache`, one file per entry;
- ``gs://bucket/prefix`` — or a ``/gcs/bucket/prefix`` Cloud Storage FUSE path on Vertex AI, which is
  read and written through the storage client instead, so that no call writes an object of its own —
  :class:`GcsResponseCache`.

:class:`GcsResponseCache` layout: ``<prefix>/segments/<UTC time>-<random>.jsonl``, each object a batch of
entries (one JSON object per line, the same entry format as the local cache). Objects are created whole and
never rewritten, so parallel shards and retried tasks write side by side without coordination.
On first use the store lists and downloads every segment into a local spool file and indexes the
entries (key → offset), so a lookup is one local read.

Writing: an answer is uploaded as soon as the upload before it has ended (one upload at a time, carrying
every answer that arrived meanwhile: group commit), and the call that produced it only counts as finished
once it is stored (:meth:`GcsResponseCache.put` returns a future the model layer awaits). A process killed
with SIGKILL therefore loses at most the answers of the calls in flight (issue 25: a 10 s batch window lost
every answer of its last 10 s, 30 of 30 in ``tests/autosxs/test_kill_resume.py``). The small segments this makes
are merged: when ``merge_fan`` of a process's own segments of one size class exist, they are rewritten as
one segment (at most ``batch_entries`` entries) and then deleted — only ever the process's own, after their
entries are stored again — and at :meth:`GcsResponseCache.flush` (end of every ``Model.generate`` run,
``Model.aclose``, SIGTERM, interpreter exit) all of them are merged, so a finished run leaves about one
segment per ``batch_entries`` answers. A reader that listed a segment just before its writer merged it away
lists again and reads the merged one.

Every process of the same prefix keeps its own index: entries another process writes after this one
loaded are not seen until the next load (shards judge disjoint rows, so they need none of each other's).
Cloud Storage failures are logged once and never fail a run (the cache is an optimization); after one, calls
no longer wait for their answers to be stored.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import datetime
import json
import logging
import os
import tempfile
import threading
import uuid
import weakref
from typing import Any, Protocol

from autorater_pipelines.models._cache import (
    ResponseCache,
    as_hit,
    decode_entry,
    encode_entry,
    resolve_cache_dir,
)
from autorater_pipelines.models._types import ModelOutput

__all__ = [
    "GcsResponseCache",
    "Store",
    "cache_under_pipeline_root",
    "open_response_cache",
    "use_pipeline_root_cache",
]

logger = logging.getLogger(__name__)

PIPELINE_ROOT_CACHE = "autorater-cache"
"""Folder of the response cache under a pipeline root (see :func:`cache_under_pipeline_root`)."""


class Store(Protocol):
    """What the model wrapper needs from a response cache."""

    @property
    def location(self) -> str:
        """Where it lives (a directory or ``gs://`` prefix)."""
        ...

    def get(self, key: str) -> ModelOutput | None:
        """The cached output for ``key``, or None."""
        ...

    def put(self, key: str, output: ModelOutput) -> concurrent.futures.Future[None] | None:
        """Store a successful output; a future done once it is stored, or None (stored, or not waited for)."""
        ...

    def flush(self) -> None:
        """Persist what ``put`` received."""
        ...


def gcs_uri_of(location: str) -> str | None:
    """``gs://b/p`` for ``gs://b/p`` or the Vertex AI FUSE path ``/gcs/b/p``; None for other locations."""
    if location.startswith("gs://"):
        return location.rstrip("/")
    if location.startswith("/gcs/") and len(location) > len("/gcs/"):
        return "gs://" + location[len("/gcs/") :].rstrip("/")
    return None


def cache_under_pipeline_root(pipeline_root: str | None) -> str | None:
    """The default cache location of a pipeline task: ``<root>/autorater-cache`` for a Cloud Storage root.

    Returns None for a local root (the local runner's root is a scratch folder: the user's cache in
    ``~/.cache`` serves better) or an unresolved placeholder.
    """
    uri = gcs_uri_of((pipeline_root or "").strip())
    return f"{uri}/{PIPELINE_ROOT_CACHE}" if uri else None


def use_pipeline_root_cache(pipeline_root: str | None) -> str | None:
    """Make ``<pipeline root>/autorater-cache`` the default cache of this process when the root is on GCS.

    Sets ``$AUTORATER_CACHE_DIR`` unless it is set already (an explicit ``cache_dir`` parameter still wins).
    Called by the pipeline components, so a retried task or a re-run of the pipeline repeats no finished call.

    Returns:
        The cache location now in effect through the environment, or None.
    """
    location = cache_under_pipeline_root(pipeline_root)
    if location and not os.environ.get("AUTORATER_CACHE_DIR"):
        os.environ["AUTORATER_CACHE_DIR"] = location
    return os.environ.get("AUTORATER_CACHE_DIR")


_OPEN: weakref.WeakValueDictionary[str, GcsResponseCache] = weakref.WeakValueDictionary()
_OPEN_LOCK = threading.Lock()


def open_response_cache(setting: str | None) -> Store | None:
    """The response cache of a model (``GenerateConfig.cache_dir`` semantics), or None when it is off.

    Models of one process that use the same ``gs://`` prefix share one :class:`GcsResponseCache`.
    """
    value = setting if setting is not None else os.environ.get("AUTORATER_CACHE_DIR")
    uri = gcs_uri_of(value.strip()) if value else None
    if uri is None:
        directory = resolve_cache_dir(setting)
        return ResponseCache(directory, background=True) if directory is not None else None
    with _OPEN_LOCK:
        cache = _OPEN.get(uri)
        if cache is None:
            cache = GcsResponseCache(uri)
            _OPEN[uri] = cache
        return cache


class GcsResponseCache:
    """Response cache under a ``gs://`` prefix, written in batches (see the module docstring).

    Args:
        uri: ``gs://bucket/prefix``.
        batch_entries: Most entries in one segment; merging stops at this size.
        merge_fan: Merge a process's own segments once this many of one size class exist.
        filesystem: A :class:`~autorater_pipelines.io.GcsFileSystem` (default: a new one).
    """

    retry_deadline_s = 30.0
    """How long one Cloud Storage operation is retried (google-api-core retry) before it is given up."""

    def __init__(self, uri: str, *, batch_entries: int = 1000, merge_fan: int = 8, filesystem: Any = None) -> None:
        from autorater_pipelines.io._gcs import GcsFileSystem, split_gcs_uri

        self.location = uri.rstrip("/")
        self._bucket, prefix = split_gcs_uri(self.location, need_object=False)
        self._prefix = f"{prefix.strip('/')}/segments/" if prefix.strip("/") else "segments/"
        self._fs = filesystem if filesystem is not None else GcsFileSystem()
        self.batch_entries = batch_entries
        self.merge_fan = max(2, merge_fan)
        self.segments_written = 0
        self.segments_read = 0
        self.segments_merged = 0
        self._lock = threading.RLock()
        self._upload_lock = threading.Lock()
        self._loaded = False
        self._spool: Any = None
        self._index: dict[str, tuple[int, int]] = {}  # key -> (offset, length) in the spool file
        self._pending: dict[str, ModelOutput] = {}  # not uploaded yet
        self._waiting: dict[str, list[concurrent.futures.Future[None]]] = {}  # put() futures by key
        self._own: list[tuple[str, list[str], int]] = []  # this process's mergeable segments: name, keys, level
        self._failed = False
        self._upload_failed = False
        self._wake = threading.Event()
        self._uploader: threading.Thread | None = None
        _LIVE.add(self)

    # --- reading ------------------------------------------------------------------------------
    def get(self, key: str) -> ModelOutput | None:
        """The cached output for ``key`` (``cached=True``, ``attempts=0``) or None."""
        self._load()
        with self._lock:
            waiting = self._pending.get(key)
            where = self._index.get(key)
            if waiting is not None:
                return as_hit(waiting)
            if where is None or self._spool is None:
                return None
            data = os.pread(self._spool.fileno(), where[1], where[0])
        try:
            return decode_entry(json.loads(data), key)
        except ValueError:
            return None

    def __len__(self) -> int:
        """Number of entries known (loaded, and written by this process)."""
        self._load()
        with self._lock:
            return len(self._index) + sum(1 for k in self._pending if k not in self._index)

    def _load(self) -> None:
        """List and download every segment once, into the spool file and the index."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            self._spool = tempfile.TemporaryFile(prefix="autorater-cache-")
            seen: set[str] = set()
            for _ in range(5):  # again while segments vanish: their writer merged them into a newer one
                try:
                    names = [n for n in self._list() if n not in seen]
                except Exception as exc:  # noqa: BLE001 - the cache never fails a run
                    self._warn("cannot list", exc)
                    return
                if not self._read_segments(names, seen):
                    return

    def _read_segments(self, names: list[str], seen: set[str]) -> bool:
        """Download and index ``names`` (adding them to ``seen``); True when one had been deleted meanwhile."""
        vanished = False
        for name in names:
            seen.add(name)
            try:
                blob = self._fs.client().bucket(self._bucket).blob(name)
                data = blob.download_as_bytes(retry=self._retry(), timeout=self.retry_deadline_s)
            except Exception as exc:  # noqa: BLE001 - the cache never fails a run
                if type(exc).__name__ == "NotFound":  # merged away by its writer since the listing
                    vanished = True
                else:
                    self._warn(f"cannot read gs://{self._bucket}/{name}", exc)
                continue
            self.segments_read += 1
            self._index_segment(bytes(data))
        return vanished

    def _list(self) -> list[str]:
        blobs = self._fs.client().list_blobs(
            self._bucket, prefix=self._prefix, retry=self._retry(), timeout=self.retry_deadline_s
        )
        return sorted(b.name for b in blobs if b.name.endswith(".jsonl"))

    def _index_segment(self, data: bytes) -> None:
        offset = self._spool.seek(0, os.SEEK_END)
        self._spool.write(data if data.endswith(b"\n") else data + b"\n")
        self._spool.flush()
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            line = data[start:end]
            if line.strip():
                try:
                    key = json.loads(line).get("key")
                except (ValueError, AttributeError):
                    key = None
                if isinstance(key, str):
                    self._index[key] = (offset + start, end - start)
            start = end + 1

    # --- writing ------------------------------------------------------------------------------
    def put(self, key: str, output: ModelOutput) -> concurrent.futures.Future[None] | None:
        """Upload a successful output with the next segment (failed outputs are never stored).

        Returns:
            A future done once the upload carrying it has ended (stored, or the upload failed: the cache
            never fails a run), or None when there is nothing to wait for (a failed output, or Cloud Storage
            already failed in this process).
        """
        if not output.ok:
            return None
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            self._pending[key] = output
            if self._upload_failed:
                return None
            self._waiting.setdefault(key, []).append(done)
            if self._uploader is None:
                self._uploader = threading.Thread(target=self._upload_loop, name="gcs-response-cache", daemon=True)
                self._uploader.start()
        self._wake.set()
        return done

    def flush(self) -> None:
        """Upload every waiting entry now, merge this process's segments, and wait until they are stored."""
        self._upload(merge_all=True)

    def _upload_loop(self) -> None:
        """Upload whatever waits, one upload at a time; ends when nothing waits (``put`` starts it again)."""
        while True:
            self._wake.wait(timeout=1.0)
            self._wake.clear()
            with self._lock:
                if not self._pending:
                    self._uploader = None
                    return
            self._upload()

    def _retry(self) -> Any:
        from google.cloud.storage.retry import DEFAULT_RETRY

        return DEFAULT_RETRY.with_deadline(self.retry_deadline_s)

    def _upload(self, merge_all: bool = False) -> None:
        """Upload every waiting entry (segments of at most ``batch_entries``), then merge own segments."""
        self._load()  # own segments are indexed once uploaded: load the others first
        with self._upload_lock:
            with self._lock:
                waiting = list(self._pending.items())
            for start in range(0, len(waiting), self.batch_entries):
                batch = dict(waiting[start : start + self.batch_entries])
                name = self._upload_segment(batch)
                if name is None:
                    self._release(list(batch))  # kept in memory; retried at the next flush
                    return
                if len(batch) < self.batch_entries:
                    self._own.append((name, list(batch), 0))
            self._merge(merge_all)

    def _release(self, keys: list[str]) -> None:
        """Wake the calls waiting for ``keys`` (their upload has ended, stored or not)."""
        with self._lock:
            futures = [f for k in keys for f in self._waiting.pop(k, [])]
        for future in futures:
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled by its waiter
                future.set_result(None)

    def _upload_segment(self, batch: dict[str, ModelOutput]) -> str | None:
        """Upload one segment of ``batch``; its object name, or None when the upload failed."""
        lines = [json.dumps(encode_entry(k, o), ensure_ascii=False, default=str) for k, o in batch.items()]
        name = self._write_segment(("\n".join(lines) + "\n").encode("utf-8"))
        if name is None:
            return None
        with self._lock:
            for key, output in batch.items():
                if self._pending.get(key) is output:
                    del self._pending[key]
        self._release(list(batch))
        return name

    def _write_segment(self, data: bytes) -> str | None:
        """Create one segment object holding ``data`` and index it; its name, or None when it failed."""
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        name = f"{self._prefix}{stamp}-{uuid.uuid4().hex[:12]}.jsonl"
        try:
            blob = self._fs.client().bucket(self._bucket).blob(name)
            blob.upload_from_string(
                data, content_type="application/x-ndjson", retry=self._retry(), timeout=self.retry_deadline_s
            )
        except Exception as exc:  # noqa: BLE001 - the cache never fails a run
            with self._lock:
                self._upload_failed = True
            self._warn(f"cannot write gs://{self._bucket}/{name}", exc)
            return None
        self.segments_written += 1
        with self._lock:
            if self._spool is not None:
                self._index_segment(data)
        return name

    def _merge(self, merge_all: bool) -> None:
        """Rewrite this process's small segments as fewer larger ones, then delete them (under the upload lock).

        ``merge_fan`` segments of one level become one of the next level; with ``merge_all`` every own
        segment is merged. A merged segment of ``batch_entries`` entries is final (never merged again).
        """
        while True:
            levels: dict[int, list[tuple[str, list[str], int]]] = {}
            for segment in self._own:
                levels.setdefault(segment[2], []).append(segment)
            group = next((g for _, g in sorted(levels.items()) if len(g) >= self.merge_fan), None)
            if group is None and merge_all and len(self._own) > 1:
                group = list(self._own)
            if group is None:
                return
            level = max(g[2] for g in group) + 1
            keys = list(dict.fromkeys(k for g in group for k in g[1]))
            merged: list[tuple[str, list[str], int]] = []
            for start in range(0, len(keys), self.batch_entries):
                chunk = keys[start : start + self.batch_entries]
                with self._lock:
                    where = [self._index.get(k) for k in chunk]
                    lines = [os.pread(self._spool.fileno(), w[1], w[0]) for w in where if w is not None]
                name = self._write_segment(b"\n".join(lines) + b"\n")
                if name is None:
                    return  # the small segments stay; nothing is lost
                if len(chunk) < self.batch_entries:
                    merged.append((name, chunk, level))
            for name, _, _ in group:
                self._delete(name)
            self.segments_merged += len(group)
            self._own = [s for s in self._own if s not in group] + merged

    def _delete(self, name: str) -> None:
        """Delete one of this process's own segments (its entries are stored again); failures only cost space."""
        try:
            self._fs.client().bucket(self._bucket).blob(name).delete(retry=self._retry(), timeout=self.retry_deadline_s)
        except Exception as exc:  # noqa: BLE001 - a left-over segment is read twice, never wrong
            logger.debug("response cache %s: could not delete merged segment %s: %s", self.location, name, exc)

    def _warn(self, what: str, exc: Exception) -> None:
        if not self._failed:
            self._failed = True
            logger.warning("response cache %s: %s, continuing without it: %s", self.location, what, exc)


_LIVE: weakref.WeakSet[GcsResponseCache] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for cache in list(_LIVE):
        cache.flush()
