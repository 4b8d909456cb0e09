"""Seed 001's test matrix rows that apply to the snapshot-backed outline (fixtures/outline)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from api.serverkit import copy_fixture

from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.outline import get_note_outline
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SnapshotReader]:
    tmp = tmp_path_factory.mktemp("seed001")
    copy_fixture("outline", tmp / "vault")
    settings = Settings(vault=tmp / "vault", index_dir=tmp / "state")
    build_index(settings, full=True)
    rdr = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
    yield rdr
    rdr.close()


def _heads(reader: SnapshotReader, path: str) -> list[tuple[int, str, str]]:
    return [(h.level, h.text, h.id) for h in get_note_outline(reader, path).data.headings]


def test_frontmatter_is_not_outline(reader) -> None:
    assert _heads(reader, "frontmatter-keys.md") == [(1, "The only heading", "h1-the-only-heading-0001")]
    assert get_note_outline(reader, "frontmatter-keys.md").data.title == "Keys That Look Like Headings"


def test_atx_setext_and_closing_hashes(reader) -> None:
    assert [lv for lv, _, _ in _heads(reader, "atx.md")] == [1, 2, 3, 4, 5, 6]
    assert _heads(reader, "setext.md") == [(1, "Title", "h1-title-0001"), (2, "Subtitle", "h2-subtitle-0002")]
    assert _heads(reader, "closing-hashes.md")[-1] == (2, "Keep # inside", "h2-keep-inside-0004")


def test_code_blocks_are_not_headings(reader) -> None:
    assert [t for _, t, _ in _heads(reader, "fenced-code.md")] == ["Real heading", "Second real heading"]
    assert [t for _, t, _ in _heads(reader, "indented-code.md")] == ["Real heading", "After code"]
    assert [t for _, t, _ in _heads(reader, "html-block.md")] == ["Outline", "Markdown heading"]


def test_duplicates_get_distinct_ids(reader) -> None:
    ids = [i for _, _, i in _heads(reader, "duplicates.md")]
    assert ids == ["h1-notes-0001", "h2-install-0002", "h2-install-0003", "h2-install-0004"]


def test_inline_formatting_and_script_text(reader) -> None:
    assert _heads(reader, "inline-formatting.md")[0] == (2, "Bold Link code", "h2-bold-link-code-0001")
    assert _heads(reader, "script-like.md")[0] == (
        1,
        "<script>alert(1)</script>",
        "h1-script-alert-1-script-0001",
    )


def test_empty_no_headings_crlf_unicode(reader) -> None:
    assert _heads(reader, "empty.md") == [] and _heads(reader, "no-headings.md") == []
    assert [t for _, t, _ in _heads(reader, "crlf.md")] == ["First", "Second", "Third"]
    assert _heads(reader, "japanese.md")[0] == (1, "東京の会議", "h1-東京の会議-0001")
    assert _heads(reader, "empty-heading.md")[1] == (2, "", "h2-heading-0002")


def test_heading_cap_is_deterministic(reader) -> None:
    first = get_note_outline(reader, "many-headings.md").data
    again = get_note_outline(reader, "many-headings.md").data
    assert first == again and first.truncated is True and len(first.headings) == 500


def test_reads_mutate_nothing(reader) -> None:
    def listing() -> dict[str, tuple[int, int]]:
        out = {}
        for root in (reader.settings.vault, reader.settings.index_dir):
            for dirpath, _, files in os.walk(root):
                for name in files:
                    st = os.stat(os.path.join(dirpath, name))
                    out[os.path.join(dirpath, name)] = (st.st_mtime_ns, st.st_size)
        return out

    before = listing()
    for path in ("atx.md", "many-headings.md", "japanese.md"):
        get_note_outline(reader, path)
    assert listing() == before
