"""Issue 8 item 2 through `related`: escaped-pipe and partial-path links count as links
both ways, with the same resolver as vault_move."""

from __future__ import annotations

from pathlib import Path

from .conftest import make_ctx
from .golden import call
from .vaultgen import write_vault

FILES = {
    "en/Plugins/Canvas.md": "# Canvas plugin\n",
    "zh/Plugins/Canvas.md": "# 白板\n",
    "en/Getting started/Canvas.md": "# Start with canvas\n",
    "en/Plugins/List.md": "| Plugin | Page |\n| --- | --- |\n| Start | [[Getting started/Canvas\\|start]] |\n",
    "zh/Plugins/Index.md": "见 [[Canvas\\|白板]]\n",
}


def test_related_resolves_escaped_pipes_partial_paths_and_ambiguous_names(tmp_path: Path) -> None:
    ctx = make_ctx(write_vault(tmp_path / "vault", FILES))
    try:

        def links(path: str) -> dict[str, list[str]]:
            rows = call(ctx, "related", {"path": path})["data"]["related"]
            wanted = ("links_to", "linked_from")
            return {
                r["path"]: [x for x in r["reasons"] if x in wanted]
                for r in rows
                if set(wanted) & set(r["reasons"])
            }

        assert links("en/Plugins/List.md") == {"en/Getting started/Canvas.md": ["links_to"]}
        assert links("en/Getting started/Canvas.md") == {"en/Plugins/List.md": ["linked_from"]}
        # The bare name is ambiguous: Obsidian's choice is the note in the source's folder.
        assert links("zh/Plugins/Index.md") == {"zh/Plugins/Canvas.md": ["links_to"]}
        assert "zh/Plugins/Index.md" not in links("en/Plugins/Canvas.md")
    finally:
        ctx.reader.close()
