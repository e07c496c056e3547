"""Helpers of the report tests: run outputs built with the library entry points the pipeline components call.

Each builder writes the files ``autorater run`` leaves in ``--output-dir``: AutoSxS ``judgments.jsonl``,
``error_messages.jsonl``, ``metrics.json``; Gecko ``rubrics.jsonl``, ``validations.jsonl``,
``results.jsonl``, ``error_messages.jsonl``, ``metrics.json``.
"""

from __future__ import annotations

import html.parser
import importlib.util
import io as _io
import json
import sys
from pathlib import Path

from autorater_pipelines import autosxs, io
from autorater_pipelines.gecko import steps as gecko_steps

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
GECKO_QUICKSTART = REPO / "examples" / "gecko_quickstart"
QUIET = {"cache_dir": "off", "progress": False}


def autosxs_run(out: Path, params: dict) -> Path:
    """Prepare, judge and aggregate as the autosxs pipeline does; write its output files into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    examples = autosxs.prepare_examples(
        evaluation_dataset=params["evaluation_dataset"],
        task=params["task"],
        id_columns=params["id_columns"],
        autorater_prompt_parameters=params["autorater_prompt_parameters"],
        response_column_a=params["response_column_a"],
        response_column_b=params["response_column_b"],
        human_preference_column=params.get("human_preference_column", ""),
    )
    autosxs.judge_examples(
        examples=examples,
        task=params["task"],
        id_columns=params["id_columns"],
        autorater_model=params["autorater_model"],
        autorater_parameters={**params.get("autorater_parameters", {}), **QUIET},
        judgments_path=str(out / "judgments.jsonl"),
        error_messages_path=str(out / "error_messages.jsonl"),
    )
    autosxs.aggregate_judgments(
        judgments=io.read_jsonl(str(out / "judgments.jsonl")),
        human_preference_column=params.get("human_preference_column", ""),
        metrics_path=str(out / "metrics.json"),
    )
    return out


def quickstart_params(tmp: Path, *, drop_replay_ids=(), drop_replay_keys=(), responses: dict | None = None) -> dict:
    """The README quickstart's parameters, optionally without some recordings or with other responses.

    ``drop_replay_ids`` drops every recording of a row (an ERROR row); ``drop_replay_keys`` drops the
    recordings of ``(question_id, flipped)`` pairs (a row judged in one presentation order only).
    """
    params = json.loads((QUICKSTART / "params.json").read_text())
    rows = io.read_jsonl(str(QUICKSTART / "dataset.jsonl"))
    for row in rows:
        row.update((responses or {}).get(row["question_id"], {}))
    replay = [
        r
        for r in io.read_jsonl(str(QUICKSTART / "replay.jsonl"))
        if r["question_id"] not in drop_replay_ids and (r["question_id"], r["flipped"]) not in drop_replay_keys
    ]
    io.write_jsonl(str(tmp / "dataset.jsonl"), rows)
    io.write_jsonl(str(tmp / "replay.jsonl"), replay)
    params.update(evaluation_dataset=str(tmp / "dataset.jsonl"), autorater_model=f"replay/{tmp / 'replay.jsonl'}")
    return params


def gecko_run(out: Path, params: dict) -> Path:
    """Rubrics, validation and scoring as the gecko pipeline does; write its output files into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    common = {"id_columns": params["id_columns"], "media_column": params["media_column"]}
    gecko_steps.check_run({**params, "rubric_generation_parameters": QUIET}, str(out / "rows.jsonl"))
    gecko_steps.rubrics_for_rows(
        rows_path=str(out / "rows.jsonl"),
        id_columns=params["id_columns"],
        prompt_column=params.get("prompt_column", ""),
        rubrics_column=params.get("rubrics_column", ""),
        rubric_generation_model=params.get("rubric_generation_model", ""),
        rubric_generation_parameters=QUIET,
        rubrics_path=str(out / "rubrics.jsonl"),
        errors_path=str(out / "rubric_errors.jsonl"),
    )
    gecko_steps.validate_media(
        rubrics_path=str(out / "rubrics.jsonl"),
        validator_model=params["validator_model"],
        validator_parameters={**params.get("validator_parameters", {}), **QUIET},
        validations_path=str(out / "validations.jsonl"),
        errors_path=str(out / "validation_errors.jsonl"),
        **common,
    )
    gecko_steps.score_validations(
        validations_path=str(out / "validations.jsonl"),
        id_columns=params["id_columns"],
        scoring=params.get("scoring"),
        earlier_error_paths=[str(out / "rubric_errors.jsonl"), str(out / "validation_errors.jsonl")],
        results_path=str(out / "results.jsonl"),
        error_messages_path=str(out / "error_messages.jsonl"),
        metrics_path=str(out / "metrics.json"),
    )
    # intermediate files of the steps, not outputs of a run: a run's output directory holds none of them
    for name in ("rows.jsonl", "rubric_errors.jsonl", "validation_errors.jsonl"):
        (out / name).unlink()
    return out


