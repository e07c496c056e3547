"""Probability-weighted preferences (``autorater_parameters.preference: "probability"``) and their win rate.

With ``preference`` ``probability`` a row's outcome is not only its vote (``A``/``B``/``TIE``) but a number in
[0, 1]: the judge's preference for model A. Each sample's preference is read from its verdict distribution —
the probabilities of the verdict alternatives at the token where the parser read the verdict, normalised over
the alternatives that name a position (:func:`~autorater_pipelines.pairwise.confidence.verdict_probability`; an
alternative missing from the top log-probabilities has probability 0) and mapped back to model terms. It is
``P(A) + P(TIE) / 2``: with a ``verdict_map`` of two verdicts, AlpacaEval's weighted preference
``P(m) / (P(m) + P(M))`` for the response shown as ``m``. The row's preference is the mean over its voting
samples.

A sample whose log-probabilities do not give its verdict's distribution (none returned, malformed, the verdict token not
found, no alternatives) falls back to its discrete verdict — 1 for ``A``, 0.5 for ``TIE``, 0 for ``B`` — and is
counted in the row's ``preference_fallback_count`` and the metrics' ``preference_fallback_sample_count``.

A one-token answer that is no verdict (a judge sampled at temperature 1 answering ``Please`` where ``m`` had
probability 0.98) is read as AlpacaEval reads it: at that token, from its alternatives that are verdicts
(:func:`one_token_verdict`); the sample votes for the most probable one, its ``note`` says so, and it is counted
in ``verdict_from_alternatives_count`` (row) and ``verdict_from_alternatives_sample_count`` (metrics). A longer
answer without a verdict stays a parse error.

Metrics (:func:`weighted_win_rate`): ``autorater_model_a_weighted_win_rate`` is the mean preference over the
judged rows (a row without a preference of its own — a ``TIE`` given without asking the judge, e.g. identical
responses — counts 0.5, a discrete ``A`` 1, ``B`` 0), and ``…_standard_error`` the standard error of that mean
(sample standard deviation, ``n - 1``, over √n: AlpacaEval's ``pandas.Series.sem``). Source: AlpacaEval 2.0
(Dubois et al., 2024), ``weighted_alpaca_eval_gpt4_turbo`` and ``alpaca_eval.metrics``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.parameters import ModelCallOptions, to_choice
from autorater_pipelines.pairwise.confidence import Label, verdict_probability

if TYPE_CHECKING:
    from autorater_pipelines.models import ModelOutput
    from autorater_pipelines.pairwise.tasks import TaskDefinition

__all__ = [
    "PREFERENCE_MODES",
    "check_preference_mode",
    "check_preference_settings",
    "one_token_verdict",
    "refuse_probability_preference",
    "row_preference",
    "sample_preference",
    "weighted_win_rate",
]


class Sample(Protocol):
    """What a preference reads of a :class:`~autorater_pipelines.pairwise.voting.Sample`.

    Not imported from voting: voting imports the verdict parser, which imports the settings, which import this module.
    """

    @property
    def choice(self) -> str: ...

    @property
    def distribution(self) -> dict[str, float] | None: ...

    @property
    def verdict_from_alternatives(self) -> bool: ...


PREFERENCE_MODES = ("discrete", "probability")
"""Values of ``autorater_parameters.preference``."""

_SOURCE = "autorater_parameters"
_DISCRETE = {"A": 1.0, "TIE": 0.5, "B": 0.0}


def check_preference_mode(value: Any) -> str:
    """``preference`` lower-cased (None or empty = ``discrete``).

    Raises:
        InputError: not one of :data:`PREFERENCE_MODES` (naming ``autorater_parameters.preference``).
    """
    mode = to_choice("discrete" if value is None or value == "" else value, PREFERENCE_MODES)
    if mode in PREFERENCE_MODES:
        return str(mode)
    raise InputError(
        f"preference {value!r} is not a preference mode; use one of {list(PREFERENCE_MODES)} (discrete: the vote "
        "only; probability: the verdict's probability from the judge's logprobs)",
        source=f"{_SOURCE}.preference",
    )


def check_preference_settings(task_def: TaskDefinition, settings: Any) -> None:
    """Refuse ``preference`` ``probability`` where no verdict probability can be read.

    Refused: a pointwise score rubric (its verdicts are two JSON scores, not one verdict token), and, when
    ``settings`` holds the model-call options (``AutoraterParameters``), ``logprobs`` unset or 0 — the judge
    would return no alternatives and every sample would fall back to its vote.

    Raises:
        InputError: the first problem, naming ``autorater_parameters.preference`` and what to change.
    """
    if getattr(settings, "preference", "discrete") != "probability":
        return
    if task_def.pointwise:
        raise InputError(
            "preference 'probability' reads the probability of the verdict token, but the task's score_rubric is a "
            f"pointwise scale {task_def.score_scale}: the judge answers with two scores; use preference 'discrete'",
            source=f"{_SOURCE}.preference",
        )
    logprobs = settings.settings().get("logprobs") if isinstance(settings, ModelCallOptions) else 1
    if not logprobs:
        raise InputError(
            "preference 'probability' needs the judge's log-probabilities with alternatives: set "
            f"autorater_parameters.logprobs to at least 1 (received {logprobs!r}), "
            'e.g. {"preference": "probability", "logprobs": 5}',
            source=f"{_SOURCE}.preference",
        )


def refuse_probability_preference(settings: Any, evaluation: str) -> None:
    """Refuse ``preference`` ``probability`` in an evaluation whose metrics count votes only (arena).

    Raises:
        InputError: naming ``autorater_parameters.preference`` and ``evaluation``.
    """
    if getattr(settings, "preference", "discrete") == "probability":
        raise InputError(
            f"preference 'probability' gives AutoSxS's weighted win rate; {evaluation} computes its metrics from "
            "the votes only and would ignore it: remove preference (or use preference 'discrete')",
            source=f"{_SOURCE}.preference",
        )


def one_token_verdict(output: ModelOutput, settings: Any, label: Label) -> dict[str, float] | None:
    """The verdict distribution among the alternatives of a one-token answer that is no verdict itself.

    Only with ``preference`` ``probability`` and a ``verdict_pattern``, when the answer is exactly one token
    (``output.logprobs`` has one item spelling ``output.text``) and some of its alternatives are ``verdict_map``
    verdicts: AlpacaEval's ``logprob_parser`` reads the verdict token's alternatives whatever token was sampled.

    Returns:
        ``{position: probability}`` (shown-first terms, summing to 1), or None.
    """
    if getattr(settings, "preference", "discrete") != "probability" or settings.verdict_pattern is None:
        return None
    text, logprobs = output.text or "", output.logprobs
    if not logprobs or len(logprobs) != 1 or logprobs[0].token != text or not text.strip():
        return None
    return verdict_probability(logprobs, text, (0, len(text)), label).distribution


def sample_preference(sample: Sample) -> tuple[float, bool] | None:
    """One sample's preference for model A and whether it fell back to its discrete verdict.

    Returns:
        ``(P(A) + P(TIE) / 2, False)`` from the sample's verdict distribution (model terms); ``(1 | 0.5 | 0,
        True)`` from its verdict when it has none; None for an ``ERROR`` sample (it does not vote).
    """
    if sample.choice not in _DISCRETE:
        return None
    distribution = sample.distribution
    if not distribution:
        return _DISCRETE[sample.choice], True
    total = sum(distribution.get(k, 0.0) for k in _DISCRETE)
    if total <= 0:
        return _DISCRETE[sample.choice], True
    return (distribution.get("A", 0.0) + 0.5 * distribution.get("TIE", 0.0)) / total, False


def row_preference(samples: Sequence[Sample]) -> dict[str, Any]:
    """A judgment row's ``preference`` (mean over its voting samples) and ``preference_fallback_count``.

    Returns:
        ``{"preference": float in [0, 1], or None without a voting sample,
        "preference_fallback_count": voting samples that used their discrete verdict,
        "verdict_from_alternatives_count": samples whose verdict was read among a one-token answer's
        alternatives}``.
    """
    read = [p for p in (sample_preference(s) for s in samples) if p is not None]
    alternatives = sum(s.verdict_from_alternatives for s in samples)
    if not read:
        return {"preference": None, "preference_fallback_count": 0, "verdict_from_alternatives_count": alternatives}
    return {
        "preference": math.fsum(p for p, _ in read) / len(read),
        "preference_fallback_count": sum(fell for _, fell in read),
        "verdict_from_alternatives_count": alternatives,
    }


def weighted_win_rate(rows: Iterable[tuple[Mapping[str, Any], str]]) -> dict[str, Any]:
    """The weighted win rate of model A over judged rows, its standard error and the fallback count.

    Args:
        rows: ``(judgment row, choice)`` for each row counted in the rates (choice ``A``/``B``/``TIE``).

    Returns:
        ``autorater_model_a_weighted_win_rate`` (mean preference, None without rows),
        ``autorater_model_a_weighted_win_rate_standard_error`` (None below 2 rows) and
        ``preference_fallback_sample_count`` (samples of those rows that used their discrete verdict) and
        ``verdict_from_alternatives_sample_count`` (samples voting by a one-token answer's alternatives).
    """
    values: list[float] = []
    fallbacks = alternatives = 0
    for row, choice in rows:
        value = row.get("preference")
        values.append(_DISCRETE[choice] if value is None else float(value))
        fallbacks += int(row.get("preference_fallback_count") or 0)
        alternatives += int(row.get("verdict_from_alternatives_count") or 0)
    mean = math.fsum(values) / len(values) if values else None
    error = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    return {
        "autorater_model_a_weighted_win_rate": mean,
        "autorater_model_a_weighted_win_rate_standard_error": error,
        "preference_fallback_sample_count": fallbacks,
        "verdict_from_alternatives_sample_count": alternatives,
    }
