"""What the indexer stores for vault_query: inline tags by Obsidian's rules, typed
properties, birth time; orientation's frontmatter-only `tags` unchanged."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest

from vault_agent.indexer import birthtime
from vault_agent.indexer.inline_tags import inline_tags
from vault_agent.indexer.markdown import parse_structure
from vault_agent.indexer.parse import parse_note
from vault_agent.indexer.properties import MAX_ITEMS, MAX_ROWS, property_rows
from vault_agent.note_syntax import blank_comments
from vault_agent.property_values import canonical_key, iso_micros, micros


def tags_of(body: str, frontmatter: str = "") -> tuple[list[str], list[str], list[tuple[str, bool]]]:
    text = (f"---\n{frontmatter}\n---\n" if frontmatter else "") + body
    parsed = parse_note("n.md", text.encode("utf-8"), 1, len(text))
    return parsed.note["tags"], parsed.note["all_tags"], [(r["tag"], r["exact"]) for r in parsed.tags]


INLINE: list[tuple[str, list[str]]] = [
    ("#tag", ["tag"]),
    ("text #tag more", ["tag"]),
    ("#a/b/c", ["a/b/c"]),
    ("#CamelCase and #snake_case #kebab-case", ["CamelCase", "snake_case", "kebab-case"]),
    ("#1984 #y1984 #2024/05", ["y1984"]),
    ("not#tag, (#paren), [#bracket]", []),
    ("#end. #comma, #semi; #colon: #bang! #q?", ["end", "comma", "semi", "colon", "bang", "q"]),
    ("#emoji🎉 #日本語、#中文。 #한국어", ["emoji🎉", "日本語", "한국어"]),  # 、# is no whitespace
    ("#trailing/", ["trailing"]),
    ("`#code` and ``#two `x` code``", []),
    ("[[Note#Heading]] [[#Heading]] [[a #b]]", []),
    ("[x](#anchor) <https://x.org/#frag> https://x.org/#frag", []),
    ("\\#escaped", []),
    ("# Heading #inheading", ["inheading"]),
    ("## #first heading", ["first"]),
    ("```\n#fenced\n```\n    #indented code\n\n#after", ["after"]),
    ("~~~md\n#tilde\n~~~", []),
    ("%% #commented %%", []),
    ("- item #listed\n> quote #quoted", ["listed", "quoted"]),
    ("#same #Same #SAME", ["same", "Same", "SAME"]),
]


@pytest.mark.parametrize(("body", "expected"), INLINE, ids=[b for b, _ in INLINE])
def test_inline_tags(body: str, expected: list[str]) -> None:
    text = body + "\n"
    blanked = blank_comments(text)
    assert inline_tags(blanked, 1, parse_structure(blanked).code_ranges) == expected


def test_all_tags_join_frontmatter_and_inline_once_each_keeping_the_first_spelling() -> None:
    fm_tags, all_tags, keys = tags_of("#Project/Alpha and #inbox #Extra\n", "tags: [project/alpha, Inbox]")
    assert fm_tags == ["project/alpha", "Inbox"]  # orientation (seed 000): frontmatter only, unchanged
    assert all_tags == ["project/alpha", "Inbox", "Extra"]
    assert keys == [("project", False), ("project/alpha", True), ("inbox", True), ("extra", True)]


def test_frontmatter_lines_are_never_inline_tags() -> None:
    assert tags_of("body\n", "title: '#nottag'\nnote: x #nottag")[1] == []


PROPS = """title: Plan
Due Date: 2024-05-01
when: 2024-05-01T10:30:00+02:00
iso: "2024-06-01"
count: 3
ratio: 1.5
big: .inf
flag: yes
nothing:
empty: []
list: [a, 2, true, null, [x], {k: v}]
map: {a: 1, b: {c: [x, y]}}
Status: active
status: ignored (same canonical name)
"""


def test_properties_keep_their_yaml_types() -> None:
    text = f"---\n{PROPS}---\nbody\n"
    rows = parse_note("n.md", text.encode(), 1, len(text)).props
    got = [(r["key"], r["item"], r["is_list"], r["kind"], r["s"], r["n"], r["d"], r["b"]) for r in rows]
    d1 = micros(dt.date(2024, 5, 1))
    assert got == [
        ("title", 0, False, "string", "Plan", None, None, None),
        ("due-date", 0, False, "date", "2024-05-01", None, d1, None),
        ("when", 0, False, "datetime", "2024-05-01T10:30:00+02:00", None, d1 + 8 * 3_600_000_000 + 1_800_000_000, None),
        ("iso", 0, False, "string", "2024-06-01", None, micros(dt.date(2024, 6, 1)), None),
        ("count", 0, False, "number", "3", 3.0, None, None),
        ("ratio", 0, False, "number", "1.5", 1.5, None, None),
        ("big", 0, False, "number", "inf", None, None, None),
        ("flag", 0, False, "boolean", "true", None, None, True),
        ("nothing", 0, False, "null", None, None, None, None),
        ("empty", 0, True, "empty", None, None, None, None),
        ("list", 0, True, "string", "a", None, None, None),
        ("list", 1, True, "number", "2", 2.0, None, None),
        ("list", 2, True, "boolean", "true", None, None, True),
        ("list", 3, True, "null", None, None, None, None),
        ("list", 4, True, "list", None, None, None, None),
        ("list", 5, True, "object", None, None, None, None),
        ("map", 0, False, "object", None, None, None, None),
        ("map.a", 0, False, "number", "1", 1.0, None, None),
        ("map.b", 0, False, "object", None, None, None, None),
        ("map.b.c", 0, True, "string", "x", None, None, None),
        ("map.b.c", 1, True, "string", "y", None, None, None),
        ("status", 0, False, "string", "active", None, None, None),
    ]  # fmt: skip


def test_property_rows_are_bounded() -> None:
    assert len(property_rows("n.md", {"l": list(range(10_000))})) == MAX_ITEMS
    assert len(property_rows("n.md", {f"k{i}": i for i in range(1_000)})) == MAX_ROWS
    deep: dict[str, Any] = {"v": 1}
    for _ in range(50):
        deep = {"a": deep}
    assert [r["key"] for r in property_rows("n.md", {"d": deep})] == ["d", "d.a", "d.a.a"]


def test_invalid_frontmatter_has_no_properties() -> None:
    text = "---\nkey: [unclosed\n---\nbody #tag\n"
    parsed = parse_note("n.md", text.encode(), 1, len(text))
    assert (parsed.props, parsed.note["all_tags"]) == ([], ["tag"])


def test_canonical_names_and_iso_dates() -> None:
    assert [canonical_key(k) for k in ("Due Date", "time-played", "Hello!", "ÉTÉ", "a.B c", "x_y")] == [
        "due-date", "time-played", "hello", "été", "a.b-c", "x_y"]  # fmt: skip
    assert iso_micros("2024-05-01") == micros(dt.date(2024, 5, 1))
    assert iso_micros("2024-05-01T10:30Z") == micros(dt.datetime(2024, 5, 1, 10, 30, tzinfo=dt.UTC))
    assert [iso_micros(t) for t in ("2024-02-30", "May 1", "20240501", "2024-05-01T25:00")] == [None] * 4


def test_birth_time_is_the_files_or_the_earliest_stat_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "n.md"
    path.write_text("x")
    os.utime(path, ns=(10**18, 10**18))  # an mtime after the birth
    st = os.stat(path)
    found = birthtime.birth_time_ns(str(path), st)
    assert 0 < found <= st.st_ctime_ns
    monkeypatch.setattr(birthtime, "_STATX", None)  # no birth time from the OS
    assert birthtime.birth_time_ns(str(path), st) == min(st.st_ctime_ns, st.st_mtime_ns)


def test_the_parse_stores_the_birth_time(tmp_path: Path) -> None:
    text = b"# x\n"
    assert parse_note("n.md", text, 5, len(text), 3).note["ctime_ns"] == 3
    assert parse_note("n.md", text, 5, len(text)).note["ctime_ns"] == 5
