"""A panel of judges: every juror judges every row alone, then the panel votes over the jurors' row verdicts.

``autorater_panel`` lists two or more model specs (jurors). Each juror runs the single-judge path
(:func:`autorater_pipelines.pairwise.judge.judge_shard`) with the same ``autorater_parameters`` (samples, flip,
verdict pattern, call options), its own model, response cache entries and quota (a model's calls are paced per
endpoint, as for one judge). A juror's row verdict is what AutoSxS gives with that juror alone; a juror whose
row lacks a verdict in either scheduled order (``complete`` False, or ``ERROR``) abstains on that row, as a
one-order row is left out of a single judge's rates (:func:`juror_vote`).

The panel's row verdict (:func:`panel_verdict`):

- ``majority`` (default): the verdict (``A``, ``B`` or ``TIE``) of a strict majority of the jurors that voted;
  no strict majority → ``TIE`` (a 1–1 split with one abstention is ``TIE``); every juror abstained → ``ERROR``.
- ``mean``: the mean of the voters' preferences for model A (``A`` = 1, ``TIE`` = 0.5, ``B`` = 0): above
  0.5 → ``A``, below → ``B``, exactly 0.5 → ``TIE`` (compared exactly, in halves); no voter → ``ERROR``.

Panel judgment row: the single-judge layout (:mod:`autorater_pipelines.pairwise.voting`) with ``choice`` the
panel's, ``confidence`` the share of voting jurors whose verdict is the panel's, ``complete`` True when a juror
voted, ``samples`` every juror's samples each naming its ``juror`` (the model spec), token counts summed over
jurors, plus ``panel_vote``, ``panel_preference_a`` (the voters' mean preference for A, None without voters)
and ``jurors``: one entry per juror in panel order ``{juror, choice, confidence, complete, incomplete_reason,
explanation, input_token_count, output_token_count}`` and every other judging field of the juror's own row
(pointwise scores, preference probabilities, ``identical_responses`` …).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pydantic

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation import DEFAULT_MODEL
from autorater_pipelines.evaluation.parameters import to_choice
from autorater_pipelines.models import model_identity
from autorater_pipelines.pairwise import tasks
from autorater_pipelines.pairwise.judge import JudgeSummary, judge_shard
from autorater_pipelines.pairwise.stages import Autorater

__all__ = [
    "PanelParameterChecks",
    "PANEL_SOURCE",
    "PANEL_VOTES",
    "Juror",
    "check_panel",
    "check_panel_vote",
    "judge_panel_shard",
    "juror_rows",
    "juror_vote",
    "panel_jurors",
    "panel_verdict",
]

PANEL_SOURCE = "autorater_panel"
PANEL_VOTES = ("majority", "mean")
"""Values of ``panel_vote`` (empty = ``majority``)."""

_PREFERENCE_HALVES = {"A": 2, "TIE": 1, "B": 0}
"""A verdict's preference for model A in halves (1, 0.5, 0), so the mean vote compares exactly."""

_JUROR_KEYS = ("choice", "confidence", "complete", "incomplete_reason", "explanation")


class Juror(Autorater):
    """One juror of the panel: an :class:`Autorater` whose messages name ``autorater_panel[<index>]``."""

    index: int

    @property
    def model_source(self) -> str:
        """``autorater_panel[<index>]``."""
        return f"{PANEL_SOURCE}[{self.index}]"


class PanelParameterChecks(pydantic.BaseModel):
    """The checks of ``autorater_panel`` and ``panel_vote``, shared by every pairwise pipeline's parameter model.

    A pipeline's model (AutoSxS's, the arena's) declares the fields ``autorater_model``, ``autorater_panel`` and
    ``panel_vote`` with its own descriptions and inherits these validators: the panel's shape when it is read
    (:func:`check_panel`), ``panel_vote`` (:func:`check_panel_vote`), and the conflicts once every field is read.
    """

    @pydantic.field_validator("autorater_panel", mode="before", check_fields=False)
    @classmethod
    def _panel(cls, value: Any) -> Any:
        return check_panel(value, autorater_model=DEFAULT_MODEL)  # shape here; the conflicts after all fields

    @pydantic.field_validator("panel_vote", mode="before", check_fields=False)
    @classmethod
    def _panel_vote(cls, value: Any) -> Any:
        return check_panel_vote("" if value is None else value)

    @pydantic.model_validator(mode="after")
    def _panel_conflicts(self) -> Any:
        fields = vars(self)
        check_panel(
            fields["autorater_panel"], autorater_model=fields["autorater_model"], panel_vote=fields["panel_vote"]
        )
        return self


