"""Shared fixtures: a vault in tmp_path, snapshots built from it, and readers that close."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from query.snapfactory import SnapFactory, settings_for, write_vault

# The fixture-copy helper is shared with the API tests (importlib mode: put tests/ on the path).
if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vault_agent.config import Settings
from vault_agent.contracts import Freshness
from vault_agent.paths import vault_for_settings
from vault_agent.query.snapshot import SnapshotReader

ReaderFactory = Callable[..., SnapshotReader]


@pytest.fixture
def make_reader() -> Iterator[ReaderFactory]:
    """Readers whose freshness is pinned (default 'fresh'); all closed at teardown."""
    made: list[SnapshotReader] = []

    def make(settings: Settings, freshness: Freshness | None = "fresh") -> SnapshotReader:
        fn = None if freshness is None else (lambda _m: freshness)
        reader = SnapshotReader(settings, vault_for_settings(settings), freshness=fn)
        made.append(reader)
        return reader

    yield make
    for reader in made:
        reader.close()


@pytest.fixture
def snap(tmp_path: Path) -> Callable[[dict[str, str | bytes]], tuple[Settings, SnapFactory]]:
    """Write files into a fresh vault and commit one snapshot of all its notes."""

    def build(files: dict[str, str | bytes]) -> tuple[Settings, SnapFactory]:
        vault = tmp_path / "vault"
        vault.mkdir(exist_ok=True)
        write_vault(vault, files)
        settings = settings_for(vault)
        factory = SnapFactory(settings)
        factory.commit(factory.walk())
        return settings, factory

    return build
