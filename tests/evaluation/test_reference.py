"""The generated parameter reference (docs/reference/parameters.md, rendered by docs/hooks.py at build time) says
what the templates and the parameter models say: every parameter, type and default; every key of the options dicts
that the models accept, with its default and range."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from autorater_pipelines.autosxs.params import AutoraterParameters, AutosxsParams, ModelParameters
from autorater_pipelines.evaluation.parameters import BOUNDS
from autorater_pipelines.evaluation.reference import (
    docstring_markdown,
    option_docs,
    parameter_docs,
    render_bounds_markdown,
    render_markdown,
)
from autorater_pipelines.gecko.params import GeckoParams, ValidatorParameters
from autorater_pipelines.gecko.scoring import ScoringOptions

REPO = Path(__file__).resolve().parents[2]
PIPELINES = {"autosxs": AutosxsParams, "gecko": GeckoParams}


def _inputs(pipeline: str) -> dict:
    spec = yaml.safe_load((REPO / "compiled" / f"{pipeline}.yaml").read_text())
    return spec["root"]["inputDefinitions"]["parameters"]


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_every_template_parameter_is_documented_with_its_type_and_default(pipeline):
    docs = {p.name: p for p in parameter_docs(str(REPO / "compiled" / f"{pipeline}.yaml"), PIPELINES[pipeline])}
    inputs = _inputs(pipeline)
    assert set(docs) == set(inputs)
    for name, item in inputs.items():
        assert docs[name].type == item["parameterType"]
        assert docs[name].description == item["description"] and docs[name].description
        assert docs[name].required == ("defaultValue" not in item and not item.get("isOptional"))
    assert docs["evaluation_dataset"].required and not docs["project"].required
    page = render_markdown(str(REPO / "compiled" / f"{pipeline}.yaml"), PIPELINES[pipeline])
    assert all(f"| `{name}` |" in page for name in inputs)


def test_the_options_dicts_are_the_fields_of_the_parameter_models():
    docs = {p.name: p for p in parameter_docs(str(REPO / "compiled" / "autosxs.yaml"), AutosxsParams)}
    with_options = {name for name, p in docs.items() if p.options}
    assert with_options == {"autorater_parameters", "model_a_parameters", "model_b_parameters"}
    gecko = {p.name for p in parameter_docs(str(REPO / "compiled" / "gecko.yaml"), GeckoParams) if p.options}
    assert gecko == {"rubric_generation_parameters", "validator_parameters", "scoring"}


@pytest.mark.parametrize("model", [AutoraterParameters, ModelParameters, ValidatorParameters])
def test_a_model_call_options_dict_lists_every_key_it_accepts(model):
    keys = [o.name for o in option_docs(model)]
    assert len(keys) == len(set(keys))
    aliases = set(model.ALIASES)
    # project and location are the pipeline's parameters, not keys to document in each dict
    assert set(keys) == set(model.valid_keys()) - aliases - {"project", "location"}
    assert keys[: len(model.model_fields)] == list(model.model_fields)  # the stage's own keys first


def test_keys_carry_their_default_range_and_description():
    sampling = {o.name: o for o in option_docs(AutoraterParameters)}["sampling_count"]
    assert (sampling.type, sampling.default) == ("integer", "2")
    assert sampling.bound == "an integer from 1 to 64" == BOUNDS["sampling_count"].describe()
    assert sampling.description.startswith("Samples per example")
    validator = {o.name: o for o in option_docs(ValidatorParameters)}
    assert validator["sampling_count"].default == "1"  # the same name, Gecko's own default
    assert validator["max_concurrency"].default == "32" and validator["max_concurrency"].bound
    structured = validator["structured_output"]
    assert structured.type == "one of `auto`, `json_schema`, `json_object`, `prompt`"
    assert "`json_schema`" in structured.description and "``" not in structured.description
    aliased = {o.name: o for o in option_docs(ModelParameters)}["max_output_tokens"]
    assert "`maxOutputTokens`" in aliased.description and "`max_tokens`" in aliased.description
    scoring = {o.name: o for o in option_docs(ScoringOptions)}
    assert list(scoring) == list(ScoringOptions.model_fields)
    assert scoring["missing_answer_policy"].type == "one of `error`, `zero`, `skip`"
    assert scoring["dependency_masking"].type == "true/false" and scoring["dependency_masking"].default == "false"


def test_the_bounds_table_has_every_bound():
    table = render_bounds_markdown()
    for name, bound in BOUNDS.items():
        assert f"| `{name}` | {bound.describe()} |" in table


def test_docstring_markup_becomes_markdown():
    text = "Uses ``max_tokens`` and :class:`~autorater_pipelines.models.GenerateConfig`\n    over lines."
    assert docstring_markdown(text) == "Uses `max_tokens` and `GenerateConfig` over lines."
