"""vault_stat (seed 003 get_file_info): created, modified, size, type of a file or folder.

A read tool: paths and note names resolve like every read (names.py), protected folders refused,
`.system/` readable. `created` is the birth time from statx(2) where the file system
records it, else null (ctime is a change time, not a creation time).
"""

from __future__ import annotations

import ctypes
import datetime as dt
import os
import struct

from vault_agent.contracts import Outcome
from vault_agent.files.atomic import MAX_FILE_BYTES, is_temp_name, sha256_hex
from vault_agent.files.models import FilesContext, StatResult
from vault_agent.names import FileHome, NamesFn, resolve_name
from vault_agent.paths import DIR_FLAGS

_AT_SYMLINK_NOFOLLOW = 0x100
_STATX_BTIME = 0x800

try:
    _statx = getattr(ctypes.CDLL(None, use_errno=True), "statx", None)
except OSError:  # pragma: no cover
    _statx = None


def _iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def birth_time(dir_fd: int, name: str) -> float | None:
    """Birth time (seconds) of `name` in `dir_fd` without following links, or None."""
    if _statx is None:
        return None
    buf = ctypes.create_string_buffer(256)
    if _statx(dir_fd, os.fsencode(name), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buf) != 0:
        return None
    mask = struct.unpack_from("<I", buf.raw, 0)[0]
    if not mask & _STATX_BTIME:
        return None
    sec, nsec = struct.unpack_from("<qI", buf.raw, 80)
    return sec + nsec / 1e9 if sec > 0 else None


def _visible(ctx: FilesContext, rel: str, names: list[str]) -> int:
    """Entries an agent can see: protected folders and vault-agent temp files are not counted."""
    prefix = f"{rel}/" if rel else ""
    return sum(1 for n in names if not is_temp_name(n) and not ctx.vault.is_protected(prefix + n))


def stat_path(ctx: FilesContext, path: str, names: NamesFn | None = None) -> Outcome[StatResult]:
    """Metadata of one file or folder, by path or by note name (names.resolve_name; `names`
    gives the snapshot's file names, titles and aliases, none without it).

    Raises:
        NotFound: no such path or name (with close names). Ambiguous: several notes match.
        Forbidden: protected folder. InvalidPath: links, bad path.
    """
    home = FileHome(ctx.vault, "info", folders=True)
    resolution = resolve_name(path, ctx.vault, home, names or (lambda: None), "info", allow_root=True)
    resolved = home.resolved[resolution.path]
    st = ctx.vault.lstat(resolved)
    created: float | None = None
    entries: int | None = None
    digest: str | None = None
    if resolved.raw_parts:
        fd, leaf, _ = ctx.vault.open_parent(resolved.rel, create=False)
        try:
            created = birth_time(fd, leaf)
            if resolved.is_dir:
                sub = os.open(leaf, DIR_FLAGS, dir_fd=fd)
                try:
                    entries = _visible(ctx, resolved.rel, os.listdir(sub))
                finally:
                    os.close(sub)
        finally:
            os.close(fd)
    else:
        entries = _visible(ctx, "", os.listdir(ctx.vault.root))
    if not resolved.is_dir and st.st_size <= MAX_FILE_BYTES:
        digest = sha256_hex(ctx.vault.read_bytes(resolved))
    data = StatResult(
        path=resolved.rel,
        type="folder" if resolved.is_dir else "file",
        size_bytes=None if resolved.is_dir else st.st_size,
        entries=entries,
        created=_iso(created) if created is not None else None,
        modified=_iso(st.st_mtime),
        sha256=digest,
    )
    warning = resolution.warning()
    return Outcome(data=data, warnings=[warning] if warning else [])
