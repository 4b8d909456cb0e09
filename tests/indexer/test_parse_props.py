"""Property tests: parse_note never fails and is deterministic on arbitrary input."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testkit import parsed_rows

from vault_agent.contracts import TABLES, ParsedNote
from vault_agent.indexer.parse import parse_note

FRAGMENTS = [
    "---\n",
    "...\n",
    "# ",
    "## ",
    "###### ",
    "Title\n",
    "===\n",
    "---\n",
    "```\n",
    "~~~\n",
    "    code\n",
    "> ",
    "- ",
    "1. ",
    "%%",
    "[[",
    "]]",
    "![[",
    "|",
    "#",
    "[t](a.md)",
    "`",
    "**",
    "_",
    "<div>\n",
    "</div>\n",
    "<!-- ",
    "-->",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\t",
    "tags: [a, b]\n",
    "title: x\n",
    "key: &a [1]\n",
    "ref: *a\n",
    "{",
    "}",
    "[",
    "]",
    ": ",
    "東京",
    "\ufeff",
    "\x00",
    "\u0301",
    "| a | b |\n|---|---|\n",
    "date: 2024-02-30\n",
    "&amp;",
    "\\",
]

markdownish = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=40).map("".join)


def check(parsed: ParsedNote, raw: bytes) -> None:
    note = parsed.note
    assert "parse_error" not in note["flags"]
    assert note["heading_count"] == len(parsed.headings)
    assert note["chunk_count"] == len(parsed.chunks)
    assert [c["ordinal"] for c in parsed.chunks] == list(range(len(parsed.chunks)))
    for chunk in parsed.chunks:
        assert 1 <= chunk["start_line"] <= chunk["end_line"] <= max(note["line_count"], 1)
    for h in parsed.headings:
        assert 1 <= h["line"] <= note["line_count"]
        assert h["parent_ordinal"] is None or h["parent_ordinal"] < h["ordinal"]
    for table, schema in TABLES.items():
        rows = parsed_rows(parsed, table)
        assert all(list(r) == schema.names for r in rows)
        pa.Table.from_pylist(rows, schema=schema)
    again = parse_note(note["path"], raw, 0, len(raw))
    for table in TABLES:
        assert parsed_rows(again, table) == parsed_rows(parsed, table)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_arbitrary_bytes(raw: bytes) -> None:
    check(parse_note("p/x.md", raw, 0, len(raw)), raw)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdownish)
def test_markdownish_text(text: str) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    check(parse_note("p/x.md", raw, 0, len(raw)), raw)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdownish)
def test_markdownish_with_frontmatter(text: str) -> None:
    raw = ("---\n" + text + "\n---\n" + text).encode("utf-8", "surrogatepass")
    check(parse_note("p/x.md", raw, 0, len(raw)), raw)
