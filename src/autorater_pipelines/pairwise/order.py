"""Which order the judge sees a pair in, identical responses, and balanced position calibration.

:class:`OrderSettings` holds the keys of ``autorater_parameters`` that decide the presentation order and what the
judge is spared (:class:`~autorater_pipelines.pairwise.settings.JudgeSettings` is one):

- ``flip``: ``true`` (default: each example is judged in both orders, half of its samples with model B shown
  first), ``false`` (model A always shown first), or ``"random"``: one order per row, exactly ⌊n/2⌋ of the n rows
  shown swapped, chosen by a seeded permutation (:func:`balanced_orders`); with ``sampling_count`` 1 (its default
  here) a run makes half the calls of ``flip: true``.
- ``flip_column``: a boolean dataset column giving each row's order (true = model A shown second), to reproduce a
  protocol whose order was recorded (:func:`column_orders`).
- ``identical_responses``: ``"judge"`` (default) or ``"tie"``: a pair whose two responses are the same text is a
  ``TIE`` without a judge call (:func:`identical_judgment`).
- ``position_calibration``: ``"none"`` (default: the samples vote) or ``"balanced"``: with a pointwise score
  rubric, each model's score is averaged over both presentation orders before the two are compared — the Balanced
  Position Calibration of Wang et al., "Large Language Models are not Fair Evaluators" (arXiv 2305.17926)
  (:func:`balanced_choice`).

A row whose order is fixed (``flip: "random"`` or ``flip_column``) carries it in the prepared example and the
judgment row as ``flipped`` (true = model B's response shown first); every sample's order is in ``samples``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import pydantic

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.parameters import ParameterModel, to_bool, to_choice
from autorater_pipelines.pairwise.confidence import row_confidence

__all__ = [
    "ORDER_KEY",
    "OrderSettings",
    "assign_orders",
    "balanced_choice",
    "balanced_orders",
    "check_order_settings",
    "column_orders",
    "identical_judgment",
    "is_identical",
]

ORDER_KEY = "flipped"
"""Key of a prepared example (and its judgment row) holding the row's fixed order: true = model B shown first."""


def _flip_value(value: Any) -> bool | str:
    if to_choice(value, ("random",)) == "random":
        return "random"
    try:
        return to_bool("flip", value)
    except ValueError:
        raise ValueError(f'flip must be true, false or "random", got {value!r}') from None


def _choice(*choices: str) -> Any:
    return pydantic.BeforeValidator(lambda value: to_choice(value, choices))


FlipMode = Annotated[bool | Literal["random"], pydantic.BeforeValidator(_flip_value)]
"""``flip``: ``true``, ``false`` or ``"random"`` (strings ``"true"``/``"false"`` accepted, any case)."""


