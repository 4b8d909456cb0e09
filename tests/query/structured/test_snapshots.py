"""vault_query answers from one snapshot, with the rows of replaced and deleted notes gone:
an edit commits a new segment and tombstones the old rows (props, tags, notes alike)."""

from __future__ import annotations

from pathlib import Path

from query.structured.kit import opened, paths, query

from vault_agent.config import Settings
from vault_agent.indexer.build import build_index


def _write(vault: Path, rel: str, text: str) -> None:
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_text(text, encoding="utf-8")


def test_edits_and_deletes_replace_rows_in_every_table(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for i in range(30):
        _write(vault, f"n/{i:02d}.md", f"---\nstatus: draft\npriority: {i % 5}\ntags: [old]\n---\n# {i}\n")
    settings = Settings(vault=vault, index_dir=tmp_path / "state")
    build_index(settings, full=True)
    with opened(settings) as ctx:
        assert len(paths(ctx, tags=["old"])) == 30
    _write(vault, "n/03.md", "---\nstatus: done\npriority: 9\n---\n# 3 #new/one\n")
    (vault / "n/04.md").unlink()
    _write(vault, "n/99.md", "---\nstatus: draft\n---\n# new note\n")
    build_index(settings)  # incremental: a new segment, tombstones in the old one
    with opened(settings) as ctx:
        assert len(ctx.reader.current_manifest().segments) >= 2  # type: ignore[union-attr]
        assert "n/03.md" not in paths(ctx, tags=["old"]) and "n/04.md" not in paths(ctx, tags=["old"])
        assert len(paths(ctx, tags=["old"])) == 28
        assert paths(ctx, tags=["new"]) == ["n/03.md"]
        assert paths(ctx, where=[{"field": "status", "op": "=", "value": "done"}]) == ["n/03.md"]
        drafts = paths(ctx, where=[{"field": "status", "op": "=", "value": "draft"}], limit=500)
        assert (
            len(drafts) == 29 and "n/03.md" not in drafts and "n/04.md" not in drafts and "n/99.md" in drafts
        )
        assert paths(ctx, sort="-priority", limit=1) == ["n/03.md"]
        out = query(ctx, where=[{"field": "priority", "op": ">=", "value": 4}], select=["priority"])
        assert [(r.path, r.properties) for r in out.data.results] == [
            ("n/03.md", {"priority": 9}), ("n/09.md", {"priority": 4}), ("n/14.md", {"priority": 4}),
            ("n/19.md", {"priority": 4}), ("n/24.md", {"priority": 4}), ("n/29.md", {"priority": 4}),
        ]  # fmt: skip
        assert query(ctx).data.total == 30
        assert paths(ctx, dql="LIST WHERE !status") == []
