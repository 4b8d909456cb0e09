"""`Vault.read_with_stat`: one walk, the same refusals as `resolve` + `read_bytes`."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from vault_agent.errors import InvalidPath, NotFound
from vault_agent.paths import Vault


@pytest.fixture()
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "vault"
    (root / "Projects" / "Alpha").mkdir(parents=True)
    (root / "Projects" / "Alpha" / "Plan.md").write_text("# Plan\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("canary-outside\n")
    os.symlink(outside, root / "linkdir")
    os.symlink(outside / "secret.md", root / "link.md")
    os.link(outside / "secret.md", root / "hard.md")
    os.mkfifo(root / "pipe.md")
    return Vault(root)


def test_reads_bytes_and_the_open_files_stat(vault: Vault) -> None:
    resolved, st, raw = vault.read_with_stat("Projects/Alpha/Plan.md")
    assert raw == b"# Plan\n"
    assert resolved == vault.resolve("Projects/Alpha/Plan.md", match="normalized")
    on_disk = os.stat(vault.root / "Projects" / "Alpha" / "Plan.md")
    assert (st.st_ino, st.st_size, st.st_mtime_ns) == (on_disk.st_ino, on_disk.st_size, on_disk.st_mtime_ns)


def test_match_is_normalized_by_default(vault: Vault) -> None:
    with pytest.raises(NotFound):
        vault.read_with_stat("projects/alpha/plan.md")
    resolved, _, _ = vault.read_with_stat("projects/alpha/plan.md", match="casefold")
    assert resolved.rel == "Projects/Alpha/Plan.md"


@pytest.mark.parametrize("rel", ["linkdir/secret.md", "link.md", "hard.md", "pipe.md", "Projects"])
def test_refuses_what_resolve_and_read_bytes_refuse(vault: Vault, rel: str) -> None:
    with pytest.raises(InvalidPath) as exc:
        vault.read_with_stat(rel)
    assert str(vault.root) not in exc.value.message
    assert "canary" not in exc.value.message


def test_socket_and_missing(vault: Vault) -> None:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(vault.root / "s.md"))
        with pytest.raises(InvalidPath):
            vault.read_with_stat("s.md")
    finally:
        sock.close()
    with pytest.raises(NotFound):
        vault.read_with_stat("Projects/none.md")
    with pytest.raises(NotFound):
        vault.read_with_stat("none/x.md")
