"""One quota, several processes: the judging shards of a run share their pace through small files.

N shards of a pipeline (one KFP task each, on N machines) call one endpoint under one quota, but each
process has its own :class:`~autorater_pipelines.models._ratelimit.RateLimiter`. :class:`SharedPace` lets
them act as one: every shard writes a small JSON record, ``<directory>/shard-<index>.json``, about once per
``interval_s`` and reads the others' (a local directory or a ``gs://`` prefix — the pipeline root — through
:func:`autorater_pipelines.io.filesystem_for`). A record says: when it was written (wall clock), whether the
shard is done, its current pace, when the attempt behind its last quota signal started, and until when the
server asked it to wait.

- **Declared quota** (``requests_per_minute``): each shard's ceiling is the quota divided by the shards
  *active now* (a fresh record, not done), not by N. A shard that has not started yet or has finished leaves
  its share to the others; a shard that joins while others are calling announces itself and waits until
  each of them has written a record after that (so has read it and lowered its ceiling; ``JOIN_WAIT_S`` at
  most) before its first call.
- **Unknown quota** (adaptive pace): a quota signal (a 429 that is the quota, :mod:`._endpoint`) seen by one
  shard decreases every shard's pace (once per burst: a peer's signal for an attempt started before this
  shard's own last decrease, or within one exchange of it, is the same burst), and a server's wait hint
  holds every shard's starts. The shards then behave like one limiter: each decreases to at least 0.95 × its
  own goodput, so together they land just under the quota. A shard that joins unpaced starts at the mean
  pace of the active ones.

Records older than ``STALE_S`` are shards that are gone (a killed task, an earlier run with the same
directory) and are ignored. A failed read or write is logged once and never stops a run: the shard then
keeps the pace it has (at the start, the static share ``requests_per_minute / N``, or its own adaptive pace).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from autorater_pipelines.models._ratelimit import SLOW_START, RateLimiter

if TYPE_CHECKING:
    from autorater_pipelines.models._model import Model

__all__ = ["CLOUD_INTERVAL_S", "LOCAL_INTERVAL_S", "STALE_S", "SharedPace", "shared_pace"]

logger = logging.getLogger("autorater_pipelines.models")

STALE_S = 15.0
"""A record not rewritten for this many seconds is a shard that is gone."""
JOIN_WAIT_S = 10.0
"""Longest wait of a shard joining a declared quota for the shards already calling to see it."""
LOCAL_INTERVAL_S = 0.25
"""Seconds between two exchanges in a local (or mounted) directory."""
CLOUD_INTERVAL_S = 1.0
"""Seconds between two exchanges under ``gs://`` (Cloud Storage takes about one write per second per object)."""


