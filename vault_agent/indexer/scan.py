"""Stat scan of the vault against the snapshot's notes → change events (origin "scan").

The scan is what makes watcher events mere hints: it runs at writer start, after an
overflow, periodically, and on `index`. (path, mtime_ns, size) decide; the optional hash
pass also reads files whose stat is unchanged and compares sha256, which catches a
same-size rewrite whose mtime was restored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from vault_agent.contracts import BASE_EXTENSION
from vault_agent.errors import VaultAgentError
from vault_agent.indexer.eventlog import EventLog, NewEvent
from vault_agent.paths import Vault, WalkEntry, WalkReport

PAUSE_EVERY = 256  # entries between two `pause` calls of a background scan (~5 ms of walking)
RESCAN_INSTEAD_OF = 256  # scan differences above this are logged as one `rescan` record


@dataclass(frozen=True)
class KnownNote:
    """What the snapshot knows of one note (enough to detect a change)."""

    mtime_ns: int
    size: int
    sha256: str


@dataclass
class ScanOutcome:
    events: list[NewEvent]
    entries: dict[str, WalkEntry]
    report: WalkReport = field(default_factory=WalkReport)
    bases: dict[str, WalkEntry] = field(default_factory=dict)  # `.base` files, when asked for


def skipped_counts(report: WalkReport) -> dict[str, int]:
    """The manifest's `skipped` map: files the walk passed over, by rule."""
    counts = {
        "undecodable_name": report.undecodable_names,
        "normalization_collision": len(report.normalization_collisions),
        "symlink": report.symlinks_skipped,
        "special_file": report.special_files_skipped,
        "hardlink": report.hardlinks_skipped,
        # Permissions deny reading: skipped, retried by every scan (RELIABILITY: per-note faults).
        "unreadable": len(report.unreadable_files),
        "unreadable_folder": len(report.unreadable_folders),
    }
    # Case twins are not here: both are indexed (distinct paths), so counting them as skipped
    # was wrong; `status --verbose` names them (caseTwinPaths) from the snapshot instead.
    return {k: v for k, v in counts.items() if v}


def file_sha256(vault: Vault, rel: str) -> str | None:
    """sha256 of a note's bytes read safely through the vault, or None if unreadable."""
    try:
        resolved = vault.resolve(rel, match="normalized")
        return hashlib.sha256(vault.read_bytes(resolved)).hexdigest()
    except (VaultAgentError, OSError):
        return None


def is_indexable(vault: Vault, rel: str) -> bool:
    """True when a vault-relative path could be a note: note name, not excluded or protected."""
    return (
        bool(rel)
        and vault.is_note_name(rel)
        and not vault.is_protected(rel)
        and not vault.exclusions.excluded(rel, False)
    )


def in_prefixes(rel: str, prefixes: Iterable[str]) -> bool:
    """True when `rel` is one of, or lies under one of, the folder prefixes ('' = all)."""
    return any(p == "" or rel == p or rel.startswith(p + "/") for p in prefixes)


def scan_vault(
    vault: Vault,
    known: Mapping[str, KnownNote],
    *,
    hash_pass: bool = False,
    prefixes: Iterable[str] = ("",),
    pause: Callable[[], None] | None = None,
    known_bases: Mapping[str, KnownNote] | None = None,
) -> ScanOutcome:
    """Walk the vault and return upsert/delete events for every difference from `known`.

    `pause`, when given, is called every PAUSE_EVERY entries (a background scan lets a
    commit run without competing for the interpreter). With `known_bases` (the snapshot's
    `.base` files, indexer/base_files.py) the walk yields those files too, compared the same way.
    """
    prefixes = tuple(prefixes)
    report = WalkReport()
    entries: dict[str, WalkEntry] = {}
    bases: dict[str, WalkEntry] = {}
    events: list[NewEvent] = []
    also = (BASE_EXTENSION,) if known_bases is not None else ()
    for n, entry in enumerate(vault.walk(report, also=also)):
        if pause is not None and n % PAUSE_EVERY == 0:
            pause()
        if not in_prefixes(entry.rel, prefixes):
            continue
        is_base = known_bases is not None and not vault.is_note_name(entry.rel)
        (bases if is_base else entries)[entry.rel] = entry
        old = (known_bases or {}).get(entry.rel) if is_base else known.get(entry.rel)
        changed = old is None or (old.mtime_ns, old.size) != (entry.mtime_ns, entry.size)
        if not changed and hash_pass and old is not None:
            changed = file_sha256(vault, entry.rel) != old.sha256
        if changed:
            events.append(NewEvent("upsert", entry.rel, None, entry.mtime_ns, entry.size, "scan"))
    for rel in sorted(known):
        if rel not in entries and in_prefixes(rel, prefixes):
            events.append(NewEvent("delete", rel, None, None, None, "scan"))
    for rel in sorted(known_bases or {}):
        if rel not in bases and in_prefixes(rel, prefixes):
            events.append(NewEvent("delete", rel, None, None, None, "scan"))
    return ScanOutcome(events, entries, report, bases)


def log_differences(log: EventLog, applied_seq: int, found: list[NewEvent], settings: list[NewEvent]) -> None:
    """Log what a catch-up scan found (and a changed Tasks settings file) unless the records
    after `applied_seq` already hold them.

    After a failed build (disk full) the next attempt must not log the same differences
    again: a big batch is logged as one full rescan, which the build turns into the same
    scan (RELIABILITY: the log never grows from retries).
    """
    pending = log.read_after(applied_seq)
    if settings and not any(e.path == settings[0].path for e in pending):
        log.append(settings)
    if found and not any(e.op == "rescan" and e.path == "" for e in pending):
        big = len(found) > RESCAN_INSTEAD_OF
        log.append([NewEvent("rescan", "", None, None, None, "scan")] if big else found)
