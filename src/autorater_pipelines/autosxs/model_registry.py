"""Write AutoSxS results to the Vertex AI Model Registry, as GCPC's ``autosxs-template`` does.

When ``model_a`` or ``model_b`` is a Model Registry model (``projects/P/locations/L/models/M[@version]``), the
metrics step imports one ``ModelEvaluation`` into that model (``ModelService.ImportModelEvaluation`` through
``google-cloud-aiplatform``) holding the pairwise text-generation metrics in the shape of Vertex AI's
``PairwiseTextGenerationEvaluationMetrics``, seen from that model: ``modelWinRate`` is its own autorater
win rate and ``baselineModelWinRate`` the other model's; the confusion counts, precision, recall and F1 take
that model as the positive class; accuracy and Cohen's kappa do not depend on it. Metrics without a value (no
human labels, no judged row) are left out. The resource name of each evaluation is a pipeline output
(``model_a_evaluation_resource_name`` …), as in GCPC.

Transient answers (429, 500, 503) are retried for up to two minutes. A failed import never loses the run: the
failure is returned (and logged) as an error message and the resource name stays empty.

Endpoint: ``{location}-aiplatform.googleapis.com`` with Application Default Credentials; with the environment
variable :data:`EMULATOR_ENV` (``host:port`` or ``http://host:port``) the calls go there over HTTP (REST
transport) with anonymous credentials, e.g. to :class:`autorater_pipelines.testing.FakeModelRegistry`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "EMULATOR_ENV",
    "PAIRWISE_METRICS_SCHEMA_URI",
    "ROW_BASED_METRICS_PATH_ENV",
    "import_pairwise_evaluations",
    "is_registry_model",
    "pairwise_evaluation_metrics",
]

logger = logging.getLogger(__name__)

EMULATOR_ENV = "AIPLATFORM_EMULATOR_HOST"
"""Environment variable that sends Model Registry calls to a local fake (``host:port`` or URL)."""
ROW_BASED_METRICS_PATH_ENV = "AUTORATER_ROW_BASED_METRICS_PATH"
"""Environment variable naming where the judgments end up, recorded instead of the step's artifact URI
(``autorater run`` sets it to ``OUT/judgments.jsonl``)."""

PAIRWISE_METRICS_SCHEMA_URI = (
    "gs://google-cloud-aiplatform/schema/modelevaluation/pairwise_text_generation_metrics_1.0.0.yaml"
)
"""``metricsSchemaUri`` of the imported evaluations: the published schemas' naming
(``general_text_generation_metrics_1.0.0.yaml`` …) applied to ``PairwiseTextGenerationEvaluationMetrics``."""

_REGISTRY_MODEL = re.compile(r"^(?:vertex/)?(projects/[^/]+/locations/(?P<location>[^/]+)/models/[^/@]+(?:@[^/]+)?)$")

# Our metric keys (model A = positive class) → PairwiseTextGenerationEvaluationMetrics fields, per side.
_SIDE_KEYS = {
    "a": {
        "modelWinRate": "autorater_model_a_win_rate",
        "baselineModelWinRate": "autorater_model_b_win_rate",
        "humanPreferenceModelWinRate": "human_preference_model_a_win_rate",
        "humanPreferenceBaselineModelWinRate": "human_preference_model_b_win_rate",
        "truePositiveCount": "true_positive_count",
        "falsePositiveCount": "false_positive_count",
        "falseNegativeCount": "false_negative_count",
        "trueNegativeCount": "true_negative_count",
    },
    "b": {
        "modelWinRate": "autorater_model_b_win_rate",
        "baselineModelWinRate": "autorater_model_a_win_rate",
        "humanPreferenceModelWinRate": "human_preference_model_b_win_rate",
        "humanPreferenceBaselineModelWinRate": "human_preference_model_a_win_rate",
        # B positive: both chose B ↔ A's true negatives; autorater B, human A ↔ A's false negatives.
        "truePositiveCount": "true_negative_count",
        "falsePositiveCount": "false_negative_count",
        "falseNegativeCount": "false_positive_count",
        "trueNegativeCount": "true_positive_count",
    },
}
_COUNTS = ("truePositiveCount", "falsePositiveCount", "falseNegativeCount", "trueNegativeCount")


def is_registry_model(spec: str) -> bool:
    """True for a Model Registry model spec ``projects/P/locations/L/models/M[@version]`` (``vertex/`` allowed)."""
    return bool(_REGISTRY_MODEL.match((spec or "").strip()))


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def pairwise_evaluation_metrics(metrics: Mapping[str, Any], side: str) -> dict[str, float]:
    """The ``PairwiseTextGenerationEvaluationMetrics`` of one side from our AutoSxS metrics.

    Args:
        metrics: The metrics of :func:`autorater_pipelines.autosxs.metrics.pairwise_metrics`.
        side: ``"a"`` (model A is "the model", B the baseline) or ``"b"``.

    Returns:
        camelCase field → number; fields whose value is undefined are left out.
    """
    out: dict[str, float] = {}
    for field, key in _SIDE_KEYS[side].items():
        value = metrics.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[field] = value
    if all(field in out for field in _COUNTS) and metrics.get("alignment_count"):
        tp, fp, fn = out["truePositiveCount"], out["falsePositiveCount"], out["falseNegativeCount"]
        precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
        out["precision"], out["recall"] = precision, recall
        out["f1Score"] = _ratio(2 * precision * recall, precision + recall)
        for field, key in (("accuracy", "accuracy"), ("cohensKappa", "cohens_kappa")):
            if isinstance(metrics.get(key), (int, float)):
                out[field] = metrics[key]
    return out


def _client(location: str, api_endpoint: str | None) -> Any:
    from google.cloud import aiplatform

    endpoint = (api_endpoint or os.environ.get(EMULATOR_ENV, "")).strip()
    if endpoint:
        from google.auth.credentials import AnonymousCredentials

        url = endpoint if "://" in endpoint else f"http://{endpoint}"
        return aiplatform.gapic.ModelServiceClient(
            transport="rest", credentials=AnonymousCredentials(), client_options={"api_endpoint": url}
        )
    return aiplatform.gapic.ModelServiceClient(client_options={"api_endpoint": f"{location}-aiplatform.googleapis.com"})


def _import_one(
    model: str, metrics: dict[str, float], metadata: dict[str, Any], display_name: str, api_endpoint: str | None
) -> str:
    match = _REGISTRY_MODEL.match(model.strip())
    assert match is not None
    client = _client(match["location"], api_endpoint)
    evaluation = {
        "display_name": display_name,
        "metrics_schema_uri": PAIRWISE_METRICS_SCHEMA_URI,
        "metrics": metrics,  # proto-plus marshals dicts into google.protobuf.Value
        "metadata": metadata,
    }
    from google.api_core import exceptions, retry

    transient = retry.if_exception_type(
        exceptions.TooManyRequests, exceptions.InternalServerError, exceptions.ServiceUnavailable
    )
    response = client.import_model_evaluation(
        parent=match[1],
        model_evaluation=evaluation,
        retry=retry.Retry(predicate=transient, initial=0.5, maximum=10.0, timeout=120.0),
        timeout=60.0,
    )
    return str(response.name)


def import_pairwise_evaluations(
    *,
    model_a: str,
    model_b: str,
    metrics: Mapping[str, Any],
    task: str = "",
    evaluation_dataset: str = "",
    judgments_uri: str = "",
    api_endpoint: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Import a ModelEvaluation into each of ``model_a`` / ``model_b`` that is a Model Registry model.

    Args:
        model_a: Model A spec (publisher models, endpoints, ``openai/`` … get no evaluation).
        model_b: Model B spec.
        metrics: The run's AutoSxS metrics (:func:`autorater_pipelines.autosxs.metrics.pairwise_metrics`).
        task: The ``task`` parameter, recorded in the evaluation's metadata.
        evaluation_dataset: The ``evaluation_dataset`` parameter, recorded in the metadata.
        judgments_uri: Where the judgments are (the metadata's ``row_based_metrics_path``);
            ``$AUTORATER_ROW_BASED_METRICS_PATH`` wins (``autorater run`` sets it to ``OUT/judgments.jsonl``:
            the step's artifact is in a staging folder that the run deletes).
        api_endpoint: Endpoint override (else ``$AIPLATFORM_EMULATOR_HOST``, else the model's region).

    Returns:
        ``{"a": {"model", "resource_name", "error"}, ...}`` for each registry model: the ModelEvaluation's
        resource name, or an empty one and the error message when the import failed.
    """
    results: dict[str, dict[str, Any]] = {}
    judgments_uri = os.environ.get(ROW_BASED_METRICS_PATH_ENV) or judgments_uri
    models = {"a": model_a, "b": model_b}
    for side, model in models.items():
        if not is_registry_model(model):
            continue
        baseline = models["b" if side == "a" else "a"]
        metadata = {
            "evaluation_dataset_path": [p.strip() for p in evaluation_dataset.split(",") if p.strip()],
            "row_based_metrics_path": judgments_uri,
            "task": task,
            "baseline_model": baseline,
            "evaluated_as": f"model_{side}",
            "evaluation_count": metrics.get("evaluation_count"),
            "judged_count": metrics.get("judged_count"),
        }
        display = f"AutoSxS {task or 'evaluation'}: model {side.upper()} vs {baseline or 'pre-generated responses'}"
        try:
            name = _import_one(
                model,
                pairwise_evaluation_metrics(metrics, side),
                {k: v for k, v in metadata.items() if v not in (None, "", [])},
                display[:128],
                api_endpoint,
            )
        except Exception as exc:  # noqa: BLE001 - any failure (auth, network, API) must not lose the run
            message = f"{type(exc).__name__}: {exc}".strip()
            if type(exc).__name__ == "DefaultCredentialsError":  # google.auth: the usual case off Google Cloud
                message = (
                    "DefaultCredentialsError: no Application Default Credentials to import it with (run `gcloud "
                    "auth application-default login`, or set AIPLATFORM_EMULATOR_HOST to a local fake registry)"
                )
            logger.error("could not import the ModelEvaluation of model %s (%s): %s", side.upper(), model, message)
            results[side] = {"model": model, "resource_name": "", "error": message}
            continue
        logger.info("imported ModelEvaluation %s for model %s (%s)", name, side.upper(), model)
        results[side] = {"model": model, "resource_name": name, "error": None}
    return results
