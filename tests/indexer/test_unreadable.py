"""Per-note faults stay per-note: an unreadable note or folder is skipped and counted.

chmod 000 does not stop root, so when the suite runs as root the indexing steps run in a
child process that drops to the `nobody` user first (the real permission check of the
kernel, no fake); as an ordinary user they run the same child without the drop.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import PY, REPO, make_settings, note_text, snapshot_rows, write

from vault_agent.indexer.build import build_index

CHILD = r"""
import json, os, pwd, sys, tempfile
from pathlib import Path
from vault_agent.config import load_settings
from vault_agent.indexer.build import build_index
from vault_agent.query.status import index_status
if os.geteuid() == 0:
    # One warm-up run first loads every lazily imported module: the interpreter's own
    # files may be private to root.
    with tempfile.TemporaryDirectory() as warm:
        (Path(warm) / "v").mkdir()
        (Path(warm) / "v" / "w.md").write_text("---\ndate: 2024-01-01\n---\n# W\n\ntext [[x]]\n")
        ws = load_settings({"vault": Path(warm) / "v", "index_dir": Path(warm) / "s"}, env={})
        build_index(ws)
        index_status(ws, verbose=True)
    pw = pwd.getpwnam("nobody")
    os.setgroups([])
    os.setgid(pw.pw_gid)
    os.setuid(pw.pw_uid)
s = load_settings({"vault": Path(sys.argv[1]), "index_dir": Path(sys.argv[2])}, env={})
m = build_index(s)
status = index_status(s, verbose=True).data
print(json.dumps({"notes": m.note_count, "skipped": status.details.skipped}))
"""


def _nobody_can_run() -> bool:
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        return False
    return os.access(PY, os.X_OK) and (os.stat(REPO).st_mode & 0o005) == 0o005


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder the unprivileged child can use (pytest's tmp_path is private to root)."""
    if os.geteuid() == 0 and not _nobody_can_run():
        pytest.skip("running as root and the 'nobody' user cannot run this checkout's python")
    base = Path(tempfile.mkdtemp(prefix="va-unreadable-"))
    base.chmod(0o755)
    yield base
    for p in base.rglob("*"):
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(base)


def _index_as_user(vault: Path, index_dir: Path) -> dict[str, object]:
    if os.geteuid() == 0:
        index_dir.mkdir(exist_ok=True)
        pw = pwd.getpwnam("nobody")
        for p in [index_dir, *index_dir.rglob("*")]:
            os.chown(p, pw.pw_uid, pw.pw_gid, follow_symlinks=False)
    proc = subprocess.run(
        [PY, "-c", CHILD, str(vault), str(index_dir)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_unreadable_note_and_folder_are_skipped_counted_and_recovered(shared_dir: Path) -> None:
    vault, index_dir = shared_dir / "vault", shared_dir / "state"
    for i in range(6):
        write(vault, f"n{i}.md", note_text(i))
        write(vault, f"sub/s{i}.md", note_text(i + 10))
    assert _index_as_user(vault, index_dir) == {"notes": 12, "skipped": {}}

    (vault / "n1.md").chmod(0o000)  # indexed before, unreadable now
    write(vault, "n9.md", note_text(9)).chmod(0o000)  # new and unreadable
    (vault / "sub").chmod(0o000)  # a folder indexed before
    write(vault, "n2.md", note_text(2, "edited"))  # the rest still gets indexed
    assert _index_as_user(vault, index_dir) == {
        "notes": 5,
        "skipped": {"unreadable": 2, "unreadable_folder": 1},
    }

    for p in (vault / "n1.md", vault / "n9.md"):
        p.chmod(0o644)
    (vault / "sub").chmod(0o755)
    assert _index_as_user(vault, index_dir) == {"notes": 13, "skipped": {}}
    clean = shared_dir / "clean"
    build_index(make_settings(vault, clean), full=True)
    assert snapshot_rows(index_dir) == snapshot_rows(clean)