class OrderSettings(ParameterModel):
    """The presentation-order keys of ``autorater_parameters`` (module docstring)."""

    flip: FlipMode = True
    """Presentation order: true = each example in both orders (half of its samples show model B first); false =
    model A always shown first; "random" = one order per row, exactly half the rows (floor) shown swapped, drawn
    from `seed` (of `autorater_parameters`, else 0; arena: the arena's `seed`), with `sampling_count` 1 unless
    given: half the calls of true."""
    flip_column: str | None = None
    """A boolean dataset column giving each row's order (true = model A shown second), to reproduce a protocol
    whose order was recorded; `sampling_count` is 1 unless given. Not with `flip`."""
    identical_responses: Annotated[Literal["judge", "tie"], _choice("judge", "tie")] = "judge"
    """A pair whose two responses are the same text: "judge" (default) asks the judge; "tie" makes it a TIE
    (confidence 1) without a judge call, counted in metrics.json `identical_response_count`."""
    position_calibration: Annotated[Literal["none", "balanced"], _choice("none", "balanced")] = "none"
    """With a pointwise score rubric: "none" (default) = the samples vote; "balanced" = each model's score is
    averaged over both orders before comparing (Balanced Position Calibration, Wang et al. 2023). Needs `flip`
    true and `sampling_count` ≥ 2."""

    @pydantic.field_validator("flip_column", mode="before")
    @classmethod
    def _column(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"flip_column must be the name of a boolean dataset column, got {value!r}")
        return value

    @pydantic.model_validator(mode="before")
    @classmethod
    def _one_order_per_row(cls, data: Any) -> Any:
        """``flip: "random"`` and ``flip_column`` judge each row once unless ``sampling_count`` is given."""
        if not isinstance(data, Mapping):
            return data
        column = data.get("flip_column") not in (None, "")
        if column and data.get("flip") is not None:
            raise ValueError(
                f"flip_column {data['flip_column']!r} gives each row's order, so flip {data['flip']!r} does not "
                "apply: remove flip"
            )
        one_order = column or (isinstance(data.get("flip"), str) and data["flip"].strip().lower() == "random")
        if one_order and data.get("sampling_count") is None:
            return {**data, "sampling_count": 1}
        return data

    @pydantic.model_validator(mode="after")
    def _calibration_needs_both_orders(self) -> OrderSettings:
        samples = getattr(self, "sampling_count", 2)
        if self.position_calibration == "balanced" and (self.flip is not True or self.flip_column or samples < 2):
            given = f"flip_column {self.flip_column!r}" if self.flip_column else f"flip {self.flip!r}"
            raise ValueError(
                "position_calibration 'balanced' averages each model's score over both presentation orders: it "
                f"needs flip true and sampling_count >= 2, got {given}, sampling_count {samples}"
            )
        return self

    @property
    def order_per_row(self) -> bool:
        """True when each row is judged in one order fixed before judging (``flip: "random"`` or ``flip_column``)."""
        return self.flip == "random" or self.flip_column is not None


def check_order_settings(task_def: Any, settings: OrderSettings) -> None:
    """Refuse ``position_calibration: "balanced"`` for a task without a pointwise score rubric.

    Raises:
        InputError: naming ``autorater_parameters``.
    """
    if settings.position_calibration == "balanced" and not task_def.pointwise:
        raise InputError(
            "position_calibration 'balanced' averages the judge's scores over both orders, but the task has no "
            "pointwise score rubric (its judge answers A/B/TIE): remove position_calibration or use a custom task "
            "whose score_rubric is a scale",
            source="autorater_parameters",
        )


