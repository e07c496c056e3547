"""Turn the public TIFA and DSG evaluation data into Gecko datasets and replay files, and score them.

The shared data (``<repo>/../shared/data``, see its README) holds real recorded VQA answers and human
ratings. This script converts them — into a directory you choose, never into the repository — to:

- a dataset JSONL with supplied rubrics (``rubrics_column="rubric"``), and
- a validator replay JSONL keyed by the id columns and ``question_id`` (docs/gecko.md "Gecko replay files"),

then runs the core Gecko stages on them (``parse_supplied_rubrics`` → ``validate`` with
``replay/…`` and ``questions_per_call=1`` → ``score``), prints the numbers to compare with the
published ones, and writes ``tifa_params.json`` / ``dsg_params.json`` for the gecko pipeline::

    python examples/gecko_public_data.py --shared ../shared/data --out /tmp/gecko-public
    autorater run gecko --params /tmp/gecko-public/tifa_params.json --output-dir /tmp/gecko-public/tifa

TIFA sample (Hu et al., arXiv 2303.11897): per-image scores 1.0 and 0.625, mean 0.8125.
DSG TIFA160 (Cho et al., arXiv 2310.18235): Spearman 0.463 / Kendall 0.380 against mean human
Likert with dependency masking, 0.464 without; images without answers score 0 (DSG's protocol,
``missing_answer_policy="zero"``).
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "DSG_SCORING",
    "PublicData",
    "convert_dsg_tifa160",
    "convert_tifa_sample",
    "dsg_notes",
    "main",
    "pipeline_params",
    "run",
]

TIFA_ID_COLUMNS = ["id"]
DSG_ID_COLUMNS = ["t2i_model", "item_id"]
DSG_SCORING = {"dependency_masking": True, "missing_answer_policy": "zero", "unparseable_answer_policy": "zero"}
"""DSG's protocol: masked dependencies; a missing or unparseable answer scores 0."""
_EXPECTED_LOGS = ("rubric of ", "not_recorded", "further failed requests are not logged one by one")
"""Library warnings the public data always produce (summarized by :func:`dsg_notes`, not printed one by one)."""


