"""vault_move: files and folders, conflicts, no-ops, and link rewriting (Obsidian resolution)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.errors import Conflict, InvalidParameter, NotFound
from vault_agent.files.links import LinkIndex, RewriteContext, rewrite_links

from .conftest import tree

Call = Callable[..., dict[str, Any]]


def _ctx(files: list[str], mapping: dict[str, str]) -> RewriteContext:
    after = [mapping.get(f, f) for f in files]
    return RewriteContext(mapping=mapping, before=LinkIndex(files), after=LinkIndex(after))


FILES = ["notes/src.md", "notes/target.md", "img/pic.png", "other/target.md", "x/solo.md", "y/dup.md"]


@pytest.mark.parametrize(
    ("line", "mapping", "expected"),
    [
        # bare name, unique before and after: rename changes the name
        ("see [[solo]] ok", {"x/solo.md": "y/renamed.md"}, "see [[renamed]] ok"),
        # bare name, same name after a folder move: untouched
        ("see [[solo]]", {"x/solo.md": "y/solo.md"}, "see [[solo]]"),
        # aliases, headings, embeds, .md kept as written
        (
            "[[solo|S]] [[solo#H 1]] ![[solo]] [[solo.md]]",
            {"x/solo.md": "z/new.md"},
            "[[new|S]] [[new#H 1]] ![[new]] [[new.md]]",
        ),
        # path form stays a path
        ("[[x/solo]] [[x/solo.md|a]]", {"x/solo.md": "y/s2.md"}, "[[y/s2]] [[y/s2.md|a]]"),
        # ambiguous bare name (two target.md): same folder as the source wins
        ("[[target]]", {"notes/target.md": "notes/t2.md"}, "[[t2]]"),
        # the other target.md is not resolved from notes/ by a bare name: untouched
        ("[[target]]", {"other/target.md": "other/t3.md"}, "[[target]]"),
        # a bare name that would become ambiguous after the move becomes a path
        ("[[solo]]", {"x/solo.md": "z/dup.md"}, "[[z/dup]]"),
        # markdown links: relative to the source, percent-encoding, anchors, embeds
        (
            "[t](target.md#h) ![p](../img/pic.png)",
            {"notes/target.md": "arch/t.md", "img/pic.png": "media/p 1.png"},
            "[t](../arch/t.md#h) ![p](../media/p%201.png)",
        ),
        ("[t](<target.md>)", {"notes/target.md": "a b/t.md"}, "[t](<../a b/t.md>)"),
        ("[s](/x/solo.md)", {"x/solo.md": "q/solo.md"}, "[s](/q/solo.md)"),
        # urls, code spans and unrelated links untouched
        (
            "[u](https://example.org/solo.md) `[[solo]]` [[nothing]]",
            {"x/solo.md": "q/z.md"},
            "[u](https://example.org/solo.md) `[[solo]]` [[nothing]]",
        ),
        # case-insensitive resolution
        ("[[SOLO]]", {"x/solo.md": "x/other.md"}, "[[other]]"),
    ],
)
def test_rewrite_line(line: str, mapping: dict[str, str], expected: str) -> None:
    out, _ = rewrite_links(line, "notes/src.md", "notes/src.md", _ctx(FILES, mapping))
    assert out == expected


def test_rewrite_skips_fenced_code() -> None:
    text = "[[solo]]\n```\n[[solo]]\n```\n~~~~\n[[solo]]\n~~~~\n[[solo]]"
    out, n = rewrite_links(text, "notes/src.md", "notes/src.md", _ctx(FILES, {"x/solo.md": "x/s.md"}))
    assert out == "[[s]]\n```\n[[solo]]\n```\n~~~~\n[[solo]]\n~~~~\n[[s]]"
    assert n == 2


def test_moved_source_relative_links_recomputed() -> None:
    ctx = _ctx(FILES, {"notes/src.md": "deep/er/src.md"})
    out, n = rewrite_links("[t](target.md) [[target]] [[./target]]", "notes/src.md", "deep/er/src.md", ctx)
    assert out == "[t](../../notes/target.md) [[target]] [[../../notes/target]]"
    assert n == 2


# ---- through the tool -------------------------------------------------------------------
@pytest.fixture
def linked(vault_dir: Path) -> Path:
    (vault_dir / "notes/b.md").write_text("# B\n")
    (vault_dir / "notes/a.md").write_text("see [[b]] and [[b#Top|alias]] and [md](b.md)\n```\n[[b]]\n```\n")
    (vault_dir / "index.md").write_text("- [[notes/b]]\n- ![[b]]\n- [x](notes/b.md)\n- [[unrelated]]\n")
    (vault_dir / "plain.md").write_text("nothing here about bee\n")
    return vault_dir


def test_move_file_rewrites_links(call: Call, linked: Path) -> None:
    body = call("mv", source="notes/b.md", destination="archive/2024/bee.md")
    data = body["data"]
    assert {k: data[k] for k in ("source", "destination", "type", "moved", "files_moved", "links_total")} == {
        "source": "notes/b.md",
        "destination": "archive/2024/bee.md",
        "type": "file",
        "moved": True,
        "files_moved": 1,
        "links_total": 6,
    }
    assert data["links_updated"] == [{"path": "index.md", "links": 3}, {"path": "notes/a.md", "links": 3}]
    assert (linked / "archive/2024/bee.md").read_text() == "# B\n"
    assert not (linked / "notes/b.md").exists()
    assert (linked / "notes/a.md").read_text() == (
        "see [[bee]] and [[bee#Top|alias]] and [md](../archive/2024/bee.md)\n```\n[[b]]\n```\n"
    )
    assert (linked / "index.md").read_text() == (
        "- [[archive/2024/bee]]\n- ![[bee]]\n- [x](archive/2024/bee.md)\n- [[unrelated]]\n"
    )


def test_move_without_link_update(call: Call, linked: Path) -> None:
    before_a = (linked / "notes/a.md").read_text()
    body = call("mv", source="notes/b.md", destination="b2.md", update_links=False)
    assert body["data"]["links_updated"] == []
    assert (linked / "notes/a.md").read_text() == before_a


def test_move_dry_run_plans_only(call: Call, linked: Path) -> None:
    before = tree(linked)
    body = call("mv", source="notes/b.md", destination="z/b.md", dry_run=True)
    assert body["data"]["moved"] is False
    assert body["data"]["dry_run"] is True
    assert body["data"]["links_updated"] == [
        {"path": "index.md", "links": 2},
        {"path": "notes/a.md", "links": 1},
    ]
    assert tree(linked) == before
    assert not (linked / "z").exists()


def test_move_folder(call: Call, linked: Path) -> None:
    body = call("mv", source="notes", destination="kb/notes")
    data = body["data"]
    assert data["type"] == "folder"
    assert data["files_moved"] == 2
    assert data["links_updated"] == [{"path": "index.md", "links": 2}]
    assert (linked / "index.md").read_text() == (
        "- [[kb/notes/b]]\n- ![[b]]\n- [x](kb/notes/b.md)\n- [[unrelated]]\n"
    )
    assert (linked / "kb/notes/a.md").read_text().startswith("see [[b]] and [[b#Top|alias]] and [md](b.md)")


def test_move_refuses_existing_destination(call: Call, linked: Path) -> None:
    before = tree(linked)
    with pytest.raises(Conflict, match="already exists"):
        call("mv", source="notes/b.md", destination="notes/a.md")
    with pytest.raises(Conflict):
        call("mv", source="notes", destination="index.md")
    assert tree(linked) == before


def test_move_same_path_noop_and_errors(call: Call, linked: Path) -> None:
    body = call("mv", source="notes/b.md", destination="./notes//b.md")
    assert body["data"]["moved"] is False
    assert body["data"]["files_moved"] == 0
    with pytest.raises(NotFound):
        call("mv", source="notes/zz.md", destination="x.md")
    with pytest.raises(InvalidParameter, match="into itself"):
        call("mv", source="notes", destination="notes/sub")
    with pytest.raises(NotFound):
        call("mv", source="NOTES/b.md", destination="x.md")  # writes never guess the case


def test_case_only_rename(call: Call, linked: Path) -> None:
    call("mv", source="notes/b.md", destination="notes/B.md")
    assert sorted(p.name for p in (linked / "notes").iterdir()) == ["B.md", "a.md"]
    assert "[[B]]" in (linked / "notes/a.md").read_text()


def test_move_expected_sha256_precondition(call: Call, linked: Path) -> None:
    """SPEC lists expected_sha256 on vault_move (issue 8 item 9): CONFLICT when the source
    changed since it was read; nothing moves, no link is rewritten."""
    import hashlib

    read_sha = hashlib.sha256((linked / "notes/b.md").read_bytes()).hexdigest()
    (linked / "notes/b.md").write_text("# B\n\nedited by the user meanwhile\n")
    before = tree(linked)
    with pytest.raises(Conflict, match="changed since it was read"):
        call("mv", source="notes/b.md", destination="archive/bee.md", expected_sha256=read_sha)
    with pytest.raises(Conflict):
        call("mv", source="notes/b.md", destination="archive/bee.md", expected_sha256=read_sha, dry_run=True)
    assert tree(linked) == before
    with pytest.raises(InvalidParameter, match="files only"):
        call("mv", source="notes", destination="kb", expected_sha256=read_sha)
    fresh_sha = hashlib.sha256((linked / "notes/b.md").read_bytes()).hexdigest()
    body = call("mv", source="notes/b.md", destination="archive/bee.md", expected_sha256=fresh_sha.upper())
    assert body["data"]["moved"] is True