def _rank_key(seed: int, ids: Sequence[Any]) -> str:
    text = json.dumps([str(seed), *(str(v) for v in ids)], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def balanced_orders(ids: Sequence[Sequence[Any]], seed: int) -> list[bool]:
    """Per row, whether it is shown swapped (model B first), for ``flip: "random"``.

    The rows are ranked by the sha256 hex digest of the JSON list ``[str(seed), *(str(id) for id in ids)]`` (a
    seeded permutation that depends on the rows' ids and the seed only, not on the file's row order or the Python
    version); the first ⌊n/2⌋ in that ranking are swapped.

    Args:
        ids: Each row's id values (the id columns, in order).
        seed: The seed.

    Returns:
        One flag per row, in input order; exactly ``len(ids) // 2`` are True.
    """
    ranking = sorted(range(len(ids)), key=lambda i: _rank_key(seed, ids[i]))
    swapped = set(ranking[: len(ids) // 2])
    return [i in swapped for i in range(len(ids))]


def column_orders(values: Sequence[Any], column: str, locations: Sequence[str]) -> list[bool]:
    """Each row's order read from the ``flip_column`` values (true = model A shown second).

    Args:
        values: The column's value per row.
        column: The column's name, for messages.
        locations: Per row, where it is (``file row N``), for messages.

    Raises:
        InputError: a value that is not a boolean (``true``/``false``, or those strings in a CSV), or is missing,
            naming the file, row and column.
    """
    orders = []
    for value, where in zip(values, locations, strict=True):
        try:
            orders.append(to_bool(column, value))
        except ValueError:
            raise InputError(
                f"flip_column value {value!r} is not a boolean: every row needs true (model A shown second) or "
                "false (model A shown first)",
                source=where,
                column=column,
            ) from None
    return orders


def assign_orders(
    examples: Sequence[dict[str, Any]],
    settings: OrderSettings,
    *,
    id_columns: Sequence[str],
    seed: int,
    column_values: Sequence[Any] = (),
    locations: Sequence[str] = (),
) -> None:
    """Set :data:`ORDER_KEY` on every prepared example when the order is fixed per row (else do nothing).

    Args:
        examples: The prepared examples of the whole dataset (updated in place).
        settings: The judge settings.
        id_columns: Columns identifying an example (the permutation is over their values).
        seed: Seed of ``flip: "random"``.
        column_values: With ``flip_column``: the column's value per example.
        locations: With ``flip_column``: where each example's row is, for messages.

    Raises:
        InputError: a bad ``flip_column`` value (:func:`column_orders`).
    """
    if settings.flip_column is not None:
        orders = column_orders(column_values, settings.flip_column, locations)
    elif settings.flip == "random":
        orders = balanced_orders([[e.get(c) for c in id_columns] for e in examples], seed)
    else:
        return
    for example, flipped in zip(examples, orders, strict=True):
        example[ORDER_KEY] = flipped


def is_identical(example: Mapping[str, Any], settings: OrderSettings) -> bool:
    """True when ``identical_responses`` is ``"tie"`` and the two responses are the same text (exact match)."""
    a, b = example.get("response_a"), example.get("response_b")
    return settings.identical_responses == "tie" and a is not None and a == b


def identical_judgment() -> dict[str, Any]:
    """The judging fields of a row whose responses are identical: ``TIE`` with confidence 1, no sample."""
    return {
        "choice": "TIE",
        "confidence": 1.0,
        "explanation": "The two responses are identical: TIE without a judge call (identical_responses: tie).",
        "complete": True,
        "incomplete_reason": None,
        "identical_responses": True,
    }


def balanced_choice(
    samples: Sequence[Any], vote: str, explanation: str
) -> tuple[str, float | None, str, dict[str, Any]]:
    """The Balanced Position Calibration verdict of a pointwise row (Wang et al. 2023, arXiv 2305.17926).

    Each model's score is the mean, over the presentation orders judged, of its mean score in that order (so an odd
    ``sampling_count`` weighs both orders equally); the higher calibrated score wins, equal scores are ``TIE``.
    E.g. scores (A 8, B 6) with A shown first and (A 6, B 7) with B shown first: the samples vote A and B (a
    ``TIE``), the calibrated scores are A 7.0, B 6.5: ``A``.

    Args:
        samples: The row's :class:`~autorater_pipelines.pairwise.voting.Sample` objects (``scores`` in model terms,
            None for a failed sample); at least one scored.
        vote: The samples' vote (:func:`~autorater_pipelines.pairwise.voting.combine_samples`).
        explanation: The vote's explanation.

    Returns:
        ``(choice, confidence, explanation, fields)``: ``confidence`` as the vote's (the share of scored samples
        whose own verdict is ``choice``), the explanation prefixed with the calibration when it changed the vote,
        and the judgment fields ``response_a_score``/``response_b_score`` (calibrated, 6 places) and
        ``uncalibrated_choice`` (the vote).
    """
    by_order: dict[bool, list[tuple[int, int]]] = {}
    for sample in samples:
        if sample.scores is not None:
            by_order.setdefault(bool(sample.flipped), []).append(sample.scores)
    means = [(sum(a for a, _ in s) / len(s), sum(b for _, b in s) / len(s)) for s in by_order.values()]
    score_a = round(sum(a for a, _ in means) / len(means), 6)
    score_b = round(sum(b for _, b in means) / len(means), 6)
    choice = "A" if score_a > score_b else "B" if score_b > score_a else "TIE"
    confidence = row_confidence(choice, [(s.choice, s.distribution) for s in samples if s.scores is not None])
    if choice != vote:
        explanation = (
            f"Balanced position calibration: mean scores over both orders A {score_a:g}, B {score_b:g} → {choice} "
            f"(the samples' vote: {vote}). {explanation}"
        )
    fields = {"response_a_score": score_a, "response_b_score": score_b, "uncalibrated_choice": vote}
    return choice, None if confidence is None else round(confidence, 6), explanation, fields
