"""The pairwise judge stage: judge prepared examples with the autorater and vote over samples.

Shared by every pairwise evaluation (AutoSxS's ``judge_examples`` step, arena's DataFrame API and pipeline).
Every example ends as one judgment (choice ``A``, ``B``, ``TIE`` or ``ERROR``); every failed sample or row is
also an error row (:mod:`autorater_pipelines.evaluation.error_rows`): stage ``judge`` with ``sample_index``,
``flipped`` and ``row_judged`` (False when the row's choice is ``ERROR``), or stage ``inference`` with ``model``
(``a``/``b``) when a response could not be generated.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from typing import Any

from autorater_pipelines import io, pairwise
from autorater_pipelines.errors import ModelCallError
from autorater_pipelines.evaluation.error_rows import error_row, split_error
from autorater_pipelines.evaluation.ids import check_id_columns
from autorater_pipelines.models import ErrorKind, Model, ModelOutput, ModelRequest, get_model, shared_pace
from autorater_pipelines.pairwise import order, tasks
from autorater_pipelines.pairwise.preference import row_preference
from autorater_pipelines.pairwise.settings import check_verdict_settings
from autorater_pipelines.pairwise.stages import Autorater

__all__ = ["JudgeSummary", "judge_shard"]

logger = logging.getLogger(__name__)

_NO_TOKENS = {"input_token_count": 0, "output_token_count": 0}


@dataclasses.dataclass(frozen=True)
class JudgeSummary:
    """Counts from one judging step."""

    evaluation_count: int
    error_count: int
    model_calls: int
    cache_hits: int
    retries: int
    input_tokens: int
    output_tokens: int
    not_called_count: int = 0
    """Rows left ERROR because the run stopped before their calls (see ``stopped``)."""
    stopped: str = ""
    """Why the model calls stopped early (the failure budget tripped), or empty."""


@dataclasses.dataclass
class _Judging:
    """What judging one batch of examples needs and collects."""

    id_columns: list[str]
    settings: pairwise.JudgeSettings
    task: tasks.TaskDefinition
    judgments: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    errors: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    collect: bool = True
    """Keep the rows in ``judgments``/``errors`` (False: only written, counted)."""
    writers: tuple[io.JsonlWriter | None, io.JsonlWriter | None] = (None, None)
    """Where judgment and error rows are written as they finish (in input order)."""
    counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def _judgment(self, row: dict[str, Any]) -> None:
        self.counts["rows"] += 1
        self.counts["error"] += row["choice"] == "ERROR"
        self.counts["not_called"] += _not_called(row)
        if self.writers[0] is not None:
            self.writers[0].write(row)
        if self.collect:
            self.judgments.append(row)

    def _error(self, row: dict[str, Any]) -> None:
        if self.writers[1] is not None:
            self.writers[1].write(row)
        if self.collect:
            self.errors.append(row)

    def requests(self, examples: Iterable[Mapping[str, Any]], queued: collections.deque) -> Iterator[ModelRequest]:
        """Yield every sample request, lazily, queueing ``(example, ids, request count)`` per example.

        Requests are built while earlier ones are in flight and dropped once answered, so the ~3 KB prompts of a
        large dataset never sit in memory all at once.
        """
        schema = None if self.settings.verdict_pattern else self.task.judgment_schema
        keys = set(self.task.required_prompt_parameter_keys) | set(self.task.optional_prompt_parameter_keys)
        for example in examples:
            ids = {c: example[c] for c in self.id_columns}
            if example.get("response_a") is None or example.get("response_b") is None:
                queued.append((example, ids, 0))  # generation failed: nothing to judge
                continue
            if order.is_identical(example, self.settings):
                queued.append((example, ids, 0))  # identical_responses "tie": a TIE without a call
                continue
            built = pairwise.build_requests(
                ids=ids,
                prompt={k: v for k, v in example.items() if k in keys},
                response_a=example["response_a"],
                response_b=example["response_b"],
                settings=self.settings,
                render_judge_prompt=self.task.render_judge_prompt,
                response_schema=schema,
                flipped=example.get(order.ORDER_KEY),
            )
            queued.append((example, ids, len(built)))
            yield from built

    def finish_row(
        self, example: Mapping[str, Any], ids: dict[str, Any], answered: list[tuple[ModelRequest, ModelOutput]]
    ) -> None:
        """Vote over one example's samples and record its judgment and error rows."""
        if not answered and order.is_identical(example, self.settings):
            # with preference "probability" the row has no preference of its own: the weighted win rate counts it 0.5
            weighted = row_preference([]) if self.settings.preference == "probability" else {}
            self._judgment({**example, **order.identical_judgment(), **weighted, "samples": [], **_NO_TOKENS})
            return
        samples = [pairwise.to_sample(r, o, self.settings, self.task.score_scale) for r, o in answered]
        choice, confidence, explanation = pairwise.combine_samples(samples)
        scores = pairwise.mean_scores(samples) if self.task.pointwise else {}
        if self.settings.preference == "probability":
            scores.update(row_preference(samples))
        if self.settings.position_calibration == "balanced" and choice != "ERROR":
            choice, confidence, explanation, calibrated = order.balanced_choice(samples, choice, explanation)
            scores.update(calibrated)
        if not answered:
            explanation = self._inference_errors(example, ids)
        complete, incomplete_reason = pairwise.row_completeness(samples) if answered else (False, explanation)
        usage = pairwise.total_usage([o for _, o in answered])
        self._judgment(
            {
                **example,
                "choice": choice,
                "confidence": confidence,
                "explanation": explanation,
                "complete": complete,
                "incomplete_reason": incomplete_reason,
                **scores,
                "samples": [s.to_dict() for s in samples],
                "input_token_count": usage.input_tokens,
                "output_token_count": usage.output_tokens,
            }
        )
        for sample in (s for s in samples if s.error):
            kind, message = split_error(sample.error or "")
            self._error(
                error_row(
                    ids,
                    self.id_columns,
                    stage="judge",
                    kind=kind,
                    message=message,
                    sample_index=sample.sample_index,
                    flipped=sample.flipped,
                    row_judged=choice != "ERROR",
                    row_complete=complete,
                )
            )

    def _inference_errors(self, example: Mapping[str, Any], ids: dict[str, Any]) -> str:
        """Record why an example has no response to judge; return the judgment's explanation."""
        reasons = {
            s: example.get(f"inference_error_{s}") or "no response"
            for s in ("a", "b")
            if example.get(f"response_{s}") is None
        }
        for side, reason in reasons.items():
            kind, message = split_error(reason)
            self._error(
                error_row(
                    ids,
                    self.id_columns,
                    stage="inference",
                    kind=kind,
                    message=message,
                    model=side,
                    sample_index=None,
                    flipped=None,
                    row_judged=False,
                )
            )
        return "; ".join(f"model {s.upper()}: {r}" for s, r in reasons.items())


