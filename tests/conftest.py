"""Test-wide setup: tests/ on sys.path for the shared kits, and the --update-golden flag."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:  # --import-mode=importlib does not add it for us
    sys.path.insert(0, TESTS)

import testkit  # noqa: E402 - needs the path above


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden JSON files from the current output instead of comparing",
    )


def pytest_configure(config: pytest.Config) -> None:
    testkit.UPDATE_GOLDEN = bool(config.getoption("--update-golden"))
