"""The watcher's echo of a write tool's own change: a hint that carries nothing new.

A write tool in the writer's process logs its change itself (`Writer.append`) and the
writer commits it at once, without the watcher's quiet period. The file system then
reports the same rename to the watcher, often after that commit has started; logged, the
echo would cost a second, empty commit (and a pacing token). `ToolEchoes` remembers what
the disk looked like when the tool logged its change (taken before the log append, so the
commit that applies the tool's event reads the disk at that moment or later) and says a
later hint for the same path is redundant only while the disk still looks exactly like
that: same inode, size, mtime, ctime and content hash, or still absent. Any other change
(an editor saving after the tool) differs and stays a hint. Unknown states (errors, big
files, links) are never redundant.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass

from vault_agent.errors import InvalidPath, NotFound
from vault_agent.paths import Vault

ECHO_TTL_S = 5.0  # a tool's rename reaches the watcher within milliseconds
ECHO_MAX_BYTES = 1 << 20  # bigger files are not hashed: their hints are always kept
ABSENT = ("absent",)

Signature = tuple[object, ...]


@dataclass(frozen=True)
class _Echo:
    signature: Signature
    expires: float


def disk_signature(vault: Vault, rel: str) -> Signature | None:
    """What `rel` looks like on disk now (ABSENT when gone), or None when unknown."""
    try:
        resolved = vault.resolve(rel, match="normalized")
        if resolved.is_dir or resolved.rel != rel:
            return None
        st = vault.lstat(resolved)
        if st.st_size > ECHO_MAX_BYTES:
            return None
        digest = hashlib.sha256(vault.read_bytes(resolved, ECHO_MAX_BYTES)).hexdigest()
    except NotFound:
        return ABSENT
    except (InvalidPath, OSError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)


class ToolEchoes:
    """Thread-safe map of paths a tool just logged → their disk signature (see module doc)."""

    def __init__(self, vault: Vault, ttl_s: float = ECHO_TTL_S) -> None:
        self.vault = vault
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._echoes: dict[str, _Echo] = {}

    def expect(self, rels: list[str]) -> None:
        """Remember the disk state of `rels` (call before their events are logged)."""
        now = time.monotonic()
        seen = {rel: disk_signature(self.vault, rel) for rel in rels}
        with self._lock:
            self._expire(now)
            for rel, sig in seen.items():
                if sig is None:
                    self._echoes.pop(rel, None)
                else:
                    self._echoes[rel] = _Echo(sig, now + self.ttl_s)

    def redundant(self, rel: str) -> bool:
        """True when a hint for `rel` is a logged tool change's echo (the disk is unchanged)."""
        with self._lock:
            self._expire(time.monotonic())
            echo = self._echoes.get(rel)
        return echo is not None and disk_signature(self.vault, rel) == echo.signature

    def _expire(self, now: float) -> None:
        for rel in [r for r, e in self._echoes.items() if e.expires <= now]:
            del self._echoes[rel]
