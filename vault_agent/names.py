"""Names as people type them: the one resolver from caller text to a note or file.

SPEC "Addresses and names". Every tool that takes a note path calls `resolve_name`; the
steps run in this order, and the first step that matches anything decides (one match
answers, several are `AMBIGUOUS`, listed):

    exact      the path as typed
    case       the path case-insensitively (one file; case twins are listed, never guessed)
    extension  the path without its `.md` (`projects/Plan` → `projects/Plan.md`)
    wikilink   `[[Name]]`, `[[Name#Heading]]`, `[[Name|alias]]`: the target by path, by file
               name (a partial path `[[Folder/Name]]` matches the end of a full path), by
               title, by alias; `#Heading` selects a section where the tool reads sections
    basename   the file name anywhere in the vault, with or without `.md` (a partial path
               matches the end of a full one)
    title      the note's title (frontmatter `title`, else its file name)
    alias      a frontmatter alias

Names compare in NFC, case-folded, with runs of whitespace as one space. Where a tool looks
paths up (`Home`) differs: file tools look at the file system, the per-note contracts at
the snapshot; the names (file names, titles, aliases) always come from the pinned
snapshot (`NameIndex`, implemented in `query/note_names.py`). Nothing is found → NOT_FOUND
with up to three close names and the call to make next. Write tools never come here:
writes take the exact path (SPEC "writes never guess").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from vault_agent.contracts import WarningItem
from vault_agent.errors import Ambiguous, InvalidPath, NotFound, VaultAgentError
from vault_agent.paths import Resolved, Vault, display, normalize_rel_path
from vault_agent.text import nfc

ResolvedFrom = Literal["exact", "case", "extension", "wikilink", "basename", "title", "alias"]
MAX_LISTED = 10  # an AMBIGUOUS message names at most this many candidates
MAX_CLOSE = 3  # a NOT_FOUND message suggests at most this many close names
_WIKILINK = re.compile(r"!?\[\[(.*)\]\]")


def name_key(text: str) -> str:
    """How names compare: NFC, case-folded, whitespace runs as one space, trimmed."""
    return " ".join(nfc(text).casefold().split())  # split(): no regex, ~3x faster at 100k names


def strip_extension(name: str, extensions: tuple[str, ...]) -> str:
    """`name` without a trailing note extension (any case), else unchanged."""
    lower = name.lower()
    for ext in extensions:
        if lower.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name


@dataclass(frozen=True)
class NameRequest:
    """Caller text, parsed: the name to look up and what else it carries."""

    typed: str  # what the caller sent (shown in messages, bounded by `display`)
    target: str  # the name to resolve: the text, or a wikilink's target
    heading: tuple[str, ...]  # `[[Name#A#B]]` → ("A", "B"); () otherwise
    wikilink: bool


def parse_name(raw: object) -> NameRequest:
    """Caller text → a NameRequest (a wikilink's alias is dropped, its heading kept).

    Raises:
        InvalidPath: not a string, or a wikilink without a target (`[[#Heading]]`).
    """
    if not isinstance(raw, str):
        raise InvalidPath("path must be a string")
    link = _WIKILINK.fullmatch(raw.strip())
    if link is None:
        return NameRequest(typed=raw, target=raw, heading=(), wikilink=False)
    inner = link.group(1).split("|", 1)[0]
    target, *heading = inner.split("#")
    if not target.strip():
        raise InvalidPath("a wikilink needs a note name before '#': [[Note#Heading]]")
    parts = tuple(p.strip() for p in heading if p.strip())
    return NameRequest(typed=raw, target=target.strip(), heading=parts, wikilink=True)


@dataclass(frozen=True)
class Resolution:
    """The one note or file caller text names, and how it was found."""

    path: str
    resolved_from: ResolvedFrom
    request: NameRequest

    @property
    def heading(self) -> tuple[str, ...]:
        return self.request.heading

    def warning(self) -> WarningItem | None:
        """`NAME_RESOLVED` (with `resolved_from`) unless the path was exact."""
        if self.resolved_from == "exact":
            return None
        typed = display(self.request.typed.strip())
        return WarningItem(
            code="NAME_RESOLVED",
            message=f"'{typed}' is '{display(self.path)}' (resolved_from: {self.resolved_from}); "
            "use this path in later calls",
        )


class Home(Protocol):
    """Where a tool looks paths up: the file system (file tools) or the snapshot."""

    def find(self, rel: str) -> tuple[str, bool] | None:
        """(path, exact) of the one entry at `rel`, as typed or in another case; None if none.

        Raises:
            Ambiguous: several case variants. InvalidPath, Forbidden, NotFound: `rel` names
            something that ends resolution (a link, a protected path, an unindexed file).
        """
        ...

    def miss(self) -> VaultAgentError | None:
        """A more precise error than NOT_FOUND for a name nothing resolved (e.g. a folder)."""
        ...


class NameIndex(Protocol):
    """The notes of one pinned snapshot by name (see query/note_names.py)."""

    def by_path(self, rel: str) -> list[str]:
        """Notes whose whole path equals `rel` case-insensitively."""
        ...

    def by_name(self, stem: str) -> list[str]:
        """Notes whose file name without its extension has this name_key."""
        ...

    def by_title(self, key: str) -> list[str]: ...

    def by_alias(self, key: str) -> list[str]: ...

    def close_names(self, typed: str, limit: int) -> list[str]:
        """Up to `limit` notes whose names are close to `typed`, closest first."""
        ...


NamesFn = Callable[[], "NameIndex | None"]


def ambiguous(typed: str, how: str, paths: list[str], tool: str, total: int | None = None) -> Ambiguous:
    """AMBIGUOUS naming at most MAX_LISTED of the candidates and the call to make next."""
    count = len(paths) if total is None else total
    shown = ", ".join(f"'{display(p)}'" for p in paths[:MAX_LISTED])
    more = f" and {count - MAX_LISTED} more" if count > MAX_LISTED else ""
    return Ambiguous(
        f"'{display(typed.strip())}' matches {count} notes by {how}: {shown}{more}; "
        f"use '{tool}' with one of these paths"
    )


def _pick(typed: str, how: str, hits: list[str], tool: str) -> str | None:
    if len(hits) > 1:
        raise ambiguous(typed, how, sorted(hits), tool)
    return hits[0] if hits else None


def _in_home(home: Home, rel: str, extensions: tuple[str, ...]) -> tuple[str, ResolvedFrom] | None:
    """The path steps: exact, case, extension."""
    hit = home.find(rel)
    if hit is not None:
        return hit[0], ("exact" if hit[1] else "case")
    if rel and strip_extension(rel, extensions) == rel:
        for ext in extensions:
            hit = home.find(rel + ext)
            if hit is not None:
                return hit[0], "extension"
    return None


def _by_file_name(names: NameIndex, rel: str, extensions: tuple[str, ...]) -> list[str]:
    """Notes named `rel` (a file name, or the end of a path), anywhere in the vault."""
    last = rel.rsplit("/", 1)[-1]
    hits = names.by_name(strip_extension(last, extensions))
    if "/" not in rel:
        return hits
    tail = "/" + name_key(strip_extension(rel, extensions))
    return [h for h in hits if name_key(strip_extension(h, extensions)).endswith(tail)]


def _by_names(
    names: NameIndex, req: NameRequest, rel: str, extensions: tuple[str, ...], tool: str
) -> tuple[str, ResolvedFrom] | None:
    """The index steps (file name, title, alias); the first that matches decides."""
    key = name_key(req.target)
    steps: tuple[tuple[ResolvedFrom, str, Callable[[], list[str]]], ...] = (
        ("basename", "file name", lambda: _by_file_name(names, rel, extensions)),
        ("title", "title", lambda: names.by_title(key)),
        ("alias", "alias", lambda: names.by_alias(key)),
    )
    for step, words, hits in steps:
        found = _pick(req.typed, words, hits(), tool)
        if found is not None:
            return found, step
    return None


def resolve_name(
    raw: object,
    vault: Vault,
    home: Home,
    names: NamesFn,
    tool: str,
    *,
    allow_root: bool = False,
    unindexed: str = "",
) -> Resolution:
    """The one note or file `raw` names (module doc: the steps and their order).

    `names` is called only when the path steps found nothing (it pins the snapshot).
    `tool` is the CLI name of the calling operation, named in the call to make next;
    `unindexed` ends a NOT_FOUND message (what a tool reading the index says of new notes).

    Raises:
        InvalidPath: malformed, absolute, traversal (before any lookup), or a folder/non-note
            where the tool needs a note. Forbidden: a protected folder.
        Ambiguous: several notes match at the deciding step. NotFound: nothing matches.
    """
    req = parse_name(raw)
    rel = normalize_rel_path(req.target, allow_root=allow_root)
    vault.check_not_protected(rel)
    found = _in_home(home, rel, vault.extensions)
    if found is not None:
        return Resolution(path=found[0], resolved_from="wikilink" if req.wikilink else found[1], request=req)
    index = names() if rel else None
    named = _by_names(index, req, rel, vault.extensions, tool) if index is not None else None
    if named is not None:
        # The snapshot named it; the tool's home must still hold it (a file tool reads the disk).
        confirmed = home.find(named[0])
        if confirmed is not None:
            step: ResolvedFrom = "wikilink" if req.wikilink else named[1]
            return Resolution(path=confirmed[0], resolved_from=step, request=req)
    miss = home.miss()
    if miss is not None:
        raise miss
    raise not_found(req.typed, index, tool, unindexed)


def not_found(typed: str, index: NameIndex | None, tool: str, after: str = "") -> NotFound:
    """NOT_FOUND with up to MAX_CLOSE close names and the call to make next."""
    shown = display(typed.strip())
    if index is None:
        return NotFound(
            f"'{shown}' does not exist in the vault; note names, titles and aliases resolve once "
            "the vault is indexed (run 'vault-agent index')"
        )
    close = index.close_names(typed, MAX_CLOSE)
    head = f"no note or file is named '{shown}' (tried path, file name, title and alias)"
    if not close:
        return NotFound(f"{head}; use 'search' with words from the note, or 'tree' to see its folders{after}")
    listed = ", ".join(f"'{display(p)}'" for p in close)
    return NotFound(
        f"{head}; close names: {listed}; use '{tool}' with one of these paths, or 'search'{after}"
    )


WRITES_TAKE_PATHS = "write tools take the exact path, never a name, title, alias or [[link]]"


def write_not_found(rel: str) -> NotFound:
    """NOT_FOUND of a write tool: the path as typed is missing, and writes never guess."""
    return NotFound(
        f"'{display(rel)}' does not exist in the vault; {WRITES_TAKE_PATHS}: find the path with 'search' or 'ls'"
    )


class FileHome:
    """The file system as the home of file tools (read, scan, coverage, audit, stat, get).

    A folder is an answer only when `folders` is true (stat); for the others it is
    remembered and reported as INVALID_PATH when no note of that name exists either.
    """

    def __init__(self, vault: Vault, tool: str, *, folders: bool = False) -> None:
        self.vault = vault
        self.tool = tool
        self.folders = folders
        self.resolved: dict[str, Resolved] = {}
        self._folder: str | None = None

    def find(self, rel: str) -> tuple[str, bool] | None:
        try:
            found = self.vault.resolve(rel)
        except NotFound:
            variants = self.vault.case_variants(rel, MAX_LISTED + 1)
            if len(variants) > 1:
                raise ambiguous(rel, "path in another case", variants, self.tool) from None
            return None
        self.vault.check_not_protected(found.rel)
        if found.is_dir and not self.folders:
            self._folder = self._folder or found.rel
            return None
        self.resolved[found.rel] = found
        return found.rel, found.rel == rel

    def miss(self) -> VaultAgentError | None:
        if self._folder is None:
            return None
        return InvalidPath(f"'{display(self._folder)}' is a folder; list it with 'ls'")
