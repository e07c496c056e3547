"""How pairwise judgments are exported (AutoSxS and arena): the formats and the BigQuery types of their columns.

Both evaluations write judgment rows through :func:`autorater_pipelines.evaluation.export.export_rows` (a JSONL or
JSON file, plus a new BigQuery table on request) with :data:`JUDGMENTS_BIGQUERY_FIELDS`: AutoSxS's
:func:`autorater_pipelines.autosxs.export_judgments`, the arena's :func:`autorater_pipelines.arena.export.export_arena`.
"""

from __future__ import annotations

from typing import Any

from autorater_pipelines.errors import InputError

__all__ = ["JUDGMENTS_BIGQUERY_FIELDS", "JUDGMENTS_FORMATS", "check_judgments_format"]

JUDGMENTS_FORMATS = ("jsonl", "json", "bigquery")
"""Values of ``judgments_format``."""


def check_judgments_format(value: Any) -> str:
    """``judgments_format`` lower-cased (empty = ``jsonl``).

    Raises:
        InputError: not one of :data:`JUDGMENTS_FORMATS`.
    """
    fmt = (value or "jsonl").lower() if isinstance(value, str) else value
    if fmt not in JUDGMENTS_FORMATS:
        raise InputError(
            f"unsupported judgments_format {value!r}; valid: {list(JUDGMENTS_FORMATS)}", source="judgments_format"
        )
    return str(fmt)


_STRING, _INTEGER, _FLOAT, _BOOLEAN = (
    {"type": t, "mode": "NULLABLE"} for t in ("STRING", "INTEGER", "FLOAT", "BOOLEAN")
)
JUDGMENTS_BIGQUERY_FIELDS: dict[str, dict[str, Any]] = {
    "inference_instruction": _STRING,
    "inference_context": _STRING,
    "response_a": _STRING,
    "response_b": _STRING,
    "choice": _STRING,
    "confidence": _FLOAT,
    "explanation": _STRING,
    "complete": _BOOLEAN,
    "incomplete_reason": _STRING,
    "response_a_score": _FLOAT,
    "response_b_score": _FLOAT,
    "preference": _FLOAT,
    "preference_fallback_count": _INTEGER,
    "verdict_from_alternatives_count": _INTEGER,
    "flipped": _BOOLEAN,
    "identical_responses": _BOOLEAN,
    "uncalibrated_choice": _STRING,
    "samples": {
        "type": "RECORD",
        "mode": "REPEATED",
        "fields": [
            {"name": "sample_index", **_INTEGER},
            {"name": "flipped", **_BOOLEAN},
            {"name": "choice", **_STRING},
            {"name": "explanation", **_STRING},
            {"name": "raw_response", **_STRING},
            {"name": "error", **_STRING},
            {"name": "attempts", **_INTEGER},
            {"name": "cached", **_BOOLEAN},
            {"name": "note", **_STRING},
        ],
    },
    "panel_vote": _STRING,  # a panel of judges (pairwise.panel)
    "panel_preference_a": _FLOAT,
    "jurors": {
        "type": "RECORD",
        "mode": "REPEATED",
        "fields": [
            {"name": "juror", **_STRING},
            {"name": "choice", **_STRING},
            {"name": "confidence", **_FLOAT},
            {"name": "complete", **_BOOLEAN},
            {"name": "incomplete_reason", **_STRING},
            {"name": "explanation", **_STRING},
            {"name": "input_token_count", **_INTEGER},
            {"name": "output_token_count", **_INTEGER},
        ],
    },
    "input_token_count": _INTEGER,
    "output_token_count": _INTEGER,
}
"""BigQuery types of the judgment columns this package computes (REST form). Every other column (id columns,
the human preference column, other prompt parameters, the arena's ``model_a``/``model_b``, a sample's ``strong``)
takes its type from its values (see ``io.infer_schema``)."""