def _run(
    model: Model, judging: _Judging, examples: Iterable[Mapping[str, Any]], reask: Any = None
) -> ModelCallError | None:
    """Send every request through ``model`` and finish each row, in input order, as its outputs arrive.

    Returns:
        Why the model calls stopped early (every request still got an output: those not called fail with the
        reason), or None.

    Raises:
        ModelCallError: the process got SIGTERM (nothing is written; a re-run resumes from the response cache).
    """
    queued: collections.deque[tuple[Mapping[str, Any], dict[str, Any], int]] = collections.deque()
    row: list[tuple[ModelRequest, ModelOutput]] = []

    def finish_rows() -> None:
        while queued and queued[0][2] == len(row):
            example, ids, _ = queued.popleft()
            judging.finish_row(example, ids, list(row))
            row.clear()

    def consume(request: ModelRequest, output: ModelOutput) -> None:
        finish_rows()  # rows without requests ahead of this one
        row.append((request, output))
        finish_rows()

    if isinstance(examples, Sequence):  # rows without a response or identical ones make no call
        calls = [
            e.get("response_a") is not None
            and e.get("response_b") is not None
            and not order.is_identical(e, judging.settings)
            for e in examples
        ]
        total: int | None = sum(calls) * judging.settings.sampling_count
    else:  # a stream (read once): at most this many
        total = len(examples) * judging.settings.sampling_count if isinstance(examples, Sized) else None
    stopped: ModelCallError | None = None
    try:
        model.generate_each(judging.requests(examples, queued), consume, desc="judging", total=total, reask=reask)
    except ModelCallError as exc:
        if exc.interrupted:
            raise
        stopped = exc  # every request was answered (not called = ERROR with the reason): write them all
    finish_rows()  # trailing rows without requests
    return stopped


def _not_called(judgment: Mapping[str, Any]) -> bool:
    """True for an ERROR row some of whose samples were never called (the run stopped first)."""
    return judgment.get("choice") == "ERROR" and any(
        str(s.get("error") or "").startswith(f"{ErrorKind.BUDGET.value}:") for s in judgment.get("samples") or []
    )