class PublicData(NamedTuple):
    """Paths written by a conversion and the Gecko parameters that go with them."""

    dataset: Path
    replay: Path
    id_columns: list[str]
    media_column: str
    rubrics_column: str


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def convert_tifa_sample(shared_data: str | Path, out_dir: str | Path) -> PublicData:
    """Convert ``tifa-sample/`` to a dataset (2 rows, 19 supplied questions) and a replay file.

    Rows: ``id``, ``caption`` (the prompt), ``image`` (absolute path of the shared JPEG), ``rubric``
    (``{"qas": [...]}`` with ``question_id`` ``"1"``…, ``question_type`` = TIFA's ``element_type``,
    ``choices`` and ``answer`` as given). Replay: the recorded ``multiple_choice_vqa`` answer per
    ``(id, question_id)``.
    """
    src = Path(shared_data) / "tifa-sample"
    out = Path(out_dir)
    questions = json.loads((src / "sample_question_answers.json").read_text())
    images = json.loads((src / "sample_imgs.json").read_text())
    recorded = json.loads((src / "sample_evaluation_result.json").read_text())["question_details"]
    by_image: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        by_image[q["id"]].append(q)
    rows, replay = [], []
    for image_id, qs in by_image.items():
        qas = []
        for n, q in enumerate(qs, start=1):
            qas.append(
                {
                    "question_id": str(n),
                    "question": q["question"],
                    "question_type": q["element_type"],
                    "choices": q["choices"],
                    "answer": q["answer"],
                }
            )
            answer = recorded[image_id][q["question"]]["multiple_choice_vqa"]
            replay.append({"id": image_id, "question_id": str(n), "response": answer})
        rows.append(
            {
                "id": image_id,
                "caption": qs[0]["caption"],
                "image": str((src / images[image_id]).resolve()),
                "rubric": {"qas": qas},
            }
        )
    data = PublicData(out / "tifa_dataset.jsonl", out / "tifa_replay.jsonl", TIFA_ID_COLUMNS, "image", "rubric")
    _write_jsonl(data.dataset, rows)
    _write_jsonl(data.replay, replay)
    return data


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def convert_dsg_tifa160(shared_data: str | Path, out_dir: str | Path) -> PublicData:
    """Convert ``dsg-tifa160/`` to 800 rows (``t2i_model`` × ``item_id``) and a replay file.

    Rows: ``t2i_model``, ``item_id``, ``prompt``, ``image`` (a ``gs://`` placeholder: the images are
    not public, and replay never reads media), ``human_likert`` (mean worker rating, 1–5),
    ``rubric`` (the DSG questions: ``question_id`` = proposition id, expected ``yes``,
    ``question_type`` = ``category_broad``, ``dependencies`` = DSG's raw ``dependency`` text, e.g.
    ``"1,2"`` or the malformed ``"1, outside"``). Replay: mPLUG's answer per
    ``(t2i_model, item_id, question_id)``, TIFA160 split only.
    """
    src = Path(shared_data) / "dsg-tifa160"
    out = Path(out_dir)
    questions: dict[str, list[dict[str, str]]] = defaultdict(list)
    prompts: dict[str, str] = {}
    for q in _read_csv(src / "dsg-tifa160-questions.csv"):
        questions[q["item_id"]].append(q)
        prompts[q["item_id"]] = q["text"]
    ratings: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in _read_csv(src / "tifa160-likert-anns.csv"):
        ratings[(r["t2i_model"], r["item_id"])].append(float(r["answer"]))
    rows = []
    for (model, item), values in sorted(ratings.items()):
        qas = [
            {
                "question_id": q["proposition_id"],
                "question": q["question_natural_language"],
                "question_type": q["category_broad"],
                "choices": ["yes", "no"],
                "answer": "yes",
                "dependencies": q["dependency"],
            }
            for q in questions[item]
        ]
        rows.append(
            {
                "t2i_model": model,
                "item_id": item,
                "prompt": prompts[item],
                "image": f"gs://dsg-tifa160-images/{model}/{item}.png",
                "human_likert": sum(values) / len(values),
                "rubric": {"qas": qas},
            }
        )
    replay = [
        {
            "t2i_model": a["t2i_model"],
            "item_id": a["item_id"],
            "question_id": a["question_id"],
            "response": a["answer"],
        }
        for a in _read_csv(src / "mplug_dsg.csv")
        if a["dsg_prompt_split"] == "tifa160"
    ]
    data = PublicData(out / "dsg_dataset.jsonl", out / "dsg_replay.jsonl", DSG_ID_COLUMNS, "image", "rubric")
    _write_jsonl(data.dataset, rows)
    _write_jsonl(data.replay, replay)
    return data


def pipeline_params(data: PublicData, **overrides: Any) -> dict[str, Any]:
    """Parameters of the gecko pipeline (``autorater run gecko --params``) for a converted data set.

    Supplied rubrics, the recorded answers replayed one question per call; ``overrides`` win
    (e.g. ``scoring={"dependency_masking": True, "missing_answer_policy": "zero"}`` for DSG).
    """
    params: dict[str, Any] = {
        "evaluation_dataset": str(data.dataset),
        "id_columns": data.id_columns,
        "media_column": data.media_column,
        "media_type": "image",
        "rubrics_column": data.rubrics_column,
        "validator_model": f"replay/{data.replay}",
        "validator_parameters": {"questions_per_call": 1, "sampling_count": 1, "progress": False},
    }
    params.update(overrides)
    return params


