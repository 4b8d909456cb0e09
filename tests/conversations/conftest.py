"""Fixtures: a built fixture vault (writes enabled) and a live server over it."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:  # for the shared test kits (api.serverkit, conversations.kit)
    sys.path.insert(0, TESTS)

from api.serverkit import ServerThread, build_fixture_vault, serving  # noqa: E402

from vault_agent.config import Settings  # noqa: E402


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    built = build_fixture_vault(tmp_path)
    return dataclasses.replace(built, writes_enabled=True)


@pytest.fixture
def server(settings: Settings) -> Iterator[ServerThread]:
    with serving(settings) as thread:
        yield thread
