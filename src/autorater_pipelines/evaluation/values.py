"""Missing values (:func:`is_missing`, :func:`is_blank`), as the evaluations name them.

Defined in :mod:`autorater_pipelines.io._values` (the rows layer reads them first: a dataset's missing cells);
re-exported here, so that every evaluation checks rows with the same two functions.
"""

from autorater_pipelines.io._values import is_blank, is_missing

__all__ = ["is_blank", "is_missing"]