def check_panel_vote(value: Any) -> str:
    """``panel_vote`` lower-cased; empty stays empty (= ``majority`` when a panel is given).

    Raises:
        InputError: not one of :data:`PANEL_VOTES`.
    """
    vote = to_choice(value, ("", *PANEL_VOTES))
    if vote not in ("", *PANEL_VOTES):
        raise InputError(f"unsupported panel_vote {value!r}; valid: {list(PANEL_VOTES)}", source="panel_vote")
    return str(vote)


def check_panel(panel: Any, *, autorater_model: str = "", panel_vote: str = "") -> list[str]:
    """The panel's model specs, stripped, after checking its shape (not the models: see :meth:`Juror.check`).

    An empty list means no panel (one judge, ``autorater_model``).

    Args:
        panel: ``autorater_panel`` as received: a list of model spec strings, or None.
        autorater_model: ``autorater_model``: must be empty or the pipeline's default when a panel is given.
        panel_vote: ``panel_vote``, after :func:`check_panel_vote`: set only with a panel.

    Raises:
        InputError: not a list, fewer than 2 jurors, an item that is not a non-empty string or names the same
            model as an earlier one (:func:`~autorater_pipelines.models.model_identity`: ``vertex/gemini-2.5-flash``
            is ``GEMINI-2.5-flash``; naming ``autorater_panel[i]`` and the earlier spec), a conflicting
            ``autorater_model``, or ``panel_vote`` without a panel.
    """
    if panel is None:
        panel = []
    if isinstance(panel, str) or not isinstance(panel, Sequence):
        raise InputError(
            f'must be a list of model specs like ["gemini-2.5-flash", "openai/gpt-4o"], got {panel!r}',
            source=PANEL_SOURCE,
        )
    if not panel:
        if panel_vote:
            raise InputError(
                f"is set to {panel_vote!r} but autorater_panel is empty: list the jurors' model specs in "
                "autorater_panel, or remove panel_vote to judge with autorater_model alone",
                source="panel_vote",
            )
        return []
    specs: list[str] = []
    identities: list[tuple[str, str]] = []
    for index, spec in enumerate(panel):
        source = f"{PANEL_SOURCE}[{index}]"
        if not isinstance(spec, str) or not spec.strip():
            raise InputError(f"model spec must be a non-empty string, got {spec!r}", source=source)
        identity = model_identity(spec)
        if identity in identities:
            first = identities.index(identity)
            raise InputError(
                f"{spec!r} is the same model as {PANEL_SOURCE}[{first}] ({specs[first]!r}): each juror must be a "
                "different model (specs are compared with the provider prefix resolved, the model name "
                "case-folded and a replay path resolved; one model counted twice would agree with itself)",
                source=source,
            )
        specs.append(spec.strip())
        identities.append(identity)
    if len(specs) < 2:
        raise InputError(
            f"a panel needs at least 2 jurors, got {specs!r}: to judge with one model set autorater_model instead",
            source=PANEL_SOURCE,
        )
    if autorater_model and autorater_model.strip() not in ("", DEFAULT_MODEL):
        raise InputError(
            f"{autorater_model!r} cannot be combined with autorater_panel: a panel run judges with its jurors only; "
            f"add {autorater_model!r} to autorater_panel, or leave autorater_model empty",
            source="autorater_model",
        )
    return specs


def panel_jurors(specs: Sequence[str], autorater: Autorater) -> list[Juror]:
    """One :class:`Juror` per spec, each with ``autorater``'s parameters, project and region."""
    return [
        Juror(model=spec, options=autorater.options, project=autorater.project, location=autorater.location, index=i)
        for i, spec in enumerate(specs)
    ]


def juror_vote(judgment: Mapping[str, Any]) -> str | None:
    """A juror's vote on a row: its choice (``A``, ``B``, ``TIE``), or None when it abstains.

    A juror abstains on a row it could not judge (``ERROR``) or judged in one scheduled order only
    (``complete`` False): the rows a single judge's rates leave out.
    """
    choice = judgment.get("choice")
    if choice not in ("A", "B", "TIE") or judgment.get("complete") is False:
        return None
    return str(choice)


