"""Shared helpers of the engine tests: settings, note files, whole-snapshot row dumps."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import duckdb

from vault_agent.config import Settings, load_settings
from vault_agent.contracts import SEGMENTS_DIR, TABLE_SORT, TABLES, Manifest
from vault_agent.freshness import read_current_manifest

REPO = Path(__file__).resolve().parents[2]  # the checkout (subprocess cwd)
PY = sys.executable  # the interpreter running the tests, wherever its environment lives


def make_settings(vault: Path, index_dir: Path | None = None, **flags: Any) -> Settings:
    vault.mkdir(parents=True, exist_ok=True)
    return load_settings(
        {"vault": vault, "index_dir": index_dir or vault / ".vault-agent", **flags}, env={}, cwd=vault
    )


def write(vault: Path, rel: str, text: str) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def note_text(i: int, extra: str = "") -> str:
    return f"---\ntitle: Note {i}\ntags: [t{i % 5}, common]\n---\n# Heading {i}\n\nbody {i} {extra}\n\n## Sub\n\nmore [[n{i + 1}]]\n"


def current_manifest(index_dir: Path) -> Manifest:
    """The CURRENT snapshot's manifest; the test fails when none is published yet."""
    manifest = read_current_manifest(index_dir)
    assert manifest is not None, "no snapshot published"
    return manifest


def snapshot_rows(index_dir: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every live row of every table of the CURRENT snapshot, in a canonical order (DuckDB)."""
    manifest = read_current_manifest(index_dir)
    assert manifest is not None
    con = duckdb.connect()
    out: dict[str, list[tuple[Any, ...]]] = {}
    try:
        for table, schema in TABLES.items():
            parts = []
            for ref in manifest.segments:
                f = str(Path(index_dir) / SEGMENTS_DIR / ref.files[table]).replace("'", "''")
                dead = ", ".join("'" + p.replace("'", "''") + "'" for p in ref.deleted)
                where = f" WHERE path NOT IN ({dead})" if dead else ""
                parts.append(f"SELECT * FROM read_parquet('{f}'){where}")
            cols = ", ".join(f.name for f in schema)
            if not parts:
                out[table] = []
                continue
            order = ", ".join(list(TABLE_SORT[table]) + [c for c in (f.name for f in schema)])
            sql = f"SELECT {cols} FROM ({' UNION ALL '.join(parts)}) ORDER BY {order}"
            out[table] = con.execute(sql).fetchall()
    finally:
        con.close()
    return out


def disk_notes(vault: Path) -> set[str]:
    """Every note path under the vault (plain walk; the tests create no exotic names)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(vault):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f.endswith(".md"):
                out.add(os.path.relpath(os.path.join(dirpath, f), vault).replace(os.sep, "/"))
    return out
