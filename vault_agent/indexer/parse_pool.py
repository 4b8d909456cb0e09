"""Parse notes into Arrow tables: inline for small sets, in a process pool for big ones.

`parse_stream` yields one `(tables, missing)` pair per batch of `TASK_NOTES` notes, in
order, with at most two batches per worker in flight, so the writer's memory is bounded by
the segment it is writing. Each note is re-stat'ed and re-read through `Vault` (safe, no
symlinks) at parse time. A worker that dies (a crash no `except` catches) costs only the
note that killed it: the rest is redone one note per process (`_isolated`).
"""

from __future__ import annotations

import errno
import gc
import hashlib
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

import pyarrow as pa

from vault_agent.config import Settings
from vault_agent.contracts import ParsedNote
from vault_agent.errors import InvalidPath, NotFound
from vault_agent.freshness import vault_for_settings
from vault_agent.indexer.birthtime import birth_time_ns
from vault_agent.indexer.scan import is_indexable
from vault_agent.indexer.search_docs import search_tables
from vault_agent.indexer.search_index import engine_threads_alive
from vault_agent.indexer.segments import rows_to_tables
from vault_agent.paths import Vault

log = logging.getLogger("vault_agent.indexer")

POOL_MIN_NOTES = 256  # smaller batches parse inline (a pool costs more than it saves)
TASK_NOTES = 128

Progress = Callable[[int, int], None]
_GONE_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EISDIR, errno.ENXIO})

_WORKER_VAULT: Vault | None = None


def _parse_one(vault: Vault, rel: str) -> ParsedNote | None:
    """Re-stat and read one note safely, then parse it; None when it is no note on disk."""
    from vault_agent.indexer.parse import parse_note

    if not is_indexable(vault, rel):
        return None
    try:
        # One walk of the folders; the stat is the open file's, taken before the read (a
        # racing write leaves a newer mtime).
        resolved, st, raw = vault.read_with_stat(rel, match="normalized")
        if resolved.rel != rel:
            return None
    except (NotFound, InvalidPath):
        return None  # gone, or a link / folder / special file now: not a note
    except PermissionError:
        # One unreadable note must not stop indexing (the walk counts it as `unreadable`
        # from its mode bits; this also covers ACLs and security modules). Not indexed.
        return None
    except OSError as exc:
        if exc.errno in _GONE_ERRNOS:
            return None
        raise  # EMFILE, EIO, ...: fail this build (and retry) rather than drop the note
    ctime_ns = birth_time_ns(str(vault.abspath(resolved)), st)
    return parse_note(rel, raw, st.st_mtime_ns, st.st_size, ctime_ns)


def batch_tables(parsed: list[ParsedNote]) -> dict[str, pa.Table]:
    """The segment tables of parsed notes plus their search engine documents (search_docs)."""
    return {**rows_to_tables(parsed), **search_tables(parsed)}


def parse_batch(vault: Vault, rels: list[str]) -> tuple[dict[str, pa.Table], list[str]]:
    """Arrow tables for the notes among `rels` that exist, and the rels that do not."""
    parsed: list[ParsedNote] = []
    missing: list[str] = []
    for rel in rels:
        note = _parse_one(vault, rel)
        if note is None:
            missing.append(rel)
        else:
            parsed.append(note)
    return batch_tables(parsed), missing


# A parser worker allocates many short-lived, acyclic containers (rows, tokens, the block
# tree's nodes are unlinked by hand); collecting the young generation every 10,000
# allocations instead of every 700 cost 1.7 % fewer instructions in the parse loop
# (callgrind, 300 notes of the 10k generated vault) for no cycle left uncollected.
WORKER_GC_THRESHOLDS = (10_000, 20, 20)


def _worker_init(settings: Settings) -> None:
    global _WORKER_VAULT
    gc.set_threshold(*WORKER_GC_THRESHOLDS)
    _WORKER_VAULT = vault_for_settings(settings)


def _worker_parse(rels: list[str]) -> tuple[dict[str, pa.Table], list[str]]:
    assert _WORKER_VAULT is not None
    return parse_batch(_WORKER_VAULT, rels)


