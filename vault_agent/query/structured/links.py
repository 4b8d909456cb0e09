"""`links_to` / `linked_from` (and DQL's `[[note]]`, `outgoing([[note]])`, `file.inlinks`,
`file.outlinks`): link targets resolved like wikilinks, with the one resolver of
`vault_agent.linkpaths` (the snapshot's notes, Obsidian's rules), as `related` does.

The note a query names (`links_to: "Plan"`) is resolved as a wikilink written at the vault
root. Notes linking to it are found without resolving every link of the vault: only links
whose target's last component is the note's file name (with or without `.md`, any case)
can resolve to it, and only those are resolved. A target that resolves to no note is
matched by its text, as Dataview matches links to notes that do not exist yet.
"""

from __future__ import annotations

from typing import Any

from vault_agent.linkpaths import LinkResolver
from vault_agent.query.related import path_index
from vault_agent.query.snapshot import SnapshotView

# The last path component of a link target, lower-cased, without `.md`.
_BASENAME = r"regexp_replace(lower(regexp_extract(target, '[^/]*$')), '\.md$', '')"


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return (name[:-3] if name.lower().endswith(".md") else name).lower()


class Links:
    """Link lookups over one pinned snapshot (its cursor and resolver)."""

    def __init__(self, view: SnapshotView, cache: dict[Any, Any] | None) -> None:
        self.view = view
        self.con = view.con
        self.cache = cache
        self._resolver: LinkResolver | None = None

    @property
    def resolver(self) -> LinkResolver:
        if self._resolver is None:
            self._resolver = path_index(self.view, self.cache)
        return self._resolver

    def note(self, target: str) -> str | None:
        """The note a query names, resolved as a wikilink written at the vault root."""
        found = self.resolver.resolve(target, "", False)
        return found[0] if found is not None else None

    def linking_to(self, target: str) -> list[str]:
        """Notes with a link resolving to `target` (or, unresolved, spelled like it)."""
        note = self.note(target)
        stem = _stem(note if note is not None else target.split("#", 1)[0].strip())
        rows = self.con.execute(
            f"SELECT path, target, kind FROM links WHERE {_BASENAME} = ? ORDER BY path, ordinal", [stem]
        ).fetchall()
        wanted = target.strip().casefold()
        out: dict[str, None] = {}
        for src, raw, kind in rows:
            found = self.resolver.resolve(raw or "", src, kind == "markdown")
            if note is not None:
                if found is not None and found[0] == note:
                    out[src] = None
            elif found is None and (raw or "").strip().casefold() == wanted:
                out[src] = None
        return list(out)

    def linked_from(self, target: str) -> list[str]:
        """Notes `target` links to (resolved; unresolved links lead nowhere)."""
        note = self.note(target)
        return [] if note is None else self.outlinks([note], resolved_only=True).get(note, [])

    def outlinks(self, paths: list[str], resolved_only: bool = False) -> dict[str, list[str]]:
        """Each note's outgoing links in order, once each: the note linked, or the target as
        written for a link that resolves to no note (Dataview lists those too)."""
        out: dict[str, dict[str, None]] = {p: {} for p in paths}
        if not paths:
            return {}
        rows = self.con.execute(
            "SELECT path, target, kind FROM links WHERE path IN (SELECT unnest(?::VARCHAR[])) ORDER BY path, ordinal",
            [paths],
        ).fetchall()
        for src, raw, kind in rows:
            if not raw:
                continue  # `[[#heading]]`: a link inside the note itself
            found = self.resolver.resolve(raw, src, kind == "markdown")
            if found is not None or not resolved_only:
                out[src][found[0] if found is not None else raw] = None
        return {p: list(v) for p, v in out.items()}

    def inlinks(self, paths: list[str]) -> dict[str, list[str]]:
        """Each note's incoming links: the notes linking to it, in path order."""
        out: dict[str, list[str]] = {}
        for path in paths:
            out[path] = [p for p in self.linking_to(path) if p != path] if path else []
        return out
