"""``autorater run``'s exit status from the share of failed rows (``--max-failed-share``)."""

from __future__ import annotations

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.commands.run import DEFAULT_MAX_FAILED_SHARE, _exit_status, run_spec


def test_exit_status_by_failed_share(capsys) -> None:
    assert DEFAULT_MAX_FAILED_SHARE == 0.1
    assert _exit_status(0, 6, 0.1) == 0 and _exit_status(0, 0, 0.1) == 0
    assert _exit_status(1, 10, 0.1) == 0  # exactly the share: still fine
    assert capsys.readouterr().err == ""
    assert _exit_status(1, 6, 0.1) == 1
    assert capsys.readouterr().err == (
        "error: 1 of 6 rows (17%) ended with an error, more than --max-failed-share 0.1; see error_messages.jsonl\n"
    )
    assert _exit_status(1, 6, 0.2) == 0
    assert _exit_status(6, 6, 1.0) == 1  # nothing evaluated fails whatever the share
    assert "no row could be evaluated" in capsys.readouterr().err


def test_failed_rows_come_from_each_pipelines_metrics() -> None:
    autosxs = {"evaluation_count": 12, "judged_count": 8, "error_count": 4}
    gecko = {"evaluation_count": 5, "rows_scored": 2, "rows_unscored": 3}
    assert run_spec("autosxs").failed_rows(autosxs) == (4, 12)
    # rows judged in one presentation order only are left out of the rates: they count as failed
    one_order = {"evaluation_count": 12, "judged_count": 7, "error_count": 4, "one_order_only_count": 1}
    assert run_spec("autosxs").failed_rows(one_order) == (5, 12)
    assert run_spec("gecko").failed_rows(gecko) == (3, 5)


@pytest.mark.parametrize("value", ["2", "-0.1", "lots"])
def test_a_bad_share_is_refused_with_the_value(value, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "autosxs", "--params", "p.json", "--output-dir", "out", "--max-failed-share", value])
    assert exc.value.code == 2
    assert f"expected a share between 0 and 1 such as 0.1, got {value!r}" in capsys.readouterr().err
