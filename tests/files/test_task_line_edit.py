"""One task field changed and nothing else: hypothesis over generated task lines in both
notations (the changed characters are exactly the field's), and the edge cases by name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_agent.files.task_line_edit import (
    LineEditError,
    Style,
    drop_block_link,
    remove_fields,
    set_field,
    set_status,
    style_of,
)
from vault_agent.task_syntax import TaskLine, parse_task_line

EMOJI = Style("emoji")
DATAVIEW = Style("dataview")
_EMOJI_OF = {"due": "📅", "scheduled": "⏳", "start": "🛫", "created": "➕", "done": "✅", "cancelled": "❌"}
_KEY_OF = {
    "due": "due",
    "scheduled": "scheduled",
    "start": "start",
    "created": "created",
    "done": "completion",
    "cancelled": "cancelled",
}
_PRIORITY_EMOJI = {"highest": "🔺", "high": "⏫", "medium": "🔼", "low": "🔽", "lowest": "⏬"}

dates = st.builds(
    "{:04d}-{:02d}-{:02d}".format, st.integers(1990, 2090), st.integers(1, 12), st.integers(1, 32)
)  # day 32 now and then: an invalid date, kept as written


@st.composite
def fields(draw: st.DrawFn, notation: str) -> list[tuple[str, str]]:
    """(kind, text) of the line's fields, no kind twice."""
    kinds = draw(
        st.lists(st.sampled_from([*_EMOJI_OF, "priority", "recurrence", "id"]), unique=True, max_size=6)
    )
    bracket = draw(st.sampled_from("[("))
    close = "]" if bracket == "[" else ")"
    out: list[tuple[str, str]] = []
    for kind in kinds:
        if kind == "priority":
            name = draw(st.sampled_from(list(_PRIORITY_EMOJI)))
            text = _PRIORITY_EMOJI[name] if notation == "emoji" else f"{bracket}priority:: {name}{close}"
        elif kind == "recurrence":
            rule = draw(st.sampled_from(["every day", "every 2 weeks", "every month on the 1st when done"]))
            text = f"🔁 {rule}" if notation == "emoji" else f"{bracket}repeat:: {rule}{close}"
        elif kind == "id":
            text = "🆔 abc1" if notation == "emoji" else f"{bracket}id:: abc1{close}"
        else:
            value = draw(dates)
            text = (
                f"{_EMOJI_OF[kind]} {value}"
                if notation == "emoji"
                else f"{bracket}{_KEY_OF[kind]}:: {value}{close}"
            )
        out.append((kind, text))
    return out


@st.composite
def task_lines(draw: st.DrawFn) -> str:
    notation = draw(st.sampled_from(["emoji", "dataview"]))
    indent = draw(st.sampled_from(["", "  ", "    ", "\t", "> ", "> > "]))
    marker = draw(st.sampled_from(["-", "*", "+", "1.", "12)"]))
    status = draw(st.sampled_from([" ", "x", "X", "/", "-", ">"]))
    words = draw(
        st.lists(
            st.sampled_from(["Buy", "milk", "#home", "the", "report", "#work/q2", "é", "[[Note]]", "a:b"]),
            min_size=1,
            max_size=5,
        )
    )
    parts = [" ".join(words)]
    for _, text in draw(fields(notation)):
        parts.append(text)
        if draw(st.booleans()) and draw(st.booleans()):
            parts.append(draw(st.sampled_from(["#tag", "#x/y"])))
    seps = [draw(st.sampled_from([" ", "  "])) for _ in parts]
    body = "".join(sep + part for sep, part in zip(seps, parts, strict=True)).lstrip(" ")
    link = draw(st.sampled_from(["", " ^block-1"]))
    trail = draw(st.sampled_from(["", " ", "  "]))
    return f"{indent}{marker} [{status}] {body}{link}{trail}"


def _task(line: str) -> TaskLine:
    task = parse_task_line(line)
    assert task is not None
    return task


@settings(max_examples=400, deadline=None)
@given(
    line=task_lines(),
    kind=st.sampled_from(["due", "scheduled", "start", "done", "cancelled", "created"]),
    value=dates.filter(lambda d: not d.endswith("32")),
)
def test_setting_a_date_changes_only_that_field(line: str, kind: str, value: str) -> None:
    before = _task(line)
    style = style_of(before, line, "emoji")
    out = set_field(line, kind, value, style)
    after = _task(out)
    assert after.values[kind] == value
    assert {k: v for k, v in after.values.items() if k != kind} == {
        k: v for k, v in before.values.items() if k != kind
    }
    assert (after.description, after.status, after.block_link, after.indent, after.marker) == (
        before.description, before.status, before.block_link, before.indent, before.marker,
    )  # fmt: skip
    existing = sorted((f for f in before.fields if f.kind == kind), key=lambda f: f.start)
    if existing:  # replaced in place: the value's characters, nothing else
        assert out == line[: existing[0].value_start] + value + line[existing[0].value_end :]
    else:  # inserted: the new line is the old one with one run added, the field and blanks
        assert _inserted_run(line, out, style.field_text(kind, value))


