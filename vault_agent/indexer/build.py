"""Apply events to the committed snapshot: collapse, re-stat, parse, write segments, commit.

`build_index(settings, full=..., progress=...)` is the public entry (takes the writer lock);
`Indexer` is the writer-side state the long-running engine keeps between builds.
Events are hints: each affected path is re-stat'ed and re-read through `Vault` (safe, no
symlinks) at build time, so the order of a burst or a half-finished editor save pattern
does not matter — the disk decides. Changed notes go into one new segment; every older
segment holding a changed or deleted path gets a tombstone for it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from vault_agent.commit_hook import CommitHook
from vault_agent.config import Settings
from vault_agent.contracts import PARSER_VERSION, SCHEMA_VERSION, BaseFileRef, Manifest, SegmentRef
from vault_agent.errors import VaultUnavailable
from vault_agent.freshness import is_compatible, read_current_manifest, vault_for_settings
from vault_agent.indexer import base_files, compaction
from vault_agent.indexer.build_paths import event_paths, walk_paths
from vault_agent.indexer.eventlog import Event, EventLog, NewEvent
from vault_agent.indexer.lock import WriterLock
from vault_agent.indexer.note_info import NoteInfo, Totals, known_notes, note_totals, tombstoned, totals_after

# Parsing lives in parse_pool; these names stay importable from here for existing callers.
from vault_agent.indexer.parse_pool import TASK_NOTES, Progress, parse_batch
from vault_agent.indexer.scan import log_differences, scan_vault, skipped_counts
from vault_agent.indexer.search_index import SearchIndexWriter, frozen_ok
from vault_agent.indexer.segment_build import SegmentBuilder, WrittenSegments
from vault_agent.indexer.snapshot import clear_tmp, commit, next_ids, now_iso
from vault_agent.indexer.task_settings_file import changed_event, read_task_settings

__all__ = [
    "TASK_NOTES",
    "Indexer",
    "NoteInfo",
    "Progress",
    "build_index",
    "open_writer_dirs",
    "parse_batch",
]

log = logging.getLogger("vault_agent.indexer")

LOG_COMPACT_BYTES = 1 << 20


class Indexer:
    """The writer's view of one index: committed manifest + what it knows of each note."""

    def __init__(
        self, settings: Settings, log_: EventLog | None = None, *, hooks: Sequence[CommitHook] = ()
    ) -> None:
        self.settings = settings
        # Told of every commit, step by step, in this order (commit_hook.py): the in-process
        # readers' preload the composition root passes, the writer's embedder.
        self.hooks = tuple(hooks)
        self.index_dir = Path(settings.index_dir)
        self.vault = vault_for_settings(settings)
        self.log = log_ or EventLog(self.index_dir, floor_seq=lambda: self.applied_seq)
        self.manifest: Manifest | None = None
        self.notes: dict[str, NoteInfo] = {}
        self.bases: dict[str, BaseFileRef] = {}  # the snapshot's `.base` files (base_files.py)
        self._totals: Totals = (0, 0, 0)
        self.compatible = False
        self.search = SearchIndexWriter(self.index_dir)
        self.segments = SegmentBuilder(settings, self.vault, self.search)
        # The last manifest of a state dir that was deleted under a running writer: new
        # snapshot and segment ids stay above its ids, because readers in this process
        # keep per-segment columns by id (engine.py, state dir recovery).
        self.ids_above: Manifest | None = None

    @property
    def applied_seq(self) -> int:
        return self.manifest.applied_seq if self.manifest else 0

    def load(self) -> None:
        """Read CURRENT and the live notes of its snapshot."""
        self.manifest = read_current_manifest(self.index_dir)
        self.notes = {}
        self.bases = base_files.recorded(self.manifest)
        self._totals = (0, 0, 0)
        self.compatible = self.manifest is not None and is_compatible(self.settings, self.manifest)
        if not self.compatible or self.manifest is None:
            return
        if not self._restore_search():
            return
        self.notes = known_notes(self.index_dir, self.manifest)
        self._totals = note_totals(self.notes.values())

    def _restore_search(self) -> bool:
        """Reset the engine's work dir to the committed snapshot's; a snapshot without a
        usable engine dir is incompatible (the next build rebuilds everything)."""
        name = self.manifest.search_index if self.manifest else None
        try:
            if frozen_ok(self.index_dir, name):
                assert name is not None
                self.search.restore(name)
                return True
        except (OSError, ValueError):
            log.warning("search index: cannot restore the snapshot's engine dir; a full rebuild follows")
        self.compatible = False
        return False

    def task_settings_events(self) -> list[NewEvent]:
        """An event for the Tasks settings file when it changed since the snapshot
        (task_settings_file.py); its build commits the new settings."""
        return changed_event(self.vault, self.manifest.task_settings if self.manifest else None)

    def search_rollback(self) -> None:
        """After a failed build: drop the engine's pending changes (work/ back to CURRENT's)."""
        self.search.discard()
        if self.compatible:
            self._restore_search()

    # ----- segments ------------------------------------------------------------------
    def _write_segments(
        self, rels: list[str], progress: Progress | None, unchanged_ok: bool
    ) -> WrittenSegments:
        """Parse `rels` into new segments (segment_build.py); the engine rolls back on a failure."""
        _, seg_id = next_ids(self.index_dir, self.manifest or self.ids_above)
        try:
            return self.segments.write(rels, seg_id, progress, self.notes if unchanged_ok else None)
        except BaseException:
            self.search_rollback()
            raise

    def commit_snapshot(
        self,
        segments: list[SegmentRef],
        applied_seq: int,
        skipped: dict[str, int] | None,
        *,
        remove: Iterable[str] = (),
        add: dict[str, NoteInfo] | None = None,
        replace_all: dict[str, NoteInfo] | None = None,
        bases: dict[str, BaseFileRef] | None = None,
    ) -> Manifest:
        """Commit a manifest over `segments`; the notes change by remove/add (or are replaced),
        the `.base` files are `bases` (None: unchanged).

        Counts are kept incrementally, so a commit costs in proportion to the change.
        """
        add = add or {}
        if replace_all is not None:
            totals, count = note_totals(replace_all.values()), len(replace_all)
        else:
            totals, count = totals_after(self._totals, self.notes, remove, add)
        snap_id, _ = next_ids(self.index_dir, self.manifest or self.ids_above)
        for hook in self.hooks:
            segments = hook.attach(segments)  # e.g. embeddings finished since the last commit
        segments = [s for s in segments if len(s.deleted) < s.note_count]
        manifest = Manifest(
            snapshot_id=snap_id,
            schema_version=SCHEMA_VERSION,
            parser_version=PARSER_VERSION,
            config_fingerprint=self.settings.index_fingerprint(),
            applied_seq=applied_seq,
            created_at=now_iso(),
            segments=segments,
            note_count=count,
            chunk_count=totals[0],
            heading_count=totals[1],
            invalid_frontmatter_count=totals[2],
            skipped=skipped if skipped is not None else (self.manifest.skipped if self.manifest else {}),
            task_settings=read_task_settings(self.vault),
            bases=sorted((self.bases if bases is None else bases).values(), key=lambda ref: ref.path),
        )
        try:
            manifest.search_index = self.search.freeze(snap_id)
            for hook in self.hooks:
                hook.publishing(manifest)  # e.g. an in-process reader loads it now
            commit(self.index_dir, manifest)
        except BaseException:
            self.search_rollback()
            raise
        # In place after the commit: readers of `notes` on other threads take a copy first.
        if replace_all is not None:
            self.notes = replace_all
        else:
            for p in remove:
                self.notes.pop(p, None)
            self.notes.update(add)
        self.manifest, self.compatible, self._totals = manifest, True, totals
        self.bases = base_files.recorded(manifest)
        if self.log.size_bytes() > LOG_COMPACT_BYTES:
            self.log.compact(applied_seq)
        for hook in self.hooks:
            hook.committed(manifest)
        return manifest

    def compact(self) -> Manifest | None:
        """Run one compaction if its policy (compaction.py) asks for it; the new manifest."""
        manifest = self.manifest
        if manifest is None or not self.compatible:
            return None
        merged = compaction.merge(self.index_dir, manifest, self.notes)
        if merged is None:
            return None
        return self.commit_snapshot(merged.segments, manifest.applied_seq, manifest.skipped, add=merged.moved)

    # ----- builds --------------------------------------------------------------------
    def _same_root(self, before: tuple[int, int]) -> None:
        """Refuse to commit a build during which the vault folder vanished or was replaced
        (notes it could not read would be committed as deleted); the build's documents are
        dropped from the engine writer.

        Raises:
            VaultUnavailable: the folder is gone or another folder took its path.
        """
        try:
            self.vault.io.check_same_root(before)
        except VaultUnavailable:
            self.search_rollback()
            raise

    def full_rebuild(self, progress: Progress | None = None) -> Manifest:
        """Index the whole vault into a fresh snapshot (old segments become garbage).

        Raises:
            VaultUnavailable: the vault folder is gone, or vanished or was replaced meanwhile.
        """
        root = self.vault.io.require_root()
        upto = self.log.head_seq()
        rels, skipped, base_rels = walk_paths(self.vault)
        self.search.reset_empty()
        written = self._write_segments(rels, progress, unchanged_ok=False)
        bases = base_files.read_all(self.vault, self.index_dir, base_rels)
        self._same_root(root)
        return self.commit_snapshot(
            written.refs, max(upto, self.applied_seq), skipped, replace_all=written.infos, bases=bases
        )

    def apply(
        self,
        events: list[Event],
        progress: Progress | None = None,
        scanned_skipped: dict[str, int] | None = None,
    ) -> Manifest | None:
        """Apply events after applied_seq; commits and returns the new manifest, or None.

        `scanned_skipped`: the skipped counts of a whole-vault scan just made by the caller.

        Raises:
            VaultUnavailable: the vault folder is gone, or vanished or was replaced meanwhile.
        """
        events = [e for e in events if e.seq > self.applied_seq]
        if not events:
            return None
        if not self.compatible:
            return self.full_rebuild(progress)
        root = self.vault.io.require_root()
        upto = events[-1].seq
        rels, skipped, base_rels = event_paths(
            self.vault, self.notes, events, scanned_skipped, base_files.known_bases(self.bases)
        )
        written = self._write_segments(rels, progress, unchanged_ok=True)
        refs, infos = written.refs, written.infos
        bases = base_files.refresh(self.vault, self.index_dir, self.bases, base_rels)
        # Known notes that vanished come back from the parse as missing (a rescan lists them
        # as delete candidates); nothing else is ever treated as gone.
        gone = {p for p in written.missing if p in self.notes}
        self._same_root(root)
        self.search.delete_paths(sorted(gone))
        replaced = {p for p in (*infos, *gone) if p in self.notes}
        if not refs and not gone and upto <= self.applied_seq:
            return None
        assert self.manifest is not None
        segments = tombstoned(self.manifest.segments, self.notes, replaced)
        return self.commit_snapshot(segments + refs, upto, skipped, remove=gone, add=infos, bases=bases)

    def catch_up(self, progress: Progress | None = None, hash_pass: bool = False) -> Manifest | None:
        """Stat scan → events in the log → build. Full rebuild without a usable snapshot."""
        if not self.compatible:
            self.log.append([NewEvent("rescan", "", None, None, None, "scan")])
            return self.full_rebuild(progress)
        scan = scan_vault(
            self.vault, self.notes, hash_pass=hash_pass, known_bases=base_files.known_bases(self.bases)
        )
        log_differences(self.log, self.applied_seq, scan.events, self.task_settings_events())
        events = self.log.read_after(self.applied_seq)
        skipped = skipped_counts(scan.report)
        if not events and skipped == (self.manifest.skipped if self.manifest else {}):
            return None
        if not events:
            self.log.append([NewEvent("rescan", "", None, None, None, "scan")])
            events = self.log.read_after(self.applied_seq)
        return self.apply(events, progress, skipped)


