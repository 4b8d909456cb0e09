"""Fixtures for the write tools: a real vault in tmp_path and a real AppContext."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_agent.api.invoke import body_of, invoke
from vault_agent.api.operation import AppContext
from vault_agent.api.ops import CATALOG
from vault_agent.config import Settings
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.server.context import close_context

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:  # for the transport engineer's test kit (api.serverkit)
    sys.path.insert(0, TESTS)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("# A\n\nalpha line\nsecond line\n", encoding="utf-8")
    (root / ".system").mkdir()
    (root / ".system" / "rules.md").write_text("reserved\n", encoding="utf-8")
    return root


def make_ctx(vault_dir: Path, writes: bool = True) -> AppContext:
    settings = Settings(vault=vault_dir, index_dir=vault_dir.parent / "state", writes_enabled=writes)
    vault = vault_for_settings(settings)
    return AppContext(settings=settings, vault=vault, reader=SnapshotReader(settings, vault))


@pytest.fixture
def ctx(vault_dir: Path) -> Iterator[AppContext]:
    c = make_ctx(vault_dir)
    try:
        yield c
    finally:
        close_context(c)


@pytest.fixture
def call(ctx: AppContext) -> Callable[..., dict[str, Any]]:
    """Invoke an operation by name through `invoke`; returns the HTTP body."""

    def run(name: str, **raw: Any) -> dict[str, Any]:
        op = CATALOG.named(name)
        return body_of(op, invoke(op, ctx, raw))

    return run


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under root (vault-relative) → bytes; for 'touched nothing' asserts."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }
