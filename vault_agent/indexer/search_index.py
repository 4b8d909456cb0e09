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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from vault_agent.contracts import fsync_dir
from vault_agent.search_fields import (
    FIELD_BOOSTS,
    ORDINAL_FIELD,
    PATH_FIELD,
    SEARCH_DIR,
    WORK_DIR,
    build_schema,
    joined_tokens,
    name_fields,
    register,
    snapshot_dir_name,
)

log = logging.getLogger("vault_agent.indexer")

WRITER_HEAP_BYTES = 64_000_000  # tantivy flushes a segment when its buffer fills
WRITER_THREADS = 1  # the parse pool already uses the cores; one indexing thread keeps up


def _meta_files(index_dir: Path) -> list[str]:
    """Segment files the engine's meta.json names (what a frozen view must hold)."""
    meta = json.loads((index_dir / "meta.json").read_text(encoding="utf-8"))
    prefixes = {str(s["segment_id"]).replace("-", "") for s in meta.get("segments", [])}
    return sorted(n for n in os.listdir(index_dir) if n.split(".", 1)[0] in prefixes)


def _link_tree(src: Path, dst: Path, durable: bool) -> None:
    """dst = hard links to src's live segment files + a copy of its meta.json.

    Built in place, not in a temporary dir renamed over: a directory renamed inside a
    watched vault confuses watchdog's inotify bookkeeping, and no reader opens `dst` before
    the manifest naming it is committed (after this returns, durable)."""
    _clear_dir(dst)
    for name in _meta_files(src):
        os.link(src / name, dst / name)
    shutil.copyfile(src / "meta.json", dst / "meta.json")
    if durable:
        for name in os.listdir(dst):
            if name != "meta.json" and os.stat(dst / name).st_nlink > 2:
                continue  # already frozen by an earlier snapshot, hence already durable
            fd = os.open(dst / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(dst)
        fsync_dir(dst.parent)


def _clear_dir(path: Path) -> None:
    """Empty `path` but keep the directory itself: a file watcher on a state dir inside the
    vault (watchdog, inotify) trips over a watched directory removed and re-created."""
    path.mkdir(parents=True, exist_ok=True)
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
    """Pending engine changes of one build, then commit + freeze for the new snapshot."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = Path(index_dir)
        self.root = self.index_dir / SEARCH_DIR
        self.work = self.root / WORK_DIR
        self._schema = build_schema()
        self._index: Any = None
        self._writer: Any = None

    # ----- work dir --------------------------------------------------------------------
    def reset_empty(self) -> None:
        """An empty work index (full rebuilds start here)."""
        self.discard()
        _clear_dir(self.work)
        self._open(reuse=False)

    def restore(self, frozen_name: str) -> None:
        """Make work/ equal to a committed snapshot's frozen engine dir."""
        import tantivy

        self.discard()
        _link_tree(frozen_dir(self.index_dir, frozen_name), self.work, durable=False)
        self._index = register(tantivy.Index.open(str(self.work)))

    def _open(self, reuse: bool) -> None:
        import tantivy

        self._index = register(tantivy.Index(self._schema, path=str(self.work), reuse=reuse))

    def _w(self) -> Any:
        if self._writer is None:
            if self._index is None:
                self.reset_empty()
            self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=WRITER_THREADS)
        return self._writer

    def discard(self) -> None:
        """Drop uncommitted changes (the writer's lock goes with it)."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.rollback()
            self._writer = None

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

    def add_tables(self, tables: dict[str, pa.Table], aliases: dict[str, list[str]] | None = None) -> None:
        """Replace the docs of every note in `tables` (a parse batch) by its chunks."""
        with engine_io(self.work):
            self._add_tables(tables, aliases)

    def _add_tables(self, tables: dict[str, pa.Table], aliases: dict[str, list[str]] | None) -> None:
        import tantivy

        notes = tables["notes"]
        paths = notes.column("path").to_pylist()
        if not paths:
            return
        w = self._w()
        for p in paths:  # deletes first: they apply to docs added before them
            w.delete_documents_by_term(PATH_FIELD, p)
        alias_col = notes.column("aliases").to_pylist() if "aliases" in notes.column_names else None
        names = {
            p: name_fields(p, t, (alias_col[i] if alias_col else None) or (aliases or {}).get(p))
            for i, (p, t) in enumerate(zip(paths, notes.column("title").to_pylist(), strict=True))
        }
        chunks = tables["chunks"]
        cols = [chunks.column(c).to_pylist() for c in ("path", "ordinal", "heading_path", "text")]
        for path, ordinal, heading_path, text in zip(*cols, strict=True):
            doc = tantivy.Document()
            doc.add_text(PATH_FIELD, path)
            doc.add_integer(ORDINAL_FIELD, int(ordinal))
            for field, value in names[path].items():
                if value:
                    doc.add_text(field, value)
            if heading_path:
                doc.add_text("headings", joined_tokens(" \n ".join(heading_path)))
            body = joined_tokens(text or "")
            if body:
                doc.add_text("body", body)
            w.add_document(doc)
        with_chunks = set(cols[0])
        for path in paths:  # a note without chunks (empty body) is still found by its name
            if path not in with_chunks:
                doc = tantivy.Document()
                doc.add_text(PATH_FIELD, path)
                doc.add_integer(ORDINAL_FIELD, 0)
                for field, value in names[path].items():
                    if value:
                        doc.add_text(field, value)
                w.add_document(doc)

    # ----- commit ----------------------------------------------------------------------
    def freeze(self, snapshot_id: int) -> str:
        """Commit pending changes, wait for merges, and freeze work/ for a snapshot.

        Returns the frozen dir's name (the manifest's `search_index`); durable on return.
        """
        if self._index is None:
            self.reset_empty()
        if self._writer is not None:
            with engine_io(self.work):
                self._writer.commit()
                self._writer.wait_merging_threads()  # merges land in meta.json before we freeze
            self._writer = None
        name = snapshot_dir_name(snapshot_id)
        _link_tree(self.work, frozen_dir(self.index_dir, name), durable=True)
        self._prune_work()
        return name

    def _prune_work(self) -> None:
        """Delete work/ segment files meta.json no longer names (merged away). tantivy's own
        collector skips files it did not create (those restored by hard link)."""
        live = set(_meta_files(self.work))
        for name in os.listdir(self.work):
            if name.startswith(".") or name == "meta.json" or name in live:
                continue
            with contextlib.suppress(OSError):
                (self.work / name).unlink()


__all__ = ["FIELD_BOOSTS", "SearchIndexWriter", "frozen_dir", "frozen_ok"]
