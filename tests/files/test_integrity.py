"""Data integrity: kill -9 during writes leaves old or new bytes only; no lost updates."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from vault_agent.api.invoke import invoke
from vault_agent.api.ops import CATALOG
from vault_agent.errors import Conflict

from .conftest import make_ctx

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from vault_agent.api.operation import AppContext
    from vault_agent.paths import vault_for_settings
    from vault_agent.config import Settings
    from vault_agent.files.content import write_file
    from vault_agent.query.snapshot import SnapshotReader
    vault, state = Path(sys.argv[1]), Path(sys.argv[2])
    settings = Settings(vault=vault, index_dir=state, writes_enabled=True)
    vault_ = vault_for_settings(settings)
    ctx = AppContext(settings=settings, vault=vault_, reader=SnapshotReader(settings, vault_))
    size = 1 << 20
    i = 0
    while True:
        body = (chr(ord("a") + i % 26) * size)
        write_file(ctx, "notes/big.md", body, "overwrite")
        print(i, flush=True)
        i += 1
    """
)


@pytest.mark.parametrize("trial", range(6))
def test_kill_9_during_writes_never_mixes(vault_dir: Path, trial: int) -> None:
    size = 1 << 20
    (vault_dir / "notes/big.md").write_text("z" * size)
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(vault_dir), str(vault_dir.parent / "state")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        for _ in range(2 + trial):  # let some writes complete, then kill mid-stream
            assert proc.stdout.readline() != b""
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    data = (vault_dir / "notes/big.md").read_bytes()
    assert len(data) == size
    assert len(set(data)) == 1  # one whole version: never a mix, never truncated
    leftovers = [p.name for p in (vault_dir / "notes").iterdir() if p.name not in ("a.md", "big.md")]
    assert all(name.startswith(".vault-agent-tmp-") for name in leftovers)


def _burst(vault_dir: Path, writers: int, per_writer: int) -> None:
    ctx = make_ctx(vault_dir)
    (vault_dir / "notes/shared.md").write_text("")
    errors: list[BaseException] = []

    def run(w: int) -> None:
        try:
            for i in range(per_writer):
                if w % 2:
                    raw = {"path": "notes/shared.md", "content": f"w{w}-{i}\n", "mode": "append"}
                    invoke(CATALOG.named("write"), ctx, raw)
                elif i == 0:
                    invoke(CATALOG.named("create"), ctx, {"path": f"own/w{w}.md", "content": f"# w{w}\n"})
                else:
                    body = f"w{w}-{i}\n"
                    invoke(
                        CATALOG.named("write"),
                        ctx,
                        {"path": f"own/w{w}.md", "content": body, "mode": "append"},
                    )
        except BaseException as exc:  # surfaced below with the thread's failure
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    shared = (vault_dir / "notes/shared.md").read_text().splitlines()
    expected = sorted(f"w{w}-{i}" for w in range(writers) if w % 2 for i in range(per_writer))
    assert sorted(shared) == expected  # every append present exactly once
    for w in range(0, writers, 2):
        lines = (vault_dir / f"own/w{w}.md").read_text().splitlines()
        assert lines == [f"# w{w}"] + [f"w{w}-{i}" for i in range(1, per_writer)]


def test_append_race_small(vault_dir: Path) -> None:
    _burst(vault_dir, writers=4, per_writer=50)


@pytest.mark.slow
def test_burst_1000_writes(vault_dir: Path) -> None:
    _burst(vault_dir, writers=8, per_writer=125)


def test_agent_edit_vs_editor(vault_dir: Path) -> None:
    """The editor changes the note between the agent's read and write: CONFLICT, nothing lost."""
    ctx = make_ctx(vault_dir)
    note = vault_dir / "notes/e.md"
    note.write_text("start\n")
    applied = conflicts = 0
    for i in range(60):
        current = note.read_bytes()
        digest = hashlib.sha256(current).hexdigest()
        editor_wrote = i % 3 == 0
        if editor_wrote:  # the editor saves in place meanwhile
            note.write_text(note.read_text() + f"editor {i}\n")
        raw = {
            "path": "notes/e.md",
            "content": current.decode() + f"agent {i}\n",
            "mode": "overwrite",
            "expected_sha256": digest,
        }
        try:
            invoke(CATALOG.named("write"), ctx, raw)
            applied += 1
        except Conflict:
            conflicts += 1
            assert editor_wrote
    lines = note.read_text().splitlines()
    assert (applied, conflicts) == (40, 20)
    assert lines == ["start"] + [f"editor {i}" if i % 3 == 0 else f"agent {i}" for i in range(60)]
