"""The arena prepare stage: check the dataset, render the judge's prompt parameters, build the pair examples.

A pair example (one JSONL line per judged pair and prompt) is what AutoSxS's judge step judges as a row: the
prompt's id columns, ``model_a``, ``model_b`` (names sorted, :mod:`~autorater_pipelines.arena.pairs`), every
rendered autorater prompt parameter, ``response_a`` and ``response_b`` (the two models' responses; for a model of
``models``, None and its rendered prompt in ``model_<side>_prompt`` (+ ``model_<side>_system_instruction``), filled
by the generation step, :mod:`~autorater_pipelines.arena.candidates`) and, with ``flip: "random"``, ``flipped``
(:mod:`~autorater_pipelines.pairwise.order`). The judge
step's id columns are the prompt's id columns + ``model_a``, ``model_b``, so its replay lines are keyed by them,
``flipped`` and ``sample_index``.

Validation is complete before anything is written: ids present and unique, every response column present and
every response non-empty text, every template (the judge's and every generated model's prompt) renders for every row.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.arena.pairs import pairs_for_prompt
from autorater_pipelines.arena.params import ArenaParams
from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise import order, tasks
from autorater_pipelines.pairwise import prompt_parameters as prompts
from autorater_pipelines.pairwise.responses import compile_model_prompt, given_response

__all__ = ["build_pair_examples", "check_prompt_setup", "prompt_key"]

logger = logging.getLogger(__name__)

_RESERVED = frozenset(
    {
        "response_a",
        "response_b",
        "choice",
        "samples",
        "explanation",
        "confidence",
        "model_a_prompt",
        "model_b_prompt",
        "model_a_system_instruction",
        "model_b_system_instruction",
        "inference_error_a",
        "inference_error_b",
        "jurors",
        "panel_vote",
        "panel_preference_a",
    }
)
"""Field names of the arena's judgments (a panel's ``jurors``, ``panel_vote``, ``panel_preference_a`` included):
id columns may not use them."""


def prompt_key(example: dict[str, Any], id_columns: list[str]) -> str:
    """A prompt's canonical key: the JSON list of its id values (the bootstrap resamples prompts by it)."""
    return json.dumps([example[c] for c in id_columns], ensure_ascii=False, default=str)


def check_prompt_setup(run: ArenaParams, *, readable: Callable[[str], bool] | None = None) -> tasks.TaskDefinition:
    """Check the task and the autorater prompt parameters (no evaluation data read).

    ``readable`` says which files and URIs a custom task's few-shot dataset may be read from (None = all).

    Raises:
        InputError: an unknown task, a missing or unknown prompt parameter, or an id column named like a field of
            the judgments.
    """
    task_def = tasks.get_task(run.task, dict(run.experimental_args), readable=readable)
    if run.autorater_parameters.flip_column is not None:
        raise InputError(
            f"flip_column {run.autorater_parameters.flip_column!r} gives the recorded order of an AutoSxS row; "
            'arena pairs are built by the pipeline: use flip true or "random"',
            source="autorater_parameters",
        )
    given = run.autorater_prompt_parameters
    tasks.check_prompt_parameters(task_def, run.task, given)
    for i, column in enumerate(run.id_columns):
        if column in _RESERVED:
            raise InputError(
                f"column name {column!r} is also a field of the judgments; rename the column in the dataset",
                source=f"id_columns[{i}]",
            )
    return task_def


def build_pair_examples(
    run: ArenaParams, task_def: tasks.TaskDefinition, dataset: io.Dataset | None = None
) -> list[dict[str, Any]]:
    """Read the dataset (unless given), check it, and build every pair example (module docstring), prompt by prompt.

    Raises:
        InputError: unreadable data, a missing column, a missing or duplicate id, a template that fails on a row,
            an empty response or one that is not text — naming the file, row and column.
    """
    dataset = dataset if dataset is not None else io.read_dataset(run.evaluation_dataset)
    io.require_columns(dataset, {f"response_columns[{name!r}]": c for name, c in run.response_columns.items()})
    io.check_unique_ids(dataset, run.id_columns)
    compiled = prompts.compile_prompt_parameters(
        dict(run.autorater_prompt_parameters),
        available_columns=dataset.columns,
        source_name="autorater_prompt_parameters",
        extra_variables=task_def.template_variables,
    )
    model_prompts = {
        name: compile_model_prompt(
            candidate.prompt_parameters,
            dataset.columns,
            task_def.template_variables,
            source=f"models[{name!r}].prompt_parameters",
            subject=f"model {name!r}",
        )
        for name, candidate in sorted(run.models.items())
    }
    models = run.model_names
    examples = []
    for index, row in enumerate(dataset.rows):
        where = dataset.location(index)
        ids = {c: row[c] for c in run.id_columns}
        rendered = compiled.render(row, location=where)
        responses: dict[str, dict[str, Any]] = {
            m: {
                "": given_response(
                    row.get(c),
                    subject=f"model {m!r}",
                    parameter=f"response_columns[{m!r}]",
                    column=c,
                    where=where,
                    empty="every row needs a response from every model",
                )
            }
            for m, c in run.response_columns.items()
        }
        for name, prompt in model_prompts.items():
            text = prompt.render(row, location=where)
            responses[name] = {"": None, "prompt": text.get("prompt", text.get("contents"))}
            if "system_instruction" in text:
                responses[name]["system_instruction"] = text["system_instruction"]
        pairs = pairs_for_prompt(
            models,
            run.pairing,
            baseline=run.baseline,
            opponents_per_prompt=run.opponents_per_prompt,
            seed=run.seed,
            prompt_key=prompt_key(ids, run.id_columns),
        )
        for model_a, model_b in pairs:
            example = {**ids, "model_a": model_a, "model_b": model_b, **rendered}
            for side, model in (("a", model_a), ("b", model_b)):
                example.update(
                    {f"response_{side}" if k == "" else f"model_{side}_{k}": v for k, v in responses[model].items()}
                )
            examples.append(example)
    seed = run.autorater_parameters.settings().get("seed")
    order.assign_orders(
        examples,
        run.autorater_parameters,
        id_columns=[*run.id_columns, "model_a", "model_b"],
        seed=run.seed if seed is None else seed,
    )
    logger.info(
        "prepared %d pairs of %d models on %d prompts from %s",
        len(examples),
        len(models),
        len(dataset.rows),
        dataset.uri or dataset.source_name,
    )
    return examples
