"""Fixtures: a real vault in tmp_path, a real index built by the engine, a real reader."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# The fixture-copy helper is shared with the API tests (importlib mode: put tests/ on the path).
if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from api.serverkit import copy_fixture  # noqa: E402

from vault_agent.api.operation import AppContext  # noqa: E402
from vault_agent.config import Settings  # noqa: E402
from vault_agent.contracts import Freshness  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.paths import vault_for_settings  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402

from .vaultgen import write_vault  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def make_ctx(root: Path, *, index: bool = True, freshness: Freshness | None = "fresh") -> AppContext:
    settings = Settings(vault=root, index_dir=root / ".vault-agent")
    if index:
        build_index(settings, full=True)
    vault = vault_for_settings(settings)
    fn = (lambda _m: freshness) if freshness else None
    reader = SnapshotReader(settings, vault, freshness=fn)
    return AppContext(settings=settings, vault=vault, reader=reader)


@contextmanager
def vault_ctx(root: Path, notes: dict[str, str], *, index: bool = True) -> Iterator[AppContext]:
    """A context over a vault of `notes` written at `root` (indexed unless told), closed after."""
    c = make_ctx(write_vault(root, notes), index=index)
    try:
        yield c
    finally:
        c.reader.close()


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[AppContext]:
    c = make_ctx(write_vault(tmp_path / "vault"))
    yield c
    c.reader.close()


@pytest.fixture(scope="module")
def mctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    """One indexed vault per test module (for read-only tests that do not change it)."""
    c = make_ctx(write_vault(tmp_path_factory.mktemp("m") / "vault"))
    yield c
    c.reader.close()


@pytest.fixture(scope="module")
def mdemo_ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppContext]:
    root = tmp_path_factory.mktemp("d") / "demo"
    copy_fixture("demo", root)
    c = make_ctx(root)
    yield c
    c.reader.close()