_PANEL_KEYS = frozenset(
    {"choice", "confidence", "explanation", "complete", "incomplete_reason", "panel_vote", "panel_preference_a"}
    | {"jurors", "samples", "input_token_count", "output_token_count"}
)
"""The panel's own fields of a panel judgment row (the rest are the example's)."""


def juror_rows(
    judgments: Iterable[Mapping[str, Any]], juror: str, human_preference_column: str | None = None
) -> list[dict[str, Any]]:
    """One juror's judgment rows, rebuilt from the panel rows, as a run with that juror alone writes them.

    The example's fields (ids, responses, human label) with the juror's own verdict, judging fields, samples and
    tokens instead of the panel's.

    Raises:
        ValueError: a row holds no entry for ``juror``.
    """
    del human_preference_column  # kept with the example's other fields
    out = []
    for index, row in enumerate(judgments):
        entry = next((j for j in row.get("jurors") or [] if j.get("juror") == juror), None)
        if entry is None:
            raise ValueError(f"judgment row {index + 1} has no verdict of juror {juror!r}")
        rebuilt = {k: v for k, v in row.items() if k not in _PANEL_KEYS}
        rebuilt.update({k: v for k, v in entry.items() if k != "juror"})
        rebuilt["samples"] = [s for s in row.get("samples") or [] if s.get("juror") == juror]
        out.append(rebuilt)
    return out


def panel_verdict(votes: Sequence[str | None], vote: str = "majority") -> tuple[str, float | None, float | None]:
    """The panel's verdict on a row from its jurors' votes (None = abstained).

    Args:
        votes: Each juror's vote (``A``, ``B``, ``TIE``) or None.
        vote: ``majority`` (or empty) or ``mean``, as in the module docstring.

    Returns:
        ``(choice, confidence, preference_a)``: ``confidence`` is the share of voters whose vote is ``choice``
        and ``preference_a`` the voters' mean preference for model A; both None when nobody voted (``ERROR``).
    """
    cast = [v for v in votes if v is not None]
    if not cast:
        return "ERROR", None, None
    halves = sum(_PREFERENCE_HALVES[v] for v in cast)
    preference = halves / (2 * len(cast))
    if (vote or "majority") == "mean":
        choice = "A" if halves > len(cast) else "B" if halves < len(cast) else "TIE"
    else:
        label, count = Counter(cast).most_common(1)[0]
        choice = label if 2 * count > len(cast) else "TIE"
    return choice, sum(v == choice for v in cast) / len(cast), preference


def _explanation(vote: str, specs: Sequence[str], votes: Sequence[str | None], choice: str) -> str:
    tally = Counter(v for v in votes if v is not None)
    parts = [f"{label}×{tally[label]}" for label in ("A", "B", "TIE") if tally[label]]
    abstained = [s for s, v in zip(specs, votes, strict=True) if v is None]
    text = f"panel ({vote}) of {len(specs)} jurors: {', '.join(parts) or 'no votes'} → {choice}"
    return text + (f"; abstained: {', '.join(abstained)}" if abstained else "")


def _panel_row(
    example: Mapping[str, Any], specs: Sequence[str], rows: Sequence[Mapping[str, Any]], vote: str
) -> dict[str, Any]:
    votes = [juror_vote(r) for r in rows]
    choice, confidence, preference = panel_verdict(votes, vote)
    reason = None
    if choice == "ERROR":
        reason = "every juror abstained: " + "; ".join(
            f"{s}: {r.get('incomplete_reason') or r.get('explanation') or r.get('choice')}"
            for s, r in zip(specs, rows, strict=True)
        )
    jurors = []
    for spec, row in zip(specs, rows, strict=True):
        entry = {"juror": spec, **{k: row.get(k) for k in _JUROR_KEYS}}
        entry.update({k: v for k, v in row.items() if k not in example and k not in entry and k != "samples"})
        entry["input_token_count"] = row.get("input_token_count", 0)
        entry["output_token_count"] = row.get("output_token_count", 0)
        jurors.append(entry)
    return {
        **example,
        "choice": choice,
        "confidence": None if confidence is None else round(confidence, 6),
        "explanation": _explanation(vote, specs, votes, choice),
        "complete": choice != "ERROR",
        "incomplete_reason": reason,
        "panel_vote": vote,
        "panel_preference_a": None if preference is None else round(preference, 6),
        "jurors": jurors,
        "samples": [{**s, "juror": spec} for spec, row in zip(specs, rows, strict=True) for s in row["samples"]],
        "input_token_count": sum(j["input_token_count"] for j in jurors),
        "output_token_count": sum(j["output_token_count"] for j in jurors),
    }


