"""Hostile trial: under one order only, ``first_position_rate`` is a model's share, and says so."""

from __future__ import annotations

from autorater_pipelines.autosxs.bias import bias_metrics
from autorater_pipelines.commands._autosxs_run import print_summary


def _rows(orders: list[bool]) -> list[dict]:
    return [
        {"choice": "A", "response_a": "a", "response_b": "b", "samples": [{"choice": "A", "flipped": f}]}
        for f in orders
    ]


def test_one_model_always_shown_first_gets_a_note_naming_it():
    assert bias_metrics(_rows([False, False]), [])["first_position_rate_note"] == (
        "model A was always shown first: this is model A's share, not position bias"
    )
    # flip_column true on every row: model B always first
    assert bias_metrics(_rows([True]), [])["first_position_rate_note"].startswith("model B was always shown first")
    assert "first_position_rate_note" not in bias_metrics(_rows([False, True]), [])
    assert "first_position_rate_note" not in bias_metrics([], [])  # no decisive sample: no rate, no note


def test_autorater_run_prints_the_note_after_the_rate(capsys):
    metrics = {"evaluation_count": 4, "judged_count": 4, "error_count": 0, **bias_metrics(_rows([False] * 4), [])}
    print_summary(metrics)
    assert (
        "  first-shown response chosen 100.0% (4/4 A-or-B samples); model A was always shown first: this is "
        "model A's share, not position bias\n"
    ) in capsys.readouterr().out
