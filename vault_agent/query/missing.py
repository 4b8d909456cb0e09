"""Why is my note missing: every file the index passed over or holds without its structure,
with the rule and what to do, paged (the owner's web page shows it; `status --verbose`
counts the same files).

Two sources, in a fixed order so that a cursor (an offset) pages through both:
- the vault walk's rules (`paths.walk`): unreadable folders and files, symbolic links,
  hard links, special files, NFC collisions, names that are not Unicode. The snapshot keeps
  only their counts (`manifest.skipped`), so their names come from a walk of the vault made
  only when those counts say there is something to find, and kept for `WALK_TTL_S` in the
  caller's cache so that paging does not walk again;
- the pinned snapshot: notes with invalid frontmatter (and the rule that failed), notes
  too large for an outline, binary notes, and case twins.
A page holds at most `MISSING_LIMIT_MAX` files; the walk keeps at most
`paths.walk.MAX_NAMED_SKIPS` names (the counts stay exact, `names_capped` says so).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from vault_agent.contracts import MAX_NOTE_CHARS_FOR_STRUCTURE, Outcome
from vault_agent.errors import InvalidParameter
from vault_agent.paging import offset_of
from vault_agent.paths import WalkReport
from vault_agent.paths.walk import MAX_NAMED_SKIPS
from vault_agent.query.models import Camel
from vault_agent.query.snapshot import SnapshotReader, SnapshotView

MISSING_LIMIT_DEFAULT, MISSING_LIMIT_MAX = 50, 200
WALK_TTL_S = 30.0  # the recheck period of a server that is not the writer
WALK_CACHE_KEY = "missing.walk"
COUNTS_CACHE_KEY = "missing.counts"

WALK_RULES: dict[str, str] = {
    "unreadable_folder": "a folder this server may not list: nothing inside it is indexed; fix its "
    "permissions and the next scan picks it up",
    "unreadable": "permissions deny reading it, so it is not indexed; fix its permissions and the next "
    "scan picks it up",
    "symlink": "a symbolic link: links are never followed (Obsidian does not watch them either); move "
    "the real file into the vault",
    "hardlink": "it has several hard links and the other name may lie outside the vault, so it is not "
    "indexed; copy it instead of linking",
    "special_file": "not a regular file (a pipe, socket or device): never read",
    "normalization_collision": "another name in its folder is the same after Unicode normalization "
    "(NFC); only one of the two is indexed: rename one",
    "undecodable_name": "a name in this folder is not valid UTF-8, so that file or folder is skipped; "
    "rename it",
}
FRONTMATTER_RULES: dict[str, str] = {
    "yaml_error": "its YAML does not parse",
    "not_mapping": "its YAML is not a mapping of keys to values",
    "too_large": "it is over 64 KiB",
    "too_deep": "it nests deeper than 64 levels",
    "too_many_aliases": "it uses more than 64 YAML aliases",
}
SNAPSHOT_RULES: dict[str, str] = {
    "invalid_frontmatter": "its frontmatter is invalid ({why}): the note is indexed and searchable, but "
    "its tags and properties are empty until the frontmatter is fixed",
    "too_large": f"over {MAX_NOTE_CHARS_FOR_STRUCTURE:,} characters: counted and found by name, but its "
    "headings are not indexed (no outline); read it in ranges",
    "binary": "mostly NUL or control bytes: indexed by name only, without text or headings",
    "case_twin": "another note's path differs only in letter case: both are indexed here, but they "
    "collide on macOS and Windows",
}
_SNAPSHOT_WHERE = {
    "invalid_frontmatter": "fm_status = 'invalid'",
    "too_large": "too_large",
    "binary": "list_contains(flags, 'binary')",
    "case_twin": "lower(path) IN (SELECT lower(path) FROM notes GROUP BY lower(path) HAVING count(*) > 1)",
}


class MissingFile(Camel):
    path: str  # vault-relative; a folder for unreadable_folder and undecodable_name
    rule: str  # a key of WALK_RULES or SNAPSHOT_RULES
    reason: str  # what happened and what to do


class MissingFiles(Camel):
    files: list[MissingFile]
    counts: dict[str, int]  # per rule, every file (not only this page)
    total: int
    next_cursor: str | None
    names_capped: bool  # the walk kept its first names only; counts are exact


Named = tuple[dict[str, list[str]], bool]  # rule → sorted names; whether the walk capped them


def _walk_named(reader: SnapshotReader) -> Named:
    """rule → sorted vault-relative names, from one walk of the vault."""
    report = WalkReport()
    for _entry in reader.vault.walk(report):
        pass
    named: dict[str, list[str]] = {rule: [] for rule in WALK_RULES}
    named["unreadable_folder"] = [p or "." for p in report.unreadable_folders]
    named["unreadable"] = list(report.unreadable_files)
    named["normalization_collision"] = list(report.normalization_collisions)
    for rule, rel in report.passed_over:
        named[rule].append(rel or ".")
    capped = len(report.passed_over) >= MAX_NAMED_SKIPS
    return {rule: sorted(set(paths)) for rule, paths in named.items()}, capped


def _walk_cached(
    reader: SnapshotReader, view: SnapshotView, cache: dict[Any, Any], clock: Callable[[], float]
) -> Named:
    key = (view.manifest.snapshot_id, tuple(sorted(view.manifest.skipped.items())))
    lock = cache.setdefault(WALK_CACHE_KEY + ".lock", threading.Lock())
    with lock:  # one walk at a time, whatever the number of pages asked at once
        hit = cache.get(WALK_CACHE_KEY)
        if hit is not None and hit[0] == key and clock() - hit[1] < WALK_TTL_S:
            return hit[2]  # type: ignore[no-any-return]
        found = _walk_named(reader)
        cache[WALK_CACHE_KEY] = (key, clock(), found)
        return found


def _snapshot_counts(view: SnapshotView, cache: dict[Any, Any]) -> dict[str, int]:
    """Per rule, the snapshot's notes (a snapshot never changes: counted once per snapshot,
    the latest one kept in the caller's cache; the page asks on every health view)."""
    hit = cache.get(COUNTS_CACHE_KEY)
    if hit is not None and hit[0] == view.manifest.snapshot_id:
        return dict(hit[1])
    counts = _count_snapshot(view)
    cache[COUNTS_CACHE_KEY] = (view.manifest.snapshot_id, counts)
    return dict(counts)