def _inserted_run(old: str, new: str, field_text: str) -> bool:
    extra = len(new) - len(old)
    for i in range(len(old) + 1):
        if new[:i] == old[:i] and new[i + extra :] == old[i:]:
            run = new[i : i + extra]
            if field_text in run and run.replace(field_text, "", 1).strip(" ") == "":
                return True
    return False


@settings(max_examples=400, deadline=None)
@given(
    line=task_lines(),
    kind=st.sampled_from(["due", "scheduled", "start", "done", "cancelled", "created", "priority", "id"]),
)
def test_removing_a_field_removes_its_text_and_blanks_only(line: str, kind: str) -> None:
    before = _task(line)
    out = remove_fields(line, kind) if kind == "id" else set_field(line, kind, None, EMOJI)
    after = _task(out)
    assert kind not in after.values
    assert after.description == before.description and after.block_link == before.block_link
    gone = [f for f in before.fields if f.kind == kind]
    if not gone:
        assert out == line
        return
    # the old line is the new one with one run put back: the field and blanks
    assert _inserted_run(out, line, line[gone[0].start : gone[0].end])


@settings(max_examples=300, deadline=None)
@given(line=task_lines(), name=st.sampled_from(["highest", "high", "medium", "low", "lowest"]))
def test_priority_keeps_the_fields_own_notation(line: str, name: str) -> None:
    before = _task(line)
    out = set_field(line, "priority", name, style_of(before, line, "emoji"))
    after = _task(out)
    assert ("highest", "high", "medium", "none", "low", "lowest")[after.priority] == name
    existing = [f for f in before.fields if f.kind == "priority"]
    if existing:
        field = min(existing, key=lambda f: f.start)
        if field.notation == "emoji":
            assert out == line[: field.start] + _PRIORITY_EMOJI[name] + line[field.end :]
        else:
            assert out == line[: field.value_start] + name + line[field.value_end :]


@settings(max_examples=200, deadline=None)
@given(line=task_lines(), symbol=st.sampled_from([" ", "x", "/", "-", "!", "é"]))
def test_status_is_one_character_in_place(line: str, symbol: str) -> None:
    out = set_status(line, symbol)
    task = _task(line)
    assert out == line[: task.status_at] + symbol + line[task.status_at + 1 :]


def test_new_fields_go_where_the_plugins_layout_puts_them() -> None:
    line = "- [ ] Water 🔁 every week 📅 2024-05-15 #garden"
    assert (
        set_field(line, "start", "2024-05-10", EMOJI)
        == "- [ ] Water 🔁 every week 🛫 2024-05-10 📅 2024-05-15 #garden"
    )
    assert set_field(line, "priority", "high", EMOJI) == "- [ ] Water ⏫ 🔁 every week 📅 2024-05-15 #garden"
    assert (
        set_field(line, "done", "2024-05-16", EMOJI)
        == "- [ ] Water 🔁 every week 📅 2024-05-15 #garden ✅ 2024-05-16"
    )
    dv = "- [ ] Order (due:: 2024-05-20) ^b1"
    style = style_of(_task(dv), dv, "emoji")
    assert style == Style("dataview", "(")
    assert (
        set_field(dv, "done", "2024-05-16", style)
        == "- [ ] Order (due:: 2024-05-20) (completion:: 2024-05-16) ^b1"
    )
    plain = "- [ ] Plain"
    assert (
        set_field(plain, "due", "2024-06-01", DATAVIEW) == "- [ ] Plain  [due:: 2024-06-01]"
    )  # the plugin's two blanks
    assert set_field("- [ ]", "due", "2024-06-01", EMOJI) == "- [ ] 📅 2024-06-01"


def test_removal_of_a_field_that_opens_the_body_takes_the_blanks_after_it() -> None:
    assert set_field("- [ ] 📅 2024-01-01 ✅ 2024-01-02", "due", None, EMOJI) == "- [ ] ✅ 2024-01-02"
    assert set_field("- [x] Done ✅ 2024-01-02  ", "done", None, EMOJI) == "- [x] Done  "
    # every occurrence goes (the leftmost is the one in force, the others would take over)
    assert set_field("- [ ] a 📅 2024-01-01 📅 2024-02-02", "due", None, EMOJI) == "- [ ] a"


def test_a_change_that_would_alter_other_text_is_refused() -> None:
    # the block link only reads as one after a blank in the body: removing the field before it
    # would turn it into the description
    with pytest.raises(LineEditError):
        set_field("- [ ] 📅 2024-01-01 ^abc", "due", None, EMOJI)
    with pytest.raises(LineEditError, match="no task"):
        set_field("plain text", "due", "2024-01-01", EMOJI)


def test_a_new_occurrence_drops_the_block_link() -> None:
    assert drop_block_link("- [ ] a 📅 2024-01-01 ^abc  ") == "- [ ] a 📅 2024-01-01  "
    assert drop_block_link("- [ ] a") == "- [ ] a"
