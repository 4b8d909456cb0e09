"""The writer's side of the full-text engine (tantivy): change docs, commit, freeze per snapshot.

Layout under the state dir:
    search/work/          the engine index the writer changes (tantivy's own dir)
    search/snap-<id>/     one frozen engine view per snapshot: hard links to the immutable
                          segment files (`<uuid>.<ext>`, `<uuid>.<opstamp>.del`) that the
                          work dir's meta.json named at that commit, plus a copy of meta.json

tantivy never rewrites a segment file (deletes go to new `.del` files, merges to new
segments, meta.json is replaced by rename), so a hard link freezes the files a snapshot
needs while the writer goes on merging and collecting in work/. A reader opens only
`snap-<id>` of the manifest it answers from, so a search never mixes two snapshots.

Crash safety: the manifest names its engine dir and is committed after that dir is durable
(fsync of its files and the dir). The work dir may run ahead of CURRENT (crash between the
engine commit and the manifest commit), so every writer start and every failed build resets
work/ from the committed snapshot's frozen dir (hard links again). A missing or unreadable
frozen dir makes the snapshot incompatible for the writer, which then rebuilds everything.
Changes cost what changed: deletes by path and adds for the changed notes only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from vault_agent.contracts import fsync_dir
from vault_agent.indexer.search_docs import DOCS_TABLE, NAMES_TABLE
from vault_agent.private_dir import make_state_dirs
from vault_agent.search_fields import (
    DETAIL_FIELD,
    NAME_FIELDS,
    ORDINAL_FIELD,
    PATH_FIELD,
    SEARCH_DIR,
    WORK_DIR,
    build_schema,
    register,
    snapshot_dir_name,
)

log = logging.getLogger("vault_agent.indexer")

WRITER_HEAP_BYTES = 64_000_000  # tantivy flushes a segment when its buffer fills
WRITER_THREADS = 1  # the parse pool already uses the cores; one indexing thread keeps up
BULK_DOCS = 20_000  # a commit adding more docs waits for its merges (a rebuild, not an edit)
FREEZE_ATTEMPTS = 8
MANAGED_FILE = ".managed.json"  # tantivy's list of the files it created (and may delete)
_LIVE: dict[Path, weakref.ref[SearchIndexWriter]] = {}  # work dir -> the instance whose writer is open
_LIVE_LOCK = threading.Lock()


def close_engine_writer(index_dir: Path) -> None:
    """Close this process's engine writer of a state dir (the writer lock is being released:
    no merge of ours may touch work/ once another writer may own it)."""
    ref = _LIVE.get(Path(index_dir) / SEARCH_DIR / WORK_DIR)
    owner = ref() if ref is not None else None
    if owner is not None:
        owner.close()


def engine_threads_alive() -> bool:
    """Whether an engine writer (with native indexing and merge threads) is open in this
    process: forking then is unsafe, like with any other thread (build._pool)."""
    owners = [ref() for ref in list(_LIVE.values())]
    return any(owner is not None and owner._writer is not None for owner in owners)


def _segment_files(meta: dict[str, Any], present: list[str]) -> list[str]:
    """The files of `present` that the segments of `meta` (a parsed meta.json) use: every
    `<uuid>.<ext>` of a named segment, and only the `.del` file of its current deletes."""
    wanted: dict[str, str | None] = {}
    for seg in meta.get("segments", []):
        deletes = seg.get("deletes") or None
        wanted[str(seg["segment_id"]).replace("-", "")] = f"{deletes['opstamp']}.del" if deletes else None
    out = []
    for name in present:
        prefix, _, rest = name.partition(".")
        if prefix not in wanted:
            continue
        if rest.endswith(".del") and rest != wanted[prefix]:
            continue  # an older generation of the segment's deletes
        out.append(name)
    return sorted(out)


def _meta_files(index_dir: Path) -> list[str]:
    """Segment files the engine's meta.json names (what a frozen view must hold)."""
    meta = json.loads((index_dir / "meta.json").read_text(encoding="utf-8"))
    return _segment_files(meta, os.listdir(index_dir))


def _link_tree(src: Path, dst: Path, durable: bool) -> None:
    """dst = hard links to src's live segment files + a copy of its meta.json.

    The meta.json bytes linked for are the ones copied (a merge in src may replace it at any
    moment). Built in place, not in a temporary dir renamed over: a directory renamed inside
    a watched vault confuses watchdog's inotify bookkeeping, and no reader opens `dst` before
    the manifest naming it is committed (after this returns, durable)."""
    _clear_dir(dst)
    raw = (src / "meta.json").read_bytes()
    for name in _segment_files(json.loads(raw), os.listdir(src)):
        os.link(src / name, dst / name)
    with open(dst / "meta.json", "wb") as f:
        f.write(raw)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    if durable:
        # The linked files need no fsync of their own: tantivy syncs every file it writes
        # (MmapDirectory's writer calls sync_data on terminate); the new names need the
        # dir fsyncs below.
        fsync_dir(dst)
        fsync_dir(dst.parent)


