"""``autorater params PIPELINE`` lists what PARAMS.json may hold, derived from the template and the parameter models.

Found by the newcomer trial: no command listed a pipeline's parameters.
"""

import json
import sys
import types
from pathlib import Path

import pytest
import yaml

from autorater_pipelines.autosxs.params import AutoraterParameters
from autorater_pipelines.cli import main
from autorater_pipelines.evaluation.parameters import Flag, ParameterModel
from autorater_pipelines.gecko.rubric_scoring import ScoringOptions
from autorater_pipelines.models import GenerateConfig

REPO = Path(__file__).resolve().parents[2]


def _template_inputs(name: str) -> dict:
    spec = yaml.safe_load((REPO / "compiled" / f"{name}.yaml").read_text())
    return spec["root"]["inputDefinitions"]["parameters"]


def _table(capsys, *argv: str) -> list[dict]:
    assert main(["params", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("pipeline", ["autosxs", "gecko"])
def test_every_template_parameter_is_listed_with_its_type_default_and_description(pipeline, capsys):
    inputs = _template_inputs(pipeline)
    table = {e["name"]: e for e in _table(capsys, pipeline)}
    assert set(table) == set(inputs)
    for name, spec in inputs.items():
        entry = table[name]
        assert entry["type"] == spec["parameterType"]
        assert entry["required"] is not spec.get("isOptional", False)
        assert entry.get("default", "(none)") == spec.get("defaultValue", "(none)")
        assert entry["description"] == " ".join(spec["description"].split())


def test_integer_defaults_are_shown_as_integers(capsys):
    # KFP stores an integer parameter's default as a double (defaultValue: 1.0 in compiled/arena.yaml)
    assert _template_inputs("arena")["opponents_per_prompt"]["defaultValue"] == 1.0
    table = {e["name"]: e for e in _table(capsys, "arena")}
    for name, default in {"opponents_per_prompt": 1, "seed": 0, "bootstrap_rounds": 100}.items():
        assert table[name]["type"] == "NUMBER_INTEGER" and type(table[name]["default"]) is int
        assert table[name]["default"] == default
    assert main(["params", "arena"]) == 0
    printed = capsys.readouterr().out
    assert "  opponents_per_prompt  (NUMBER_INTEGER, default 1)\n" in printed
    assert "  bootstrap_rounds  (NUMBER_INTEGER, default 100)\n" in printed


def test_dict_parameters_list_the_keys_their_parameter_model_accepts(capsys):
    autosxs = {e["name"]: e for e in _table(capsys, "autosxs")}
    keys = {k["name"]: k for k in autosxs["autorater_parameters"]["keys"]}
    assert set(AutoraterParameters.model_fields) | set(GenerateConfig.model_fields) == set(keys)
    assert (keys["sampling_count"]["default"], keys["flip"]["type"], keys["flip"]["default"]) == (
        2,
        'boolean | "random"',
        True,
    )
    assert keys["temperature"]["type"] == "number | null"
    assert keys["temperature"]["description"] == "Sampling temperature (provider default when None)."
    gecko = {e["name"]: e for e in _table(capsys, "gecko")}
    scoring = {k["name"]: k for k in gecko["scoring"]["keys"]}
    assert set(scoring) == set(ScoringOptions.model_fields)
    assert scoring["unparseable_answer_policy"]["type"] == '"skip" | "zero"'
    assert scoring["group_by"]["default"] == "" and "final_score_by_group" in scoring["group_by"]["description"]
    assert "keys" not in gecko["evaluation_dataset"]


def test_the_text_listing_shows_types_defaults_and_keys(capsys):
    assert main(["params", "gecko"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gecko: 21 parameters (2 required); PARAMS.json maps these names to values\n")
    assert "\n  evaluation_dataset  (STRING, required)\n" in out
    assert '\n  media_type  (STRING, default "image")\n' in out
    assert "\n      - dependency_masking  (boolean, default false)\n" in out
    # the order of the pipeline's parameter model, not the template's alphabetical one
    assert out.index("\n  evaluation_dataset ") < out.index("\n  bigquery_destination_prefix ")


def test_a_pipeline_appears_by_registration(tmp_path, monkeypatch, capsys):
    """A third pipeline (``arena``) is listed once it is registered and its spec names its parameter model."""
    import dataclasses

    from kfp import compiler, dsl

    from autorater_pipelines import registry

    @dsl.component(base_image="python:3.11")
    def battle(pairing: str, bootstrap_rounds: int) -> str:
        return pairing * bootstrap_rounds

    @dsl.pipeline(name="arena")
    def arena(evaluation_dataset: str, pairing: str = "all", bootstrap_rounds: int = 100, judge_parameters: dict = {}):  # noqa: B006
        """Arena.

        Args:
            evaluation_dataset: The prompts.
            pairing: Which pairs are judged.
            bootstrap_rounds: Rounds of the bootstrap.
            judge_parameters: Judge settings.
        """
        battle(pairing=pairing, bootstrap_rounds=bootstrap_rounds)

    template = tmp_path / "arena.yaml"
    compiler.Compiler().compile(arena, str(template))

    class JudgeParameters(ParameterModel):
        strong_verdict_weight: int = 3
        """Battles a strong verdict counts for."""
        style_control: Flag = False
        """Control for response length and Markdown."""

    class ArenaParams(ParameterModel):
        evaluation_dataset: str
        pairing: str = "all"
        bootstrap_rounds: int = 100
        judge_parameters: JudgeParameters = JudgeParameters()

    module = types.ModuleType("autorater_pipelines.arena.params")
    module.PARAMETERS = ArenaParams
    monkeypatch.setitem(sys.modules, "autorater_pipelines.arena.params", module)
    spec_module = types.ModuleType("autorater_pipelines.arena.spec")
    spec_module.SPEC = dataclasses.replace(
        registry.get("gecko"), name="arena", title="Arena", parameters="autorater_pipelines.arena.params:PARAMETERS"
    )
    monkeypatch.setitem(sys.modules, "autorater_pipelines.arena.spec", spec_module)
    monkeypatch.setitem(registry.SPEC_MODULES, "arena", "autorater_pipelines.arena.spec")
    table = {e["name"]: e for e in _table(capsys, "arena", "--template", str(template))}
    assert list(table) == ["evaluation_dataset", "pairing", "bootstrap_rounds", "judge_parameters"]
    assert (table["bootstrap_rounds"]["type"], table["bootstrap_rounds"]["default"]) == ("NUMBER_INTEGER", 100)
    assert table["pairing"]["description"] == "Which pairs are judged."
    keys = {k["name"]: k for k in table["judge_parameters"]["keys"]}
    assert keys["strong_verdict_weight"] == {
        "name": "strong_verdict_weight",
        "type": "integer",
        "default": 3,
        "description": "Battles a strong verdict counts for.",
    }


def test_an_unknown_pipeline_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit) as done:
        main(["params", "nope"])
    assert done.value.code == 2
    assert "invalid choice: 'nope' (choose from" in capsys.readouterr().err


def test_model_parameters_description_names_its_keys_and_says_which_aliases_are_accepted():
    import re

    from autorater_pipelines.autosxs.params import ModelParameters
    from autorater_pipelines.commands.params import parameter_table

    [row] = [p for p in parameter_table("autosxs") if p["name"] == "model_a_parameters"]
    keys = {k["name"] for k in row["keys"]}
    named = set(re.findall(r"`(\w+)`", row["description"]))
    assert {"max_output_tokens", "top_p"} <= named & keys  # the keys as listed below the description
    assert named - keys <= set(ModelParameters.ALIASES)  # any other spelling named is an accepted alias
    assert ModelParameters.model_validate({"maxOutputTokens": 5, "topP": 0.5}) == ModelParameters.model_validate(
        {"max_output_tokens": 5, "top_p": 0.5}
    )
