"""``autorater run`` on CSV datasets and on ids that differ only in type (issue 14 item 1, hostile-trial findings).

The quickstart's parameters and replayed judge, with the quickstart dataset written as CSV in a temporary
folder: every row is read (and counted) whatever the line endings, a byte-order mark, values that span lines
or a missing final newline; a record short of fields, text after a closing quote or a quote that never closes
refuses the run, naming the file and the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from autorater_pipelines.cli import main

pytestmark = [pytest.mark.pipeline, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
GECKO = REPO / "examples" / "gecko_quickstart"
HEADER = ["question_id", "question", "answer_model_a", "answer_model_b", "human_preference"]


def _quickstart_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (QUICKSTART / "dataset.jsonl").read_text(encoding="utf-8").splitlines()]


def _cell(value: str) -> str:
    """A CSV cell as a spreadsheet writes it: quoted (quotes doubled) only when it holds , " or a line end."""
    return '"' + value.replace('"', '""') + '"' if any(c in value for c in ',"\r\n') else value


def _csv(rows: list[dict[str, Any]], newline: str = "\n") -> str:
    lines = [",".join(HEADER)] + [",".join(_cell(str(row[c])) for c in HEADER) for row in rows]
    return newline.join(lines) + newline


def _run(pipeline: str, params: dict[str, Any], tmp_path: Path, name: str = "out") -> tuple[int, Path]:
    params_path = tmp_path / f"{name}-params.json"
    params_path.write_text(json.dumps(params), encoding="utf-8")
    out = tmp_path / name
    return main(["run", pipeline, "--params", str(params_path), "--output-dir", str(out), "--quiet"]), out


def _autosxs(tmp_path: Path, dataset: Path, name: str = "out") -> tuple[int, Path]:
    params = json.loads((QUICKSTART / "params.json").read_text(encoding="utf-8"))
    params["evaluation_dataset"] = str(dataset)
    params["autorater_model"] = f"replay/{QUICKSTART / 'replay.jsonl'}"
    return _run("autosxs", params, tmp_path, name)


def _judgments(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    return {j["question_id"]: j for j in map(json.loads, lines)}


def test_quickstart_as_csv_with_bom_crlf_multiline_values_and_no_final_newline(tmp_path, capsys):
    rows = _quickstart_rows()
    assert len(rows) == 6
    rows[0]["question"] = "What is the boiling point of water\r\nat sea level in Celsius?"  # spans two lines
    rows[2]["answer_model_a"] = 'Say "Bonjour", politely.'  # quotes and a comma inside a quoted value
    rows[4]["answer_model_b"] = ""  # a,,c: an empty cell that is present is ""
    text = _csv(rows, newline="\r\n").removesuffix("\r\n")  # no final newline
    dataset = tmp_path / "data.csv"
    dataset.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert text.count("\r\n") == 7 and ",," in text  # header + 6 records on 8 lines, the last unterminated

    code, out = _autosxs(tmp_path, dataset)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "read 6 data row(s) from evaluation_dataset" in captured.out
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["dataset_rows_read"] == 6 and metrics["evaluation_count"] == 6
    judgments = _judgments(out)
    assert sorted(judgments) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert judgments["q1"]["inference_instruction"] == "What is the boiling point of water\r\nat sea level in Celsius?"
    assert judgments["q5"]["response_b"] == ""
    assert judgments["q3"]["response_a"] == 'Say "Bonjour", politely.'
    assert judgments["q3"]["response_b"] == rows[2]["answer_model_b"]

    # The same rows as JSONL give the same verdicts.
    jsonl = tmp_path / "data.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out_jsonl = _autosxs(tmp_path, jsonl, "out-jsonl")
    assert code == 0
    assert {k: j["choice"] for k, j in _judgments(out_jsonl).items()} == {k: j["choice"] for k, j in judgments.items()}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # A record short of a field used to be padded with "" and judged.
        (lambda t: t.replace(",B\n", "\n", 1), r", line 3: has 4 fields but the header has 5 columns \['question_id'"),
        (lambda t: t.replace(",B\n", ",B,\n", 1), r", line 3: has 6 fields but the header has 5 columns"),
        # "a1"x used to be read as a1x.
        (lambda t: t.replace("q2,", '"q2"x,', 1), r", line 3: has text after the closing quote of a quoted value: "),
        # A quote that never closes: the line its value starts on, after a value that spans lines.
        (
            lambda t: (
                t.replace("q6,What gas do plants absorb", 'q6,"What gas do plants\nabsorb')
                .replace("photosynthesis?,", 'photosynthesis?",')
                .replace("Oxygen.,A", '"Oxygen.,A')
            ),
            r", line 8: a quoted value opens \(\"\) on this line \('absorb for photosynthesis\?\",Carbon dioxide "
            r"\(CO2\)\.,\"Oxygen\.,A', in the record that starts on line 7\) and never closes",
        ),
    ],
    ids=["short", "long", "text-after-quote", "unclosed-quote"],
)
def test_a_malformed_csv_record_refuses_the_run_naming_file_and_line(tmp_path, capsys, edit, message):
    text = _csv(_quickstart_rows())
    assert text.splitlines()[2].startswith("q2,") and text.splitlines()[2].endswith(",B")
    assert text.splitlines()[6] == "q6,What gas do plants absorb for photosynthesis?,Carbon dioxide (CO2).,Oxygen.,A"
    dataset = tmp_path / "data.csv"
    dataset.write_text(edit(text), encoding="utf-8")
    code, out = _autosxs(tmp_path, dataset)
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert captured.err.startswith(f"error: {dataset}") and "Traceback" not in captured.err + captured.out
    assert re.search(message, captured.err), captured.err
    assert not out.exists()


def _gecko(tmp_path: Path, dataset: str) -> tuple[int, Path]:
    params = json.loads((GECKO / "params.json").read_text(encoding="utf-8"))
    params["evaluation_dataset"] = dataset
    for key in ("rubric_generation_model", "validator_model"):
        params[key] = params[key].replace("replay/examples/", f"replay/{REPO}/examples/")
    return _run("gecko", params, tmp_path)


def test_gecko_ids_1_and_string_1_are_duplicates_across_a_jsonl_and_a_csv_file(tmp_path, capsys):
    image = GECKO / "images" / "red_circle.png"
    (tmp_path / "a.jsonl").write_text(json.dumps({"id": 1, "prompt": "A red circle", "image": str(image)}) + "\n")
    (tmp_path / "b.csv").write_text(f"id,prompt,image\n1,A red circle,{image}\n", encoding="utf-8")
    code, out = _gecko(tmp_path, f"{tmp_path / 'a.jsonl'},{tmp_path / 'b.csv'}")
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and "Traceback" not in err
    assert "duplicate id {'id': 1} and {'id': '1'} (ids are compared as text" in err
    assert f"{tmp_path / 'a.jsonl'} line 1 and {tmp_path / 'b.csv'} line 2" in err

    # Control: the same two kinds of file with ids the replayed models know run, and both rows count.
    square = GECKO / "images" / "blue_squares.png"
    (tmp_path / "a.jsonl").write_text(json.dumps({"id": "red-circle", "prompt": "A red circle", "image": str(image)}))
    (tmp_path / "b.csv").write_text(f"id,prompt,image\r\ntwo-squares,Two blue squares,{square}", encoding="utf-8")
    code, out = _gecko(tmp_path, f"{tmp_path / 'a.jsonl'},{tmp_path / 'b.csv'}")
    assert code == 0, capsys.readouterr().err
    assert "read 2 data row(s) from evaluation_dataset" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["evaluation_count"] == 2 and metrics["rows_scored"] == 2