def _clear_dir(path: Path) -> None:
    """Empty `path` but keep the directory itself: a file watcher on a state dir inside the
    vault (watchdog, inotify) trips over a watched directory removed and re-created."""
    make_state_dirs(path, path.parent.parent)  # search/<dir> of the state dir
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)


@contextlib.contextmanager
def engine_io(work: Path) -> Iterator[None]:
    """Name the OS error behind a failure of tantivy's writer.

    tantivy reports an I/O failure of its indexing thread as a ValueError without the errno
    ("An index writer was killed ..."), so disk full and a read-only state dir would become
    INTERNAL. On such an error a small durable write probes the engine's dir: the OSError it
    raises (ENOSPC, EROFS, EACCES) is what the callers map to STORAGE_FULL / STORAGE_READ_ONLY.
    """
    try:
        yield
    except ValueError as exc:
        probe = work / ".io-probe"
        try:
            with open(probe, "wb") as f:
                f.write(bytes(1 << 16))
                f.flush()
                os.fsync(f.fileno())
        except OSError as os_error:
            raise os_error from exc
        finally:
            with contextlib.suppress(OSError):
                probe.unlink()
        raise


def frozen_dir(index_dir: Path, name: str) -> Path:
    return Path(index_dir) / SEARCH_DIR / name


def frozen_ok(index_dir: Path, name: str | None) -> bool:
    """Whether a snapshot's frozen engine dir exists and its meta.json names present files."""
    if not name:
        return False
    path = frozen_dir(index_dir, name)
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        names = set(os.listdir(path))
    except (OSError, ValueError):
        return False
    for seg in meta.get("segments", []):
        prefix = str(seg["segment_id"]).replace("-", "")
        if not any(n.startswith(prefix + ".") for n in names):
            return False
    return True


