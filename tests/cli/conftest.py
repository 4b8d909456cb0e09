"""The CLI tests reuse the server kit of tests/api (real servers, fixture vaults)."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parents[1])
if TESTS not in sys.path:  # --import-mode=importlib does not add it for us
    sys.path.insert(0, TESTS)
