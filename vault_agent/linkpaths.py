"""Which vault file a link target names, resolved the way Obsidian resolves it.

One resolver, shared by `related` (over the snapshot's notes) and the link rewrite of
`vault_move` (over the vault's files), so the two never disagree. Case-insensitive like
Obsidian. For a wikilink or embed target `t` written in note `source`:

1. `./t`, `../t`: relative to the source's folder, nothing else;
2. the exact vault path `t` (or `t.md`);
3. when `t` holds a `/`: relative to the source's folder;
4. every file whose path ends with `/t` (or `/t.md`): a bare name is the case with one
   component, a partial path `[[Folder/Note]]` matches the end of a full path. One match is
   it; several are broken as Obsidian does (observed through `getFirstLinkpathDest`): a
   match in the source's own folder, else the shortest path string; then, ours, the first
   in code-point order so the answer is deterministic.

A Markdown link `[x](t)` is a path: relative to the source's folder, then from the vault
root, then (as Obsidian does) the same suffix rule.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Literal

# How the target was written, which decides how a rewrite spells the new one.
Form = Literal["name", "suffix", "path", "relative", "root"]


def _fold(path: str) -> str:
    folded = path.casefold()
    return path if folded == path else folded  # an already folded path keeps one string object


# A key's files: the path itself (nearly every key), or a list when several share the key.
# No list object per unique key: at 100k notes the resolver takes ~25 instead of ~44 MB.
_Entry = str | list[str]


def _add(mapping: dict[str, _Entry], key: str, rel: str) -> None:
    found = mapping.get(key)
    if found is None:
        mapping[key] = rel
    elif isinstance(found, str):
        mapping[key] = [found, rel]
    else:
        found.append(rel)


def _hits(mapping: dict[str, _Entry], key: str) -> list[str]:
    found = mapping.get(key)
    if found is None:
        return []
    return [found] if isinstance(found, str) else found


def folder_of(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def join_path(folder: str, target: str) -> str | None:
    """folder + target, normalized; None when it leaves the vault."""
    joined = posixpath.normpath(posixpath.join(folder, target)) if folder else posixpath.normpath(target)
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return "" if joined == "." else joined


def pick_closest(candidates: list[str], source: str) -> str:
    """Obsidian's choice among several files a target matches (see the module doc)."""
    if len(candidates) == 1:
        return candidates[0]
    own = [c for c in candidates if folder_of(c) == folder_of(source)]
    return min(own or candidates, key=lambda c: (len(c), c))


class LinkResolver:
    """A set of vault files, looked up the way Obsidian resolves link targets."""

    def __init__(self, files: Iterable[str]) -> None:
        self.by_path: dict[str, _Entry] = {}
        self.by_name: dict[str, _Entry] = {}
        for rel in files:
            _add(self.by_path, _fold(rel), rel)
            _add(self.by_name, _fold(rel.rsplit("/", 1)[-1]), rel)

    def _path(self, rel: str | None) -> str | None:
        """The file at exactly this path (or path + .md); case twins only on an exact spelling."""
        if rel is None:
            return None
        for cand in (rel, rel + ".md"):
            hits = _hits(self.by_path, _fold(cand))
            if len(hits) == 1:
                return hits[0]
            if cand in hits:
                return cand
        return None

    def name_count(self, name: str) -> int:
        return len(_hits(self.by_name, _fold(name)))

    def _suffix(self, target: str, source: str) -> str | None:
        """The file whose path ends with the target (a bare name is a one-part suffix)."""
        want = _fold(target.strip("/"))
        if not want:
            return None
        name = want.rsplit("/", 1)[-1]
        found: list[str] = []
        for key, tail in ((name, want), (name + ".md", want + ".md")):
            for rel in _hits(self.by_name, key):
                folded = _fold(rel)
                if (folded == tail or folded.endswith("/" + tail)) and rel not in found:
                    found.append(rel)
        return pick_closest(found, source) if found else None

    def resolve(self, target: str, source: str, markdown: bool) -> tuple[str, Form] | None:
        """The vault file a link target names from `source`, and how it was written."""
        t = target.strip()
        if not t:
            return None
        if markdown:
            rel = self._path(join_path(folder_of(source), t))
            if rel is not None:
                return rel, "relative"
            rel = self._path(join_path("", t.lstrip("/")))
            if rel is not None:
                return rel, "root"
        elif t.startswith(("./", "../")):
            rel = self._path(join_path(folder_of(source), t))
            return (rel, "relative") if rel is not None else None
        else:
            rel = self._path(join_path("", t.lstrip("/")))
            if rel is not None:
                return rel, ("path" if "/" in t else "name")
            if "/" in t:
                rel = self._path(join_path(folder_of(source), t))
                if rel is not None:
                    return rel, "relative"
        if t.startswith(("./", "../")):
            return None
        rel = self._suffix(t, source)
        if rel is None:
            return None
        return rel, ("suffix" if "/" in t.strip("/") else "name")
