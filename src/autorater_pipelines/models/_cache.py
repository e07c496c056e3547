"""Persistent response cache: one JSON file per successful call, keyed by the request's content.

Layout: ``<cache_dir>/<key[:2]>/<key>.json`` where ``key`` is the sha256 (hex) of the canonical JSON of
the request as the provider sees it (provider, model, endpoint, parts with media hashed, system
instruction, response schema, generation settings, sample index — never ``ModelRequest.key``).
Entries are written to a temporary file in the same directory (``.<pid>-….tmp``, a name no other writer
uses) and renamed with :func:`os.replace`, so a killed process leaves either a whole entry or none (and
at most a stray ``.tmp`` file, never read); an unreadable or malformed entry is a miss. Known credentials
are redacted from what is stored (:func:`encode_entry`).
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import json
import logging
import os
import queue
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._types import MediaPart, ModelOutput, ModelRequest, TokenLogprob
from autorater_pipelines.redaction import redact_value, redactor
from autorater_pipelines.unencodable import replace_unencodable

__all__ = [
    "ResponseCache",
    "as_hit",
    "cache_dir_problem",
    "cache_key",
    "decode_entry",
    "encode_entry",
    "resolve_cache_dir",
]

logger = logging.getLogger(__name__)

_FORMAT_VERSION = 1


def resolve_cache_dir(setting: str | None) -> Path | None:
    """Resolve the cache directory.

    Args:
        setting: ``GenerateConfig.cache_dir``: a path, ``"off"``, or None for ``$AUTORATER_CACHE_DIR``
            (which may itself be ``"off"``) or else ``~/.cache/autorater-pipelines``.

    Returns:
        The directory (not created yet), or None when caching is off.
    """
    value = setting if setting is not None else os.environ.get("AUTORATER_CACHE_DIR")
    if value is not None and value.strip().lower() == "off":
        return None
    if not value:
        return Path.home() / ".cache" / "autorater-pipelines"
    return Path(value).expanduser()


def cache_dir_problem(setting: str) -> str | None:
    """Why the local cache directory ``setting`` cannot be used, or None when it can (or is created on first write).

    An existing path must be a directory that accepts a new file (probed by creating and removing one, so it also
    holds for root and read-only mounts); a path that does not exist yet needs its nearest existing ancestor to be
    a writable directory.
    """
    path = Path(setting).expanduser()
    if path.exists():
        if not path.is_dir():
            return "exists and is not a directory"
        try:
            fd, probe = tempfile.mkstemp(prefix=".autorater-probe-", dir=path)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            return f"is a directory that is not writable ({exc.strerror or exc})"
        return None
    ancestor = path.absolute().parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"cannot be created: {ancestor} is not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"cannot be created: {ancestor} is not writable"
    return None


def cache_key(identity: dict[str, Any], request: ModelRequest, config: GenerateConfig) -> str:
    """Hash (sha256, 64 hex chars) everything that determines a provider's answer.

    Args:
        identity: ``Provider.cache_identity()`` (provider, model name, base_url).
        request: The request; its ``key`` is ignored.
        config: Its :attr:`~GenerateConfig.generation` settings are hashed whole (every field of
            :class:`~autorater_pipelines.models.GenerationSettings`); execution settings are not.
    """
    parts: list[Any] = []
    for part in request.parts:
        if isinstance(part, MediaPart):
            media: dict[str, Any] = {"mime_type": part.mime_type}
            if part.data is not None:
                media["sha256"] = hashlib.sha256(part.data).hexdigest()
            if part.uri is not None:
                media["uri"] = part.uri
            parts.append(media)
        else:
            parts.append(str(part))
    payload = {
        "v": _FORMAT_VERSION,
        **identity,
        "parts": parts,
        "system_instruction": request.system_instruction,
        "response_schema": request.response_schema,
        "generation": config.generation.model_dump(mode="json"),
        "sample_index": request.sample_index,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """A directory of cached successful outputs.

    With ``background=True``, :meth:`put` hands the entry to a writer thread and returns at once (file
    creation costs ~0.1-0.4 ms of system time per entry, which would otherwise stall the event loop);
    :meth:`get` sees entries still waiting to be written, and :meth:`flush` (called at the end of every
    ``Model.generate`` run, by ``Model.aclose`` and at interpreter exit) waits until they are on disk. A
    process killed meanwhile loses only unwritten entries, never writes a partial one.

    Args:
        directory: Where entries live; created on the first write.
        background: Write entries from a background thread.
    """

    def __init__(self, directory: Path, *, background: bool = False) -> None:
        self.directory = Path(directory)
        self._write_failed = False
        self._made_dirs: set[str] = set()
        self._tmp_prefix = f".{os.getpid()}-{id(self):x}"
        self._tmp_count = itertools.count()
        self._background = background
        self._lock = threading.Lock()
        self._pending: dict[str, ModelOutput] = {}
        self._queue: queue.Queue[str] = queue.Queue()
        self._writer: threading.Thread | None = None

    @property
    def location(self) -> str:
        """The cache directory, as a string."""
        return str(self.directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelOutput | None:
        """Return the cached output for ``key`` (``cached=True``, ``attempts=0``, zero usage) or None."""
        if self._pending:
            with self._lock:
                waiting = self._pending.get(key)
            if waiting is not None:
                return _as_hit(waiting)
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as f:
                entry = json.load(f)
            return _decode(entry, key)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError) as exc:
            logger.debug("ignoring unreadable cache entry %s: %s", path, exc)
            return None

    def put(self, key: str, output: ModelOutput) -> None:
        """Store a successful output atomically; failed outputs are never stored.

        A write error (read-only or full disk) is logged once and otherwise ignored.
        """
        if not output.ok:
            return
        if self._background:
            with self._lock:
                self._pending[key] = output
                if self._writer is None or not self._writer.is_alive():
                    self._writer = threading.Thread(target=self._write_queued, name="response-cache", daemon=True)
                    self._writer.start()
                    _LIVE.add(self)
            self._queue.put(key)
            return
        self._write(key, output)

    def flush(self) -> None:
        """Wait until every entry handed to :meth:`put` is written (no-op without background writes)."""
        if not self._background:
            return
        done = self._queue.all_tasks_done
        with done:
            while self._queue.unfinished_tasks:
                writer = self._writer
                if writer is None or not writer.is_alive():
                    # the writer is gone (killed by an error it could not catch): nothing will drain the queue
                    logger.warning(
                        "response cache %s: the writer stopped, %d entries not cached",
                        self.directory,
                        self._queue.unfinished_tasks,
                    )
                    break
                done.wait(0.5)

    def _write_queued(self) -> None:
        while True:
            key = self._queue.get()
            try:
                with self._lock:
                    output = self._pending.get(key)
                if output is not None:
                    try:
                        self._write(key, output)
                    except Exception:  # noqa: BLE001 - one bad entry must not stop the writer (flush waits on it)
                        logger.exception("response cache %s: entry %s not cached", self.directory, key)
                    with self._lock:
                        if self._pending.get(key) is output:
                            del self._pending[key]
            finally:
                self._queue.task_done()

    def _write(self, key: str, output: ModelOutput) -> None:
        path = self._path(key)
        try:
            entry = encode_entry(key, output)
        except Exception as exc:  # noqa: BLE001 - an output no entry can hold is not cached, and said so
            logger.warning(
                "response cache %s: entry %s not cached, its output cannot be encoded: %s: %s",
                self.directory,
                key,
                type(exc).__name__,
                exc,
            )
            return
        tmp_name = None
        try:
            data = json.dumps(entry, ensure_ascii=False, default=str).encode("utf-8")
            parent = str(path.parent)
            if parent not in self._made_dirs:
                os.makedirs(parent, exist_ok=True)
                self._made_dirs.add(parent)
            # a name no other writer uses (pid + cache object + counter), created exclusively
            tmp_name = os.path.join(parent, f"{self._tmp_prefix}-{next(self._tmp_count)}.tmp")
            fd = os.open(tmp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp_name, path)
        except (OSError, TypeError, ValueError) as exc:
            if tmp_name is not None:
                try:
                    os.unlink(tmp_name)
                except OSError:
                    pass
            if not self._write_failed:
                logger.warning("response cache %s is not writable, continuing without it: %s", self.directory, exc)
                self._write_failed = True


def encode_entry(key: str, output: ModelOutput) -> dict[str, Any]:
    """The stored form of a successful output (one JSON object; see :func:`decode_entry`).

    Known credentials are redacted (:mod:`autorater_pipelines.redaction`) from the text, the tokens and the
    raw answer: a model that repeats its request's headers would otherwise put the key on disk or in the bucket.
    The entry is always encodable as UTF-8 (a lone surrogate left in an output is replaced by U+FFFD, as
    :class:`~autorater_pipelines.models.ModelOutput` does), so what is stored is what a hit gives back.
    """
    apply = redactor()
    entry = {
        "v": _FORMAT_VERSION,
        "key": key,
        "text": None if output.text is None else apply(output.text),
        "finish_reason": output.finish_reason,
        "logprobs": None
        if output.logprobs is None
        else [[apply(lp.token), lp.logprob, [[apply(t), v] for t, v in lp.top]] for lp in output.logprobs],
        "raw": redact_value(output.raw, apply),
    }
    if output.logprobs_problem is not None:
        entry["logprobs_problem"] = apply(output.logprobs_problem)
    return replace_unencodable(entry)[0]


def decode_entry(entry: dict[str, Any], key: str) -> ModelOutput | None:
    """The cache hit a stored entry gives, or None when it is malformed or for another key."""
    try:
        return _decode(entry, key)
    except (ValueError, TypeError, KeyError, IndexError):
        return None


def as_hit(output: ModelOutput) -> ModelOutput:
    """The output as a cache hit returns it (what :func:`decode_entry` gives for its stored entry)."""
    return _as_hit(output)


def _as_hit(output: ModelOutput) -> ModelOutput:
    """The output as a cache hit returns it (what :func:`_decode` gives for its stored entry)."""
    return ModelOutput(
        text=output.text,
        finish_reason=output.finish_reason,
        attempts=0,
        cached=True,
        logprobs=output.logprobs,
        logprobs_problem=output.logprobs_problem,
        raw=output.raw if isinstance(output.raw, dict) else None,
    )


_LIVE: weakref.WeakSet[ResponseCache] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for cache in list(_LIVE):
        cache.flush()


def _decode(entry: dict[str, Any], key: str) -> ModelOutput | None:
    if entry.get("v") != _FORMAT_VERSION or entry.get("key") != key or not isinstance(entry.get("text"), str):
        return None
    logprobs = None
    if entry.get("logprobs") is not None:
        logprobs = tuple(
            TokenLogprob(str(token), float(lp), tuple((str(t), float(v)) for t, v in top))
            for token, lp, top in entry["logprobs"]
        )
    raw = entry.get("raw")
    problem = entry.get("logprobs_problem")
    return ModelOutput(
        text=entry["text"],
        finish_reason=entry.get("finish_reason"),
        attempts=0,
        cached=True,
        logprobs=logprobs,
        logprobs_problem=problem if isinstance(problem, str) else None,
        raw=raw if isinstance(raw, dict) else None,
    )