def _png(color: tuple[int, int, int]) -> bytes:
    from PIL import Image

    buffer = _io.BytesIO()
    Image.new("RGB", (64, 48), color).save(buffer, format="PNG")
    return buffer.getvalue()


def _qa(qid, question, qtype, answer="yes", dependencies=(), choices=("yes", "no")):
    return {
        "question_id": qid,
        "question": question,
        "question_type": qtype,
        "choices": list(choices),
        "answer": answer,
        "dependencies": list(dependencies),
    }


def mixed_gecko_params(tmp: Path, *, write: bool = True) -> dict:
    """Four rows covering what the report shows: keyword markup, a local image, a gs:// image, a wrong
    answer masking its child, an unparseable answer, a missing answer (scored 0), and a row whose rubric
    is invalid (an error row). ``write=False``: the parameters of data already written into ``tmp``."""
    rows = [
        {
            "id": "r1",
            "prompt": "A red <b>car</b> next to a tree",
            "image": str(tmp / "red.png"),
            "rubric": {
                "keywords": "A {1}[red] {2}[car] next to a {3}[tree]",
                "qas": [
                    {**_qa("1", "Is there a car?", "object"), "keyword_id": 2},
                    {**_qa("2", "Is the car red?", "color", dependencies=["1"]), "keyword_id": 1},
                    {**_qa("3", "Is there a tree?", "object"), "keyword_id": 3},
                ],
            },
        },
        {
            "id": "r2",
            "prompt": "Two dogs on a sofa",
            "image": "gs://bucket/images/two dogs.png",
            "rubric": {
                "qas": [
                    _qa("1", "Are there dogs?", "animal"),
                    _qa("2", "Are the dogs on a sofa?", "spatial", dependencies=["1"]),
                    _qa("3", "How many dogs?", "counting", answer="2", choices=("1", "2", "3", "4")),
                ]
            },
        },
        {
            "id": "r3",
            "prompt": "A blue bird",
            "image": str(tmp / "red.png"),
            "rubric": {"qas": [_qa("1", "Is there a bird?", "animal"), _qa("2", "Is the bird blue?", "color")]},
        },
        {"id": "r4", "prompt": "A lamp", "image": str(tmp / "red.png"), "rubric": {"qas": "not a list"}},
    ]
    replay = [
        {"id": "r1", "question_id": "1", "response": "no"},
        {"id": "r1", "question_id": "2", "response": "yes"},
        {"id": "r1", "question_id": "3", "response": "Yes."},
        {"id": "r2", "question_id": "1", "response": "yes"},
        {"id": "r2", "question_id": "2", "response": "it is hard to say"},
        {"id": "r2", "question_id": "3", "response": "c"},
        {"id": "r3", "question_id": "1", "response": "yes"},  # question 2 has no recording: missing
    ]
    if write:
        (tmp / "red.png").write_bytes(_png((220, 30, 30)))
        io.write_jsonl(str(tmp / "gecko.jsonl"), rows)
        io.write_jsonl(str(tmp / "gecko_replay.jsonl"), replay)
    return {
        "evaluation_dataset": str(tmp / "gecko.jsonl"),
        "id_columns": ["id"],
        "prompt_column": "prompt",
        "media_column": "image",
        "rubrics_column": "rubric",
        "validator_model": f"replay/{tmp / 'gecko_replay.jsonl'}",
        "validator_parameters": {"questions_per_call": 1},
        "scoring": {"dependency_masking": True, "missing_answer_policy": "zero"},
    }


def load_example(name: str):
    """A module of ``examples/`` (not a package: loaded by path)."""
    path = REPO / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class NumberParser(html.parser.HTMLParser):
    """Collects ``data-key`` → (``data-value``, shown text) of the report's numbers, and element ids."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: dict[str, list[tuple[object, str]]] = {}
        self.ids: list[str] = []
        self._open: list[tuple[str, object, list[str]]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if "data-key" in attrs:
            self._open.append((attrs["data-key"], json.loads(attrs["data-value"]), []))

    def handle_data(self, data):
        for _, _, text in self._open:
            text.append(data)

    def handle_endtag(self, tag):
        if self._open and tag in ("span", "td"):
            key, value, text = self._open.pop()
            self.numbers.setdefault(key, []).append((value, "".join(text).strip()))


def parse_numbers(page: str) -> NumberParser:
    parser = NumberParser()
    parser.feed(page)
    return parser


def metric_value(metrics: dict, key: str):
    """``metrics[key]``, with dotted keys reaching into nested dicts (``accuracy_by_question_type.color``)."""
    value = metrics
    if key.startswith("accuracy_by_question_type."):
        parts = key.split(".", 1)
    elif key.startswith("final_score_by_group.groups."):  # final_score_by_group.groups.<group>.mean_final_score
        parts = ["final_score_by_group", "groups", *key.removeprefix("final_score_by_group.groups.").rsplit(".", 1)]
    else:
        parts = [key]
    for part in parts:
        value = value[part]
    return value
