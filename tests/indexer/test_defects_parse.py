"""Issue 8 regressions at the indexer level: stray NUL bytes (item 1), case twins are not
"skipped" (item 3), the state folder excluded by its path only (item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_support import make_settings, write
from testkit import parsed_rows

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.errors import Forbidden
from vault_agent.indexer.build import build_index
from vault_agent.indexer.parse import parse_note
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.status import index_status

# A reverse-engineering write-up quoting a few bytes of a binary: a text note with NULs.
NUL_NOTE = (
    b"---\ntags: [ctf, reversing]\n---\n# Soln\n\nThe header reads \x00\x00\x01\x00 then"
    b" the flag checker xorshift loop.\n\n## Notes\n\nSee [[Other]].\n"
)
PNG_NAMED_MD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


def test_text_note_with_stray_nul_keeps_tags_headings_chunks_links() -> None:
    parsed = parse_note("ctf.md", NUL_NOTE, 0, len(NUL_NOTE))
    note = parsed.note
    assert note["flags"] == ["nul"]
    assert note["tags"] == ["ctf", "reversing"]
    assert [h["text"] for h in parsed.headings] == ["Soln", "Notes"]
    assert any("xorshift" in c["text"] and "\ufffd" in c["text"] for c in parsed.chunks)
    assert any(t["term"] == "xorshift" for t in parsed_rows(parsed, "terms"))
    assert [link["target"] for link in parsed.links] == ["Other"]


def test_truly_binary_md_is_flagged_and_named_in_status_verbose(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "img").mkdir(parents=True)
    (vault / "img" / "cover.md").write_bytes(PNG_NAMED_MD)
    (vault / "ctf.md").write_bytes(NUL_NOTE)
    settings = make_settings(vault)
    manifest = build_index(settings, full=True)
    assert manifest.note_count == 2  # the binary one is counted...
    details = index_status(settings, verbose=True).data.details
    assert details is not None
    assert details.binary_paths == ["img/cover.md"]  # ...and named, never silent


def test_case_twins_are_indexed_not_reported_skipped(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "CSS 片段/a.md", "# upper\n")
    write(vault, "css 片段/a.md", "# lower\n")
    settings = make_settings(vault)
    manifest = build_index(settings, full=True)
    assert manifest.note_count == 2
    assert "case_twin" not in manifest.skipped
    details = index_status(settings, verbose=True).data.details
    assert details is not None and details.skipped == {}
    assert details.case_twin_paths == ["CSS 片段/a.md", "css 片段/a.md"]


def test_state_dir_inside_the_vault_is_excluded_by_its_path_not_its_name(tmp_path: Path) -> None:
    """Item 5: `--index-dir <vault>/state/idx` must not hide every folder named `idx`."""
    vault = tmp_path / "v"
    write(vault, "projects/idx/plan.md", "# Plan\n")
    write(vault, "idx/top.md", "# Top\n")
    settings = make_settings(vault, vault / "state" / "idx", writes_enabled=True)
    manifest = build_index(settings, full=True)
    assert manifest.note_count == 2  # and the state dir's own files are never notes
    vault_ = vault_for_settings(settings)
    ctx = AppContext(settings=settings, vault=vault_, reader=SnapshotReader(settings, vault_))
    op = CATALOG.named("write")
    raw = {"path": "projects/idx/plan.md", "content": "# Plan 2\n", "mode": "overwrite"}
    assert body_of(op, invoke(op, ctx, raw))["data"]["written_path"] == "projects/idx/plan.md"
    for refused in ("state/idx/x.md", "STATE/Idx/x.md"):
        with pytest.raises(Forbidden):
            invoke(op, ctx, {"path": refused, "content": "x", "mode": "overwrite"})