def _count_snapshot(view: SnapshotView) -> dict[str, int]:
    parts = ", ".join(f"count(*) FILTER (WHERE {where})" for where in _SNAPSHOT_WHERE.values())
    row = view.con.execute(f"SELECT {parts} FROM notes").fetchone() or (0,) * len(_SNAPSHOT_WHERE)
    return {rule: int(n or 0) for rule, n in zip(_SNAPSHOT_WHERE, row, strict=True)}


def _snapshot_slice(view: SnapshotView, rule: str, offset: int, limit: int) -> list[MissingFile]:
    rows = view.con.execute(
        f"SELECT path, fm_error FROM notes WHERE {_SNAPSHOT_WHERE[rule]} ORDER BY path LIMIT ? OFFSET ?",
        [limit, offset],
    ).fetchall()
    out = []
    for path, fm_error in rows:
        why = FRONTMATTER_RULES.get(str(fm_error), "it cannot be read as YAML")
        out.append(MissingFile(path=path, rule=rule, reason=SNAPSHOT_RULES[rule].format(why=why)))
    return out


def missing_files(
    reader: SnapshotReader,
    cursor: str | None = None,
    limit: int | None = None,
    cache: dict[Any, Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Outcome[MissingFiles]:
    """One page of the files the index passed over or holds without structure (see module doc).

    Raises:
        InvalidParameter: a cursor that is not one of ours, or limit outside 1–200.
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    start = offset_of(cursor)
    size = MISSING_LIMIT_DEFAULT if limit is None else limit
    if not 1 <= size <= MISSING_LIMIT_MAX:
        raise InvalidParameter(f"limit must be from 1 to {MISSING_LIMIT_MAX}")
    with reader.acquire() as view:
        cache = cache if cache is not None else {}
        walked = any(view.manifest.skipped.get(rule) for rule in WALK_RULES)
        named, capped = _walk_cached(reader, view, cache, clock) if walked else ({}, False)
        counts = {rule: len(named.get(rule, [])) for rule in WALK_RULES} | _snapshot_counts(view, cache)
        files: list[MissingFile] = []
        skip = start
        for rule, count in counts.items():
            if len(files) == size:
                break
            if skip >= count:
                skip -= count
                continue
            want = size - len(files)
            if rule in WALK_RULES:
                files += [
                    MissingFile(path=p, rule=rule, reason=WALK_RULES[rule])
                    for p in named[rule][skip : skip + want]
                ]
            else:
                files += _snapshot_slice(view, rule, skip, want)
            skip = 0
        total = sum(counts.values())
        end = start + len(files)
        data = MissingFiles(
            files=files,
            counts={r: n for r, n in counts.items() if n},
            total=total,
            next_cursor=str(end) if end < total else None,
            names_capped=capped,
        )
        return Outcome(data=data, warnings=view.warnings(), freshness=view.freshness)