def judge_shard(
    examples: Iterable[Mapping[str, Any]],
    autorater: Autorater,
    task: tasks.TaskDefinition,
    id_columns: Sequence[str],
    *,
    judgments_path: str | None = None,
    error_messages_path: str | None = None,
    shard_count: int = 1,
    shard_index: int = 0,
    pace_dir: str | None = None,
    collect: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], JudgeSummary]:
    """Judge prepared examples with the autorater stage and vote over samples.

    Rows are judged as they are read from ``examples`` (any iterable, e.g. :func:`autorater_pipelines.io.iter_jsonl`)
    and written as they finish, in input order; with ``collect=False`` nothing is kept, so memory is bounded by
    the calls in flight, not by the dataset. The files appear only once every row is done.

    When the model calls stop early (see :mod:`autorater_pipelines.models`: a wrong endpoint, no progress for
    ``max_stall_s``, ``max_consecutive_failures``), the judgments so far are kept, the rest become ERROR rows with
    the reason, everything is written, and :class:`ModelCallError` is raised only in strict mode
    (``autorater_parameters["strict"]``). SIGTERM always raises (nothing is written; a re-run resumes from the
    response cache).

    Args:
        examples: Prepared examples: the id columns, the task's prompt parameter keys, ``response_a`` and
            ``response_b`` (None when generation failed; ``inference_error_a``/``_b`` give why), as
            :mod:`autorater_pipelines.autosxs.prepare` and :mod:`autorater_pipelines.arena.prepare` build them.
        autorater: The autorater stage: model spec, ``autorater_parameters`` (judge settings and call options),
            project and region.
        task: The task definition (criteria, judge prompt, score rubric).
        id_columns: Id columns of the examples.
        judgments_path: Where to write judgment rows as JSONL (atomically), or None.
        error_messages_path: Where to write error rows as JSONL (atomically), or None.
        shard_count: Number of shards judging the dataset in parallel (this call judges one of them): a declared
            ``requests_per_minute`` is divided among them, so that together they stay within it.
        shard_index: Which shard this call judges (0-based), for ``pace_dir``.
        pace_dir: A directory (local or ``gs://``) shared by the shards of this run only, where they share their
            pace (:func:`autorater_pipelines.models.shared_pace`): a declared quota is divided among the shards
            running *now* (a finished shard hands its share over), an unknown one is found together. None = a
            static split of a declared quota.
        collect: Return the judgment and error rows (False: two empty lists; the rows are only written).

    Returns:
        ``(judgments, error_messages, summary)``: one judgment per example in input order.

    Raises:
        InputError: bad parameters.
        ModelCallError: the model calls stopped early and ``strict`` is set, or the process got SIGTERM.
    """
    options = autorater.options.for_task(task)
    judging = _Judging(check_id_columns(id_columns), options, task, collect=collect)
    config = autorater.generate_config()
    if shard_count > 1 and config.requests_per_minute:
        logger.info(
            "requests_per_minute: %g shared by %d shards (%s)",
            config.requests_per_minute,
            shard_count,
            "a share of the shards running now" if pace_dir else f"{config.requests_per_minute / shard_count:g} each",
        )
    model = get_model(autorater.model, config)
    check_verdict_settings(judging.task, judging.settings)
    reask = pairwise.unparseable_check(judging.settings, config.temperature, judging.task.score_scale)
    with contextlib.ExitStack() as files:
        judging.writers = tuple(  # type: ignore[assignment]
            files.enter_context(io.JsonlWriter(path)) if path else None
            for path in (judgments_path, error_messages_path)
        )
        with shared_pace(model, pace_dir, shard_index, shard_count):
            stopped = _run(model, judging, examples, reask)
        for writer in judging.writers:
            if writer is not None:
                writer.commit()
    stats = model.stats
    summary = JudgeSummary(
        evaluation_count=judging.counts["rows"],
        error_count=judging.counts["error"],
        model_calls=stats.calls,
        cache_hits=stats.cache_hits,
        retries=stats.retries,
        input_tokens=stats.usage.input_tokens,
        output_tokens=stats.usage.output_tokens,
        not_called_count=judging.counts["not_called"],
        stopped=str(stopped or ""),
    )
    logger.info("judged %d examples: %s", summary.evaluation_count, summary)
    if stopped is not None:
        logger.error(
            "model calls stopped early: %s (%d rows not judged; judgments written)", stopped, summary.not_called_count
        )
        if options.strict:
            raise stopped
    return judging.judgments, judging.errors, summary
