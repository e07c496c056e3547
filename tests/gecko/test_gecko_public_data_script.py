"""``python examples/gecko_public_data.py`` as the README runs it: a few lines, the expected gaps summarized."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_script_prints_the_figures_and_one_line_on_the_expected_gaps(shared_data, tmp_path):
    script = REPO / "examples" / "gecko_public_data.py"
    done = subprocess.run(
        [sys.executable, str(script), "--shared", str(shared_data), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Before: ~70 warning lines on stderr, one per rubric with an ignored dependency and per missing answer.
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 7, done.stdout
    assert "DSG TIFA160 masking=True: rows 800, Spearman 0.463, Kendall 0.380" in done.stdout
    (notes,) = [line for line in lines if line.startswith("expected, from the public data:")]
    # mplug_dsg.csv has no answer for questions 2-9 of item tifa160_134, for each of the 5 image models.
    models = ["mini-dalle", "sd1dot1", "sd1dot5", "sd2dot1", "vq-diffusion"]
    rows = ", ".join(f"{m}/tifa160_134" for m in models)
    assert f"lack questions 2, 3, 4, 5, 6, 7, 8, 9 of {rows} (scored 0" in notes
    assert "65 dependencies in 30 rubric rows" in notes
    # The parameter file follows DSG's whole protocol, as the README states it.
    scoring = json.loads((tmp_path / "dsg_params.json").read_text())["scoring"]
    assert scoring == {"dependency_masking": True, "missing_answer_policy": "zero", "unparseable_answer_policy": "zero"}
