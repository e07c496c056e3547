"""Id columns (:func:`check_id_columns`, :func:`id_values`), as the evaluations name them.

Defined in :mod:`autorater_pipelines.io._ids` (the rows layer checks them first: a dataset's unique ids);
re-exported here, so that every evaluation checks ``id_columns`` with the same function.
"""

from autorater_pipelines.io._ids import check_id_columns, id_values

__all__ = ["check_id_columns", "id_values"]
