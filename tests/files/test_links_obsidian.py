"""Issue 8 item 2: Obsidian link forms, resolved by the one resolver that `related` and the
link rewrite of `vault_move` share: `[[Note\\|alias]]` (the escaped pipe Obsidian writes in
tables), partial paths `[[Folder/Note]]` matching the end of a full path, and an ambiguous
bare name resolved as Obsidian does (own folder, else shortest path) instead of dropped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_agent.indexer.links import extract_links
from vault_agent.linkpaths import LinkResolver

Call = Callable[..., dict[str, Any]]

# The help-repository shape: one bare name in several folders, one at a deeper level.
FILES = [
    "Home.md",
    "en/Plugins/Canvas.md",
    "zh/Plugins/Canvas.md",
    "en/Getting started/Canvas.md",
    "en/Plugins/Index.md",
    "notes/Index.md",
    "Index.md",
]


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        # en/… and zh/Plugins/Canvas.md are equally long: code-point order, deterministic
        ("Plugins/Canvas", "Home.md", ("en/Plugins/Canvas.md", "suffix")),
        ("en/Plugins/Canvas", "Home.md", ("en/Plugins/Canvas.md", "path")),  # exact path
        ("Getting started/Canvas", "Home.md", ("en/Getting started/Canvas.md", "suffix")),  # suffix
        ("plugins/canvas.md", "zh/Plugins/x.md", ("zh/Plugins/Canvas.md", "suffix")),  # own folder
        ("Canvas", "en/Plugins/Index.md", ("en/Plugins/Canvas.md", "name")),  # own folder wins
        ("Canvas", "Home.md", ("en/Plugins/Canvas.md", "name")),  # else the shortest path
        ("Index", "en/Plugins/x.md", ("Index.md", "name")),  # an exact vault path wins first
        ("./Index", "notes/a.md", ("notes/Index.md", "relative")),
        ("./Canvas", "Home.md", None),  # ./ is relative only: no name fallback
    ],
)
def test_resolver_follows_obsidian(target: str, source: str, expected: tuple[str, str] | None) -> None:
    assert LinkResolver(FILES).resolve(target, source, markdown=False) == expected


def test_escaped_pipe_in_a_table_is_the_alias_separator() -> None:
    lines = [
        "| Plugin | Page |",
        "| --- | --- |",
        "| Canvas | [[Plugins/Canvas\\|Canvas]] |",
        "| Home | [[Home#Top\\|start]] ![[pic.png\\|200]] |",
    ]
    rows = extract_links("t.md", lines, 1, [])
    assert [(r["target"], r["anchor"], r["kind"]) for r in rows] == [
        ("Plugins/Canvas", None, "wikilink"),
        ("Home", "Top", "wikilink"),
        ("pic.png", None, "embed"),
    ]


@pytest.fixture
def help_vault(vault_dir: Path) -> Path:
    for rel in ("en/Plugins/Canvas.md", "zh/Plugins/Canvas.md", "en/Getting started/Canvas.md"):
        (vault_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault_dir / rel).write_text(f"# {rel}\n")
    (vault_dir / "en/Plugins/List.md").write_text(
        "| Plugin | Page |\n| --- | --- |\n| Canvas | [[Canvas\\|the canvas]] |\n"
        "| Start | [[Getting started/Canvas\\|start]] |\n"
    )
    return vault_dir


def test_move_rewrites_escaped_pipe_and_partial_path_links(call: Call, help_vault: Path) -> None:
    body = call("mv", source="en/Getting started/Canvas.md", destination="en/Basics/Canvas.md")
    assert body["data"]["links_total"] == 1
    assert (help_vault / "en/Plugins/List.md").read_text() == (
        "| Plugin | Page |\n| --- | --- |\n| Canvas | [[Canvas\\|the canvas]] |\n"
        "| Start | [[Basics/Canvas\\|start]] |\n"
    )
    # The ambiguous bare name resolves to the note in the source's own folder: moving it
    # rewrites the link (kept as short as still resolves), the table pipe untouched.
    body = call("mv", source="en/Plugins/Canvas.md", destination="en/Plugins/Board.md")
    assert body["data"]["links_total"] == 1
    assert "[[Board\\|the canvas]]" in (help_vault / "en/Plugins/List.md").read_text()


def test_move_keeps_a_bare_name_only_while_it_still_reaches_the_file(call: Call, help_vault: Path) -> None:
    (help_vault / "Home.md").write_text("[[Canvas]]\n")  # shortest path: en/Plugins/Canvas.md
    call("mv", source="en/Plugins/Canvas.md", destination="archive/old/deep/Canvas.md")
    # A bare [[Canvas]] would now reach zh/Plugins/Canvas.md (shortest): spelled as a path.
    assert (help_vault / "Home.md").read_text() == "[[archive/old/deep/Canvas]]\n"
