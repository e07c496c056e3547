"""Progress of one ``Model.generate`` run: the progress bar, failure log lines and a periodic heartbeat.

The heartbeat is one INFO line on the logger ``autorater_pipelines.progress`` every ``heartbeat_s``
seconds while calls run, whatever the progress-bar setting, e.g.::

    [autorater progress] judging (gemini-2.5-flash): 120 of 400 done, 2 failed, 35 rate-limited answers, 470 attempts,
    9.8 answers/s, pace 590/min

``autorater run --quiet`` passes these lines through, so a long run is never silent.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from typing import Any

from autorater_pipelines.models._stats import CallStats
from autorater_pipelines.models._types import ErrorKind, ModelOutput

__all__ = ["PROGRESS_LOGGER", "PROGRESS_MARK", "RunProgress"]

PROGRESS_LOGGER = "autorater_pipelines.progress"
PROGRESS_MARK = "[autorater progress]"
"""Every heartbeat message starts with this, so it can be found in any log format."""
_LOGGED_FAILURES = 5  # per run, then only the heartbeat and the summary

logger = logging.getLogger("autorater_pipelines.models")
progress_logger = logging.getLogger(PROGRESS_LOGGER)


class RunProgress:
    """Counts one run's outputs; shows a bar, logs the first failures and a heartbeat.

    Args:
        label: ``"<desc> (<model spec>)"``.
        total: Number of requests, when known.
        show_bar: Show a tqdm progress bar on stderr.
        stats: The model's running totals (read for the heartbeat).
        pace: Returns the current pace in requests per minute, or None when unpaced.
    """

    def __init__(self, label: str, total: int | None, *, show_bar: bool, stats: CallStats, pace: Any) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.failed = 0
        self.answered = 0
        self.last_error: str | None = None
        self._stats = stats
        self._before = stats.snapshot()
        self._pace = pace
        self._started = time.monotonic()
        self._logged = 0
        from tqdm.auto import tqdm  # here: steps that make no model call do not pay its import

        interactive = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self._bar = tqdm(
            total=total,
            desc=label.split(" (")[0],
            disable=not show_bar,
            mininterval=0.5 if interactive else 5.0,
            file=sys.stderr,
        )

    def add(self, key: Any, output: ModelOutput) -> None:
        """Count one output (logs the first few failures)."""
        self.done += 1
        self._bar.update(1)
        if output.error is None:
            self.answered += 1
            return
        self.failed += 1
        if output.error.kind is ErrorKind.BUDGET:
            return
        self.last_error = f"{output.error.kind.value}: {output.error.message}"[:300]
        if self._logged < _LOGGED_FAILURES:
            self._logged += 1
            with self._bar.external_write_mode():  # the warning on its own line, not glued onto the bar
                logger.warning("%s: request %r failed: %s", self.label, key, self.last_error)
                if self._logged == _LOGGED_FAILURES:
                    logger.warning(
                        "%s: further failed requests are not logged one by one (the step's summary line counts "
                        "them, error_messages lists each)",
                        self.label,
                    )

    def line(self) -> str:
        """The heartbeat line."""
        run = self._stats.since(self._before)
        elapsed = max(time.monotonic() - self._started, 1e-9)
        of = f" of {self.total}" if self.total is not None else ""
        pace = self._pace()
        text = (
            f"{self.label}: {self.done}{of} done, {self.failed} failed, {run.rate_limited} rate-limited answers, "
            f"{run.calls} attempts, {self.answered / elapsed:.1f} answers/s, "
            f"pace {'unlimited' if pace is None else f'{pace:.0f}/min'}"
        )
        if self.last_error:
            text += f"; last error: {self.last_error}"
        return text

    async def heartbeat(self, every_s: float) -> None:
        """Log :meth:`line` every ``every_s`` seconds until cancelled."""
        while True:
            await asyncio.sleep(every_s)
            progress_logger.info("%s %s", PROGRESS_MARK, self.line())

    def close(self) -> None:
        """Close the bar and log the run's summary line."""
        self._bar.close()
        run = self._stats.since(self._before)
        logger.info("%s: %s in %.1f s", self.label, run.summary(), time.monotonic() - self._started)
