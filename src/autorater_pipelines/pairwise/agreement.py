"""Agreement between the jurors of a panel: Fleiss' kappa and a pairwise agreement matrix.

Ratings are a rows × jurors table of labels (``A``, ``B``, ``TIE``), None where a juror abstained.

- Fleiss' kappa (J. L. Fleiss, "Measuring nominal scale agreement among many raters", Psychological Bulletin
  76(5):378–382, 1971) needs the same number of ratings per row, so it is computed over the rows every juror
  rated: ``P_i = (Σ_j n_ij² − n) / (n (n − 1))`` per row with ``n`` raters and ``n_ij`` of them choosing
  category ``j``; ``P̄`` their mean, ``p_j`` the share of all ratings in category ``j``, ``P̄_e = Σ_j p_j²`` and
  ``κ = (P̄ − P̄_e) / (1 − P̄_e)``; None when undefined (no row, or ``P̄_e = 1``: every rating the same label).
- Pairwise: for each two jurors, over the rows both rated, the share of rows with the same label and Cohen's
  kappa (``(p_o − p_e) / (1 − p_e)``, ``p_e`` from each juror's label shares; None when ``p_e = 1``).

Pure Python: a panel has a few jurors and at most a few hundred thousand rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["CATEGORIES", "cohens_kappa", "fleiss_kappa", "juror_agreement"]

CATEGORIES = ("A", "B", "TIE")


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa of a rows × categories table of counts, every row summing to the same ``n`` ≥ 2.

    Raises:
        ValueError: rows with different totals, or fewer than 2 ratings per row.
    """
    if not table:
        return None
    totals = {sum(row) for row in table}
    if len(totals) != 1:
        raise ValueError(f"every row needs the same number of ratings, got totals {sorted(totals)}")
    n = totals.pop()
    if n < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 ratings per row, got {n}")
    rows = len(table)
    p_bar = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in table) / rows
    shares = [sum(row[j] for row in table) / (rows * n) for j in range(len(table[0]))]
    p_e = sum(p * p for p in shares)
    if p_e == 1:
        return None
    return (p_bar - p_e) / (1 - p_e)


def cohens_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (any label set); None when undefined."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    left, right = Counter(first), Counter(second)
    expected = sum(left[label] * right[label] for label in left) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def juror_agreement(names: Sequence[str], ratings: Sequence[Sequence[str | None]]) -> dict[str, Any]:
    """Agreement between jurors.

    Args:
        names: The jurors (model specs), in panel order.
        ratings: One list per row: each juror's label or None (abstained), in ``names`` order.

    Returns:
        ``fleiss_kappa`` and ``fleiss_kappa_row_count`` (rows every juror rated), ``pairwise_agreement``
        (``{juror: {juror: share of same labels}}``, 1.0 on the diagonal; None for a pair with no row both
        rated), ``pairwise_agreement_count`` (rows both rated) and ``pairwise_cohens_kappa``, all keyed by name.
    """
    full = [row for row in ratings if all(v is not None for v in row)]
    table = [[sum(v == c for v in row) for c in CATEGORIES] for row in full]
    out: dict[str, Any] = {
        "categories": list(CATEGORIES),
        "fleiss_kappa": fleiss_kappa(table) if len(names) >= 2 else None,
        "fleiss_kappa_row_count": len(full),
        "pairwise_agreement": {},
        "pairwise_agreement_count": {},
        "pairwise_cohens_kappa": {},
    }
    for i, left in enumerate(names):
        agreement, counts, kappas = {}, {}, {}
        for j, right in enumerate(names):
            pairs = [(row[i], row[j]) for row in ratings if row[i] is not None and row[j] is not None]
            counts[right] = len(pairs)
            agreement[right] = sum(a == b for a, b in pairs) / len(pairs) if pairs else None
            kappas[right] = cohens_kappa([str(a) for a, _ in pairs], [str(b) for _, b in pairs])
        out["pairwise_agreement"][left] = agreement
        out["pairwise_agreement_count"][left] = counts
        out["pairwise_cohens_kappa"][left] = kappas
    return out