def open_writer_dirs(settings: Settings, lock: WriterLock, hooks: Sequence[CommitHook] = ()) -> Indexer:
    """Writer start-up common to `index` and the engine: lock, recover log, clear tmp, load."""
    lock.acquire()
    os.makedirs(settings.index_dir, exist_ok=True)
    idx = Indexer(settings, hooks=hooks)
    idx.load()
    if idx.log.recover():
        log.warning("event log: a torn or corrupt tail was cut; a rescan follows")
    clear_tmp(idx.index_dir)
    return idx


EmbedReport = Callable[[int, int, "float | None"], None]  # (embedded notes, live notes, seconds left)


def build_index(
    settings: Settings,
    *,
    full: bool = False,
    progress: Progress | None = None,
    embed: EmbedReport | None = None,
    hooks: Sequence[CommitHook] = (),
) -> Manifest:
    """Build or catch up the index (full=True: reindex from scratch); returns the manifest.
    `hooks`: as `Indexer`'s (e.g. readers of this process to preload each snapshot).

    With `embed`, then compute the embeddings of every live note in the foreground
    (`index --embed`; semantic/embedder.py), committing each finished batch, and report
    progress through it.

    Raises:
        IndexBusy: another writer holds the lock.
    """
    from vault_agent.indexer.snapshot import GarbageCollector

    lock = WriterLock(settings.index_dir)
    try:
        idx = open_writer_dirs(settings, lock, hooks)
        if full:
            idx.log.append([NewEvent("rescan", "", None, None, None, "scan")])
            idx.full_rebuild(progress)
        else:
            idx.catch_up(progress)
        idx.compact()
        if embed is not None:
            from vault_agent.semantic.embedder import EmbedderOptions, SemanticIndexer, embed_to_completion

            embedder = SemanticIndexer(
                idx.index_dir, options=EmbedderOptions(command="index --embed", nice=0)
            )
            idx.hooks = (*idx.hooks, embedder)
            try:
                embed_to_completion(embedder, idx, embed)
            finally:
                idx.hooks = idx.hooks[:-1]
            if embedder.model_failed:
                log.warning(
                    "semantic model failed to load (%s); the index is lexical only", embedder.last_error
                )
        GarbageCollector(idx.index_dir).collect()
        assert idx.manifest is not None
        return idx.manifest
    finally:
        lock.release()
