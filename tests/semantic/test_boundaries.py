"""The reader side of semantic search never imports the writer (indexer) or transports."""

from __future__ import annotations

import ast
from pathlib import Path

SEMANTIC = Path(__file__).resolve().parents[2] / "vault_agent" / "semantic"
WRITER_SIDE = {
    "embedder.py",
    "embed_plan.py",
    "embedder_status.py",
    "store_write.py",
    "embed_job.py",
    "worker.py",
    "worker_client.py",
    "worker_messages.py",
    "worker_supervisor.py",
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_reader_side_modules_import_no_writer_code() -> None:
    bad = (
        "vault_agent.indexer",
        "vault_agent.api",
        "vault_agent.cli",
        "vault_agent.semantic.embedder",
        "vault_agent.semantic.store_write",
        "vault_agent.semantic.embed_job",
        "vault_agent.semantic.worker",
    )
    found = {
        f"{p.name}: {name}"
        for p in SEMANTIC.glob("*.py")
        if p.name not in WRITER_SIDE
        for name in _imports(p)
        if name.startswith(bad)
    }
    assert found == set()
