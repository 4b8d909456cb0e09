"""parse_note: decoding, line accounting, notes row, row schemas, chunks, terms, caps."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pyarrow as pa
import pytest
from testkit import parsed_rows

from vault_agent.contracts import MAX_NOTE_CHARS_FOR_STRUCTURE, TABLES, ParsedNote
from vault_agent.indexer.parse import MAX_CHUNK_CHARS, PLAIN_WINDOW_LINES, parse_note
from vault_agent.text import tokenize

EMPTY_FACET_FIELDS: dict[str, object] = {
    "causal_chain_id": None,
    "date": None,
    "entity": [],
    "episode_id": None,
    "project": None,
    "tags": [],
    "updated": None,
}
EMPTY_FACETS = {"facets": EMPTY_FACET_FIELDS, "truncated": False}


def parse(raw: bytes | str, rel: str = "n.md") -> ParsedNote:
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    return parse_note(rel, data, 123, len(data))


def test_rows_match_contract_schemas_exactly() -> None:
    src = "---\ntitle: T\ntags: [a]\n---\nIntro [[B]]\n\n# H\n\ntext [l](c.md)\n\n- [ ] t 📅 2024-01-02\n"
    parsed = parse(src, "f/n.md")
    for table, schema in TABLES.items():
        rows = parsed_rows(parsed, table)
        assert rows, table
        for row in rows:
            assert list(row) == schema.names, table
        # Every value converts to the Parquet type without coercion errors.
        assert pa.Table.from_pylist(rows, schema=schema).num_rows == len(rows)


def test_notes_row_whole() -> None:
    raw = b"---\ntitle: Plan\ntags: [x, y]\ntype: plan\nstatus: [a, b]\n---\n# One\n\nbody\n\n## Two\n"
    note = parse_note("projects/alpha/plan.md", raw, 42, len(raw)).note
    assert note == {
        "path": "projects/alpha/plan.md",
        "folder": "projects/alpha",
        "depth": 2,
        "title": "Plan",
        "mtime_ns": 42,
        "size": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "fm_status": "valid",
        "fm_error": None,
        "fm_fields": ["title", "tags", "type", "status"],
        "tags": ["x", "y"],
        "type_values": ["plan"],
        "status_values": ["a", "b"],
        "facets_json": json.dumps(
            {**EMPTY_FACETS, "facets": {**EMPTY_FACET_FIELDS, "tags": ["x", "y"]}},
            ensure_ascii=False,
            sort_keys=True,
        ),
        "line_count": 11,
        "char_count": len(raw),
        "heading_count": 2,
        "chunk_count": 2,
        "too_large": False,
        "aliases": [],
        "flags": [],
        "ctime_ns": 42,
        "all_tags": ["x", "y"],
    }


def test_root_note_folder_and_title_from_stem() -> None:
    note = parse("no frontmatter", "my-first_note.md").note
    assert (note["folder"], note["depth"], note["title"], note["fm_status"]) == (
        "",
        0,
        "my first note",
        "none",
    )
    assert json.loads(note["facets_json"]) == EMPTY_FACETS


@pytest.mark.parametrize(
    ("raw", "lines"),
    [
        (b"", 0),
        (b"a", 1),
        (b"a\n", 1),
        (b"a\nb", 2),
        (b"a\n\n", 2),
        (b"\n", 1),
        (b"a\r\nb\r\n", 2),
        (b"a\rb", 2),
    ],
)
def test_line_count(raw: bytes, lines: int) -> None:
    assert parse(raw).note["line_count"] == lines


def test_bom_stripped_and_flagged() -> None:
    parsed = parse(b"\xef\xbb\xbf# Title\n")
    assert parsed.note["flags"] == ["bom"]
    assert parsed.note["char_count"] == len("# Title\n")
    assert [h["text"] for h in parsed.headings] == ["Title"]


def test_undecodable_bytes_replaced() -> None:
    parsed = parse(b"# Caf\xe9\n\nbody \xff\xfe\n")
    assert parsed.note["flags"] == ["undecodable"]
    assert parsed.headings[0]["text"] == "Caf\ufffd"
    assert "\ufffd" in parsed.chunks[0]["text"]


def test_nul_bytes_after_sniff_window_are_text() -> None:
    raw = b"# T\n" + b"x" * 9000 + b"\n\x00 tail\n"
    parsed = parse(raw)
    assert parsed.note["flags"] == ["nul"]
    assert parsed.chunks[-1]["text"] == "\ufffd tail"


def test_binary_note_counts_only() -> None:
    # Mostly NUL/control bytes (a stray NUL alone no longer makes a note binary: issue 8).
    raw = b"---\ntitle: X\n---\n# H" + b"\x00\x01\x02\x03" * 8 + b"\n"
    parsed = parse(raw, "bin/blob.md")
    assert parsed.note["flags"] == ["nul", "binary"]
    assert parsed.note["title"] == "blob"
    assert (parsed.note["fm_status"], parsed.note["line_count"], parsed.note["char_count"]) == (
        "none",
        4,
        len(raw),
    )
    assert (parsed.headings, parsed.chunks, parsed_rows(parsed, "terms"), parsed.links) == ([], [], [], [])


def test_crlf_and_lone_cr_flags_and_lines() -> None:
    crlf = parse(b"# A\r\n\r\ntext\r\n## B\r\n")
    assert crlf.note["flags"] == ["crlf"]
    assert [(h["text"], h["line"]) for h in crlf.headings] == [("A", 1), ("B", 4)]
    assert "\r" not in crlf.chunks[0]["text"]
    cr = parse(b"# A\rtext\r## B\r")
    assert cr.note["flags"] == ["cr_only"]
    assert [(h["text"], h["line"]) for h in cr.headings] == [("A", 1), ("B", 3)]
    mixed = parse(b"# A\r\ntext\r## B\n")
    assert mixed.note["flags"] == ["crlf", "cr_only"]


@pytest.mark.parametrize("raw", [b"", b"   \n\t\n", b"\xef\xbb\xbf"])
def test_empty_note(raw: bytes) -> None:
    parsed = parse(raw)
    assert "empty" in parsed.note["flags"]
    assert (parsed.headings, parsed.chunks, parsed.note["chunk_count"]) == ([], [], 0)


def test_chunks_heading_bounded_with_file_lines() -> None:
    src = "---\na: 1\n---\nPreamble text.\n\n# One\nbody one\n## Two\nbody two\n# Three\n"
    parsed = parse(src)
    assert [
        (c["ordinal"], c["heading_ordinal"], c["heading_path"], c["start_line"], c["end_line"], c["text"])
        for c in parsed.chunks
    ] == [
        (0, None, [], 4, 5, "Preamble text.\n"),
        (1, 1, ["One"], 6, 7, "# One\nbody one"),
        (2, 2, ["One", "Two"], 8, 9, "## Two\nbody two"),
        (3, 3, ["Three"], 10, 10, "# Three"),
    ]


def test_blank_preamble_is_not_a_chunk() -> None:
    parsed = parse("---\na: 1\n---\n\n\n# H\ntext\n")
    assert [c["heading_ordinal"] for c in parsed.chunks] == [1]
    assert parsed.chunks[0]["ordinal"] == 0


def test_frontmatter_only_note_has_no_chunks() -> None:
    parsed = parse("---\ntitle: Only\n---\n")
    assert (parsed.note["chunk_count"], parsed.chunks, parsed.note["line_count"]) == (0, [], 3)


def test_token_count_and_terms() -> None:
    parsed = parse("# Alpha beta\nbeta gamma 東京都\n")
    chunk = parsed.chunks[0]
    tokens = tokenize(chunk["text"])
    assert chunk["token_count"] == len(tokens) == 6
    assert parsed_rows(parsed, "terms") == [
        {"term": t, "path": "n.md", "chunk_ordinal": 0, "tf": n} for t, n in sorted(Counter(tokens).items())
    ]


def test_long_section_split_into_whole_line_chunks() -> None:
    line = "word " * 199 + "end"  # 998 chars
    body = "\n".join([line] * 20)
    parsed = parse(f"# Big\n{body}\n## Next\nx\n")
    big = [c for c in parsed.chunks if c["heading_ordinal"] == 1]
    assert len(big) == 3
    assert all(len(c["text"]) <= MAX_CHUNK_CHARS for c in big)
    assert [(c["start_line"], c["end_line"]) for c in big] == [(1, 9), (10, 17), (18, 21)]
    assert all(c["heading_path"] == ["Big"] for c in big)
    assert "\n".join(c["text"] for c in big) == "# Big\n" + body
    assert [c["ordinal"] for c in parsed.chunks] == [0, 1, 2, 3]
    assert parsed.chunks[3]["heading_ordinal"] == 2


def test_overlong_single_line_cut_in_pieces() -> None:
    parsed = parse("# H\n" + "a" * (MAX_CHUNK_CHARS * 2 + 5) + "\n")
    assert [(c["start_line"], c["end_line"], len(c["text"])) for c in parsed.chunks] == [
        (1, 1, 3),
        (2, 2, MAX_CHUNK_CHARS),
        (2, 2, MAX_CHUNK_CHARS),
        (2, 2, 5),
    ]


def test_too_large_note_plain_windows() -> None:
    lines = [f"# line {i}" for i in range(MAX_NOTE_CHARS_FOR_STRUCTURE // 9 + 10)]
    src = "---\ntitle: Huge\n---\n" + "\n".join(lines) + "\n"
    parsed = parse(src)
    note = parsed.note
    assert note["too_large"] is True
    assert (note["title"], note["heading_count"], parsed.headings, parsed.links) == ("Huge", 0, [], [])
    assert note["line_count"] == len(lines) + 3
    assert note["char_count"] == len(src)
    first = parsed.chunks[0]
    assert (first["start_line"], first["end_line"], first["heading_ordinal"], first["heading_path"]) == (
        4,
        3 + PLAIN_WINDOW_LINES,
        None,
        [],
    )
    assert parsed.chunks[-1]["end_line"] == len(lines) + 3
    assert note["chunk_count"] == len(parsed.chunks) == -(-len(lines) // PLAIN_WINDOW_LINES)


def test_at_cap_is_not_too_large() -> None:
    src = "# H\n" + "x" * (MAX_NOTE_CHARS_FOR_STRUCTURE - 4)
    parsed = parse(src)
    assert parsed.note["too_large"] is False
    assert parsed.note["heading_count"] == 1


def test_deterministic() -> None:
    src = "---\ntags: [b, a]\n---\n# H\n[[x]]\n## I\ntext\n"
    first, second = parse(src), parse(src)
    for table in TABLES:
        assert parsed_rows(first, table) == parsed_rows(second, table)
