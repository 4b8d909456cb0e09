"""The vault's `.base` files (Obsidian Bases) as each snapshot records them (docs/bases.md).

A `.base` file is not a note: it has no rows in the segment tables. The manifest lists
every `.base` file of the vault (`Manifest.bases`: path, mtime, size, sha256) and its text
is kept once per content in `<index-dir>/bases/<sha256>.base`, written and fsynced before
the manifest that names it, never changed, and collected by the GC like a segment file
when no kept manifest names it (indexer/snapshot.py). So `vault_base` reads a base from
the snapshot a request pinned, exactly as the writer read it at that commit.

The writer learns of them the way it learns of notes: the walk yields them beside the
notes (`also=` of the walk), the stat scans compare them with the snapshot's (`known_bases`), the
watcher lets their paths through, and a build re-reads the ones its events name
(`refresh`). A file larger than MAX_BASE_BYTES is listed without its text.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from vault_agent.contracts import (
    BASE_EXTENSION,
    BASES_DIR,
    MAX_BASE_BYTES,
    TMP_DIR,
    BaseFileRef,
    Manifest,
    base_text_name,
    fsync_dir,
)
from vault_agent.errors import VaultAgentError
from vault_agent.indexer.scan import KnownNote
from vault_agent.paths import Vault
from vault_agent.private_dir import make_state_dirs


def is_base_name(rel: str) -> bool:
    """True when a vault path names a `.base` file (any letter case of the extension)."""
    return rel.lower().endswith(BASE_EXTENSION)


def recorded(manifest: Manifest | None) -> dict[str, BaseFileRef]:
    """The `.base` files a manifest records, by path."""
    return {ref.path: ref for ref in manifest.bases} if manifest is not None else {}


def known_bases(bases: Mapping[str, BaseFileRef]) -> dict[str, KnownNote]:
    """What a stat scan compares the vault's `.base` files with."""
    return {p: KnownNote(ref.mtime_ns, ref.size, ref.sha256 or "") for p, ref in bases.items()}


def _store(index_dir: Path, sha256: str, data: bytes) -> None:
    """Write one text into BASES_DIR (tmp, fsync, rename, fsync the folder) unless present."""
    folder = index_dir / BASES_DIR
    target = folder / base_text_name(sha256)
    if target.exists():
        # A text no manifest named for a while may be collected soon (the GC goes by the
        # file's age): a fresh mtime keeps it for the manifest about to name it again.
        os.utime(target)
        return
    make_state_dirs(folder, index_dir)
    tmp_dir = index_dir / TMP_DIR
    make_state_dirs(tmp_dir, index_dir)
    tmp = tmp_dir / f"{base_text_name(sha256)}.{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    fsync_dir(folder)


def _eligible(vault: Vault, rel: str) -> bool:
    return is_base_name(rel) and not vault.is_protected(rel) and not vault.exclusions.excluded(rel, False)


def read_base(vault: Vault, index_dir: Path, rel: str) -> BaseFileRef | None:
    """Record one `.base` file as it is on disk now (its text stored), or None when it is
    gone, unreadable, not a regular file with one name, or not a `.base` file to index."""
    if not _eligible(vault, rel):
        return None
    try:
        resolved = vault.resolve(rel, match="normalized")
        st = vault.lstat(resolved)
        if st.st_size > MAX_BASE_BYTES:  # not read at all: its text would not be kept
            return BaseFileRef(path=resolved.rel, mtime_ns=st.st_mtime_ns, size=st.st_size, sha256=None)
        resolved, st, data = vault.read_with_stat(rel, match="normalized")
    except (VaultAgentError, OSError):
        return None
    if len(data) > MAX_BASE_BYTES:  # grew since the stat
        return BaseFileRef(path=resolved.rel, mtime_ns=st.st_mtime_ns, size=st.st_size, sha256=None)
    sha = hashlib.sha256(data).hexdigest()
    _store(index_dir, sha, data)
    return BaseFileRef(path=resolved.rel, mtime_ns=st.st_mtime_ns, size=st.st_size, sha256=sha)


def read_all(vault: Vault, index_dir: Path, rels: Iterable[str]) -> dict[str, BaseFileRef]:
    """Every readable `.base` file of `rels` (a full build's walk), by path."""
    out: dict[str, BaseFileRef] = {}
    for rel in rels:
        ref = read_base(vault, index_dir, rel)
        if ref is not None:
            out[ref.path] = ref
    return out


def refresh(
    vault: Vault, index_dir: Path, current: Mapping[str, BaseFileRef], candidates: Iterable[str]
) -> dict[str, BaseFileRef] | None:
    """The recorded `.base` files after re-reading `candidates` (a changed file is read
    again, a vanished one dropped); None when nothing changed."""
    out = dict(current)
    changed = False
    for rel in sorted(set(candidates)):
        ref = read_base(vault, index_dir, rel)
        if ref is None:
            changed = out.pop(rel, None) is not None or changed
            continue
        if ref.path != rel:  # read through another spelling: keep the recorded one's path
            changed = out.pop(rel, None) is not None or changed
        if out.get(ref.path) != ref:
            out[ref.path] = ref
            changed = True
    return out if changed else None