def judge_panel_shard(
    examples: Sequence[Mapping[str, Any]],
    jurors: Sequence[Juror],
    task: tasks.TaskDefinition,
    id_columns: Sequence[str],
    *,
    panel_vote: str = "majority",
    judgments_path: str | None = None,
    error_messages_path: str | None = None,
    shard_count: int = 1,
    shard_index: int = 0,
    pace_dir: str | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], JudgeSummary]:
    """Judge prepared examples with every juror (one after the other), then vote over the jurors' verdicts.

    Each juror is :func:`~autorater_pipelines.pairwise.judge.judge_shard` with its own model (its own cache
    entries and pace; with ``pace_dir`` each juror shares its pace in ``<pace_dir>/juror-<i>``). Error rows are
    the jurors' own, each naming its ``juror``; ``row_judged``/``row_complete`` are the panel row's. An example
    with no response to judge gets its ``inference`` error rows once.

    Args:
        examples: Prepared examples, as for ``judge_shard``.
        jurors: The panel (:func:`panel_jurors`), at least 2.
        task: The task definition.
        id_columns: Id columns of the examples.
        panel_vote: ``majority`` (empty = majority) or ``mean``.
        judgments_path: Where to write the panel judgment rows as JSONL (atomically), or None.
        error_messages_path: Where to write error rows as JSONL (atomically), or None.
        shard_count: As for ``judge_shard``.
        shard_index: As for ``judge_shard``.
        pace_dir: As for ``judge_shard``; each juror uses its own subdirectory.

    Returns:
        ``(judgments, error_messages, summary)``: one panel judgment per example in input order; the summary's
        calls, retries and tokens are summed over jurors.

    Raises:
        InputError: bad parameters (naming the juror's ``autorater_panel[i]`` for its model).
        ModelCallError: as ``judge_shard`` (strict mode, SIGTERM), for the first juror that raised it.
    """
    vote = panel_vote or "majority"
    specs = [j.model for j in jurors]
    per_juror: list[list[dict[str, Any]]] = []
    errors: list[dict[str, Any]] = []
    summaries: list[JudgeSummary] = []
    for juror in jurors:
        try:
            judgments, juror_errors, summary = judge_shard(
                examples,
                juror,
                task,
                id_columns,
                shard_count=shard_count,
                shard_index=shard_index,
                pace_dir=f"{pace_dir.rstrip('/')}/juror-{juror.index}" if pace_dir else None,
            )
        except InputError as exc:
            if exc.source in (None, "model spec"):
                raise InputError(str(exc).removeprefix("model spec: "), source=juror.model_source) from None
            raise
        per_juror.append(judgments)
        summaries.append(summary)
        for row in juror_errors:
            if row.get("stage") == "inference":
                if juror.index == 0:
                    errors.append(row)
                continue
            errors.append({**row, "juror": juror.model})
    panel = [_panel_row(example, specs, [rows[k] for rows in per_juror], vote) for k, example in enumerate(examples)]
    by_ids = {_key(p, id_columns): p for p in panel}
    for row in errors:
        judged = by_ids.get(_key(row, id_columns))
        if judged is not None and "row_judged" in row:
            row["row_judged"] = judged["choice"] != "ERROR"
            if "row_complete" in row:
                row["row_complete"] = judged["complete"]
    if judgments_path:
        io.write_jsonl(judgments_path, panel)
    if error_messages_path:
        io.write_jsonl(error_messages_path, errors)
    summary = JudgeSummary(
        evaluation_count=len(panel),
        error_count=sum(p["choice"] == "ERROR" for p in panel),
        model_calls=sum(s.model_calls for s in summaries),
        cache_hits=sum(s.cache_hits for s in summaries),
        retries=sum(s.retries for s in summaries),
        input_tokens=sum(s.input_tokens for s in summaries),
        output_tokens=sum(s.output_tokens for s in summaries),
        not_called_count=max((s.not_called_count for s in summaries), default=0),
        stopped="; ".join(f"{spec}: {s.stopped}" for spec, s in zip(specs, summaries, strict=True) if s.stopped),
    )
    return panel, errors, summary


def _key(row: Mapping[str, Any], id_columns: Sequence[str]) -> tuple[str, ...]:
    return tuple(io.canonical_id_value(row.get(c)) for c in id_columns)
