"""A real snapshot of the Bases fixture vault (fixtures/bases/vault) and `vault_base` over it.

The vault is copied to a temporary folder, every file's mtime set to one moment and the
clock fixed (2025-05-27 14:30:15) in UTC, so dates, `now()` and `relative()` are
reproducible; the index is built by the real indexer (`.base` files in the manifest).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

from vault_agent.config import Settings, load_settings
from vault_agent.errors import VaultAgentError
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.bases.models import BaseRequest
from vault_agent.query.bases.run import vault_base
from vault_agent.query.snapshot import SnapshotReader

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "fixtures" / "bases" / "vault"
NOW = dt.datetime(2025, 5, 27, 14, 30, 15)
MTIME = dt.datetime(2025, 5, 25, 8, 15, 0, tzinfo=dt.UTC).timestamp()


def clock() -> dt.datetime:
    return NOW


def copy_fixture(target: Path, extra: dict[str, str] | None = None) -> Settings:
    """The fixture vault (plus `extra` files) at `target`, indexed; every mtime the same."""
    shutil.copytree(FIXTURE, target)
    for rel, text in (extra or {}).items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text, encoding="utf-8")
    for folder, _, files in os.walk(target):
        for name in files:
            os.utime(Path(folder) / name, (MTIME, MTIME))
    settings = load_settings(
        {"vault": target, "index_dir": target.parent / "index"}, env={}, cwd=target.parent
    )
    build_index(settings, full=True)
    return settings


class Runner:
    """`vault_base` calls on one reader, answered as the HTTP body would be (or the error)."""

    def __init__(self, settings: Settings) -> None:
        self.reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
        self.cache: dict[Any, Any] = {}

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        try:
            outcome = vault_base(self.reader, BaseRequest(**kwargs), cache=self.cache, clock=clock)
        except VaultAgentError as err:
            return err.to_body()
        return {
            "data": outcome.data.model_dump(mode="json", by_alias=True),
            "warnings": [w.model_dump() for w in outcome.warnings],
        }

    def close(self) -> None:
        self.reader.close()


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False) + "\n"