class SearchIndexWriter:
    """Pending engine changes of one build, then commit + freeze for the new snapshot.

    The tantivy writer stays open across commits so its merges run in the background: a
    commit costs the new segment and a meta.json, never a merge (waiting for merges cost
    ~0.15 s per commit). A commit that changed nothing in the engine (an embeddings-only or
    compaction snapshot) reuses the last frozen dir, so readers keep their open searcher.
    """

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = Path(index_dir)
        self.root = self.index_dir / SEARCH_DIR
        self.work = self.root / WORK_DIR
        self._schema = build_schema()
        self._index: Any = None
        self._writer: Any = None
        self._frozen: str | None = None  # the frozen dir equal to work/'s last commit
        self._dirty = False  # changes since that freeze
        self._bulk = False  # a rebuild: let merges finish before freezing (fewer segments)
        self._added = 0

    # ----- work dir --------------------------------------------------------------------
    def reset_empty(self) -> None:
        """An empty work index (full rebuilds start here)."""
        self._claim()
        self.discard()
        _clear_dir(self.work)
        self._open(reuse=False)
        self._frozen, self._dirty, self._bulk = None, True, True

    def restore(self, frozen_name: str) -> None:
        """Make work/ equal to a committed snapshot's frozen engine dir."""
        import tantivy

        self._claim()
        self.discard()
        _link_tree(frozen_dir(self.index_dir, frozen_name), self.work, durable=False)
        self._index = register(tantivy.Index.open(str(self.work)))
        self._frozen, self._dirty, self._bulk = frozen_name, False, False

    def _open(self, reuse: bool) -> None:
        import tantivy

        self._index = register(tantivy.Index(self._schema, path=str(self.work), reuse=reuse))

    def _w(self) -> Any:
        if self._writer is None:
            if self._index is None:
                self.reset_empty()
            self._claim()
            self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=WRITER_THREADS)
            _LIVE[self.work] = weakref.ref(self)
        self._dirty = True
        return self._writer

    def discard(self) -> None:
        """Drop uncommitted changes and the writer, once its merges have finished (a merge
        left running would go on writing into work/ while a restore refills it)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            with contextlib.suppress(Exception):
                writer.rollback()
            with contextlib.suppress(Exception):
                writer.wait_merging_threads()
            self._release()
        self._frozen, self._dirty = None, False

    def close(self) -> None:
        """Let running merges finish and release the engine's lock (commits stay as they are)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            with contextlib.suppress(Exception), engine_io(self.work):
                writer.wait_merging_threads()
            self._release()

    def _release(self) -> None:
        with _LIVE_LOCK:
            ref = _LIVE.get(self.work)
            if ref is not None and ref() in (self, None):
                del _LIVE[self.work]

    def _claim(self) -> None:
        """One open engine writer per work dir in this process: an older SearchIndexWriter
        of the same state dir (an Indexer not yet collected) lets go of it first."""
        with _LIVE_LOCK:
            ref = _LIVE.get(self.work)
            other = ref() if ref is not None else None
            _LIVE[self.work] = weakref.ref(self)
        if other is not None and other is not self:
            other.discard()

    # ----- changes ---------------------------------------------------------------------
    def clear(self) -> None:
        self._w().delete_all_documents()

    def delete_paths(self, paths: list[str]) -> None:
        if not paths:
            return
        with engine_io(self.work):
            w = self._w()
            for p in paths:
                w.delete_documents_by_term(PATH_FIELD, p)

    def add_tables(self, tables: dict[str, pa.Table]) -> None:
        """Replace the docs of every note in `tables` (a parse batch) by its chunks."""
        with engine_io(self.work):
            self._add_tables(tables)

    def _add_tables(self, tables: dict[str, pa.Table]) -> None:
        """Feed the batch's prepared documents (indexer/search_docs.py: the worker has
        analyzed their text already) to the engine; no tokenizing here."""
        import tantivy

        paths = tables["notes"].column("path").to_pylist()
        if not paths:
            return
        w = self._w()
        for p in paths:  # deletes first: they apply to docs added before them
            w.delete_documents_by_term(PATH_FIELD, p)
        names_table = tables[NAMES_TABLE]
        name_cols = [(f, names_table.column(f).to_pylist()) for f in NAME_FIELDS]
        names = {
            p: [(f, col[i]) for f, col in name_cols if col[i]]
            for i, p in enumerate(names_table.column("path").to_pylist())
        }
        docs = tables[DOCS_TABLE]
        cols = [docs.column(c).to_pylist() for c in ("path", "ordinal", "detail", "headings", "body")]
        for path, ordinal, detail, headings, body in zip(*cols, strict=True):
            doc = tantivy.Document()
            doc.add_text(PATH_FIELD, path)
            doc.add_integer(ORDINAL_FIELD, ordinal)
            doc.add_bytes(DETAIL_FIELD, detail)
            for field, value in names[path]:
                doc.add_text(field, value)
            if headings:
                doc.add_text("headings", headings)
            if body:
                doc.add_text("body", body)
            w.add_document(doc)
        self._added += len(cols[0])

    # ----- commit ----------------------------------------------------------------------
    def freeze(self, snapshot_id: int) -> str:
        """Commit pending changes and freeze work/ for a snapshot (merges go on behind).

        Returns the frozen dir's name (the manifest's `search_index`); durable on return.
        Without changes since the last freeze, that dir is the answer (nothing to copy).
        """
        if self._index is None:
            self.reset_empty()
        if not self._dirty and self._frozen and frozen_ok(self.index_dir, self._frozen):
            return self._frozen
        if self._writer is not None:
            with engine_io(self.work):
                self._writer.commit()
                if self._bulk or self._added > BULK_DOCS:
                    self._writer.wait_merging_threads()  # a rebuild: freeze it merged
                    self._writer = None
        name = snapshot_dir_name(snapshot_id)
        _freeze_committed(self.work, frozen_dir(self.index_dir, name))
        self._frozen, self._dirty, self._bulk, self._added = name, False, False, 0
        self._prune_work()
        return name

    def _prune_work(self) -> None:
        """Delete work/ files that neither meta.json nor tantivy's file list names: the ones
        a restore linked in and merges have replaced since (tantivy's own collector deletes
        only files it created). Listed before the lists are read: a merge registers its
        output before creating it, so a file listed here is in a list read afterwards."""
        present = os.listdir(self.work)
        try:
            managed = set(json.loads((self.work / MANAGED_FILE).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return  # unknown: keep everything (a later commit prunes)
        live = set(_meta_files(self.work))
        for name in present:
            if name.startswith(".") or name == "meta.json" or name in live or name in managed:
                continue
            with contextlib.suppress(OSError):
                (self.work / name).unlink()


def _freeze_committed(work: Path, dst: Path) -> None:
    """Link work/'s committed files into dst. A background merge may replace segments (and
    tantivy delete the merged ones) between reading meta.json and linking: every meta.json
    after the commit describes the same documents, so start again from the newer one."""
    for attempt in range(FREEZE_ATTEMPTS):
        try:
            _link_tree(work, dst, durable=True)
            return
        except FileNotFoundError:
            if attempt == FREEZE_ATTEMPTS - 1:
                raise


__all__ = ["SearchIndexWriter", "frozen_dir", "frozen_ok"]
