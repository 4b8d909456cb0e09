"""One checkbox line read as the Tasks plugin reads it (`vault_agent.task_syntax`), and the
plugin's settings file (`vault_agent.task_settings`): the plugin's own serializer cases, and
property tests (never a crash; every span names exactly its text; generated lines give back
the fields they were built from)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.task_settings import DEFAULT_STATUSES, TaskSettings, parse_task_settings
from vault_agent.task_syntax import DATE_FIELDS, TaskLine, is_valid_date, parse_task_line


def _parse(line: str) -> TaskLine:
    task = parse_task_line(line)
    assert task is not None, line
    return task


def _spans(line: str) -> list[tuple[str, str, str]]:
    task = _parse(line)
    return [(f.kind, line[f.start : f.end], line[f.value_start : f.value_end]) for f in task.fields]


@pytest.mark.parametrize(
    ("line", "status", "indent", "marker"),
    [
        ("- [ ] a", " ", "", "-"),
        ("* [x] a", "x", "", "*"),
        ("+ [X] a", "X", "", "+"),
        ("12. [/] a", "/", "", "12."),
        ("3) [-] a", "-", "", "3)"),
        ("    - [?] a", "?", "    ", "-"),
        ("\t- [!] a", "!", "\t", "-"),
        ("> - [ ] in a quote", " ", "> ", "-"),
        ("> > * [ ] callout", " ", "> > ", "*"),
        ("- [ ]", " ", "", "-"),
        ("-  [ ] two spaces", " ", "", "-"),
        ("- [é] any character", "é", "", "-"),
    ],
)
def test_checkbox_lines(line: str, status: str, indent: str, marker: str) -> None:
    task = _parse(line)
    assert (task.status, task.indent, task.marker) == (status, indent, marker)
    assert line[task.status_at] == status


@pytest.mark.parametrize(
    "line",
    ["- [x]glued", "- [] a", "- [  ] a", "-[ ] a", "[ ] a", "text - [ ] a", "1.[ ] a", "- x [ ] a", ""],
)
def test_not_task_lines(line: str) -> None:
    assert parse_task_line(line) is None


def test_emoji_fields_from_the_end_any_order_tags_put_back() -> None:
    line = "- [ ] Buy milk #shop 📅 2024-05-01 ⏫ #errand 🛫 2024-04-01 ➕ 2024-03-01 ⏳ 2024-04-20"
    task = _parse(line)
    assert task.description == "Buy milk #shop #errand"
    assert task.tags == ("shop", "errand")
    assert task.values == {
        "due": "2024-05-01", "priority": "⏫", "start": "2024-04-01", "created": "2024-03-01", "scheduled": "2024-04-20",
    }  # fmt: skip
    assert task.priority == 1 and task.notation == "emoji"
    assert line[: task.text_end] == "- [ ] Buy milk"  # #shop was at the end once 📅 was cut


def test_a_field_followed_by_text_is_description() -> None:
    task = _parse("- [ ] 📅 2024-01-01 pay rent")
    assert task.values == {} and task.description == "📅 2024-01-01 pay rent" and task.notation is None


def test_variant_selectors_and_alternative_emoji() -> None:
    assert _parse("- [ ] a ⏳️ 2024-11-18").values == {"scheduled": "2024-11-18"}
    assert _parse("- [ ] a ⌛ 2021-06-20").values == {"scheduled": "2021-06-20"}
    assert _parse("- [ ] a 📆 2021-06-20").values == {"due": "2021-06-20"}
    assert _parse("- [ ] a 🗓️2021-06-20").values == {"due": "2021-06-20"}
    assert _parse("- [ ] a ⏫️").priority == 1


@pytest.mark.parametrize(("symbol", "priority"), [("🔺", 0), ("⏫", 1), ("🔼", 2), ("🔽", 4), ("⏬", 5)])
def test_emoji_priorities(symbol: str, priority: int) -> None:
    assert _parse(f"- [ ] a {symbol}").priority == priority
    assert _parse("- [ ] a").priority == 3


def test_dataview_fields_both_brackets() -> None:
    line = (
        "- [x] Report (due:: 2024-01-02) [completion:: 2024-01-03] [priority:: highest] [repeat:: every week]"
    )
    assert _spans(line)[::-1] == [
        ("due", "(due:: 2024-01-02)", "2024-01-02"),
        ("done", "[completion:: 2024-01-03]", "2024-01-03"),
        ("priority", "[priority:: highest]", "highest"),
        ("recurrence", "[repeat:: every week]", "every week"),
    ]
    task = _parse(line)
    assert task.priority == 0 and task.notation == "dataview" and task.description == "Report"


def test_dataview_ids_dependencies_and_trailing_comma() -> None:
    task = _parse("- [ ] a [id:: abc1]  [dependsOn:: x1, y2], [onCompletion:: delete]")
    assert task.values == {"id": "abc1", "depends_on": "x1, y2", "on_completion": "delete"}
    assert task.depends_on == ("x1", "y2")


def test_mixed_notation() -> None:
    task = _parse("- [ ] a [due:: 2024-01-02] ⏫")
    assert task.notation == "mixed" and task.priority == 1 and task.values["due"] == "2024-01-02"


def test_invalid_date_kept_and_marked() -> None:
    task = _parse("- [ ] a 📅 2023-12-32 ✅ 2023-02-29 ⏳ 2024-02-29")
    assert task.values == {"due": "2023-12-32", "done": "2023-02-29", "scheduled": "2024-02-29"}
    assert task.invalid_dates() == ("due", "done")
    assert [is_valid_date(t) for t in ("2024-02-29", "2023-12-32", "0000-01-01")] == [True, False, False]


def test_leftmost_duplicate_wins() -> None:
    task = _parse("- [ ] a 📅 2024-01-01 📅 2024-02-02")
    assert task.values["due"] == "2024-01-01"
    assert [f.value for f in task.fields] == ["2024-02-02", "2024-01-01"]


def test_block_link_recurrence_and_ids() -> None:
    line = "- [ ] water 🔁 every week on Monday when done 🆔 abc ⛔ x1,y2 🏁 delete ^blk-1"
    task = _parse(line)
    assert task.block_link == " ^blk-1"
    assert task.values == {
        "recurrence": "every week on Monday when done", "id": "abc", "depends_on": "x1,y2", "on_completion": "delete",
    }  # fmt: skip
    assert line[task.body_end :] == " ^blk-1"


def test_tags_follow_the_project_rules() -> None:
    task = _parse("- [ ] call `#code` [[Note#Head]] #a/b #1984 #ok")
    assert task.tags == ("a/b", "ok")


# --------------------------------------------------------------------------- properties
_PIECES = {
    "due": ("📅 {d}", "[due:: {d}]"),
    "scheduled": ("⏳ {d}", "(scheduled:: {d})"),
    "start": ("🛫 {d}", "[start:: {d}]"),
    "created": ("➕ {d}", "[created:: {d}]"),
    "done": ("✅ {d}", "[completion:: {d}]"),
    "cancelled": ("❌ {d}", "[cancelled:: {d}]"),
}
_DATES = st.sampled_from(["2024-01-31", "2023-12-32", "2024-02-30", "1999-07-04"])
_WORDS = st.lists(
    st.sampled_from(["buy", "milk", "#tag", "x::y", "[note]", "日本", "a_b"]), min_size=1, max_size=5
)


@st.composite
def _task_lines(draw: st.DrawFn) -> tuple[str, dict[str, tuple[str, str]]]:
    """A task line built from parts, and {kind: (notation, value)} of the fields it holds."""
    kinds = draw(st.lists(st.sampled_from(DATE_FIELDS), unique=True, max_size=4))
    words = " ".join(draw(_WORDS)).replace("#tag", "tag")  # no trailing tags: they move
    pieces: list[str] = []
    expected: dict[str, tuple[str, str]] = {}
    for kind in kinds:
        notation = draw(st.sampled_from(["emoji", "dataview"]))
        value = draw(_DATES)
        pieces.append(_PIECES[kind][0 if notation == "emoji" else 1].format(d=value))
        expected[kind] = (notation, value)
    status = draw(st.sampled_from([" ", "x", "/", "-", "?"]))
    indent = draw(st.sampled_from(["", "  ", "\t", "> "]))
    return f"{indent}- [{status}] {words} " + " ".join(pieces), expected


@settings(max_examples=300, deadline=None)
@given(_task_lines())
def test_generated_lines_give_back_their_fields(case: tuple[str, dict[str, tuple[str, str]]]) -> None:
    line, expected = case
    task = _parse(line)
    got = {f.kind: (f.notation, f.value) for f in task.fields}
    assert got == expected
    for kind, (_, value) in expected.items():
        assert task.date(kind) == value
        assert (kind in task.invalid_dates()) == (not is_valid_date(value))
    # Cutting every field span out of the body leaves the description (blanks aside).
    kept = line[task.body_start : task.body_end]
    for f in sorted(task.fields, key=lambda f: f.start, reverse=True):
        kept = kept[: f.start - task.body_start] + kept[f.end - task.body_start :]
    assert " ".join(kept.split()) == " ".join(task.description.split())


@settings(max_examples=500, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("- [x]/>1.)* \t#:📅🔁⏫✅🆔⛔()2024-0156abc,!\ufe0f^")), max_size=60
    )
)
def test_any_text_parses_and_spans_name_their_text(text: str) -> None:
    for line in (text, "- [ ] " + text):
        task = parse_task_line(line)
        if task is None:
            continue
        assert line[task.status_at] == task.status
        assert task.body_start <= task.text_end <= task.body_end <= len(line)
        spans = sorted((f.start, f.end) for f in task.fields)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # disjoint
        for f in task.fields:
            assert task.text_end <= f.start <= f.value_start <= f.value_end <= f.end <= task.body_end
            assert line[f.value_start : f.value_end] == f.value


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_never_crashes(text: str) -> None:
    parse_task_line(text)
    parse_task_line("- [ ] " + text)
    parse_task_settings(text.encode("utf-8", "surrogatepass"))


# --------------------------------------------------------------------------- settings
def _settings_file(**values: object) -> bytes:
    return json.dumps(values).encode()


def test_settings_defaults_and_unknown_symbols() -> None:
    s = TaskSettings()
    assert [s.status(c).type for c in " x/-X?"] == [
        "TODO",
        "DONE",
        "IN_PROGRESS",
        "CANCELLED",
        "DONE",
        "TODO",
    ]
    assert s.status("?").name == "Unknown"


def test_settings_custom_statuses_and_global_filter() -> None:
    raw = _settings_file(
        globalFilter="#task",
        removeGlobalFilter=True,
        taskFormat="dataview",
        statusSettings={
            "coreStatuses": [{"symbol": " ", "name": "Todo", "nextStatusSymbol": "x", "type": "TODO"}],
            "customStatuses": [
                {"symbol": "X", "name": "Nope", "nextStatusSymbol": " ", "type": "CANCELLED"},
                {"symbol": "~", "name": "Later", "nextStatusSymbol": " ", "type": "ON_HOLD"},
                {"symbol": "~", "name": "Twice", "nextStatusSymbol": " ", "type": "DONE"},
                {"symbol": "Q", "name": "Odd", "nextStatusSymbol": " ", "type": "WHATEVER"},
                {"symbol": "ab", "name": "Two chars", "type": "DONE"},
            ],
        },
    )
    s = parse_task_settings(raw)
    assert (s.global_filter, s.remove_global_filter, s.task_format, s.problem) == (
        "#task",
        True,
        "dataview",
        None,
    )
    assert [(x.symbol, x.type) for x in s.statuses] == [
        (" ", "TODO"),
        ("X", "CANCELLED"),
        ("~", "ON_HOLD"),
        ("Q", "TODO"),
    ]
    assert s.status("x").type == "TODO"  # not registered in this file: unknown
    assert s.source_sha256 is not None


@pytest.mark.parametrize(
    ("raw", "problem"), [(b"{", "not JSON"), (b"[1]", "not a JSON object"), (b"\xff", "not JSON")]
)
def test_settings_that_cannot_be_read(raw: bytes, problem: str) -> None:
    s = parse_task_settings(raw)
    assert s.problem == problem and s.statuses == DEFAULT_STATUSES
