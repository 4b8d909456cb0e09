"""Disk full and read-only state dirs: named errors, the old snapshot keeps serving, recovery.

The faults are real: the state dir is a small tmpfs mounted for the test (filled up to
make ENOSPC, remounted read-only for EROFS). Without the privilege to mount (not root, or
a container without CAP_SYS_ADMIN) the tests are skipped with that reason.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import PY, make_settings, note_text, snapshot_rows, write
from testkit import wait_until

from vault_agent.contracts import EVENTS_DIR
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index

MOUNT_BYTES = 8 * 1024 * 1024


class SmallDisk:
    """A tmpfs of MOUNT_BYTES at `path`, with helpers to fill it and flip it read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filler = path / "filler.bin"

    def _mount(self, *opts: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["mount", *opts], capture_output=True, text=True, timeout=30)

    def fill(self) -> None:
        """Write until the kernel says ENOSPC (a real full disk)."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for size in (1 << 20, 65536, 4096, 1):
                with contextlib.suppress(OSError):
                    while os.write(fd, b"\0" * size):
                        pass
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def read_only(self, on: bool) -> None:
        res = self._mount("-o", f"remount,{'ro' if on else 'rw'}", str(self.path))
        assert res.returncode == 0, res.stderr


@pytest.fixture
def disk() -> Iterator[SmallDisk]:
    path = Path(tempfile.mkdtemp(prefix="va-smalldisk-"))
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={MOUNT_BYTES}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if res.returncode != 0:
        path.rmdir()
        pytest.skip("cannot mount a small tmpfs here (needs root / CAP_SYS_ADMIN)")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)
        with contextlib.suppress(OSError):
            path.rmdir()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    return subprocess.run(
        [PY, "-c", "from vault_agent.cli.main import run; run()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _log_bytes(index_dir: Path) -> int:
    return sum(p.stat().st_size for p in (index_dir / EVENTS_DIR).iterdir() if p.is_file())


def _clean_rows(vault: Path, tmp_path: Path) -> object:
    clean = tmp_path / "clean"
    build_index(make_settings(vault, clean), full=True)
    return snapshot_rows(clean)


def test_disk_full_index_names_the_error_keeps_the_snapshot_and_recovers(
    disk: SmallDisk, tmp_path: Path
) -> None:
    vault, state = tmp_path / "v", disk.path / "state"
    for i in range(20):
        write(vault, f"n{i}.md", note_text(i))
    build_index(make_settings(vault, state))
    before = read_current_manifest(state)
    assert before is not None
    for i in range(20, 400):
        write(vault, f"more/n{i}.md", note_text(i, "x" * 2000))
    disk.fill()

    sizes = []
    for _ in range(3):
        res = _cli("index", "--json", "--vault", str(vault), "--index-dir", str(state))
        assert res.returncode == 9, res.stderr[-1500:]
        assert json.loads(res.stdout)["error"]["code"] == "STORAGE_FULL"
        assert str(tmp_path) not in res.stdout + res.stderr and str(disk.path) not in res.stdout
        sizes.append(_log_bytes(state))
    assert sizes[1:] == sizes[:1] * 2  # retries do not grow the event log
    assert read_current_manifest(state) == before  # the old snapshot is still the one served

    disk.free()
    res = _cli("index", "--json", "--vault", str(vault), "--index-dir", str(state))
    assert res.returncode == 0, res.stderr[-1500:]
    assert snapshot_rows(state) == _clean_rows(vault, tmp_path)


def test_writer_survives_a_full_disk_stays_stale_and_resumes(disk: SmallDisk, tmp_path: Path) -> None:
    from vault_agent.server.context import build_context, close_context

    vault, state = tmp_path / "v", disk.path / "state"
    for i in range(10):
        write(vault, f"n{i}.md", note_text(i))
    settings = make_settings(vault, state)
    build_index(settings)
    for i in range(10, 300):
        write(vault, f"more/n{i}.md", note_text(i, "y" * 2000))
    disk.fill()

    ctx = build_context(settings, watch=True)  # serve --watch: must start, not refuse
    try:
        writer = ctx.writer
        assert writer is not None and ctx.reader is not None
        assert writer.state().stale_reason == "storage-full"
        with ctx.reader.acquire() as view:
            assert view.freshness in ("stale", "updating")  # never "fresh" while behind
            assert view.con.execute("SELECT count(*) FROM notes").fetchone() == (10,)
        disk.free()
        wait_until(
            lambda: (m := read_current_manifest(state)) is not None and m.note_count == 300,
            timeout=120,
            what="the writer to resume after space returned",
        )
        wait_until(lambda: writer.state().stale_reason is None, timeout=60, what="stale to clear")
    finally:
        close_context(ctx)
    assert snapshot_rows(state) == _clean_rows(vault, tmp_path)


def test_read_only_state_dir_serves_the_last_snapshot_and_names_the_error(
    disk: SmallDisk, tmp_path: Path
) -> None:
    from vault_agent.server.context import build_context, close_context

    vault, state = tmp_path / "v", disk.path / "state"
    for i in range(8):
        write(vault, f"n{i}.md", note_text(i))
    settings = make_settings(vault, state)
    build_index(settings)
    write(vault, "late.md", note_text(99))
    disk.read_only(True)
    try:
        with pytest.raises(OSError) as info:
            (state / "probe").write_bytes(b"x")
        assert info.value.errno == errno.EROFS
        for command in ("index", "reindex"):
            res = _cli(command, "--json", "--vault", str(vault), "--index-dir", str(state))
            assert res.returncode == 9, res.stderr[-1500:]
            assert json.loads(res.stdout)["error"]["code"] == "STORAGE_READ_ONLY"
        ctx = build_context(settings, watch=True, follow_if_busy=True)  # what `mcp` does
        try:
            assert ctx.writer is None and ctx.read_only_reason == "STORAGE_READ_ONLY"
            with ctx.reader.acquire() as view:
                assert view.con.execute("SELECT count(*) FROM notes").fetchone() == (8,)
        finally:
            close_context(ctx)
    finally:
        disk.read_only(False)
    res = _cli("index", "--json", "--vault", str(vault), "--index-dir", str(state))
    assert res.returncode == 0, res.stderr[-1500:]
    assert snapshot_rows(state) == _clean_rows(vault, tmp_path)
