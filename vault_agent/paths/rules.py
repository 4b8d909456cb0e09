"""Pure path rules: what caller text may name and how a vault path is classified. No I/O.

Rules (SPEC.md "Paths", "Precise rules"):
- paths are vault-relative, '/'-separated, NFC; absolute paths, drive letters, UNC paths,
  '~', NUL, URLs and '..' that leaves the root are refused before any I/O (`INVALID_PATH`);
- exclusions apply at any depth with gitignore semantics; protected folders are compared
  case-insensitively after NFC and after dropping trailing dots and spaces.
Errors name only the vault-relative path the caller gave, never the root.
"""

from __future__ import annotations

import re
from typing import Literal

import pathspec

from vault_agent.contracts import MAX_PATH_CHARS
from vault_agent.errors import Forbidden, InvalidPath
from vault_agent.text import nfc

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
MAX_DISPLAY_CHARS = 200

# How a caller's path component may match an on-disk name: reads fold case, writes only
# accept another Unicode normalization of the same name.
Match = Literal["exact", "normalized", "casefold"]

_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:/")


def fold(name: str) -> str:
    """Comparison key for protected names: NFC, casefold, trailing dots/spaces dropped."""
    return nfc(name).casefold().rstrip(". ")


def has_surrogates(name: str) -> bool:
    """True for a name that is not valid Unicode (os.fsdecode's surrogateescape leftovers)."""
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in name)


def _looks_absolute(text: str) -> bool:
    """'/…', '~…', a drive letter ('C:…') or a URL ('file:/…'): text naming no vault file."""
    if text.startswith(("/", "~")) or _URL_RE.match(text):  # never echo such text back
        return True
    return len(text) >= 2 and text[1] == ":" and text[0].isascii() and text[0].isalpha()


def display(rel: str) -> str:
    """A vault-relative path as it may appear in a message (bounded, printable)."""
    safe = "".join(ch if ch.isprintable() else "?" for ch in rel)
    return safe if len(safe) <= MAX_DISPLAY_CHARS else safe[: MAX_DISPLAY_CHARS - 3] + "..."


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
    if has_surrogates(raw):
        raise InvalidPath("path is not valid Unicode")
    text = nfc(raw).replace("\\", "/")
    if _looks_absolute(text):
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
    # 'a/../~' or 'a/../C:/x' collapse to text the checks above refuse: refuse them too, so
    # every canonical path is itself accepted when a caller sends it back.
    if _looks_absolute(rel):
        raise InvalidPath("path must be relative to the vault root")
    if not rel and not allow_root:
        raise InvalidPath("path must name a file or folder inside the vault")
    return rel


_PROTECTED_FOLDED: frozenset[str] = frozenset(fold(n) for n in PROTECTED_DIRS)


def is_protected(rel: str, extra: frozenset[str] = frozenset()) -> bool:
    """True when any component is a protected folder (case-insensitive, any depth)."""
    folded = _PROTECTED_FOLDED | {fold(n) for n in extra} if extra else _PROTECTED_FOLDED
    return any(fold(part) in folded for part in rel.split("/") if part)


def under_any(rel: str, folders: frozenset[str]) -> bool:
    """True when `rel` is one of the vault-relative folders or lies under one."""
    return any(rel == f or rel.startswith(f + "/") for f in folders)


def top_folder(rel: str) -> str:
    """The first component of a path, folded for policy checks ('.system', 'daily')."""
    return fold(rel.split("/", 1)[0]) if rel else ""


def is_system(rel: str) -> bool:
    """True for paths under the vault's `.system/` folder (any case)."""
    return top_folder(rel) == SYSTEM_DIR


def is_daily(rel: str) -> bool:
    """True for a file or folder inside `daily/` (any case), not the folder itself."""
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


class PathRules:
    """One vault's classification of paths: notes, exclusions, protected folders."""

    def __init__(
        self,
        exclusions: Exclusions | None = None,
        extensions: tuple[str, ...] = (".md",),
        extra_protected: frozenset[str] = frozenset(),
        protected_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.exclusions = exclusions or Exclusions()
        self.extensions = tuple(e.lower() for e in extensions)
        self.extra_protected = extra_protected
        # Protected by vault-relative path (the state dir), compared case-insensitively.
        self.protected_paths = frozenset(fold(p) for p in protected_paths)

    def is_note_name(self, rel: str) -> bool:
        """True when the name ends with one of the vault's note extensions (any case)."""
        return rel.lower().endswith(self.extensions)

    def is_protected(self, rel: str) -> bool:
        """True inside a protected folder by name (any depth) or by path (the state dir)."""
        if self.protected_paths and under_any(
            "/".join(fold(p) for p in rel.split("/")), self.protected_paths
        ):
            return True
        return is_protected(rel, self.extra_protected)

    def check_not_protected(self, rel: str) -> None:
        """Raises: Forbidden when the path lies in a protected folder."""
        if self.is_protected(rel):
            raise Forbidden(f"'{display(rel)}' is inside a protected folder; vault-agent never touches it")

    def hidden(self, rel: str, is_dir: bool) -> bool:
        """True when the walk and listings pass over the path (excluded or protected)."""
        return self.exclusions.excluded(rel, is_dir) or self.is_protected(rel)
