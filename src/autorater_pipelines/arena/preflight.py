"""The one check of an arena run: :func:`validate_run`, before any model call.

Used by ``autorater run arena`` (before the run), ``autorater submit`` and the pipeline's first step
(:func:`autorater_pipelines.arena.steps.prepare_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.arena import prepare
from autorater_pipelines.arena.candidates import CandidateStage
from autorater_pipelines.arena.pairs import judge_call_count
from autorater_pipelines.arena.params import ArenaParams
from autorater_pipelines.evaluation.model_checks import probe_model_endpoint
from autorater_pipelines.evaluation.parameters import ValidatedRun, check_model_spec
from autorater_pipelines.pairwise.order import is_identical
from autorater_pipelines.pairwise.preference import refuse_probability_preference
from autorater_pipelines.pairwise.settings import SOURCE, check_verdict_settings

__all__ = ["call_count_note", "validate_run"]

_LARGE = 10_000
"""Judge calls above which the count note suggests ``pairing: sampled``."""


def validate_run(
    params: Mapping[str, Any] | ArenaParams,
    *,
    readable: Callable[[str], bool] | None = None,
    project: str = "",
    probe_endpoint: bool = False,
    dataset: Any = None,
) -> ValidatedRun:
    """Check a whole arena run before any model call: parameters, judge model, export target and data.

    Args:
        params: The pipeline parameters (names as in the template).
        readable: Which files and URIs to read from here; None = all (``submit --dry-run`` reads local files).
        project: The job's project when ``params`` leaves ``project`` empty.
        probe_endpoint: Open a TCP connection (no request) to the judge's explicit ``base_url``.
        dataset: Rows already read (an :class:`autorater_pipelines.io.Dataset`), used instead of reading
            ``evaluation_dataset``.

    Returns:
        The converted parameters, the pair examples (``rows``) when the dataset was read, and notes (the first
        says how many judge calls the run makes).

    Raises:
        InputError: the first problem found, naming the parameter (and file, row and column for data).
    """
    run = ArenaParams.parse(params, source="parameters")
    notes: list[str] = []
    task = prepare.check_prompt_setup(run, readable=readable)
    notes.extend(task.unread_notes())
    check_verdict_settings(task, run.autorater_parameters)
    refuse_probability_preference(run.autorater_parameters, "arena")
    judges = [(f"autorater_panel[{i}]", s) for i, s in enumerate(run.autorater_panel)]  # a panel judges instead
    for source, spec in judges or [("autorater_model", run.judge_model)]:
        check_model_spec(
            spec,
            run.autorater_parameters,
            source,
            project=run.project or project,
            location=run.location,
            readable=readable,
            notes=notes,
            options_source=SOURCE,
        )
        if probe_endpoint:
            probe_model_endpoint(
                spec, run.autorater_parameters, SOURCE, project=run.project or project, location=run.location
            )
    for name, candidate in sorted(run.models.items()):
        stage = CandidateStage.for_model(name, candidate, project=run.project or project, location=run.location)
        stage.check(readable=readable, notes=notes)
        if probe_endpoint:
            stage.probe()
    if run.judgments_format == "bigquery":
        io.parse_destination_prefix(run.bigquery_destination_prefix)
    sources = [] if dataset is not None else [p.strip() for p in run.evaluation_dataset.split(",") if p.strip()]
    unread = [p for p in sources if readable is not None and not readable(p)]
    if unread:
        io.check_sources(run.evaluation_dataset)
        notes.append(
            f"evaluation_dataset {', '.join(unread)} not read from here: its columns, ids and the number of judge "
            "calls are checked by the pipeline's first step"
        )
        return ValidatedRun(run, None, notes)
    examples = prepare.build_pair_examples(run, task, dataset)
    model_pairs = len({(e["model_a"], e["model_b"]) for e in examples})
    prompt_count = len({prepare.prompt_key(e, run.id_columns) for e in examples})
    identical = sum(is_identical(e, run.autorater_parameters) for e in examples)
    notes.insert(
        0, call_count_note(run, len(examples), model_pairs=model_pairs, prompts=prompt_count, identical=identical)
    )
    if run.models:
        notes.insert(
            1,
            f"{len(run.models) * prompt_count:,} generation calls: {len(run.models)} models "
            f"({', '.join(sorted(run.models))}) × {prompt_count:,} prompts",
        )
    return ValidatedRun(run, examples, notes)


def call_count_note(
    run: ArenaParams,
    pair_count: int,
    *,
    model_pairs: int | None = None,
    prompts: int | None = None,
    identical: int = 0,
) -> str:
    """``N judge calls: P pairs (M model pairs × K prompts) × S samples…``, with a hint towards ``pairing: sampled``.

    ``pair_count`` counts the (prompt, model pair) examples; ``model_pairs`` and ``prompts`` (when known) say
    what they are made of; ``identical`` of them have the same response twice and, with ``identical_responses:
    "tie"``, make no call (counted out, and said). With ``models`` the responses are generated later, so the count
    is an upper bound then (said). The hint is added for a large ``pairing: all`` run.
    """
    settings = run.autorater_parameters
    samples = settings.sampling_count
    tie = settings.identical_responses == "tie"
    calls = judge_call_count(pair_count - identical, samples)
    flip = run.autorater_parameters.flip
    orders = ", both orders" if flip is True and samples > 1 else ", one order per pair" if flip == "random" else ""
    if run.pairing == "sampled" and prompts is not None:  # the drawn pairs differ by prompt (a pair drawn twice once)
        n = run.opponents_per_prompt
        made_of = (
            f"{n} opponent{'s' if n != 1 else ''} per model and prompt, {len(run.model_names)} models × "
            f"{prompts:,} prompts"
        )
    elif model_pairs is not None and prompts is not None:
        made_of = f"{model_pairs:,} model pairs of {len(run.model_names)} models × {prompts:,} prompts"
    else:
        made_of = f"of {len(run.model_names)} models"
    at_most = "at most " if tie and run.models else ""
    note = (
        f"{at_most}{calls:,} judge calls: {pair_count:,} pairs ({made_of}, pairing {run.pairing!r}) × {samples} "
        f"samples{orders}"
    )
    if identical:
        note += f"; {identical:,} identical {'pair' if identical == 1 else 'pairs'} tied without a call"
    elif at_most:
        note += "; pairs whose generated responses are identical are tied without a call (identical_responses: tie)"
    if run.pairing == "all" and calls > _LARGE:
        note += (
            '; to judge fewer, set "pairing": "sampled" with "opponents_per_prompt" (e.g. 2 opponents per model '
            'and prompt) or "pairing": "baseline"'
        )
    return note
