"""Vault path safety: one place that turns caller text into a file under the vault root.

Rules (SPEC.md "Paths", "Precise rules"):
- paths are vault-relative, '/'-separated, NFC; absolute paths, drive letters, UNC paths,
  '~', NUL and '..' that leaves the root are refused before any I/O (`INVALID_PATH`);
- symlinks are never followed: every component is opened relative to its checked parent
  directory with O_NOFOLLOW, so a component swapped for a link between check and use
  fails instead of escaping (the final pattern of the MCP filesystem server advisories);
- only regular files and directories are served: FIFOs, sockets and devices are refused;
- reads resolve case- and normalization-insensitively when exactly one entry matches;
  writes only accept the same name up to Unicode normalization, never another case;
- exclusions apply at any depth with gitignore semantics; protected folders are compared
  case-insensitively after NFC and after dropping trailing dots and spaces.
Errors name only the vault-relative path the caller gave, never the root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pathspec

from vault_agent.contracts import MAX_PATH_CHARS
from vault_agent.errors import Forbidden, InvalidPath, NotFound
from vault_agent.text import nfc

if TYPE_CHECKING:
    from vault_agent.config import Settings

DEFAULT_EXCLUDED_DIRS: frozenset[str] = frozenset(
    {
        ".obsidian",
        ".git",
        "node_modules",
        ".trash",
        ".vault-agent",
        ".smarthole",
        "__pycache__",
        ".venv",
        "venv",
        ".cache",
        "build",
        "dist",
    }
)
DEFAULT_EXCLUDED_FILES: frozenset[str] = frozenset({".DS_Store"})
PROTECTED_DIRS: frozenset[str] = frozenset({".obsidian", ".vault-agent", ".smarthole", ".git", ".trash"})
SYSTEM_DIR = ".system"
DAILY_DIR = "daily"
MAX_COMPONENT_BYTES = 255

Match = Literal["exact", "normalized", "casefold"]


def _fold(name: str) -> str:
    """Comparison key for protected names: NFC, casefold, trailing dots/spaces dropped."""
    return nfc(name).casefold().rstrip(". ")


_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:/")


def display(rel: str) -> str:
    """A vault-relative path as it may appear in a message (bounded, printable)."""
    safe = "".join(ch if ch.isprintable() else "?" for ch in rel)
    return safe if len(safe) <= 200 else safe[:197] + "..."


def normalize_rel_path(raw: object, *, allow_root: bool = False) -> str:
    """Validate caller text and return the canonical vault-relative path ('' is the root).

    Raises:
        InvalidPath: absolute, drive/UNC, '~', NUL, control characters, traversal above
            the root, over-long, or empty when the root is not allowed.
    """
    if not isinstance(raw, str):
        raise InvalidPath("path must be a string")
    if "\x00" in raw:
        raise InvalidPath("path contains a NUL character")
    if len(raw) > MAX_PATH_CHARS:
        raise InvalidPath("path is too long")
    if any(ord(ch) < 32 for ch in raw):
        raise InvalidPath("path contains a control character")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in raw):
        raise InvalidPath("path is not valid Unicode")
    text = nfc(raw).replace("\\", "/")
    if text.startswith("/") or text.startswith("~"):
        raise InvalidPath("path must be relative to the vault root")
    if len(text) >= 2 and text[1] == ":" and text[0].isascii() and text[0].isalpha():
        raise InvalidPath("path must be relative to the vault root")
    if _URL_RE.match(text):  # file:///abs, http://host/… name no vault file; never echo them
        raise InvalidPath("path must be relative to the vault root")
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise InvalidPath("path leaves the vault root")
            parts.pop()
            continue
        if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
            raise InvalidPath("a path component is too long")
        parts.append(part)
    rel = "/".join(parts)
    if not rel and not allow_root:
        raise InvalidPath("path must name a file or folder inside the vault")
    return rel


_PROTECTED_FOLDED: frozenset[str] = frozenset(_fold(n) for n in PROTECTED_DIRS)


def is_protected(rel: str, extra: frozenset[str] = frozenset()) -> bool:
    """True when any component is a protected folder (case-insensitive, any depth)."""
    folded = _PROTECTED_FOLDED | {_fold(n) for n in extra} if extra else _PROTECTED_FOLDED
    return any(_fold(part) in folded for part in rel.split("/") if part)


def under_any(rel: str, folders: frozenset[str]) -> bool:
    """True when `rel` is one of the vault-relative folders or lies under one."""
    return any(rel == f or rel.startswith(f + "/") for f in folders)


def top_folder(rel: str) -> str:
    """The first component of a path, folded for policy checks ('.system', 'daily')."""
    return _fold(rel.split("/", 1)[0]) if rel else ""


def is_system(rel: str) -> bool:
    return top_folder(rel) == SYSTEM_DIR


def is_daily(rel: str) -> bool:
    return "/" in rel and top_folder(rel) == DAILY_DIR


class Exclusions:
    """Default exclusions plus user gitignore globs, applied at any depth."""

    def __init__(
        self,
        user_globs: list[str] | tuple[str, ...] = (),
        extra_dirs: frozenset[str] = frozenset(),
        extra_paths: frozenset[str] = frozenset(),
    ):
        self._dirs = DEFAULT_EXCLUDED_DIRS | extra_dirs
        # Folders excluded by their vault-relative path only (the state dir inside the vault):
        # a note folder that merely shares the state dir's last name stays in the vault.
        self._paths = extra_paths
        self._spec = pathspec.GitIgnoreSpec.from_lines(list(user_globs)) if user_globs else None

    def excluded(self, rel: str, is_dir: bool) -> bool:
        """True when the path or any of its ancestors is excluded."""
        if self._paths and under_any(rel, self._paths):
            return True
        parts = rel.split("/")
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if (not last or is_dir) and part in self._dirs:
                return True
            if last and not is_dir and part in DEFAULT_EXCLUDED_FILES:
                return True
        if self._spec is None:
            return False
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            sub_is_dir = is_dir or i < len(parts)
            if self._spec.match_file(sub + "/" if sub_is_dir else sub):
                return True
        return False


@dataclass(frozen=True)
class Resolved:
    """A path that exists under the vault: its canonical text and its on-disk components."""

    rel: str
    raw_parts: tuple[str, ...]
    is_dir: bool


@dataclass(frozen=True)
class WalkEntry:
    rel: str
    mtime_ns: int
    size: int


@dataclass
class WalkReport:
    """What a walk passed over, by documented rule (counted in `status --verbose`)."""

    undecodable_names: int = 0
    normalization_collisions: list[str] = field(default_factory=list)
    case_twins: list[str] = field(default_factory=list)  # both indexed; reported (RELIABILITY (21))
    symlinks_skipped: int = 0
    special_files_skipped: int = 0
    hardlinks_skipped: int = 0  # st_nlink > 1: the other name may lie outside the vault
    # Permissions deny us: files by their mode bits, folders by a failed listing. Skipped
    # (not indexed), counted, and looked at again by every scan.
    unreadable_files: list[str] = field(default_factory=list)
    unreadable_folders: list[str] = field(default_factory=list)


def readable_by_us(st: os.stat_result) -> bool:
    """Whether the mode bits let this process read a file (root reads everything)."""
    euid = os.geteuid()
    if euid == 0:
        return True
    if st.st_uid == euid:
        return bool(st.st_mode & stat.S_IRUSR)
    if st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        return bool(st.st_mode & stat.S_IRGRP)
    return bool(st.st_mode & stat.S_IROTH)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class Vault:
    """The vault root and every safe operation on paths under it."""

    def __init__(
        self,
        root: Path | str,
        exclusions: Exclusions | None = None,
        extensions: tuple[str, ...] = (".md",),
        extra_protected: frozenset[str] = frozenset(),
        protected_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.exclusions = exclusions or Exclusions()
        self.extensions = tuple(e.lower() for e in extensions)
        self.extra_protected = extra_protected
        # Protected by vault-relative path (the state dir), compared case-insensitively.
        self.protected_paths = frozenset(_fold(p) for p in protected_paths)

    # ----- classification -------------------------------------------------------------
    def is_note_name(self, rel: str) -> bool:
        return rel.lower().endswith(self.extensions)

    def is_protected(self, rel: str) -> bool:
        if self.protected_paths and under_any("/".join(_fold(p) for p in rel.split("/")), self.protected_paths):
            return True
        return is_protected(rel, self.extra_protected)

    def check_not_protected(self, rel: str) -> None:
        """Raises: Forbidden when the path lies in a protected folder."""
        if self.is_protected(rel):
            raise Forbidden(f"'{display(rel)}' is inside a protected folder; vault-agent never touches it")

    # ----- descriptor-relative resolution ---------------------------------------------
    def _open_root(self) -> int:
        return os.open(self.root, _DIR_FLAGS)

    @staticmethod
    def _lookup(dir_fd: int, name: str, match: Match) -> str | None:
        """The on-disk name in dir_fd equal to `name` under `match`, or None."""
        try:
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            return name
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno in (errno.ENAMETOOLONG, errno.EILSEQ):
                return None
            raise
        if match == "exact":
            return None
        want = nfc(name).casefold() if match == "casefold" else nfc(name)
        hits = []
        for entry in os.listdir(dir_fd):
            key = nfc(entry).casefold() if match == "casefold" else nfc(entry)
            if key == want:
                hits.append(entry)
        return hits[0] if len(hits) == 1 else None

    def _walk_dirs(self, parts: list[str], match: Match, original: str) -> tuple[int, list[str]]:
        """Open each directory component without following links; returns (fd, raw names)."""
        fd = self._open_root()
        raw: list[str] = []
        try:
            for part in parts:
                found = self._lookup(fd, part, match)
                if found is None:
                    raise NotFound(f"'{display(original)}' does not exist in the vault")
                try:
                    nfd = os.open(found, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        raise InvalidPath(
                            f"'{display(original)}' passes through a symbolic link or a file"
                        ) from None
                    if exc.errno == errno.ENOENT:  # renamed or removed meanwhile
                        raise NotFound(f"'{display(original)}' does not exist in the vault") from None
                    raise
                os.close(fd)
                fd = nfd
                raw.append(found)
        except BaseException:
            os.close(fd)
            raise
        return fd, raw

    def resolve(self, rel: str, *, match: Match = "casefold", must_exist: bool = True) -> Resolved:
        """Find an existing file or folder under the vault without following links.

        Raises:
            NotFound: nothing (or more than one case-variant) matches.
            InvalidPath: a component is a symlink, or the target is not a regular file/folder.
        """
        if not rel:
            return Resolved("", (), True)
        try:
            return self._resolve_parts(rel, match)
        except NotFound:
            if match != "casefold":
                raise
            # Component by component, an exact folder hides its case twin ("CSS x/b.md" when
            # b.md lives only in "css x/"): the path still names exactly one file, so look
            # at whole paths. Exact matches were tried first, so a twin is never preferred
            # over a path that exists as typed.
            hits = self._casefold_paths(rel.split("/"))
            if len(hits) != 1:
                raise
            return self._resolve_parts("/".join(hits[0]), "exact")

    def _casefold_paths(self, parts: list[str]) -> list[tuple[str, ...]]:
        """On-disk spellings of every existing path equal to `parts` under casefold (max 2)."""
        found: list[tuple[str, ...]] = []

        def visit(fd: int, index: int, raw: tuple[str, ...]) -> None:
            want = nfc(parts[index]).casefold()
            for entry in sorted(os.listdir(fd)):
                if len(found) > 1 or nfc(entry).casefold() != want:
                    continue
                if index == len(parts) - 1:
                    found.append((*raw, entry))
                    continue
                try:
                    sub = os.open(entry, _DIR_FLAGS, dir_fd=fd)
                except OSError:  # a file, a link or gone: not a folder on the way
                    continue
                try:
                    visit(sub, index + 1, (*raw, entry))
                finally:
                    os.close(sub)

        root = self._open_root()
        try:
            visit(root, 0, ())
        finally:
            os.close(root)
        return found

    def _resolve_parts(self, rel: str, match: Match) -> Resolved:
        parts = rel.split("/")
        fd, raw = self._walk_dirs(parts[:-1], match, rel)
        try:
            name = self._lookup(fd, parts[-1], match)
            if name is None:
                raise NotFound(f"'{display(rel)}' does not exist in the vault")
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:  # removed between the listing and the stat
                raise NotFound(f"'{display(rel)}' does not exist in the vault") from None
        finally:
            os.close(fd)
        if stat.S_ISLNK(st.st_mode):
            raise InvalidPath(f"'{display(rel)}' is a symbolic link; vault-agent does not follow links")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise InvalidPath(f"'{display(rel)}' is not a regular file or folder")
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            raise InvalidPath(f"'{display(rel)}' has several hard links; vault-agent does not serve it")
        raw_parts = (*raw, name)
        return Resolved("/".join(nfc(p) for p in raw_parts), raw_parts, stat.S_ISDIR(st.st_mode))

    def open_dir(self, raw_parts: tuple[str, ...] | list[str], rel: str) -> int:
        """Open a folder by its on-disk components, never following links; caller closes.

        Raises:
            InvalidPath: a component is a link or a file. NotFound: a component is missing.
        """
        fd, _ = self._walk_dirs(list(raw_parts), "exact", rel)
        return fd

    def lstat(self, resolved: Resolved) -> os.stat_result:
        """Stat a resolved path again, descriptor-relative, never following links."""
        if not resolved.raw_parts:
            return os.stat(self.root)
        fd, _ = self._walk_dirs(list(resolved.raw_parts[:-1]), "exact", resolved.rel)
        try:
            return os.stat(resolved.raw_parts[-1], dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)

    def read_bytes(self, resolved: Resolved, max_bytes: int | None = None) -> bytes:
        """Read a regular file, opened with O_NOFOLLOW relative to its checked parent.

        Raises:
            InvalidPath: the file is a link, a folder or a special file.
        """
        if resolved.is_dir:
            raise InvalidPath(f"'{display(resolved.rel)}' is a folder, not a file")
        fd, _ = self._walk_dirs(list(resolved.raw_parts[:-1]), "exact", resolved.rel)
        try:
            try:
                ffd = os.open(resolved.raw_parts[-1], _FILE_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                    raise InvalidPath(f"'{display(resolved.rel)}' is not a regular file") from None
                if exc.errno == errno.ENOENT:
                    raise NotFound(f"'{display(resolved.rel)}' does not exist in the vault") from None
                raise
        finally:
            os.close(fd)
        with os.fdopen(ffd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise InvalidPath(f"'{display(resolved.rel)}' is not a regular file")
            # A hard link may name a file outside the vault (RELIABILITY: hardlink probe).
            if st.st_nlink > 1:
                raise InvalidPath(
                    f"'{display(resolved.rel)}' has several hard links; vault-agent does not serve it"
                )
            return fh.read() if max_bytes is None else fh.read(max_bytes)

    def read_rel(self, rel: str, max_bytes: int | None = None) -> tuple[Resolved, bytes]:
        """Resolve (case-insensitively) and read a file."""
        resolved = self.resolve(rel)
        return resolved, self.read_bytes(resolved, max_bytes)

    def open_parent(self, rel: str, *, create: bool = False) -> tuple[int, str, str]:
        """Open the parent folder of `rel` for a write: (dir fd, raw leaf name, canonical rel).

        The leaf name is matched up to Unicode normalization only, never case. With
        `create`, missing parents are made (each with mkdir relative to its parent fd).
        The caller owns the returned fd.

        Raises:
            InvalidPath: a parent is a link or a file. NotFound: a parent is missing.
        """
        parts = rel.split("/")
        fd = self._open_root()
        raw: list[str] = []
        try:
            for part in parts[:-1]:
                found = self._lookup(fd, part, "normalized")
                if found is None:
                    if not create:
                        raise NotFound(f"the folder of '{display(rel)}' does not exist")
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                    found = part
                try:
                    nfd = os.open(found, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise InvalidPath(
                            f"'{display(rel)}' passes through a symbolic link or a file"
                        ) from None
                    if exc.errno == errno.ENOENT:  # renamed or removed meanwhile
                        raise NotFound(f"the folder of '{display(rel)}' does not exist") from None
                    raise
                os.close(fd)
                fd = nfd
                raw.append(found)
            leaf = self._lookup(fd, parts[-1], "normalized") or parts[-1]
        except BaseException:
            os.close(fd)
            raise
        return fd, leaf, "/".join(nfc(p) for p in (*raw, leaf))

    def abspath(self, resolved: Resolved) -> Path:
        """Absolute path for internal I/O only; never put it in a message or a log."""
        return self.root.joinpath(*resolved.raw_parts)

    # ----- walking -----------------------------------------------------------------------
    def walk(self, report: WalkReport | None = None, notes_only: bool = True) -> Iterator[WalkEntry]:
        """Every non-excluded regular file (notes only by default), in sorted order.

        Symlinks are skipped (never followed, so loops cannot hang), names that are not
        valid Unicode are skipped and counted, and two names equal after NFC are a
        collision: the one already in NFC (else the first in sorted order) is kept.
        """
        rep = report if report is not None else WalkReport()
        stack: list[tuple[str, str]] = [(str(self.root), "")]
        while stack:
            abs_dir, rel_dir = stack.pop()
            try:
                with os.scandir(abs_dir) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except PermissionError:
                rep.unreadable_folders.append(rel_dir)
                continue
            except OSError:
                continue
            seen: dict[str, str] = {}
            subdirs: list[tuple[str, str]] = []
            for entry in entries:
                name = entry.name
                if any(0xD800 <= ord(ch) <= 0xDFFF for ch in name):
                    rep.undecodable_names += 1
                    continue
                cname = nfc(name)
                rel = f"{rel_dir}/{cname}" if rel_dir else cname
                try:
                    if entry.is_symlink():
                        rep.symlinks_skipped += 1
                        continue
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = entry.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if not is_dir and not is_file:
                    rep.special_files_skipped += 1
                    continue
                if self.exclusions.excluded(rel, is_dir) or self.is_protected(rel):
                    continue
                if cname in seen:
                    rep.normalization_collisions.append(rel)
                    if name == cname and seen[cname] != cname:
                        seen[cname] = name  # prefer the NFC spelling on disk
                    continue
                seen[cname] = name
            folded: dict[str, str] = {}
            for cname in sorted(seen):
                key = cname.casefold()
                if key in folded:
                    rep.case_twins.append(f"{rel_dir}/{cname}" if rel_dir else cname)
                else:
                    folded[key] = cname
            for entry in entries:
                name = entry.name
                if any(0xD800 <= ord(ch) <= 0xDFFF for ch in name):
                    continue
                cname = nfc(name)
                if seen.get(cname) != name:
                    continue
                rel = f"{rel_dir}/{cname}" if rel_dir else cname
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append((entry.path, rel))
                        continue
                    if notes_only and not self.is_note_name(rel):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except PermissionError:  # a listable folder we may not search (no x bit)
                    rep.unreadable_files.append(rel)
                    continue
                except OSError:
                    continue
                if st.st_nlink > 1:
                    rep.hardlinks_skipped += 1
                    continue
                if notes_only and not readable_by_us(st):
                    rep.unreadable_files.append(rel)
                    continue
                yield WalkEntry(rel, st.st_mtime_ns, st.st_size)
            stack.extend(reversed(subdirs))


def exists_exactly(vault: Vault, rel: str) -> bool:
    """True when `rel` names an existing file or folder exactly as spelled (no case folding)."""
    try:
        vault.resolve(rel, match="normalized")
    except (NotFound, InvalidPath):
        return False
    return True


def vault_for_settings(settings: Settings) -> Vault:
    """The Vault of a settings object, with the state dir excluded when it lies inside."""
    extra = settings.index_dir_in_vault()
    state = frozenset({nfc(extra)}) if extra else frozenset()
    return Vault(
        settings.vault,
        Exclusions(settings.exclude, extra_paths=state),
        settings.extensions,
        protected_paths=state,
    )
