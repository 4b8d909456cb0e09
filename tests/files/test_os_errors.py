"""OS failures reach callers as named errors through one errno map, never INTERNAL.

The kernel's answer is injected at the OS edge (`os.open` / `os.write` for one file name):
running as root, chmod cannot make a file unreadable, and a full disk cannot be made
without privileges. Everything above the edge is the real code path.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from vault_agent.errors import (
    PermissionDenied,
    StorageFull,
    StorageReadOnly,
    VaultAgentError,
    from_os_error,
)


@pytest.fixture
def deny_open(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str, int], None]]:
    """Make `os.open` of one leaf name fail with an errno (what the kernel would answer)."""
    real_open = os.open

    def arm(leaf: str, err: int) -> None:
        def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if os.fsdecode(path).rsplit("/", 1)[-1] == leaf:
                raise OSError(err, os.strerror(err), "/abs/secret/path")
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", fake_open)

    yield arm


@pytest.mark.parametrize(
    ("err", "where", "cls"),
    [
        (errno.EACCES, "vault", PermissionDenied),
        (errno.EPERM, "vault", PermissionDenied),
        (errno.ENOSPC, "vault", StorageFull),
        (errno.EDQUOT, "state", StorageFull),
        (errno.EROFS, "vault", StorageReadOnly),
        (errno.EACCES, "state", StorageReadOnly),
    ],
)
def test_errno_map(err: int, where: str, cls: type[VaultAgentError]) -> None:
    mapped = from_os_error(OSError(err, "x", "/abs/secret/path"), where)  # type: ignore[arg-type]
    assert type(mapped) is cls
    assert mapped is not None and "/abs" not in mapped.message
    assert from_os_error(OSError(errno.EIO, "x"), "vault") is None


@pytest.mark.parametrize("op", ["read", "info"])
def test_unreadable_file_answers_permission_denied(
    call: Callable[..., dict[str, Any]], deny_open: Callable[[str, int], None], op: str
) -> None:
    deny_open("a.md", errno.EACCES)
    with pytest.raises(PermissionDenied) as info:
        call(op, path="notes/a.md", **({"full": True} if op == "read" else {}))
    assert (info.value.code, info.value.http_status, info.value.exit_code) == ("PERMISSION_DENIED", 403, 3)


def test_disk_full_on_write_answers_storage_full(
    call: Callable[..., dict[str, Any]], monkeypatch: pytest.MonkeyPatch, vault_dir: Any
) -> None:
    real_write = os.write

    def full_write(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1].startswith(".vault-agent-tmp-"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_write)
    before = (vault_dir / "notes" / "a.md").read_bytes()
    with pytest.raises(StorageFull):
        call("write", path="notes/a.md", content="more\n", mode="append")
    assert (vault_dir / "notes" / "a.md").read_bytes() == before
    assert sorted(p.name for p in (vault_dir / "notes").iterdir()) == ["a.md"]
