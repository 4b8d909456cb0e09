"""Sections as read addresses (issue 23 item 1): vault_read, vault_scan, get_note and
read_file read a heading's section by section_id, heading text, heading path or a
`[[Note#Heading]]` path; exactly one address; duplicates are AMBIGUOUS; headings inside
code are no address; a long section is read in pages; the outline tools name the next read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG

from .conftest import vault_ctx
from .golden import call, check_golden, error_of

GUIDE = "docs/Setup Guide.md"
NOTES = {
    GUIDE: (
        "---\ntitle: Setup Guide\n---\n"  # 1-3
        "# Setup Guide\n"  # 4
        "\n"
        "Intro text.\n"
        "\n"
        "## Install\n"  # 8
        "\n"
        "Run the installer.\n"
        "\n"
        "### On Linux\n"  # 12
        "\n"
        "apt install it\n"
        "\n"
        "```\n"
        "## Not a heading\n"  # 17: inside code
        "```\n"
        "\n"
        "## Usage\n"  # 20
        "\n"
        "Use it daily.\n"
        "\n"
        "### Install\n"  # 24: a second 'Install', under Usage
        "\n"
        "Plugins install the same way.\n"
    ),
    "docs/empty.md": "no headings here\n",
}


@pytest.fixture(scope="module")
def sctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    with vault_ctx(tmp_path_factory.mktemp("sections") / "vault", NOTES) as c:
        yield c


CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("read_by_id", "read", {"path": GUIDE, "section_id": "h2-install-0002"}),
    ("read_by_source_id", "read", {"path": GUIDE, "section_id": "docs-setup-guide-md:h3-on-linux-0003"}),
    ("read_by_text", "read", {"path": GUIDE, "heading": "  USAGE "}),
    ("read_by_path", "read", {"path": GUIDE, "heading": "usage > install"}),
    ("read_by_wikilink", "read", {"path": "[[Setup Guide#Usage#Install]]"}),
    ("read_top_section", "read", {"path": "Setup Guide", "heading": "Setup Guide", "line_numbers": True}),
    ("scan_section", "scan", {"path": GUIDE, "section_id": "h2-install-0002", "chunk_lines": 4}),
    ("get_section", "get", {"path": GUIDE, "heading": "Setup Guide > Install"}),
    ("read_file_section", "read_file", {"path": GUIDE, "section_id": "h2-usage-0004"}),
]


@pytest.mark.parametrize(("name", "op", "raw"), CASES, ids=[c[0] for c in CASES])
def test_section_reads_golden(sctx: AppContext, name: str, op: str, raw: dict[str, Any]) -> None:
    check_golden(f"section_{name}", call(sctx, op, raw))


ERRORS: list[tuple[str, str, dict[str, Any]]] = [
    ("duplicate_heading", "read", {"path": GUIDE, "heading": "install"}),
    ("unknown_heading", "read", {"path": GUIDE, "heading": "Instal"}),
    ("unknown_id", "read", {"path": GUIDE, "section_id": "h2-install-0009"}),
    ("code_heading", "read", {"path": GUIDE, "heading": "Not a heading"}),
    ("other_notes_id", "read", {"path": GUIDE, "section_id": "docs-other-md:h2-install-0002"}),
    ("no_headings", "scan", {"path": "docs/empty.md", "heading": "x"}),
    ("range_and_id", "read", {"path": GUIDE, "range": {"start_line": 1}, "section_id": "h2-install-0002"}),
    ("id_and_heading", "get", {"path": GUIDE, "section_id": "h2-install-0002", "heading": "Usage"}),
    ("link_and_heading", "read", {"path": "[[Setup Guide#Usage]]", "heading": "Usage"}),
    ("block_reference", "read", {"path": "[[Setup Guide#^abc123]]"}),
    ("empty_heading", "read", {"path": GUIDE, "heading": " "}),
    ("cursor_before_section", "scan", {"path": GUIDE, "heading": "Usage", "cursor": {"start_line": 2}}),
    ("no_range_missing_note", "read", {"path": "docs/missing.md"}),
    ("no_range", "read", {"path": GUIDE}),
]


def test_section_errors_golden(sctx: AppContext) -> None:
    check_golden("section_errors", {name: error_of(sctx, op, raw) for name, op, raw in ERRORS})


def test_code_block_heading_lines_belong_to_their_section(sctx: AppContext) -> None:
    """Line 17 looks like a heading but sits in a fence: the Install section runs past it."""
    data = call(sctx, "read", {"path": GUIDE, "section_id": "h2-install-0002"})["data"]
    assert data["applied_range"] == {"start_line": 8, "end_line": 19}
    assert "## Not a heading" in data["text"]


def test_a_huge_section_is_read_in_pages(tmp_path: Path) -> None:
    """A section over the budget: each page says where the section goes on (SECTION_CONTINUES);
    following it with plain ranges gives back exactly the section's text."""
    body = "".join(f"line {i} " + "x" * 90 + "\n" for i in range(1, 1501))
    text = "# Big\n\n## Long\n\n" + body + "\n## After\n\ntail\n"
    with vault_ctx(tmp_path / "vault", {"big.md": text}) as ctx:
        lines = text.splitlines(keepends=True)
        want = "".join(lines[2 : len(lines) - 3])  # "## Long" through the blank line before "## After"
        first = call(ctx, "read", {"path": "big", "heading": "long"})
        got = first["data"]["text"]
        warning = [w for w in first["warnings"] if w["code"] == "SECTION_CONTINUES"]
        assert first["data"]["truncated_reason"] == "max_chars" and len(warning) == 1
        pages = 1
        while warning:
            m = re.search(
                r"range \{start_line: (\d+)(?:, start_char: (\d+))?, end_line: (\d+)\}", warning[0]["message"]
            )
            assert m is not None
            rng: dict[str, int] = {"start_line": int(m.group(1)), "end_line": int(m.group(3))}
            if m.group(2):
                rng["start_char"] = int(m.group(2))
            page = call(ctx, "read", {"path": "big.md", "range": rng})
            got += page["data"]["text"]
            pages += 1
            nxt = page["data"]["next_offset"]
            if page["data"]["truncated_reason"] == "max_chars":
                warning = [
                    {"message": f"range {{start_line: {nxt['start_line']}, end_line: {rng['end_line']}}}"}
                ]
            else:
                warning = []
        assert got == want and pages > 5
        # The scan pages a section by itself: its cursor stays inside and eof is the section's end.
        scanned, cursor = "", None
        for _ in range(100):
            raw: dict[str, Any] = {"path": "big.md", "section_id": "h2-long-0002"}
            if cursor:
                raw["cursor"] = cursor
            data = call(ctx, "scan", raw)["data"]
            scanned += data["text"]
            if data["eof"]:
                break
            cursor = data["next_actions"][0]["params"]["cursor"]
        assert scanned == want