class SharedPace:
    """Shares one endpoint's pace among the shards of a run (see the module docstring).

    Args:
        rate: This process's limiter of the endpoint.
        directory: Where the shards' records live: a local directory or a ``gs://`` prefix, the same for
            every shard of the run and only theirs.
        shard_index: This shard (0-based).
        shard_count: Number of shards of the run (>= 1).
        requests_per_minute: The whole declared quota (not this shard's share), or None when it is unknown.
        interval_s: Seconds between two exchanges (a write of this shard's record and a read of the others').
        clock: Wall clock in seconds (records are compared across machines).
    """

    def __init__(
        self,
        rate: RateLimiter,
        directory: str,
        shard_index: int,
        shard_count: int,
        *,
        requests_per_minute: float | None,
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not 0 <= shard_index < shard_count:
            raise ValueError(f"shard_index {shard_index!r} is outside 0..{shard_count - 1}")
        self.rate = rate
        self.directory = directory.rstrip("/")
        self.shard_index = shard_index
        self.shard_count = shard_count
        self.requests_per_minute = requests_per_minute
        self.interval_s = interval_s
        self.active = 1
        self.peer_signals = 0  # decreases applied for other shards' quota signals
        self._clock = clock
        self._started = clock()
        self._seen: dict[int, float] = {}  # peer -> wall time of the last signal applied
        self._warned = False
        self._exchanged = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def _path(self, index: int) -> str:
        return f"{self.directory}/shard-{index}.json"

    def _to_monotonic(self, wall: float) -> float:
        return time.monotonic() - (self._clock() - wall)

    def _record(self, done: bool) -> dict[str, Any]:
        now_mono, now = time.monotonic(), self._clock()
        signal = self.rate.last_signal_started
        until = self.rate.paused_until
        return {
            "shard": self.shard_index,
            "started": self._started,
            "time": now,
            "done": done,
            "requests_per_minute": self.rate.requests_per_minute,
            "signal_started": None if signal is None else now - (now_mono - signal),
            "paused_until": now + (until - now_mono) if until > now_mono else None,
        }

    def _warn(self, action: str, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            logger.warning(
                "shared pace of shard %d: cannot %s %s (%s: %s); this shard keeps its own pace",
                self.shard_index,
                action,
                self.directory,
                type(exc).__name__,
                exc,
            )

    def _write(self, done: bool) -> bool:
        from autorater_pipelines import io  # io imports nothing heavy at module level; keep models light

        filesystem, path = io.filesystem_for(self._path(self.shard_index))
        try:
            filesystem.write_atomic(path, [json.dumps(self._record(done)).encode()])
        except Exception as exc:  # never stop a run for the coordination files
            self._warn("write", exc)
            return False
        return True

    def _read_peers(self) -> list[dict[str, Any]] | None:
        from autorater_pipelines import io

        filesystem, pattern = io.filesystem_for(f"{self.directory}/shard-*.json")
        peers = []
        try:
            paths = filesystem.glob(pattern)
        except Exception as exc:
            self._warn("list", exc)
            return None
        now = self._clock()
        for path in paths:
            try:
                record = json.loads(filesystem.read_bytes(path))
            except Exception:  # a record being replaced, or gone: read again next time
                continue
            if (
                isinstance(record, dict)
                and record.get("shard") != self.shard_index
                and isinstance(record.get("time"), int | float)
                and now - record["time"] <= STALE_S
            ):
                peers.append(record)
        return peers

    def exchange(self, done: bool = False) -> list[dict[str, Any]]:
        """Write this shard's record, read the others' and apply them; returns the active peers' records."""
        written = self._write(done)
        records = self._read_peers() if written and not done else None
        if records is None:  # done, or the directory cannot be used: keep the pace as it is
            return []
        peers = [p for p in records if not p.get("done")]
        before, self.active = self.active, 1 + len(peers)
        if self.requests_per_minute:
            self.rate.set_ceiling(self.requests_per_minute / self.active)
        else:
            paces = [p["requests_per_minute"] for p in peers if isinstance(p.get("requests_per_minute"), int | float)]
            own = self.rate.requests_per_minute
            self.rate.growth_share = self.active**-0.5
            if paces and own is None:
                self.rate.adopt(sum(paces) / len(paces))
            elif own is not None and self._exchanged:
                # one pace, equal shares: each shard takes the mean; a finished shard's share goes to the others
                target = (own + sum(paces)) / (1 + len(paces)) * before / self.active
                self.rate.scale(target / own)
        self._exchanged = True
        for peer in peers:
            started = peer.get("signal_started")
            index = peer.get("shard")
            if isinstance(started, int | float) and isinstance(index, int) and started > self._seen.get(index, 0.0):
                self._seen[index] = started
                # the same burst as this shard's own signal when started up to one exchange after that decrease
                if self.rate.on_rate_limited(self._to_monotonic(started) - self.interval_s, peer=True):
                    self.peer_signals += 1
            until = peer.get("paused_until")
            if isinstance(until, int | float) and until > self._clock():
                self.rate.pause(until - self._clock())
        return peers

    def start(self) -> None:
        """First exchange (waiting one more when other shards already run), then exchange in the background."""
        if self.requests_per_minute:
            self.rate.set_ceiling(self.requests_per_minute / self.shard_count)  # the static share until we know
        announced = self._clock()
        peers = self.exchange()
        calling = [p for p in peers if isinstance(p.get("started"), int | float) and p["started"] < announced - 1.0]
        deadline = time.monotonic() + JOIN_WAIT_S
        while self.requests_per_minute and calling and time.monotonic() < deadline:
            # the shards already calling must see us before our first call: a record of theirs written after our
            # first one was written before their next read
            time.sleep(self.interval_s / 2.0)
            seen = {p.get("shard"): p.get("time") for p in self.exchange()}
            calling = [p for p in calling if not (isinstance(t := seen.get(p.get("shard")), float) and t > announced)]
        self._thread = threading.Thread(target=self._loop, name=f"shared-pace-{self.shard_index}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._done.wait(self.interval_s):
            self.exchange()

    def stop(self) -> None:
        """Stop exchanging and mark this shard done (its share goes to the others)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        self._write(done=True)


@contextlib.contextmanager
def shared_pace(model: Model, directory: str | None, shard_index: int, shard_count: int) -> Iterator[SharedPace | None]:
    """Share ``model``'s endpoint pace with the other shards of a run while the block runs.

    With ``shard_count`` > 1 and no declared ``requests_per_minute``, the model also starts at
    ``max_concurrency / shard_count`` calls in flight and grows by one per success (slow start), so the
    shards' first burst together is one model's. Without a ``directory`` only that is done and a declared
    quota is split statically (``requests_per_minute / shard_count`` each).

    Args:
        model: The model the shard calls (its ``config.requests_per_minute`` is the whole quota).
        directory: The shards' shared directory (local or ``gs://``), or None.
        shard_index: This shard (0-based).
        shard_count: Number of shards.

    Yields:
        The :class:`SharedPace` (None when there is nothing to share: one shard, no directory, or a model
        that makes no network call).
    """
    endpoint, slots = model._endpoint, model._slots  # noqa: SLF001 - the model layer's own parts
    declared = model.config.requests_per_minute
    if shard_count <= 1 or not model._backend.uses_network:  # noqa: SLF001
        yield None
        return
    if not declared:
        slots.start_at(max(1, SLOW_START // shard_count))
    if not directory:
        if declared:
            endpoint.rate.set_ceiling(declared / shard_count)
        yield None
        return
    interval = CLOUD_INTERVAL_S if "://" in directory else LOCAL_INTERVAL_S
    pace = SharedPace(
        endpoint.rate, directory, shard_index, shard_count, requests_per_minute=declared, interval_s=interval
    )
    pace.start()
    try:
        yield pace
    finally:
        pace.stop()
