"""docs/architecture.md names files of the house; each must exist (issue 34: the page matches
the code). Names are written relative to their package's row, so a name matches a file of
the tree whose path ends with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_file_the_architecture_page_names_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([A-Za-z0-9_./-]+\.py)`", text))
    files = [
        p.relative_to(ROOT).as_posix()
        for top in ("vault_agent", "ops", "tests")
        for p in (ROOT / top).rglob("*.py")
    ]
    missing = sorted(n for n in named if not any(f == n or f.endswith("/" + n) for f in files))
    assert len(named) > 50  # the page names the house's files; a regex that finds none proves nothing
    assert missing == []