def test_edited_file_warns_that_section_lines_may_be_off(tmp_path: Path) -> None:
    with vault_ctx(tmp_path / "vault", {"a.md": "# A\n\n## B\n\nb\n"}) as ctx:
        (ctx.settings.vault / "a.md").write_text("# A\n\nnew line\n\n## B\n\nb\n", encoding="utf-8")
        body = call(ctx, "read", {"path": "a.md", "heading": "B"})
        assert [w["code"] for w in body["warnings"]] == ["NOTE_CHANGED"]


def test_a_section_read_needs_the_index(tmp_path: Path) -> None:
    with vault_ctx(tmp_path / "vault", {"a.md": "# A\n"}, index=False) as ctx:
        assert call(ctx, "read", {"path": "a.md", "full": True})["data"]["text"] == "# A\n"
        assert error_of(ctx, "read", {"path": "a.md", "heading": "A"})["code"] == "INDEX_NOT_FOUND"


@pytest.mark.parametrize("op", ["get-note-outline", "get-document-tree", "get-section-source"])
def test_outline_answers_name_the_read_that_follows(sctx: AppContext, op: str) -> None:
    from vault_agent.api.invoke import invoke

    outcome = invoke(CATALOG.named(op), sctx, {"path": GUIDE})
    assert [w.model_dump() for w in outcome.warnings] == [
        {
            "code": "NEXT_READ",
            "message": "read one section with vault_read(path='docs/Setup Guide.md', "
            "section_id='h1-setup-guide-0001'), any id above; heading='text' works too",
        }
    ]
    empty = invoke(CATALOG.named(op), sctx, {"path": "docs/empty.md"}).warnings
    assert [w.message for w in empty] == [
        "no headings; read the note with vault_read(path='docs/empty.md', full=true)"
    ]


