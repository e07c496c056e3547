"""The Gecko report: final_score distribution, accuracy per question type, per-row drill-down, errors.

Headline numbers come from ``metrics.json`` (:func:`autorater_pipelines.gecko.summarize`); the
drill-down shows each result row (:func:`autorater_pipelines.gecko.rubric_scoring.score_row`) with its
media: local images (and inline ``inline_data``) are embedded as JPEG thumbnails re-encoded by Pillow, shown in
each row's line (no need to open it), anything else — videos, ``gs://`` and ``http(s)`` media — is a link, so the
page never fetches anything and no file of the data is put in the page as it is. Bars per question type carry
95 % intervals (``metrics.json`` ``accuracy_by_question_type_ci_lower``/``_upper``, else computed from the rows
the same way); the rubric warnings of the run (``rubric_warnings`` of each row) are listed; with a grouping column
(``scoring.group_by`` of the run, or ``group_by`` here) the mean final_score per group is drawn with intervals.
"""

from __future__ import annotations

import base64
import io
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko._groups import scores_by_group, type_intervals
from autorater_pipelines.gecko._rubric_fields import _KEYWORD  # the {n}[...] keyword markup
from autorater_pipelines.gecko.candidates import CANDIDATE_COLUMN
from autorater_pipelines.gecko.media import MediaError, mime_type_for, resolve_media
from autorater_pipelines.report._figures import COLORS, FigureHTML, bar_with_intervals, figure, histogram
from autorater_pipelines.report._gecko_candidates import candidates_context
from autorater_pipelines.report._outputs import SCORE_FIELDS, RunOutputs, gecko_id_columns
from autorater_pipelines.report._stats import Stat, flagged_first, fmt, metric

__all__ = ["PROMPT_COLUMNS", "gecko_context", "keywords_html", "media_view"]

PROMPT_COLUMNS = ("prompt", "caption", "text", "description")
"""Columns tried, in order, for the generation prompt when ``prompt_column`` is not given."""

THUMBNAIL_PIXELS = 320
"""Longest side of embedded thumbnails, in pixels."""

_NOT_MEDIA = {*SCORE_FIELDS, "keywords", "rubric_warnings", "validator"}


def keywords_html(markup: str | None) -> Markup:
    """``{1}[a red] {2}[bicycle]`` as HTML: each keyword a ``<mark>`` tagged with its id (text escaped)."""
    if not isinstance(markup, str):
        return Markup("")
    parts, last = [], 0
    for m in _KEYWORD.finditer(markup):
        parts.append(escape(markup[last : m.start()]))
        parts.append(
            Markup('<mark class="kw" title="keyword {0}"><sup>{0}</sup>{1}</mark>').format(m.group(1), m.group(2))
        )
        last = m.end()
    parts.append(escape(markup[last:]))
    return Markup("").join(parts)


def _thumbnail(data: bytes) -> str | None:
    """A JPEG ``data:`` URI of at most :data:`THUMBNAIL_PIXELS` per side, or None if Pillow cannot read it."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.thumbnail((THUMBNAIL_PIXELS, THUMBNAIL_PIXELS))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="JPEG", quality=82)
    except (UnidentifiedImageError, OSError, ValueError):
        return None
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _link(uri: str) -> str:
    """A browser link for a media URI: ``gs://b/o`` → the Cloud Console's authenticated URL."""
    if uri.startswith("gs://"):
        return "https://storage.cloud.google.com/" + uri[len("gs://") :]
    return uri


def media_view(value: Any, *, base_dirs: Sequence[str]) -> dict[str, Any]:
    """How to show one media cell: ``{"thumbnail": data URI | None, "href": link | None, "text", "note"}``.

    Local paths are tried as given, then relative to each of ``base_dirs``.
    """
    if value is None or value == "":
        return {"thumbnail": None, "href": None, "text": "", "note": "no media"}
    text = value if isinstance(value, str) else str(value)
    media_type = "video" if (mime_type_for(text.split("?")[0]) or "").startswith("video/") else "image"
    last_error = ""
    for base in [None, *base_dirs]:
        try:
            part = resolve_media(value, media_type=media_type, base_dir=base)[0]
        except MediaError as exc:
            last_error = str(exc)
            if exc.kind != "unreadable_media":
                break
            continue
        if part.uri:
            return {"thumbnail": None, "href": _link(part.uri), "text": part.uri, "note": part.mime_type}
        thumb = _thumbnail(part.data or b"") if part.mime_type.startswith("image/") else None
        local = os.path.abspath(os.path.join(base or "", text)) if not text.lstrip().startswith("{") else None
        href = "file://" + local if local and os.path.exists(local) else None
        note = "" if thumb else f"{part.mime_type}, not embedded"
        return {"thumbnail": thumb, "href": href, "text": text if local else "inline media", "note": note}
    return {"thumbnail": None, "href": None, "text": text[:200], "note": last_error}