def run(data: PublicData, *, media_type: str = "image", scoring: dict[str, Any] | None = None):
    """Run supplied rubrics → replayed validation (one question per call) → scoring.

    Returns:
        ``(rubric errors, validation errors, ScoreResult)``.

    """
    from autorater_pipelines import gecko

    rows = gecko.load_dataset(
        str(data.dataset),
        id_columns=data.id_columns,
        media_column=data.media_column,
        rubrics_column=data.rubrics_column,
    )
    rubrics = gecko.parse_supplied_rubrics(rows, id_columns=data.id_columns, rubrics_column=data.rubrics_column)
    validated = gecko.validate(
        rubrics.rows,
        id_columns=data.id_columns,
        media_column=data.media_column,
        media_type=media_type,
        validator=gecko.Validator.of(
            model=f"replay/{data.replay}", parameters={"questions_per_call": 1, "progress": False}
        ),
    )
    return (
        rubrics.errors,
        validated.errors,
        gecko.score(validated.rows, id_columns=data.id_columns, options=scoring),
    )


class _Held(logging.Handler):
    """Holds the library's log records; those the public data always produce are summarized, others printed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if any(mark in record.getMessage() for mark in _EXPECTED_LOGS):
            self.records.append(record)
        else:
            print(f"{record.levelname}: {record.getMessage()}")


def dsg_notes(results: list[dict[str, Any]], errors: list[dict[str, Any]]) -> str:
    """One line on what DSG's public data lack, and why the warnings about it are expected.

    ``results`` / ``errors``: a DSG TIFA160 scoring (:func:`run`). Rows whose recorded mPLUG run has no
    answer for some questions are named; rubric rows whose DSG ``dependency`` text was ignored are counted.
    """
    missing: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for e in errors:
        if e.get("error_kind") == "not_recorded":
            missing[tuple(e.get("question_ids") or [])].append(f"{e['t2i_model']}/{e['item_id']}")
    unanswered = "; ".join(f"questions {', '.join(q)} of {', '.join(rows)}" for q, rows in missing.items())
    ignored = [[w for w in r.get("rubric_warnings") or [] if "dependency" in w] for r in results]
    warned = [w for w in ignored if w]
    count = sum(len(w) for w in warned)
    return (
        f"expected, from the public data: mPLUG's recorded answers lack {unanswered or 'nothing'} "
        f"(scored 0, DSG's protocol: missing_answer_policy zero); {count} dependencies in {len(warned)} rubric "
        "rows point to the question itself, to a question the item does not have or to text ('1, outside') "
        "and are ignored (listed in each result row's rubric_warnings)"
    )


def _write_params(path: Path, params: dict[str, Any]) -> None:
    path.write_text(json.dumps(params, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> None:
    """Convert both data sets into ``--out`` and print the reproduced numbers."""
    from scipy import stats

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shared",
        default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"),
        help="the shared data directory (default: <repo>/../shared/data)",
    )
    parser.add_argument("--out", required=True, help="directory for the converted files")
    args = parser.parse_args(argv)
    held = _Held()
    logging.getLogger("autorater_pipelines").addHandler(held)  # no per-row warning lines on stderr

    tifa = convert_tifa_sample(args.shared, args.out)
    _write_params(Path(args.out) / "tifa_params.json", pipeline_params(tifa))
    _, _, result = run(tifa)
    print(
        "TIFA sample: final scores",
        {r["id"]: r["final_score"] for r in result.results},
        "mean",
        result.metrics["mean_final_score"],
    )
    print("  accuracy by type", result.metrics["accuracy_by_question_type"])

    dsg = convert_dsg_tifa160(args.shared, args.out)
    _write_params(Path(args.out) / "dsg_params.json", pipeline_params(dsg, scoring=DSG_SCORING))
    for masking in (True, False):
        _, _, result = run(dsg, scoring={**DSG_SCORING, "dependency_masking": masking})
        x = [r["final_score"] for r in result.results]
        y = [r["human_likert"] for r in result.results]
        print(
            f"DSG TIFA160 masking={masking}: rows {len(x)}, Spearman {stats.spearmanr(x, y).statistic:.3f}, "
            f"Kendall {stats.kendalltau(x, y).statistic:.3f}, rows scored 0 for missing answers "
            f"{sum(1 for e in result.errors if e.get('handled_as') == 'scored_zero')}"
        )
    print(dsg_notes(result.results, result.errors))


if __name__ == "__main__":
    main()
