"""Fixtures of the web page's tests: a built fixture vault with hostile note text, a live
server over it (the page mounted as `serve` mounts it), captured log lines."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:  # for the shared test kits (api.serverkit, conversations.kit)
    sys.path.insert(0, TESTS)

from api.serverkit import LogCapture, ServerThread, build_fixture_vault, capturing_logs, serving  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from web.pagekit import EXTRA_NOTES  # noqa: E402


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    built = build_fixture_vault(tmp_path_factory.mktemp("web"), extra=EXTRA_NOTES)
    return dataclasses.replace(built, writes_enabled=True)


@pytest.fixture(scope="module")
def logs(settings: Settings) -> Iterator[LogCapture]:
    with capturing_logs(settings) as capture:
        yield capture


@pytest.fixture(scope="module")
def server(settings: Settings, logs: LogCapture) -> Iterator[ServerThread]:
    with serving(settings) as thread:
        yield thread
