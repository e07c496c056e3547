"""The fake Model Registry answers google-cloud-aiplatform's real ModelServiceClient over HTTP."""

from __future__ import annotations

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform
from google.protobuf import json_format, struct_pb2

from autorater_pipelines.testing.model_registry import FakeModelRegistry

MODEL = "projects/p/locations/us-central1/models/123"


def _client(registry: FakeModelRegistry):
    return aiplatform.gapic.ModelServiceClient(
        transport="rest", credentials=AnonymousCredentials(), client_options={"api_endpoint": registry.url}
    )


def _evaluation(metrics: dict) -> dict:
    return {
        "display_name": "AutoSxS",
        "metrics_schema_uri": "gs://google-cloud-aiplatform/schema/modelevaluation/x.yaml",
        "metrics": json_format.ParseDict(metrics, struct_pb2.Value()),
    }


def test_import_then_get_through_the_real_client():
    with FakeModelRegistry(models=[MODEL]) as registry:
        client = _client(registry)
        created = client.import_model_evaluation(
            parent=f"{MODEL}@2", model_evaluation=_evaluation({"modelWinRate": 0.75, "truePositiveCount": 3})
        )
        assert created.name == f"{MODEL}/evaluations/1"
        (imported,) = registry.imports
        assert imported.parent == f"{MODEL}@2"
        assert imported.metrics == {"modelWinRate": 0.75, "truePositiveCount": 3}
        fetched = client.get_model_evaluation(name=created.name)
        assert fetched.display_name == "AutoSxS"
        assert json_format.MessageToDict(fetched._pb.metrics) == {"modelWinRate": 0.75, "truePositiveCount": 3.0}


def test_unknown_model_bad_metrics_and_injected_failures_are_api_errors():
    with FakeModelRegistry(models=[MODEL]) as registry:
        client = _client(registry)
        with pytest.raises(exceptions.NotFound, match="projects/p/locations/us-central1/models/999 not found"):
            client.import_model_evaluation(
                parent="projects/p/locations/us-central1/models/999", model_evaluation=_evaluation({"x": 1})
            )
        with pytest.raises(exceptions.BadRequest, match="metrics must be an object of numbers"):
            client.import_model_evaluation(parent=MODEL, model_evaluation=_evaluation({"x": "high"}))
        registry.fail_next(1, status=403, message="caller lacks aiplatform.modelEvaluations.import")
        with pytest.raises(exceptions.Forbidden, match="modelEvaluations.import"):  # PermissionDenied is one
            client.import_model_evaluation(parent=MODEL, model_evaluation=_evaluation({"x": 1}))
        with pytest.raises(exceptions.NotFound):
            client.get_model_evaluation(name=f"{MODEL}/evaluations/7")
        assert registry.imports == []
