"""``autorater report OUT``: one self-contained HTML report of a finished run (no model calls)."""

from __future__ import annotations

import argparse
import os
from typing import Any


def register(sub: Any) -> None:
    """Add the ``report`` subcommand."""
    p = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a finished run's outputs (no model calls)",
        description="Turn a finished run's outputs (AutoSxS judgments.jsonl, Gecko results.jsonl or Arena "
        "leaderboard.jsonl with judgments.jsonl, with metrics.json and error_messages.jsonl; detected from the "
        "files present) into one HTML file with figures, metrics and a browsable table of every row. The file "
        "needs no network to open.",
    )
    p.add_argument("out", metavar="OUT", help="output directory of a finished run (`autorater run --output-dir`)")
    p.add_argument("--output", default=None, help="where to write the HTML (default: OUT/report.html)")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --output (or OUT/report.html) that no autorater run wrote (default: refuse)",
    )
    p.add_argument("--max-rows", type=int, default=2000, help="most rows in the browsable table (default: %(default)s)")
    p.add_argument(
        "--id-columns", default=None, help="Gecko: comma-separated id columns (default: from error_messages.jsonl)"
    )
    p.add_argument("--prompt-column", default=None, help="Gecko: column of the generation prompt (default: detected)")
    p.add_argument("--media-column", default=None, help="Gecko: column of the image or video (default: detected)")
    p.add_argument(
        "--group-by",
        default=None,
        metavar="COLUMN",
        help="Gecko: show the mean final_score per value of this column, e.g. t2i_model (default: the run's "
        "scoring.group_by, which also puts the breakdown in metrics.json; none)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the report and print where it is."""
    from autorater_pipelines import registry
    from autorater_pipelines.errors import InputError
    from autorater_pipelines.report import REPORT_FILE, detect_kind, write_report
    from autorater_pipelines.report._out_dir import check_replaceable, marked_files, record_outputs

    if args.max_rows < 1:
        raise InputError(f"must be at least 1, got {args.max_rows}", source="--max-rows")
    if args.output and args.output.lower().endswith((".json", ".jsonl")):
        raise InputError(
            f"{args.output!r} is named like a run's output file; the report is HTML: give a .html name",
            source="--output",
        )
    kind = detect_kind(args.out)
    target = args.output or os.path.join(args.out, REPORT_FILE)
    # As `autorater run`: replace only a report an autorater run wrote (listed in the marker beside it).
    check_replaceable(target, "--output" if args.output else "OUT", force=args.force)
    path = write_report(
        args.out,
        target,
        max_rows=args.max_rows,
        id_columns=[c.strip() for c in args.id_columns.split(",") if c.strip()] if args.id_columns else None,
        prompt_column=args.prompt_column,
        media_column=args.media_column,
        group_by=args.group_by,
    )
    directory = os.path.dirname(os.path.abspath(path))
    if not args.output or marked_files(directory) is not None:  # listed: a later report or run may replace it
        record_outputs(directory, [os.path.basename(path)], "autorater report")
    print(f"{registry.get(kind).title} report: {os.path.abspath(path)}")
    return 0
