"""How a pairwise judge is asked and read: the one judge-settings model of every pairwise evaluation.

:class:`JudgeSettings` holds the judging keys of ``autorater_parameters`` (``sampling_count``, the order keys of
:class:`~autorater_pipelines.pairwise.order.OrderSettings` (``flip`` …), ``verdict_pattern``, ``verdict_map``,
``verdict_match``, ``retry_unparseable``), checked once when it is parsed;
AutoSxS's :class:`~autorater_pipelines.autosxs.params.AutoraterParameters` is this model plus the model-call
settings, ``shards`` and ``strict``, so the same object travels from the parameter model to the sample schedule
(:mod:`~autorater_pipelines.pairwise.sampling`), the verdict parser (:mod:`~autorater_pipelines.pairwise.answers`)
and the vote (:mod:`~autorater_pipelines.pairwise.voting`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import pydantic

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.parameters import Flag, ModelCallOptions, SamplingCount, Shards
from autorater_pipelines.pairwise.order import OrderSettings, check_order_settings
from autorater_pipelines.pairwise.preference import check_preference_mode, check_preference_settings
from autorater_pipelines.pairwise.strength import split_strength, task_verdict_labels
from autorater_pipelines.pairwise.tasks import TaskDefinition
from autorater_pipelines.pairwise.verdict_reach import check_verdict_map_reachable, check_verdict_not_empty
from autorater_pipelines.pairwise.verdicts import (
    VerdictPattern,
    check_verdict_map_keys,
    check_verdict_match,
    compile_verdict_pattern,
)

__all__ = ["SOURCE", "AutoraterParameters", "JudgeSettings", "check_verdict_settings"]

_Settings = TypeVar("_Settings", bound="JudgeSettings")

SOURCE = "autorater_parameters"
"""The pipeline parameter the judge settings come from, named in messages."""


class JudgeSettings(OrderSettings):
    """How examples are judged: the judging keys of ``autorater_parameters``.

    Build it with :meth:`parse` (``JudgeSettings.parse(params, source="autorater_parameters")``): every problem
    is an :class:`~autorater_pipelines.errors.InputError` naming the key.
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, populate_by_name=True, arbitrary_types_allowed=True)

    sampling_count: SamplingCount = 2
    """Samples per example (≥ 1); default 2 = one original and one swapped order (1 with `flip` "random" or
    `flip_column`)."""
    verdict_pattern: VerdictPattern | None = None
    """Regex (RE2, linear time) applied to the raw judge output instead of JSON parsing (needs ``verdict_map``);
    the first group (or whole match, without groups) of a whole-word match is looked up in ``verdict_map``
    (:mod:`autorater_pipelines.pairwise.verdicts`). Given as text, held compiled."""
    verdict_map: dict[str, str] = pydantic.Field(default_factory=dict)
    """Match text → POSITION verdict: ``A`` (shown first), ``B`` (shown second), ``TIE``; or a strength label of
    Arena-Hard's scale, ``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A`` (``A>>B``: the response shown first is much
    better), kept here as its position with the key listed in ``strong_verdicts``."""
    strong_verdicts: list[str] = pydantic.Field(default_factory=list)
    """``verdict_map`` keys that are strong verdicts (``A>>B``, ``B>>A``): the arena counts each as
    ``strong_verdict_weight`` battles, AutoSxS as a plain win. Filled from ``verdict_map``'s strength labels; rarely
    written by hand (:mod:`autorater_pipelines.pairwise.strength`)."""
    verdict_match: str = "last"
    """Which match decides when there are several: ``last`` (the concluding verdict), ``first``, or ``unique``
    (all must agree, else a parse error)."""
    retry_unparseable: Flag | None = None
    """Ask again, on a re-run, for cached answers that could not be parsed; None = on when ``temperature`` > 0
    (the judge samples), off for greedy decoding."""
    preference: str = "discrete"
    """How a row's preference for model A is measured: ``discrete`` (its verdict only) or ``probability``: each
    sample's probability of its verdict at the verdict token, from the judge's log-probabilities (needs
    ``logprobs`` ≥ 1), normalised over the verdicts of ``verdict_map`` (AlpacaEval's weighted win rate); adds
    ``autorater_model_a_weighted_win_rate`` and its standard error to the metrics
    (:mod:`autorater_pipelines.pairwise.preference`)."""

    _task_verdicts: str | None = pydantic.PrivateAttr(default=None)
    """Set by :meth:`for_task` when the verdict format is the task's: the verdicts it accepts, for parse errors."""

    @property
    def task_verdicts(self) -> str | None:
        """``task 'arena_hard' accepts [[A>>B]], …`` when the verdict format came from the task, else None."""
        return self._task_verdicts

    def for_task(self: _Settings, task: TaskDefinition) -> _Settings:
        """These settings with the task's own free-text verdict format when they set no ``verdict_pattern``.

        A task such as ``arena_hard`` (``task.verdict_pattern``) is read with its pattern and map (strength labels
        split as :func:`~autorater_pipelines.pairwise.strength.split_strength` does); a ``verdict_pattern`` given
        in ``autorater_parameters`` takes precedence. Unchanged for a task whose judge answers in JSON.
        """
        if self.verdict_pattern is not None or not task.verdict_pattern:
            return self
        positions, strong = split_strength(task.verdict_map)
        update = {"verdict_pattern": VerdictPattern(task.verdict_pattern), "verdict_map": positions}
        settings = self.model_copy(update={**update, "strong_verdicts": strong})
        settings._task_verdicts = f"task {task.name!r} accepts {task_verdict_labels(task)}"
        return settings

    @classmethod
    def parse(cls: type[_Settings], value: Any, *, source: str = SOURCE) -> _Settings:
        """Validate ``value`` (a dict, None = empty, or an instance), naming ``source`` in messages.

        Raises:
            InputError: an unknown key, a bad ``sampling_count`` or ``flip``, an invalid regex, a ``verdict_map``
                value outside ``A``/``B``/``TIE``, or one of ``verdict_pattern``/``verdict_map`` without the other.
        """
        return super().parse(value, source=source)

    @pydantic.field_validator("verdict_pattern", mode="before")
    @classmethod
    def _pattern(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        if isinstance(value, VerdictPattern):
            return value
        compiled = compile_verdict_pattern(value, source=SOURCE)
        check_verdict_not_empty(value)
        return compiled

    @pydantic.field_validator("verdict_match", mode="before")
    @classmethod
    def _match(cls, value: Any) -> Any:
        return check_verdict_match(value, source=SOURCE)

    @pydantic.field_validator("preference", mode="before")
    @classmethod
    def _preference(cls, value: Any) -> Any:
        return check_preference_mode(value)

    @pydantic.field_validator("verdict_map", mode="before")
    @classmethod
    def _map(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ValueError(f"verdict_map must be an object of match → A|B|TIE (or A>>B … B>>A), got {value!r}")
        clean = {}
        for key, position in value.items():
            if not str(key).strip():
                raise ValueError(
                    f"verdict_map has an empty key {key!r}: a verdict is never empty; map each verdict text "
                    '(e.g. {"A": "A", "B": "B", "tie": "TIE"})'
                )
            label = str(position).strip().upper()
            if label not in ("A", "B", "TIE"):
                raise ValueError(
                    f"verdict_map[{key!r}] = {position!r}; values must be A (shown first), B (shown second) or TIE, "
                    "or a strength label A>>B, A>B, A=B, B>A, B>>A"
                )
            clean[str(key)] = label
        return clean

    @pydantic.model_validator(mode="before")
    @classmethod
    def _strength_labels(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and isinstance(data.get("verdict_map"), Mapping):
            check_verdict_map_keys(data["verdict_map"])
            positions, strong = split_strength(data["verdict_map"])
            if strong or positions != data["verdict_map"]:
                given = data.get("strong_verdicts") or []
                extra = [k for k in strong if k not in given]
                data = {**data, "verdict_map": positions, "strong_verdicts": [*given, *extra]}
        return data

    @pydantic.model_validator(mode="before")
    @classmethod
    def _match_needs_pattern(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("verdict_match") not in (None, ""):
            if data.get("verdict_pattern") in (None, ""):
                raise ValueError(
                    f"verdict_match {data['verdict_match']!r} applies only with verdict_pattern (which match of "
                    "the pattern decides); JSON answers have one choice: remove verdict_match or set verdict_pattern"
                )
        return data

    @pydantic.model_validator(mode="after")
    def _pattern_and_map(self) -> JudgeSettings:
        if self.verdict_map and self.verdict_pattern is None:
            raise ValueError("verdict_map is set but verdict_pattern is not; set both")
        if self.verdict_pattern is not None and not self.verdict_map:
            raise ValueError('verdict_pattern needs a verdict_map, e.g. {"a": "A", "b": "B", "tie": "TIE"}')
        weak = [k for k in self.strong_verdicts if self.verdict_map.get(k) not in ("A", "B")]
        if weak:
            raise ValueError(
                f"strong_verdicts {weak} must be verdict_map keys that give A or B (a tie is never strong); "
                'write the strength in verdict_map instead, e.g. {"A>>B": "A>>B", "A>B": "A>B", "A=B": "A=B"}'
            )
        return self


class AutoraterParameters(JudgeSettings, ModelCallOptions):
    """``autorater_parameters`` of a pairwise evaluation (AutoSxS, arena).

    Judging keys, ``shards``, ``strict`` and every model-call setting. The judging keys are :class:`JudgeSettings`
    (this model is one, passed whole to the pairwise core); the model-call settings are the GenerateConfig fields.
    """

    model_config = pydantic.ConfigDict(extra="allow", frozen=True, populate_by_name=True, arbitrary_types_allowed=True)

    shards: Shards = 1
    """Judging tasks run in parallel (a ``ParallelFor``); each judges every ``shards``-th example."""
    strict: Flag = False
    """Fail the judging step when the model calls stop early (default: write the judgments so far and ERROR rows
    with the reason for the rest)."""


def check_verdict_settings(task_def: TaskDefinition, settings: JudgeSettings) -> None:
    """Refuse a ``verdict_pattern`` that cannot work for the task and its ``verdict_map``.

    Refused: ``position_calibration: "balanced"`` without a pointwise score rubric; a pattern with a pointwise
    score rubric (its verdicts are JSON scores); ``verdict_map`` keys the
    pattern can never find, or a map that never gives A or B
    (:func:`~autorater_pipelines.pairwise.verdict_reach.check_verdict_map_reachable`); ``preference``
    ``probability`` without what it reads (:func:`~autorater_pipelines.pairwise.preference.check_preference_settings`).

    Args:
        task_def: The :class:`~autorater_pipelines.pairwise.tasks.TaskDefinition`.
        settings: The judge settings (AutoSxS's ``AutoraterParameters`` is one).

    Raises:
        InputError: the first problem, naming the pattern and the keys or positions.
    """
    check_preference_settings(task_def, settings)
    check_order_settings(task_def, settings)
    if settings.verdict_pattern is None:
        return
    if task_def.pointwise:
        raise InputError(
            "verdict_pattern parses A/B/TIE verdicts, but the task's score_rubric is a pointwise scale "
            f"{task_def.score_scale}: the judge answers with JSON scores; remove verdict_pattern and verdict_map",
            source=SOURCE,
        )
    check_verdict_map_reachable(settings.verdict_pattern.pattern, settings.verdict_map)
