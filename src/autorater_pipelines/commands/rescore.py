"""``autorater rescore OUT --params JSON``: recompute metrics from existing judgments or results, no model calls.

By default the re-scored files replace those in OUT, each old file kept as ``<name>.<n>.<ext>``
(``metrics.1.json`` is the run's own, ``metrics.2.json`` the first re-scoring's …), and an existing
``report.html`` is kept as ``report.<n>.html`` and rebuilt (a file that would not change is not rewritten);
with ``--output-dir DIR`` OUT is left untouched and DIR receives a complete
output directory (a DIR holding another run is refused before anything is written; in a DIR holding an
earlier re-scoring of the same rows every replaced file is kept as a version). Options are documented in
:mod:`autorater_pipelines.report._rescore`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from typing import Any

_HELP_PARAMS = "JSON file, or an inline JSON object, of re-scoring options (listed below)"

OPTIONS_HELP = """\
re-scoring options (--params); an option left out keeps its latest value (the last re-scoring of OUT,
else the run's); the run used the default unless it set the option:
  AutoSxS
    ties_as_half             true/false (default false): a tie counts as half a win for each model
    include_incomplete       true/false (default false): count the rows judged in one presentation order
                             only ("complete": false in judgments.jsonl) in the win rates and alignment;
                             false leaves them out and counts them in one_order_only_count
    human_preference_column  the column of human labels to align with, "" = none
                             (default: the run's column)
    evaluation_dataset       the original dataset, to read another human_preference_column from
                             (default: none; labels come from judgments.jsonl)
    id_columns               the id columns to join evaluation_dataset on
                             (default: detected from the files)
  Gecko
    scoring                  merged over the run's scoring options:
                               dependency_masking         true/false (default false)
                               logprob_weighting          true/false (default false)
                               missing_answer_policy      "error" (default), "zero" or "skip"
                               unparseable_answer_policy  "skip" (default) or "zero"
                               group_by                   a column, "" = none (default ""): mean
                                                          final_score per value, e.g. "t2i_model"
    id_columns               the row id columns (default: detected from the files)
  Arena (refits the leaderboard from judgments.jsonl)
    bootstrap_rounds         prompt-bootstrap rounds of the intervals, 0 = none (default 100)
    seed                     seed of the bootstrap (default 0)
    style_control            true/false (default false): length and Markdown-density covariates
                             (score_style_controlled and the style coefficients)
    baseline                 the model scored 0, "" = scores centred at mean 0 (default "")
    ties                     "half" (default) or "rao_kupper"
    strong_verdict_weight    battles a strong verdict (A>>B) counts as (default 3)
    id_columns               the prompt id columns (default: the run's)

examples:
  autorater rescore out/quickstart --params '{"ties_as_half": true}'
  autorater rescore out/quickstart --params '{"include_incomplete": true}' --output-dir out/qs-all
  autorater rescore out/gecko --params '{"scoring": {"unparseable_answer_policy": "zero"}}'
  autorater rescore out/dsg --params '{"scoring": {"group_by": "t2i_model"}}'
  autorater rescore out/arena --params '{"bootstrap_rounds": 1000, "seed": 7, "style_control": true}'
"""
"""The options of ``--params`` with their defaults (``autorater rescore --help``); a test checks it against the
option models."""


def register(sub: Any) -> None:
    """Add the ``rescore`` subcommand."""
    p = sub.add_parser(
        "rescore",
        help="recompute metrics from existing judgments or results with other options (no model calls)",
        description="Recompute a finished run's metrics.json (and the rows that change with it) from its\n"
        "judgments or results, without any model call, and print which figures changed.",
        epilog=OPTIONS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("out", metavar="OUT", help="output directory of a finished run (`autorater run --output-dir`)")
    p.add_argument("--params", required=True, help=_HELP_PARAMS)
    p.add_argument(
        "--output-dir",
        default=None,
        help="write the re-scored outputs here and leave OUT untouched (default: replace the files in OUT, "
        "keeping every replaced version as <name>.<n>.<ext>, n = 1, 2, ...)",
    )
    p.set_defaults(func=run)


def _show(value: Any) -> str:
    from autorater_pipelines.report import ABSENT

    if value is ABSENT:
        return ABSENT
    if isinstance(value, float):
        return f"{value:.6g}"
    return json.dumps(value) if value is not None else "—"


def run(args: argparse.Namespace) -> int:
    """Re-score, write the files, print what changed."""
    from autorater_pipelines.commands._common import load_params
    from autorater_pipelines.errors import InputError
    from autorater_pipelines.report import (
        REPORT_FILE,
        changes,
        given_options,
        rescore,
        write_report,
        write_rescore,
    )
    from autorater_pipelines.report._out_dir import marked_files, record_outputs
    from autorater_pipelines.report._rescore import is_version_copy
    from autorater_pipelines.report._rescore_write import keep_version

    if args.params.lstrip().startswith("{"):
        from autorater_pipelines.io._jsondup import DuplicateKeyError, duplicate_key_message, unique_keys

        try:
            params = json.loads(args.params, object_pairs_hook=unique_keys)
        except DuplicateKeyError as exc:
            raise InputError(duplicate_key_message(exc.key), source="--params") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg} at column {exc.colno}", source="--params") from None
        if not isinstance(params, dict):
            raise InputError(f"must be a JSON object, got {type(params).__name__}", source="--params")
    else:
        params = load_params(args.params)
    result = rescore(args.out, params)
    target = args.output_dir or args.out
    written = write_rescore(result, args.out, args.output_dir)
    diff = [
        (key, old, new)
        for key, old, new in changes(result.previous, result.metrics)
        if not key.startswith("rescore_options.") and _show(old) != _show(new)  # never "17.3024 → 17.3024"
    ]
    print(f"Re-scored {result.kind} outputs in {os.path.abspath(args.out)} with no model calls.")
    print("options: " + json.dumps(given_options(result.metrics)))
    if diff:
        width = max(len(k) for k, _, _ in diff)
        print(f"{len(diff)} figure(s) changed:")
        for key, old, new in diff:
            print(f"  {key:<{width}}  {_show(old)} → {_show(new)}")
    else:
        print("no figure changed")
    if os.path.isfile(os.path.join(args.out, REPORT_FILE)) and written:  # nothing written: the report stands
        names = [REPORT_FILE]
        if os.path.isfile(os.path.join(target, REPORT_FILE)):  # kept as report.<n>.html, as every replaced file
            written.append(keep_version(target, REPORT_FILE))
            names.append(os.path.basename(written[-1]))
        written.append(write_report(target))
        if marked_files(target) is not None:
            record_outputs(target, names, "autorater rescore")
    files = [os.path.basename(p) for p in written]
    kept = [n for n in files if is_version_copy(n) or re.search(r"\.\d+\.html$", n)]  # report.1.html too
    if files:
        line = f"wrote in {os.path.abspath(target)}: " + ", ".join(n for n in files if n not in kept)
        print(line + (f"; the earlier versions kept as {', '.join(kept)}" if kept else ""))
    else:
        print(f"nothing written: the files in {os.path.abspath(target)} already hold this re-scoring")
    return 0
