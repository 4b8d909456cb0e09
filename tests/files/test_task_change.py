"""A task's status change as the Tasks plugin makes it (Task.handleNewStatus, toggle): the
done and cancelled stamps, the next occurrence and where it goes, custom status cycles,
the plugin's switches, `🏁 delete`, and what is refused."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from vault_agent.errors import InvalidParameter
from vault_agent.files.task_change import Planned, TaskEdit, plan_change, resolve_status
from vault_agent.files.task_write_settings import TaskWriteSettings, parse_write_settings
from vault_agent.task_settings import TaskSettings, parse_task_settings

TODAY = dt.date(2024, 5, 16)
DEFAULTS = TaskWriteSettings()


def _plan(line: str, settings: TaskWriteSettings = DEFAULTS, **edit: object) -> Planned:
    return plan_change(line, TaskEdit(**edit), settings, TODAY)  # type: ignore[arg-type]


def _settings(**data: object) -> TaskWriteSettings:
    return parse_write_settings(json.dumps(data).encode())


@pytest.mark.parametrize(
    ("line", "status", "lines"),
    [
        ("- [ ] Buy milk", "done", ["- [x] Buy milk ✅ 2024-05-16"]),
        ("- [ ] Buy milk", "x", ["- [x] Buy milk ✅ 2024-05-16"]),
        (
            "- [ ] Buy milk [due:: 2024-05-20]",
            "done",
            ["- [x] Buy milk [due:: 2024-05-20] [completion:: 2024-05-16]"],
        ),
        ("- [x] I thought I finished ✅ 2021-09-12", " ", ["- [ ] I thought I finished"]),  # plugin test
        ("- [x] Reopen [completion:: 2021-09-12]", "todo", ["- [ ] Reopen"]),
        ("- [ ] Drop it 📅 2024-05-20", "cancelled", ["- [-] Drop it 📅 2024-05-20 ❌ 2024-05-16"]),
        (
            "- [ ] Drop it [due:: 2024-05-20]",
            "-",
            ["- [-] Drop it [due:: 2024-05-20] [cancelled:: 2024-05-16]"],
        ),
        # DONE to CANCELLED: the done date goes, a cancelled date comes (plugin test)
        ("- [X] Stuff 📅 2023-12-15 ✅ 2019-01-17", "cancelled", ["- [-] Stuff 📅 2023-12-15 ❌ 2024-05-16"]),
        # staying DONE keeps the date, the symbol changes (x to X)
        ("- [x] Kept ✅ 2019-01-17", "X", ["- [X] Kept ✅ 2019-01-17"]),
        ("- [ ] Start it", "in_progress", ["- [/] Start it"]),
        ("- [ ] Same", " ", ["- [ ] Same"]),
        (
            "  * [ ] Keep everything 📅 2024-05-20 #tag ^id1  ",
            "done",
            ["  * [x] Keep everything 📅 2024-05-20 #tag ✅ 2024-05-16 ^id1  "],
        ),
    ],
)
def test_status_changes_stamp_and_unstamp_in_the_tasks_notation(
    line: str, status: str, lines: list[str]
) -> None:
    assert _plan(line, status=status).lines == lines


def test_completing_a_recurring_task_adds_the_next_occurrence_above() -> None:
    planned = _plan("- [ ] Water 🔁 every week 📅 2024-05-15 ➕ 2024-05-01 🆔 w1 ⛔ x2 ^blk", status="done")
    assert (
        planned.lines
        == [
            "- [ ] Water 🔁 every week 📅 2024-05-22",  # no created date (setCreatedDate off), id, depends on, link
            "- [x] Water 🔁 every week 📅 2024-05-15 ➕ 2024-05-01 🆔 w1 ⛔ x2 ✅ 2024-05-16 ^blk",
        ]
    )
    assert (planned.task_at, planned.next_at, planned.status.symbol) == (1, 0, "x")


def test_the_plugins_switches_are_honoured() -> None:
    line = "- [ ] Water [repeat:: every week when done] [scheduled:: 2024-05-10] [due:: 2024-05-15]"
    switches = _settings(
        recurrenceOnNextLine=True,
        setCreatedDate=True,
        setDoneDate=False,
        removeScheduledDateOnRecurrence=True,
    )
    planned = _plan(line, switches, status="done")
    assert planned.lines == [
        "- [x] Water [repeat:: every week when done] [scheduled:: 2024-05-10] [due:: 2024-05-15]",
        "- [ ] Water [repeat:: every week when done] [created:: 2024-05-16] [due:: 2024-05-23]",
    ]
    assert (planned.task_at, planned.next_at) == (0, 1)
    assert _plan("- [ ] No stamp", _settings(setCancelledDate=False), status="cancelled").lines == [
        "- [-] No stamp"
    ]


def test_on_completion_delete_removes_the_completed_line() -> None:
    recurring = _plan("- [ ] Pay 🔁 every month on the 1st 📅 2024-05-01 🏁 delete", status="done")
    assert (recurring.lines, recurring.task_at, recurring.next_at) == (
        ["- [ ] Pay 🔁 every month on the 1st 📅 2024-06-01 🏁 delete"], None, 0,
    )  # fmt: skip
    assert _plan("- [ ] Once [onCompletion:: delete]", status="done").lines == []
    # only a change to DONE deletes; keep is the default
    assert _plan("- [ ] Once 🏁 delete", status="cancelled").lines == ["- [-] Once 🏁 delete ❌ 2024-05-16"]
    assert _plan("- [ ] Once 🏁 keep", status="done").lines == ["- [x] Once 🏁 keep ✅ 2024-05-16"]


# The plugin's custom statuses of tests/Task/Task.test.ts (sampleStatusesForToggling).
CUSTOM = {
    "statusSettings": {
        "coreStatuses": [],
        "customStatuses": [
            {"symbol": s, "name": n, "nextStatusSymbol": x, "type": t}
            for s, n, x, t in [
                ("!", "Important", "D", "TODO"),
                ("D", "Doing - Important", "X", "IN_PROGRESS"),
                ("X", "Done - Important", "!", "DONE"),
                ("1", "Status 1", "2", "TODO"),
                ("2", "Status 2", "3", "IN_PROGRESS"),
                ("3", "Status 3", "1", "DONE"),
                ("4", "Status 4", "1", "CANCELLED"),
                ("a", "Status a", "b", "TODO"),
                ("b", "Status b", "c", "DONE"),
            ]
        ],
    }
}


@pytest.mark.parametrize(
    ("symbol", "done", "following"),
    [("D", "X", "!"), ("2", "3", "1"), ("a", "b", "c")],  # the plugin's expected symbols
)
def test_custom_status_cycles_as_the_plugin_toggles_them(symbol: str, done: str, following: str) -> None:
    settings = _settings(**CUSTOM)
    planned = _plan(f"- [{symbol}] I am task 🔁 every day 📅 2023-01-19", settings, status="done")
    assert planned.lines == [
        f"- [{following}] I am task 🔁 every day 📅 2023-01-20",
        f"- [{done}] I am task 🔁 every day 📅 2023-01-19 ✅ 2024-05-16",
    ]


def test_a_status_is_named_by_symbol_type_or_name() -> None:
    settings = parse_task_settings(json.dumps(CUSTOM).encode())
    doing = settings.status("D")
    assert resolve_status("done", doing, settings).symbol == "X"  # the cycle's own done status
    assert resolve_status("done", settings.status("a"), settings).symbol == "b"
    assert resolve_status("done", settings.status("!"), settings).symbol == "X"  # the first of the type
    assert resolve_status("Status 4", doing, settings).symbol == "4"
    assert resolve_status("in-progress", settings.status("!"), settings).symbol == "D"
    assert resolve_status("?", doing, settings).type == "TODO"  # an unknown symbol, as the plugin
    with pytest.raises(InvalidParameter, match="no status of type NON_TASK"):
        resolve_status("non_task", doing, settings)
    with pytest.raises(InvalidParameter, match="must be a status symbol"):
        resolve_status("finished", doing, TaskSettings())
    with pytest.raises(InvalidParameter, match="printable"):
        resolve_status("\n", doing, TaskSettings())


def test_dates_and_priority_change_before_the_status() -> None:
    planned = _plan(
        "- [ ] Report 🔁 every 2 weeks 📅 2024-05-15",
        status="done",
        dates=(("due", "2024-05-20"), ("start", "2024-05-13")),
        priority="high",
    )
    assert planned.lines == [
        "- [ ] Report ⏫ 🔁 every 2 weeks 🛫 2024-05-27 📅 2024-06-03",
        "- [x] Report ⏫ 🔁 every 2 weeks 🛫 2024-05-13 📅 2024-05-20 ✅ 2024-05-16",
    ]
    cleared = _plan("- [ ] Report 🔼 📅 2024-05-15 ⏳ 2024-05-14", dates=(("due", None),), priority="none")
    assert cleared.lines == ["- [ ] Report ⏳ 2024-05-14"]


def test_a_task_without_fields_takes_the_settings_notation() -> None:
    dataview = _settings(taskFormat="dataview")
    assert _plan("- [ ] Plain", dataview, status="done").lines == ["- [x] Plain  [completion:: 2024-05-16]"]


def test_recurrence_that_cannot_be_used_is_refused_and_nothing_changes() -> None:
    with pytest.raises(InvalidParameter, match="recurrence rule cannot be used"):
        _plan("- [ ] Odd 🔁 every two weeks 📅 2024-05-15", status="done")
    with pytest.raises(InvalidParameter, match="due date is no calendar date"):
        _plan("- [ ] Odd 🔁 every week 📅 2024-02-30", status="done")
    # reopening or cancelling never needs the rule
    assert _plan("- [ ] Odd 🔁 every two weeks", status="cancelled").lines == [
        "- [-] Odd 🔁 every two weeks ❌ 2024-05-16"
    ]


def test_no_occurrence_left_completes_with_a_warning() -> None:
    planned = _plan("- [ ] Twice 🔁 every day for 1 time 📅 2024-05-15", status="done")
    assert planned.lines == ["- [x] Twice 🔁 every day for 1 time 📅 2024-05-15 ✅ 2024-05-16"]
    assert [w.code for w in planned.warnings] == ["NO_NEXT_OCCURRENCE"]
