"""Which notes a build reads: every note of the vault for a full rebuild (`walk_paths`), or
the notes a batch of change events names (`event_paths`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vault_agent.indexer.base_files import is_base_name
from vault_agent.indexer.eventlog import Event
from vault_agent.indexer.scan import KnownNote, is_indexable, scan_vault, skipped_counts
from vault_agent.paths import Vault


def walk_paths(vault: Vault) -> tuple[list[str], dict[str, int], list[str]]:
    """Every note path of the vault (sorted), the walk's skipped counts, in fresh memory,
    and every `.base` file's path (indexer/base_files.py).

    The parse workers fork from this process after the walk and map all of its heap: every
    page the writer holds then counts once more in each worker's resident size. The walk's
    entries (~48 MB at 100k notes) are dropped, and the paths copied first, because the
    entries' memory is interleaved with the original strings and would stay mapped (with
    the copy, ~29 MB less per process at 100k notes).
    """
    scan = scan_vault(vault, {}, known_bases={})
    rels = [(rel + "/")[:-1] for rel in sorted(scan.entries)]  # new str objects, not aliases
    skipped = skipped_counts(scan.report)
    bases = sorted(scan.bases)
    del scan
    return rels, skipped, bases


def event_paths(
    vault: Vault,
    notes: Mapping[str, KnownNote],
    events: Sequence[Event],
    scanned_skipped: dict[str, int] | None,
    bases: Mapping[str, KnownNote] | None = None,
) -> tuple[list[str], dict[str, int] | None, list[str]]:
    """The note paths `events` ask to re-read (sorted), the skipped counts (a rescan of
    the whole vault counts them again; else `scanned_skipped`, the caller's own scan's),
    and the `.base` paths to re-read (`bases`: the snapshot's, indexer/base_files.py).

    Events collapse: the disk decides what changed, so the set of paths is what matters.
    A folder's known notes are re-checked; a rescan's prefix is scanned against `notes`.
    """
    bases = bases or {}
    candidates: set[str] = set()
    base_paths: set[str] = set()
    folders: set[str] = set()
    prefixes: set[str] = set()
    hash_pass = False
    for ev in events:
        if ev.op == "rescan":
            prefixes.add(ev.path)
            hash_pass = hash_pass or ev.dest == "hash"
            continue
        for rel in (ev.path, ev.dest) if ev.op == "move" else (ev.path,):
            if not rel:
                continue
            if vault.is_note_name(rel):
                candidates.add(rel)
                continue
            if is_base_name(rel):
                base_paths.add(rel)
            # a folder: its known notes are re-checked (new ones arrive as their own events)
            candidates.update(p for p in notes if p.startswith(rel + "/"))
            folders.add(rel)
    base_paths.update(p for p in bases if any(p.startswith(f + "/") for f in folders))
    skipped = scanned_skipped
    if prefixes:
        scan = scan_vault(vault, notes, hash_pass=hash_pass, prefixes=prefixes, known_bases=bases)
        for e in scan.events:
            (base_paths if e.path in scan.bases or e.path in bases else candidates).add(e.path)
        if "" in prefixes:
            skipped = skipped_counts(scan.report)
    for rel in candidates.copy():
        # A path that is no longer eligible (e.g. now excluded) but known must go.
        if rel not in notes and not is_indexable(vault, rel):
            candidates.discard(rel)
    return sorted(candidates), skipped, sorted(base_paths)
