"""Fixtures: one built orientation vault per module, a live server over it, captured logs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from api.serverkit import CANARY, LogCapture, ServerThread, build_fixture_vault, capturing_logs, serving
from vault_agent.config import Settings

EXTRA_NOTES = {
    # Note text carrying the canary: it must never show up in logs or errors.
    "projects/alpha/secret-notes.md": f"---\ntype: note\n---\n# Canary\n\n{CANARY} body text\n",
}


@pytest.fixture(scope="module")
def vault_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return build_fixture_vault(tmp_path_factory.mktemp("api"), extra=EXTRA_NOTES)


@pytest.fixture(scope="module")
def logs(vault_settings: Settings) -> Iterator[LogCapture]:
    with capturing_logs(vault_settings) as capture:
        yield capture


@pytest.fixture(scope="module")
def server(vault_settings: Settings, logs: LogCapture) -> Iterator[ServerThread]:
    with serving(vault_settings) as thread:
        yield thread


@pytest.fixture
def fresh_settings(tmp_path: Path) -> Settings:
    return build_fixture_vault(tmp_path)
