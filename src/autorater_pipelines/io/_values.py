"""Missing values: one meaning of "no value" for every row check of both pipelines."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["is_blank", "is_missing"]


def is_missing(value: Any) -> bool:
    """Return True for ``None`` and float NaN: the cell has no value.

    An empty string is a value (JSONL ``""``, an empty CSV cell); use :func:`is_blank` where text must not be
    empty.
    """
    return value is None or (isinstance(value, float) and math.isnan(value))


def is_blank(value: Any) -> bool:
    """Return True for a missing value (:func:`is_missing`) or a string of only whitespace."""
    return is_missing(value) or (isinstance(value, str) and not value.strip())