def _pool(settings: Settings) -> ProcessPoolExecutor:
    # fork is fastest but unsafe once other threads (watcher, heartbeat) exist.
    # The engine's open writer runs native threads `active_count` does not see.
    method = "fork" if threading.active_count() == 1 and not engine_threads_alive() else "forkserver"
    return ProcessPoolExecutor(
        max_workers=settings.index_workers,
        mp_context=get_context(method),
        initializer=_worker_init,
        initargs=(settings,),
    )


def parse_stream(
    settings: Settings, vault: Vault, rels: list[str], progress: Progress | None = None
) -> Iterator[tuple[dict[str, pa.Table], list[str]]]:
    """Parse notes in batches (`index_workers` processes for big sets), yielding as they finish."""
    total = len(rels)
    done = 0
    if total < POOL_MIN_NOTES:
        for i in range(0, total, TASK_NOTES):
            part = rels[i : i + TASK_NOTES]
            yield parse_batch(vault, part)
            done += len(part)
            if progress:
                progress(done, total)
        return
    tasks = [rels[i : i + TASK_NOTES] for i in range(0, total, TASK_NOTES)]
    pending: list[list[str]] = []
    try:
        with _pool(settings) as pool:
            # At most two tasks per worker in flight: results are consumed in order as they
            # come, so memory stays bounded by the segment being written, not by the vault.
            inflight: list[tuple[list[str], Future[tuple[dict[str, pa.Table], list[str]]]]] = []
            it = iter(tasks)
            for task in it:
                inflight.append((task, pool.submit(_worker_parse, task)))
                if len(inflight) >= settings.index_workers * 2:
                    break
            while inflight:
                task, fut = inflight[0]
                try:
                    result = fut.result()
                except BrokenProcessPool:
                    pending = [t for t, _ in inflight] + list(it)
                    break
                inflight.pop(0)
                nxt = next(it, None)
                if nxt is not None:
                    inflight.append((nxt, pool.submit(_worker_parse, nxt)))
                yield result
                done += len(task)
                if progress:
                    progress(done, total)
    except BrokenProcessPool:
        pass  # raised again by the pool's shutdown; the pending tasks are redone below
    if pending:
        # A worker died (a crash no `except` can catch). Redo the rest one note per process
        # so only the note that crashes is lost; it is indexed as a `parse_error` note.
        log.error("a parser worker died; isolating the note that crashed it")
        for task in pending:
            yield _isolated(settings, vault, task)
            done += len(task)
            if progress:
                progress(done, total)


def _isolated(settings: Settings, vault: Vault, rels: list[str]) -> tuple[dict[str, pa.Table], list[str]]:
    """Parse `rels` in a fresh pool; on a crash split in halves until the culprit is alone."""
    try:
        with _pool(settings) as pool:
            return pool.submit(_worker_parse, rels).result()
    except BrokenProcessPool:
        if len(rels) == 1:
            return _crash_placeholder(vault, rels[0])
    mid = len(rels) // 2
    left, right = _isolated(settings, vault, rels[:mid]), _isolated(settings, vault, rels[mid:])
    return {t: pa.concat_tables([left[0][t], right[0][t]]) for t in left[0]}, left[1] + right[1]


def _crash_placeholder(vault: Vault, rel: str) -> tuple[dict[str, pa.Table], list[str]]:
    """A metadata-only row for a note whose parse killed its process."""
    from vault_agent.indexer.parse import parse_note

    try:
        resolved = vault.resolve(rel, match="normalized")
        st = vault.lstat(resolved)
        raw = vault.read_bytes(resolved)
    except (NotFound, InvalidPath, OSError):
        return batch_tables([]), [rel]
    note = parse_note(rel, b"", st.st_mtime_ns, st.st_size, birth_time_ns(str(vault.abspath(resolved)), st))
    note.note["sha256"] = hashlib.sha256(raw).hexdigest()
    note.note["flags"] = ["parse_error"]
    return batch_tables([note]), []
