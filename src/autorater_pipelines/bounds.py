"""Numeric bounds, written once on the field they bound: ``Annotated[int, Bound("integer", 1, 1024)]``.

A :class:`Bound` in a field's annotation converts the value (KFP hands numbers over as ``2.0`` or ``"0.2"``) and
refuses one out of range, with one message wherever the field is set — a pipeline parameter, a nested
``*_parameters`` key, or ``GenerateConfig(...)`` in Python: ``max_concurrency must be an integer from 1 to 1024,
got 100000000``. :func:`bounds_of` reads the bounds back from a model's fields, so a table of bounds
(:data:`autorater_pipelines.evaluation.parameters.BOUNDS`) is derived, never written a second time.

Conversion: integers are an int, an integral float (``2.0``) or a string of one (``"2"``, ``" 2 "``, ``"2.0"``),
never a boolean, a fraction (``2.5``) or other text (``"x"``, ``"²"``, ``"1_0"``); numbers are an int, a finite
float or a string of one (``"0.2"``), never a boolean, NaN or infinity.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pydantic

__all__ = ["Bound", "bound_of", "bounds_of"]


@dataclasses.dataclass(frozen=True)
class Bound:
    """The allowed values of one numeric field, as annotation metadata.

    Attributes:
        kind: ``integer`` or ``number``.
        low: Smallest allowed value (excluded when ``low_exclusive``).
        high: Largest allowed value.
        low_exclusive: ``low`` itself is not allowed (``timeout_s`` > 0).
        wording: How the message states the range, when ``from low to high`` says it badly.
    """

    kind: str
    low: float
    high: float
    low_exclusive: bool = False
    wording: str = ""

    def describe(self) -> str:
        """The range in words: ``an integer from 1 to 64``, ``a number greater than 0 and at most 3600`` …."""
        if self.wording:
            return self.wording
        article = "an integer" if self.kind == "integer" else "a number"
        low, high = _show(self.low), _show(self.high)
        return (
            f"{article} greater than {low} and at most {high}"
            if self.low_exclusive
            else f"{article} from {low} to {high}"
        )

    def contains(self, value: float) -> bool:
        """Whether ``value`` is in range."""
        above = value > self.low if self.low_exclusive else value >= self.low
        return above and value <= self.high

    def check(self, name: str, value: Any) -> int | float:
        """Convert ``value`` of the field ``name`` (module docstring) and check it is in range.

        Returns:
            An ``int`` for integer fields, a ``float`` for numbers.

        Raises:
            ValueError: not a number of the right kind, or out of range:
                ``"<name> must be an integer from 1 to 64, got '2.5'"``.
        """
        number = _parse_number(value)
        if number is not None and self.kind == "integer":
            number = int(number) if float(number).is_integer() else None
        if number is None or not self.contains(number):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")
        return int(number) if self.kind == "integer" else float(number)

    def __get_pydantic_core_schema__(self, source: Any, handler: pydantic.GetCoreSchemaHandler) -> Any:
        """Validate the field with :meth:`check` before its type (None passes, for optional fields)."""
        import pydantic

        def validate(value: Any, info: pydantic.ValidationInfo) -> Any:
            return None if value is None else self.check(str(info.field_name), value)

        return pydantic.BeforeValidator(validate).__get_pydantic_core_schema__(source, handler)

    def __get_pydantic_json_schema__(self, schema: Any, handler: pydantic.GetJsonSchemaHandler) -> dict[str, Any]:
        """The JSON schema of the field's type, with its range (``minimum`` …, as ``Field(ge=…)`` would give)."""
        json_schema = dict(handler(schema))
        json_schema["exclusiveMinimum" if self.low_exclusive else "minimum"] = _plain(self.low)
        json_schema["maximum"] = _plain(self.high)
        return json_schema


def _show(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(number)


def _plain(number: float) -> int | float:
    return int(number) if float(number).is_integer() else number


def _parse_number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text or not text.isascii() or "_" in text:  # Python reads "1_0" as 10: a typo, not a number
            return None
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def bound_of(field: pydantic.fields.FieldInfo) -> Bound | None:
    """The :class:`Bound` in a pydantic field's annotation, or None."""
    return next((m for m in field.metadata if isinstance(m, Bound)), None)


def bounds_of(*models: type[pydantic.BaseModel]) -> dict[str, Bound]:
    """Every bounded field of ``models`` by name, in declaration order (the first model's first).

    Raises:
        ValueError: one name bounded differently in two models (a name means one thing, with one range).
    """
    out: dict[str, Bound] = {}
    for model in models:
        for name, field in model.model_fields.items():
            bound = bound_of(field)
            if bound is None:
                continue
            if out.setdefault(name, bound) != bound:
                raise ValueError(f"{name} is bounded twice: {out[name].describe()} and {bound.describe()}")
    return out