# ------------------------------------------------------------------ property: by id == by lines
_WORDS = st.sampled_from(["alpha", "beta", "Gamma", "delta x", "ε", "same", "same"])
_BLOCK = st.one_of(
    st.tuples(st.just("heading"), st.integers(1, 6), _WORDS),
    st.tuples(st.just("text"), st.just(0), _WORDS),
    st.tuples(st.just("blank"), st.just(0), st.just("")),
    st.tuples(st.just("code"), st.integers(1, 3), _WORDS),
)


def _render(blocks: list[tuple[str, int, str]], frontmatter: bool) -> str:
    out = ["---", "title: t", "---"] if frontmatter else []
    for kind, n, word in blocks:
        if kind == "heading":
            out += ["#" * n + " " + word, ""]
        elif kind == "text":
            out += [f"{word} text", ""]
        elif kind == "blank":
            out.append("")
        else:  # a fence with heading-like lines inside: never a heading
            out += ["```"] + [f"# {word} in code"] * n + ["```", ""]
    return "\n".join(out) + "\n"


def _independent_sections(text: str) -> list[tuple[int, str]]:
    """(level, section text) of every heading, computed from the lines alone."""
    lines = text.splitlines(keepends=True)
    heads: list[tuple[int, int]] = []  # (line index, level)
    fenced = False
    start = 3 if text.startswith("---\n") else 0
    for i, line in enumerate(lines):
        if i < start:
            continue
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"(#{1,6}) \S", line)
        if m and not fenced:
            heads.append((i, len(m.group(1))))
    out = []
    for k, (i, level) in enumerate(heads):
        end = next((j for j, lv in heads[k + 1 :] if lv <= level), len(lines))
        out.append((level, "".join(lines[i:end])))
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    notes=st.lists(
        st.tuples(st.lists(_BLOCK, min_size=1, max_size=14), st.booleans()), min_size=1, max_size=3
    )
)
def test_reading_by_id_returns_the_lines_up_to_the_next_heading_of_the_same_or_higher_level(
    tmp_path_factory: pytest.TempPathFactory, notes: list[tuple[list[tuple[str, int, str]], bool]]
) -> None:
    texts = {f"n{i}.md": _render(blocks, fm) for i, (blocks, fm) in enumerate(notes)}
    with vault_ctx(tmp_path_factory.mktemp("prop") / "vault", texts) as ctx:
        for rel, text in texts.items():
            outline = call(ctx, "get-note-outline", {"path": rel})["headings"]
            expected = _independent_sections(text)
            assert [h["level"] for h in outline] == [lv for lv, _ in expected]
            for head, (_, section) in zip(outline, expected, strict=True):
                got = call(
                    ctx, "read", {"path": rel, "section_id": head["id"], "limits": {"max_chars": 100_000}}
                )
                assert got["data"]["text"] == section


def test_a_note_in_a_segment_without_headings_has_an_empty_outline(tmp_path: Path) -> None:
    """Regression: a segment whose notes have no heading at all (its headings table is empty)
    made every outline and get_note of those notes fail with INTERNAL."""
    with vault_ctx(tmp_path / "vault", {"plain.md": "just text\n"}) as ctx:
        assert call(ctx, "get-note-outline", {"path": "plain.md"})["headings"] == []
        assert call(ctx, "get", {"path": "plain"})["data"]["headings"] == []
        assert error_of(ctx, "read", {"path": "plain", "heading": "x"})["code"] == "NOT_FOUND"
