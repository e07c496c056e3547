"""ModelEvaluations written to Model Registry models: metrics per side, and failures that do not lose a run."""

from __future__ import annotations

import pytest

from autorater_pipelines.autosxs import model_registry
from autorater_pipelines.autosxs.model_registry import import_pairwise_evaluations, pairwise_evaluation_metrics
from autorater_pipelines.testing.model_registry import FakeModelRegistry

MODEL_A = "projects/p/locations/us-central1/models/111@3"
MODEL_B = "projects/p/locations/europe-west4/models/222"

# Alignment over 10 rows where both chose A or B: TP 4 (both A), FP 1 (autorater A, human B),
# FN 2 (autorater B, human A), TN 3 (both B).
METRICS = {
    "evaluation_count": 12,
    "judged_count": 11,
    "autorater_model_a_win_rate": 5 / 11,
    "autorater_model_b_win_rate": 5 / 11,
    "human_preference_model_a_win_rate": 0.5,
    "human_preference_model_b_win_rate": 1 / 3,
    "true_positive_count": 4,
    "false_positive_count": 1,
    "false_negative_count": 2,
    "true_negative_count": 3,
    "alignment_count": 10,
    "accuracy": 0.7,
    "precision": 0.8,
    "recall": 4 / 6,
    "f1_score": 8 / 11,
    "cohens_kappa": 0.4,
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("projects/p/locations/us-central1/models/111", True),
        ("projects/p/locations/us-central1/models/111@3", True),
        ("vertex/projects/p/locations/us-central1/models/111", True),
        ("projects/p/locations/us-central1/endpoints/9", False),
        ("publishers/google/models/gemini-2.0-flash-001", False),
        ("gemini-2.5-flash", False),
        ("", False),
    ],
)
def test_is_registry_model(spec, expected):
    assert model_registry.is_registry_model(spec) is expected


def test_metrics_seen_from_model_a_and_from_model_b():
    a = pairwise_evaluation_metrics(METRICS, "a")
    assert a == pytest.approx(
        {
            "modelWinRate": 5 / 11,
            "baselineModelWinRate": 5 / 11,
            "humanPreferenceModelWinRate": 0.5,
            "humanPreferenceBaselineModelWinRate": 1 / 3,
            "truePositiveCount": 4,
            "falsePositiveCount": 1,
            "falseNegativeCount": 2,
            "trueNegativeCount": 3,
            "accuracy": 0.7,
            "precision": 0.8,
            "recall": 4 / 6,
            "f1Score": 8 / 11,
            "cohensKappa": 0.4,
        }
    )
    b = pairwise_evaluation_metrics(METRICS, "b")
    # Model B positive: TP = both chose B (3), FP = autorater B / human A (2), FN = autorater A / human B (1).
    assert b == pytest.approx(
        {
            "modelWinRate": 5 / 11,
            "baselineModelWinRate": 5 / 11,
            "humanPreferenceModelWinRate": 1 / 3,
            "humanPreferenceBaselineModelWinRate": 0.5,
            "truePositiveCount": 3,
            "falsePositiveCount": 2,
            "falseNegativeCount": 1,
            "trueNegativeCount": 4,
            "accuracy": 0.7,
            "precision": 3 / 5,
            "recall": 3 / 4,
            "f1Score": 2 / 3,
            "cohensKappa": 0.4,
        }
    )


def test_without_human_labels_only_win_rates_are_written():
    metrics = {"autorater_model_a_win_rate": 0.25, "autorater_model_b_win_rate": 0.5, "evaluation_count": 4}
    assert pairwise_evaluation_metrics(metrics, "b") == {"modelWinRate": 0.5, "baselineModelWinRate": 0.25}
    assert pairwise_evaluation_metrics({"autorater_model_a_win_rate": None}, "a") == {}


def test_imports_into_each_registry_model_through_the_fake():
    with FakeModelRegistry(models=[MODEL_A.split("@")[0], MODEL_B]) as registry:
        results = import_pairwise_evaluations(
            model_a=MODEL_A,
            model_b=MODEL_B,
            metrics=METRICS,
            task="question_answering",
            evaluation_dataset="gs://b/a.jsonl, gs://b/b.jsonl",
            judgments_uri="gs://b/root/judgments",
            api_endpoint=registry.url,
        )
    assert [i.parent for i in registry.imports] == [MODEL_A, MODEL_B]
    assert results == {
        "a": {
            "model": MODEL_A,
            "resource_name": "projects/p/locations/us-central1/models/111/evaluations/1",
            "error": None,
        },
        "b": {
            "model": MODEL_B,
            "resource_name": "projects/p/locations/europe-west4/models/222/evaluations/2",
            "error": None,
        },
    }
    first = registry.imports[0].evaluation
    assert first["metricsSchemaUri"] == model_registry.PAIRWISE_METRICS_SCHEMA_URI
    assert first["metrics"]["truePositiveCount"] == 4 and registry.imports[1].metrics["truePositiveCount"] == 3
    assert first["metadata"] == {
        "evaluation_dataset_path": ["gs://b/a.jsonl", "gs://b/b.jsonl"],
        "row_based_metrics_path": "gs://b/root/judgments",
        "task": "question_answering",
        "baseline_model": MODEL_B,
        "evaluated_as": "model_a",
        "evaluation_count": 12,
        "judged_count": 11,
    }


def test_a_failed_import_is_an_error_message_and_other_models_still_get_theirs(monkeypatch):
    with FakeModelRegistry(models=[MODEL_B]) as registry:
        for name, value in registry.env.items():
            monkeypatch.setenv(name, value)
        registry.fail_next(1, status=403, message="Permission 'aiplatform.modelEvaluations.import' denied")
        results = import_pairwise_evaluations(model_a=MODEL_B, model_b=MODEL_A, metrics=METRICS)
    assert results["a"]["resource_name"] == ""
    assert results["a"]["error"].startswith(("PermissionDenied: 403", "Forbidden: 403"))
    assert "aiplatform.modelEvaluations.import" in results["a"]["error"]
    # model A's model (111) does not exist in this registry: its import fails too, with the API's reason
    assert results["b"]["resource_name"] == "" and "NotFound: 404" in results["b"]["error"]


def test_a_transient_failure_is_retried():
    with FakeModelRegistry(models=[MODEL_B]) as registry:
        registry.fail_next(2, status=503, message="The service is currently unavailable.")
        results = import_pairwise_evaluations(
            model_a="gemini-2.5-flash", model_b=MODEL_B, metrics=METRICS, api_endpoint=registry.url
        )
    assert results["b"]["error"] is None and results["b"]["resource_name"].endswith("/evaluations/1")


def test_publisher_models_and_endpoints_get_no_evaluation():
    assert import_pairwise_evaluations(model_a="gemini-2.5-flash", model_b="openai/x", metrics=METRICS) == {}