def _media_column(rows: Sequence[Mapping[str, Any]], ids: Sequence[str]) -> str | None:
    for key, value in rows[0].items() if rows else ():
        if key in ids or key in _NOT_MEDIA:
            continue
        if isinstance(value, Mapping) and "contents" in value:
            return key
        if isinstance(value, str) and (mime_type_for(value.split("?")[0]) or value.lstrip().startswith('{"contents"')):
            return key
    return None


def _flags(qas: Sequence[Mapping[str, Any]]) -> set[str]:
    """``wrong`` when a question scored below 1, ``failed`` when one has no parseable or no answer."""
    flags = set()
    for qa in qas:
        if qa.get("score") is not None and qa["score"] < 1:
            flags.add("wrong")
        if qa.get("status") in ("unparseable", "missing"):
            flags.add("failed")
    return flags


def _row_view(
    row: Mapping[str, Any], ids: Sequence[str], prompt: str | None, media: str | None, base_dirs: Sequence[str]
) -> dict[str, Any]:
    qas = row.get("qa_results") or []
    flags = _flags(qas)
    warnings = [str(w) for w in row.get("rubric_warnings") or []]
    if warnings:
        flags.add("warning")
    return {
        "ids": ", ".join(str(row.get(c)) for c in ids) or "—",
        "prompt": str(row.get(prompt)) if prompt and row.get(prompt) is not None else "",
        "keywords": keywords_html(row.get("keywords")),
        "media": media_view(row.get(media), base_dirs=base_dirs) if media else None,
        "warnings": warnings,
        "final_score": row.get("final_score"),
        "final_score_text": fmt(row.get("final_score"), "score"),
        "questions": [
            {
                "id": qa.get("question_id"),
                "question": qa.get("question") or "",
                "type": qa.get("question_type") or "",
                "choices": ", ".join(str(c) for c in qa.get("choices") or []),
                "expected": qa.get("expected"),
                "verdict": qa.get("verdict"),
                "score": f"{qa['score']:.3g}" if qa.get("score") is not None else "—",
                "wrong": qa.get("score") is not None and qa["score"] < 1,
                "status": qa.get("status") or "",
                "raw": "" if qa.get("raw") is None else str(qa.get("raw")),
                "note": (qa.get("error") or {}).get("message")
                or (f"masked by {', '.join(map(str, qa['masked_by']))}" if qa.get("masked_by") else ""),
                "dependencies": ", ".join(str(d) for d in qa.get("dependencies") or []),
            }
            for qa in qas
        ],
        "flags": " ".join(sorted(flags)),
    }


def _type_intervals(
    rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any]
) -> dict[str, tuple[float | None, float | None]]:
    """Per question type, the 95 % interval of metrics.json, or (an earlier version's file) from the rows."""
    low, high = m.get("accuracy_by_question_type_ci_lower"), m.get("accuracy_by_question_type_ci_upper")
    if isinstance(low, Mapping) and isinstance(high, Mapping):
        return {t: (low.get(t), high.get(t)) for t in low}
    return type_intervals(rows)


def _group_breakdown(
    rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any], group_by: str | None
) -> dict[str, Any] | None:
    """The breakdown by ``group_by`` (default: the run's ``scoring.group_by``): metrics.json's, else from the rows.

    Raises:
        InputError: ``group_by`` is not a column of the result rows.
    """
    column = group_by or (m.get("scoring_options") or {}).get("group_by") or ""
    if not column:
        return None
    stored = m.get("final_score_by_group")
    if isinstance(stored, Mapping) and stored.get("column") == column:
        return dict(stored)
    if rows and not any(column in r for r in rows):
        raise InputError(
            f"group_by {column!r} is not a column of results.jsonl; columns: {sorted(rows[0])}", source="--group-by"
        )
    return scores_by_group(rows, column)


def _check_columns(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], source: str) -> None:
    """Refuse a column given on the command line that no result row has (it would show nothing, silently)."""
    for column in columns:
        if rows and not any(column in r for r in rows):
            raise InputError(f"{column!r} is not a column of results.jsonl; columns: {sorted(rows[0])}", source=source)


