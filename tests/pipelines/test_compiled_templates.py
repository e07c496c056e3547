"""The checked-in templates are what the code compiles to, and every component uses one image."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from autorater_pipelines.components import IMAGE
from autorater_pipelines.pipelines import PIPELINE_NAMES, compile_pipelines

REPO = Path(__file__).resolve().parents[2]
GCPC_AUTOSXS_PARAMETERS = {
    "evaluation_dataset",
    "task",
    "id_columns",
    "autorater_prompt_parameters",
    "model_a",
    "model_b",
    "model_a_prompt_parameters",
    "model_b_prompt_parameters",
    "response_column_a",
    "response_column_b",
    "model_a_parameters",
    "model_b_parameters",
    "human_preference_column",
    "project",
    "location",
    "judgments_format",
    "bigquery_destination_prefix",
    "experimental_args",
    "encryption_spec_key_name",
}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compiled")
    compile_pipelines(str(out))
    return out


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("name", PIPELINE_NAMES)
def test_checked_in_template_matches_a_fresh_compile(name, fresh):
    checked_in = REPO / "compiled" / f"{name}.yaml"
    assert checked_in.exists(), "compiled/ is missing: run `autorater compile`"
    assert _load(checked_in) == _load(fresh / f"{name}.yaml"), (
        f"compiled/{name}.yaml is stale: regenerate it with `autorater compile` and commit it"
    )


@pytest.mark.parametrize("name", PIPELINE_NAMES)
def test_every_component_uses_the_one_image(name):
    spec = _load(REPO / "compiled" / f"{name}.yaml")
    images = {e["container"]["image"] for e in spec["deploymentSpec"]["executors"].values()}
    assert images == {IMAGE}


def test_compile_image_override(tmp_path):
    compile_pipelines(str(tmp_path), image="europe-docker.pkg.dev/p/r/autorater:1.2.3")
    for name in PIPELINE_NAMES:
        spec = _load(tmp_path / f"{name}.yaml")
        images = {e["container"]["image"] for e in spec["deploymentSpec"]["executors"].values()}
        assert images == {"europe-docker.pkg.dev/p/r/autorater:1.2.3"}


@pytest.mark.parametrize("name", PIPELINE_NAMES)
def test_every_input_and_output_has_a_description(name):
    spec = _load(REPO / "compiled" / f"{name}.yaml")
    missing = []
    for component_name, component in {"pipeline": spec["root"], **spec["components"]}.items():
        for section in ("inputDefinitions", "outputDefinitions"):
            for kind in ("parameters", "artifacts"):
                for key, value in (component.get(section, {}).get(kind) or {}).items():
                    if not value.get("description"):
                        missing.append(f"{component_name}.{section}.{key}")
    assert not missing, f"inputs/outputs without description: {missing}"


def test_autosxs_keeps_gcpc_parameter_names_and_outputs():
    root = _load(REPO / "compiled" / "autosxs.yaml")["root"]
    parameters = set(root["inputDefinitions"]["parameters"])
    assert GCPC_AUTOSXS_PARAMETERS <= parameters
    assert parameters - GCPC_AUTOSXS_PARAMETERS == {"autorater_model", "autorater_parameters"}
    outputs = root["outputDefinitions"]
    assert set(outputs["parameters"]) == {
        "model_a_evaluation_resource_name",
        "model_b_evaluation_resource_name",
        "evaluation_count",
        "evaluation_dataset_path",
    }
    assert set(outputs["artifacts"]) == {"judgments", "error_messages", "autosxs_metrics"}
    assert not root["inputDefinitions"]["parameters"]["autorater_prompt_parameters"].get("isOptional")
