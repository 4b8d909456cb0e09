"""A commit of an in-process writer is loaded by the reader before CURRENT names it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from query.conftest import ReaderFactory
from vault_agent.config import Settings, load_settings
from vault_agent.contracts import Manifest
from vault_agent.indexer import build as build_mod
from vault_agent.indexer.build import build_index
from vault_agent.publish import ReaderPreload


def _build_beside_readers(settings: Settings) -> Manifest:
    """A build that tells this process's readers (as `serve --watch` wires its writer)."""
    return build_index(settings, hooks=(ReaderPreload(settings.index_dir),))


def _loads(caplog: pytest.LogCaptureFixture) -> list[int]:
    return [r.snapshot_id for r in caplog.records if r.getMessage() == "snapshot loaded"]  # type: ignore[attr-defined]


def _notes(reader, sql: str = "SELECT path FROM notes ORDER BY path") -> list[str]:
    with reader.acquire() as view:
        return [r[0] for r in view.con.execute(sql).fetchall()]


def test_the_first_request_after_a_commit_finds_it_loaded(
    tmp_path: Path, make_reader: ReaderFactory, caplog: pytest.LogCaptureFixture
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    settings = load_settings({"vault": vault}, env={})
    build_index(settings)
    reader = make_reader(settings)
    assert _notes(reader) == ["a.md"]
    caplog.set_level(logging.DEBUG, logger="vault_agent.query")
    caplog.clear()
    (vault / "b.md").write_text("# B\n", encoding="utf-8")
    manifest = _build_beside_readers(settings)
    assert _loads(caplog) == [manifest.snapshot_id]  # loaded during the commit
    caplog.clear()
    assert _notes(reader) == ["a.md", "b.md"]
    assert _loads(caplog) == []  # the request did not load anything


def test_a_preload_whose_commit_failed_is_never_served(
    tmp_path: Path, make_reader: ReaderFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    settings = load_settings({"vault": vault}, env={})
    build_index(settings)
    reader = make_reader(settings)
    assert _notes(reader) == ["a.md"]
    (vault / "b.md").write_text("# B\n", encoding="utf-8")
    real_commit = build_mod.commit

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(build_mod, "commit", failing)
    with pytest.raises(OSError):
        _build_beside_readers(settings)  # preloaded (a.md + b.md), never published
    assert _notes(reader) == ["a.md"]  # still the published snapshot
    monkeypatch.setattr(build_mod, "commit", real_commit)
    (vault / "b.md").unlink()
    (vault / "c.md").write_text("# C\n", encoding="utf-8")
    build_index(settings)
    assert _notes(reader) == ["a.md", "c.md"]