def _group_figure(breakdown: Mapping[str, Any]) -> FigureHTML:
    groups = breakdown["groups"]
    caption = (
        f"Mean final_score per value of {breakdown['column']} over its scored rows (n = rows); whiskers: 95 % "
        "intervals of the mean (Student-t; Wilson when every score is equal or n = 1)."
    )
    chart = bar_with_intervals(
        [f"{g} (n={v['rows']})" for g, v in groups.items()],
        [v["mean_final_score"] for v in groups.values()],
        [(v["ci_lower"], v["ci_upper"]) for v in groups.values()],
        [COLORS["A"]] * len(groups),
        xlabel="mean final_score",
    )
    return figure("fig-groups", f"final_score by {breakdown['column']}", caption, chart)


def _figures(rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any]) -> list[FigureHTML]:
    figures: list[FigureHTML] = []
    scores = [float(r["final_score"]) for r in rows if r.get("final_score") is not None]
    caption = (
        f"final_score (mean question score) of the {len(scores)} scored rows; "
        f"the line marks the mean, {fmt(m.get('mean_final_score'), 'score')}."
    )
    chart = histogram(
        [("rows", scores, COLORS["A"])],
        [i / 10 for i in range(11)],
        xlabel="final_score",
        marker=m.get("mean_final_score"),
    )
    figures.append(figure("fig-final-score", "final_score distribution", caption, chart))
    by_type = m.get("accuracy_by_question_type") or {}
    counts = m.get("questions_by_question_type") or {}
    types = sorted(by_type, key=lambda t: (-counts.get(t, 0), t))
    caption = (
        "Mean question score per question type over scored questions (n = questions of that type); whiskers: "
        "95 % intervals (Student-t; Wilson when every score is equal or n = 1, so one right answer reads "
        "20.7 %–100 %), counting questions as independent."
    )
    intervals = _type_intervals(rows, m)
    chart = bar_with_intervals(
        [f"{t} (n={counts.get(t, '?')})" for t in types],
        [by_type[t] for t in types],
        [intervals.get(t, (None, None)) for t in types],
        [COLORS["A"]] * len(types),
        xlabel="mean question score",
    )
    figures.append(figure("fig-question-types", "Accuracy per question type", caption, chart))
    return figures


def _failures(rows: Sequence[Mapping[str, Any]], ids: Sequence[str]) -> list[dict[str, Any]]:
    """One entry per unparseable or missing answer, for the failures table."""
    return [
        {
            "ids": ", ".join(str(r.get(c)) for c in ids),
            "question_id": qa.get("question_id"),
            "question": qa.get("question"),
            "status": qa.get("status"),
            "raw": qa.get("raw"),
            "message": (qa.get("error") or {}).get("message") or "",
        }
        for r in rows
        for qa in r.get("qa_results") or []
        if qa.get("status") in ("unparseable", "missing")
    ]


def _all_rows(m: Mapping[str, Any]) -> str:
    """Over what the all-rows counts are taken (metrics.json of earlier versions lacks it: no note)."""
    if "questions_in_all_rows" not in m:
        return ""
    questions, rows = fmt(m["questions_in_all_rows"], "count"), fmt(m.get("rows_validated"), "count")
    return f"of {questions} questions in all {rows} validated rows"


def _headline_stats(m: Mapping[str, Any]) -> list[Stat]:
    headline = [
        metric(m, "mean_final_score", "Mean final_score", "score"),
        metric(m, "stdev_final_score", "Std. dev. of final_score", "score"),
        metric(m, "rows_scored", "Rows scored", "count"),
        metric(m, "rows_unscored", "Rows not scored", "count"),
        metric(
            m,
            "questions_scored",
            "Questions scored",
            "count",
            note=f"of {fmt(m.get('questions_total'), 'count')}"
            + (" in the scored rows" if "questions_in_all_rows" in m else ""),
        ),
        metric(m, "parse_failures", "Parse failures", "count", note=_all_rows(m)),
        metric(m, "missing_answers", "Missing answers", "count", note=_all_rows(m)),
        metric(m, "masked_questions", "Masked questions", "count"),
    ]
    if m.get("keyword_coverage") is not None:
        headline.append(metric(m, "keyword_coverage", "Keyword coverage"))
    return headline


def _type_stats(rows: Sequence[Mapping[str, Any]], m: Mapping[str, Any]) -> list[Stat]:
    by_type = m.get("accuracy_by_question_type") or {}
    counts = m.get("questions_by_question_type") or {}
    intervals = _type_intervals(rows, m)
    return [
        Stat(
            t,
            fmt(by_type[t]),
            key=f"accuracy_by_question_type.{t}",
            value=by_type[t],
            interval=_shown_interval(intervals.get(t)),
            note=f"{counts.get(t)} question{'' if counts.get(t) == 1 else 's'}",
        )
        for t in sorted(by_type)
    ]


