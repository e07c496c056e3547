"""What both evaluations share: parameters, ids and missing values, error rows, the template sandbox, JSON extraction.

AutoSxS (:mod:`autorater_pipelines.autosxs`) and Gecko (:mod:`autorater_pipelines.gecko`) both build on this
layer; nothing here imports either of them, or kfp. Modules:

- :mod:`~autorater_pipelines.evaluation.parameters` — KFP value coercion, the table of numeric bounds
  (``BOUNDS``), the base of both pipelines' parameter models;
- :mod:`~autorater_pipelines.evaluation.values` — ``is_missing`` (None or NaN) and ``is_blank``;
- :mod:`~autorater_pipelines.evaluation.ids` — the ``id_columns`` check and a row's id values;
- :mod:`~autorater_pipelines.evaluation.error_rows` — the one ``error_messages`` row layout;
- :mod:`~autorater_pipelines.evaluation.templates` — the bounded Jinja2 sandbox for user templates;
- :mod:`~autorater_pipelines.evaluation.json_extraction` — JSON values out of model text;
- :mod:`~autorater_pipelines.evaluation.export` — result rows to a JSONL/JSON file and a new BigQuery table.
"""

__all__ = ["DEFAULT_MODEL"]

DEFAULT_MODEL = "gemini-2.5-flash"
"""The model used when a model parameter (``autorater_model``, ``rubric_generation_model``, ``validator_model``)
is empty: a current Gemini Flash model on Vertex AI."""
