"""Security probes for every path-taking retrieval tool: typed errors, no absolute paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.operation import AppContext
from vault_agent.errors import VaultAgentError

from .golden import call

LOG = "log/Keeper Log.md"

# tool → how to put a probe path into its params
TOOLS: dict[str, Any] = {
    "read": lambda p: ("read", {"path": p, "full": True}),
    "scan": lambda p: ("scan", {"path": p}),
    "coverage": lambda p: ("coverage", {"path": p, "cited_ranges": []}),
    "audit_artifact": lambda p: ("audit", {"artifact_path": p, "source_path": LOG}),
    "audit_source": lambda p: ("audit", {"artifact_path": "artifacts/summary.md", "source_path": p}),
    "get": lambda p: ("get", {"path": p}),
    "related": lambda p: ("related", {"path": p}),
    "ls": lambda p: ("ls", {"relative_dir": p}),
    "grep": lambda p: ("grep", {"query": "lamp", "relative_dir": p}),
    "find": lambda p: ("find", {"query": "lamp", "scope": {"relative_dir": p}}),
}

PROBES: list[tuple[str, tuple[str, ...]]] = [
    ("../outside.md", ("INVALID_PATH",)),
    ("log/../../outside.md", ("INVALID_PATH",)),
    ("/etc/passwd", ("INVALID_PATH",)),
    ("C:\\Windows\\win.ini", ("INVALID_PATH",)),
    ("~/notes.md", ("INVALID_PATH",)),
    ("log/a\x00b.md", ("INVALID_PATH",)),
    ("link-out.md", ("INVALID_PATH", "NOT_FOUND")),
    ("linkdir/secret.md", ("INVALID_PATH", "NOT_FOUND")),
    ("linkdir", ("INVALID_PATH", "NOT_FOUND")),
    (".obsidian/app.json", ("FORBIDDEN",)),
    (".OBSIDIAN/app.json", ("FORBIDDEN",)),
    (".Obsidian", ("FORBIDDEN",)),
    ("log/.git/config", ("FORBIDDEN",)),
    (".Trash/x.md", ("FORBIDDEN",)),
    (".vault-agent/CURRENT", ("FORBIDDEN",)),
    ("no/such/note.md", ("NOT_FOUND",)),
]


@pytest.fixture(scope="module")
def probed(mctx: AppContext, tmp_path_factory: pytest.TempPathFactory) -> AppContext:
    ctx = mctx
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.md").write_text("# secret\n", encoding="utf-8")
    root = Path(ctx.settings.vault)
    os.symlink(outside / "secret.md", root / "link-out.md")
    os.symlink(outside, root / "linkdir")
    return ctx


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize(("probe", "codes"), PROBES, ids=[repr(p) for p, _ in PROBES])
def test_path_probe(probed: AppContext, tool: str, probe: str, codes: tuple[str, ...]) -> None:
    op, raw = TOOLS[tool](probe)
    if tool in ("ls", "grep", "find") and probe.startswith(("no/", "link-out")):
        codes = (*codes, "NOT_FOUND", "INVALID_PATH")  # folder tools: a missing or linked folder
    with pytest.raises(VaultAgentError) as info:
        call(probed, op, raw)
    err = info.value
    assert err.code in codes, (tool, probe, err.code, err.message)
    root = str(probed.settings.vault)
    assert root not in err.message and str(Path(root).parent) not in err.message
    assert "secret" not in err.message or probe.startswith("linkdir")


def test_listings_never_show_protected_excluded_or_links(probed: AppContext) -> None:
    entries = call(probed, "ls", {"glob": "**"})["data"]["entries"]
    paths = [e["path"] for e in entries]
    assert not [p for p in paths if p.startswith((".obsidian", "node_modules", "link", ".vault-agent"))]
    grep = call(probed, "grep", {"query": "secret", "mode": "plain"})["data"]["results"]
    assert grep == []
