"""Golden rows for the fixture vaults (regenerate: pytest --update-golden this file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from testkit import check_golden, parsed_rows

from vault_agent.indexer.parse import parse_note
from vault_agent.paths import Vault

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
VAULTS = ("outline", "orientation", "demo")


def vault_rows(name: str) -> dict[str, Any]:
    """Every note of a fixture vault → its rows (terms summarized as a count, mtime fixed)."""
    vault = Vault(REPO / "fixtures" / name)
    out: dict[str, Any] = {}
    for entry in vault.walk():
        raw = vault.read_bytes(vault.resolve(entry.rel, match="exact"))
        parsed = parse_note(entry.rel, raw, 0, len(raw))
        out[entry.rel] = {
            "note": parsed.note,
            "headings": parsed.headings,
            "chunks": parsed.chunks,
            "links": parsed.links,
            "props": parsed.props,
            "tags": parsed.tags,
            "term_rows": len(parsed_rows(parsed, "terms")),
        }
    return out


@pytest.mark.parametrize("name", VAULTS)
def test_golden(name: str) -> None:
    text = json.dumps(vault_rows(name), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    check_golden(GOLDEN / f"{name}.json", text)


def test_outline_fixture_covers_seed_001_matrix() -> None:
    rows = vault_rows("outline")
    texts = {rel: [h["text"] for h in r["headings"]] for rel, r in rows.items()}
    assert texts["inline-formatting.md"][0] == "Bold Link code"
    assert texts["fenced-code.md"] == ["Real heading", "Second real heading"]
    assert texts["indented-code.md"] == ["Real heading", "After code"]
    assert texts["html-block.md"] == ["Outline", "Markdown heading"]
    assert texts["frontmatter-keys.md"] == ["The only heading"]
    assert texts["comments.md"] == ["Visible", "Also visible"]
    assert texts["empty.md"] == texts["no-headings.md"] == []
    assert rows["bom-frontmatter.md"]["note"]["title"] == "BOM Note"
    assert rows["crlf.md"]["note"]["flags"] == ["crlf"]
    assert len(texts["many-headings.md"]) == 601
    assert [h["id"] for h in rows["duplicates.md"]["headings"]][1:] == [
        "h2-install-0002",
        "h2-install-0003",
        "h2-install-0004",
    ]


def test_orientation_fixture_excludes_and_counts() -> None:
    rows = vault_rows("orientation")
    assert not any(rel.startswith(".obsidian/") or "node_modules/" in rel for rel in rows)
    assert len(rows) == 15
    assert {r["note"]["folder"].split("/")[0] for r in rows.values()} == {
        "",
        "areas",
        "journal",
        "projects",
        "resources",
    }
    assert [rel for rel, r in rows.items() if r["note"]["fm_status"] == "invalid"] == [
        "resources/broken-frontmatter.md"
    ]
    tags = {t for r in rows.values() for t in r["note"]["tags"]}
    assert 5 <= len(tags) <= 10


def test_parsing_never_touches_the_vault() -> None:
    """Seed 001 data integrity: parsing reads bytes only; no file changes, no sidecars."""
    root = REPO / "fixtures" / "outline"

    def state() -> dict[str, tuple[int, bytes]]:
        return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*")}

    before = state()
    first = vault_rows("outline")
    second = vault_rows("outline")
    assert state() == before
    assert first == second