def _shown_interval(interval: tuple[float | None, float | None] | None) -> str:
    low, high = interval or (None, None)
    return f"{fmt(low)}–{fmt(high)}" if low is not None and high is not None else ""


def _group_stats(breakdown: Mapping[str, Any] | None) -> list[Stat]:
    if not breakdown:
        return []
    return [
        Stat(
            group,
            fmt(v["mean_final_score"], "score"),
            key=f"final_score_by_group.groups.{group}.mean_final_score",
            value=v["mean_final_score"],
            interval=(
                f"{fmt(v['ci_lower'], 'score')}–{fmt(v['ci_upper'], 'score')}" if v["ci_lower"] is not None else ""
            ),
            note=f"{v['rows']} row{'' if v['rows'] == 1 else 's'}",
        )
        for group, v in breakdown["groups"].items()
    ]


def gecko_context(
    outputs: RunOutputs,
    *,
    max_rows: int = 2000,
    id_columns: Sequence[str] | None = None,
    prompt_column: str | None = None,
    media_column: str | None = None,
    group_by: str | None = None,
) -> dict[str, Any]:
    """Template context of the Gecko report (see ``templates/gecko.html.j2``).

    Args:
        outputs: The run's outputs.
        max_rows: Most result rows in the drill-down; past it, every row with a wrong or failed answer is kept first.
        id_columns: Columns identifying a row (default: from ``error_messages``, else the first column).
        prompt_column: Column of the generation prompt (default: the first of :data:`PROMPT_COLUMNS` present).
        media_column: Column of the media (default: the first column holding a media path, URI or JSON).
        group_by: Column whose values break final_score down (default: the run's ``scoring.group_by``; none).

    Raises:
        InputError: ``group_by``, ``media_column``, ``prompt_column`` or one of ``id_columns`` is not a column
            of the result rows.
    """
    rows, m = outputs.rows, outputs.metrics
    for flag, columns in (
        ("--id-columns", id_columns or []),
        ("--prompt-column", [prompt_column] if prompt_column else []),
        ("--media-column", [media_column] if media_column else []),
    ):
        _check_columns(rows, columns, flag)
    ids = gecko_id_columns(outputs.rows, outputs.errors, id_columns)
    if any(CANDIDATE_COLUMN in r for r in rows) and CANDIDATE_COLUMN not in ids:
        ids = [*ids, CANDIDATE_COLUMN]  # response_columns: a row per prompt and candidate
    prompt = prompt_column or next((c for c in PROMPT_COLUMNS if rows and c in rows[0]), None)
    media = media_column or _media_column(rows, ids)
    base_dirs = [outputs.directory, os.getcwd()]
    flags = [_flags(r.get("qa_results") or []) for r in rows]
    shown = flagged_first([bool(f) for f in flags], max_rows)  # past max_rows: every flagged row first
    views = [_row_view(rows[i], ids, prompt, media, base_dirs) for i in shown]
    flagged_total = sum(bool(f) for f in flags)
    flag_counts = Counter(f for v in views for f in v["flags"].split())
    breakdown = _group_breakdown(rows, m, group_by)
    figures = _figures(rows, m) + ([_group_figure(breakdown)] if breakdown else [])
    warned = [r for r in rows if r.get("rubric_warnings")]
    return {
        "kind": outputs.kind,
        "title": "Gecko report",
        "headline": _headline_stats(m),
        "type_stats": _type_stats(rows, m),
        "scoring_options": m.get("scoring_options") or {},
        "rubric_prompt_version": m.get("rubric_prompt_version"),
        "candidates": candidates_context(m),
        "media_probe": m.get("media_probe") if isinstance(m.get("media_probe"), Mapping) else None,
        "figures": {f.id: f for f in figures},
        "group_column": breakdown["column"] if breakdown else None,
        "group_stats": _group_stats(breakdown),
        "rubric_warnings": [
            {"ids": ", ".join(str(r.get(c)) for c in ids) or "—", "warnings": [str(w) for w in r["rubric_warnings"]]}
            for r in warned
        ],
        "rubric_warning_count": sum(len(r["rubric_warnings"]) for r in warned),
        "rows": views,
        "row_count": len(rows),
        "rows_not_shown": max(0, len(rows) - max_rows),
        "flagged_shown": sum(bool(v["flags"]) for v in views),
        "flagged_total": flagged_total,
        "flag_counts": {
            "all": len(views),
            "wrong": flag_counts.get("wrong", 0),
            "failed": flag_counts.get("failed", 0),
            "warning": flag_counts.get("warning", 0),
        },
        "columns": {"id": ids, "prompt": prompt, "media": media},
        "failures": _failures(rows, ids),
        "errors": outputs.errors,
    }
