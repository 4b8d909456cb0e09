"""Test-wide setup: tests/ on sys.path for the shared kits, and the --update-golden flag."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:  # --import-mode=importlib does not add it for us
    sys.path.insert(0, TESTS)

import testkit  # noqa: E402 - needs the path above

# The e5 encoder's built graph is cached per weights hash (semantic/e5_encoder.py): in the
# system's temp folder for tests (never $HOME), shared by runs and by the worker processes.
os.environ.setdefault("VAULT_AGENT_CACHE_DIR", str(Path(tempfile.gettempdir()) / "vault-agent-test-cache"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden JSON files from the current output instead of comparing",
    )


def pytest_configure(config: pytest.Config) -> None:
    testkit.UPDATE_GOLDEN = bool(config.getoption("--update-golden"))
