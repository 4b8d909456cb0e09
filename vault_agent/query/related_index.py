"""What `related` reads instead of scanning whole tables: links by source note and by the
name they target, and the document frequency of every term.

At 100k notes `related` spent ~2.4 s on scans: the note's own terms (`terms WHERE path =`
reads every row group of the term-sorted postings), the links pointing to it (a substring
test over every link target), and shared tags (every note). This module keeps, per segment
(segments are immutable, so each is laid out once per reader and shared by every snapshot
that names it):

- `SegmentLinks`: the segment's links in (path, ordinal) order, the slice of each source
  note (`starts`, CSR over the segment's note rows), and every link row under a hash of
  each file name its target may resolve to (`key_hashes`, sorted): the final component of
  the target as written and after `normpath`, case-folded. A link can resolve to a note
  only through one of those names (see `linkpaths.LinkResolver`: an exact or relative
  path ends with it, a name or suffix match compares it), so the note's own name finds
  every candidate, which the one resolver then confirms. A hash collision only adds a
  candidate the resolver turns down.
- `SegmentDf`: the number of chunks of the segment holding each term (term codes of one
  reader-wide `Vocab`), from its `terms` file's term column.

and per snapshot the live document frequencies (`SnapshotDf`: the segments' counts minus
the postings of rows the snapshot tombstones, re-derived incrementally from the previous
snapshot as `LiveNotes` is). Memory at 100k notes: ~551k links (~25 MB with their target
strings) and ~100k terms (~12 MB).
"""

from __future__ import annotations

import posixpath
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR, Manifest
from vault_agent.heap import release_free_memory
from vault_agent.query.live_notes import LiveNotes, Mask
from vault_agent.query.segment_columns import SegmentColumns, Vocab
from vault_agent.query.snapshot import SnapshotView
from vault_agent.query.snapshot_cache import remember
from vault_agent.text import tokenize

_BUILD = threading.Lock()  # one build of a segment's layout at a time (requests share them)
_VOCAB_KEY = ("related_terms_vocab",)


def link_keys(target: str) -> set[str]:
    """The case-folded file names a link target can resolve to (the resolver's `t.strip()`)."""
    t = target.strip()
    out: set[str] = set()
    for name in (t.strip("/").rsplit("/", 1)[-1], posixpath.normpath(t).rsplit("/", 1)[-1] if t else ""):
        if name and name not in (".", ".."):
            out.add(name.casefold())
    return out


def note_keys(path: str) -> set[str]:
    """The link names that can resolve to the note at `path`: its file name with and without `.md`."""
    name = path.rsplit("/", 1)[-1].casefold()
    return {name, name[:-3]} if name.endswith(".md") else {name}


@dataclass(frozen=True)
class SegmentLinks:
    """One segment's links (see the module doc)."""

    starts: npt.NDArray[np.int64]  # note row r of the segment: its links are rows starts[r]:starts[r + 1]
    targets: pa.Array  # per link row, the raw target ('' for null)
    markdown: npt.NDArray[np.bool_]  # per link row: a Markdown link (resolved as a path)
    sources: npt.NDArray[np.int32]  # per link row, the note row it belongs to
    key_hashes: npt.NDArray[np.int64]  # sorted
    key_rows: npt.NDArray[np.int32]  # the link row of each key_hashes entry

    def of_note(self, row: int) -> Iterator[tuple[str, bool]]:
        """(target, markdown) of a note's links, in ordinal order."""
        for i in range(int(self.starts[row]), int(self.starts[row + 1])):
            yield str(self.targets[i].as_py()), bool(self.markdown[i])

    def naming(self, hashes: list[int]) -> set[int]:
        """Link rows whose target may name a file with one of these key hashes."""
        rows: set[int] = set()
        for h in hashes:
            lo = int(np.searchsorted(self.key_hashes, h, side="left"))
            hi = int(np.searchsorted(self.key_hashes, h, side="right"))
            rows.update(int(r) for r in self.key_rows[lo:hi])
        return rows


def _empty_links(rows: int) -> SegmentLinks:
    none32 = np.zeros(0, np.int32)
    return SegmentLinks(
        np.zeros(rows + 1, np.int64),
        pa.array([], pa.string()),
        np.zeros(0, np.bool_),
        none32,
        np.zeros(0, np.int64),
        none32,
    )


def build_segment_links(file: Path | None, columns: SegmentColumns) -> SegmentLinks:
    """Lay out one segment's links file (None: a segment without links)."""
    if file is None:
        return _empty_links(columns.rows)
    table = pq.read_table(file, columns=["path", "ordinal", "target", "kind"])
    table = table.sort_by([("path", "ascending"), ("ordinal", "ascending")])
    paths = pc.dictionary_encode(table["path"].combine_chunks())
    row_of = np.asarray([columns.row_of.get(p, -1) for p in paths.dictionary.to_pylist()], np.int32)
    sources = row_of[paths.indices.to_numpy(zero_copy_only=False)] if len(paths) else np.zeros(0, np.int32)
    keep = sources >= 0  # a link row of a path the segment's notes do not hold is never live
    targets = table["target"].combine_chunks().fill_null("")
    markdown = (
        pc.equal(table["kind"].combine_chunks(), "markdown").fill_null(False).to_numpy(zero_copy_only=False)
    )
    if not keep.all():
        mask = pa.array(keep)
        targets, markdown, sources = targets.filter(mask), markdown[keep], sources[keep]
    starts = np.searchsorted(sources, np.arange(columns.rows + 1), side="left").astype(np.int64)
    # Keys are computed once per distinct target, then gathered per row with numpy (a
    # Python list per row would cost ~40 MB of transients for a 100k-note vault's links).
    encoded = pc.dictionary_encode(targets)
    first = np.zeros(len(encoded.dictionary), np.int64)
    second = np.zeros(len(encoded.dictionary), np.int64)
    count = np.zeros(len(encoded.dictionary), np.int8)
    for i, target in enumerate(encoded.dictionary.to_pylist()):
        keys = [hash(k) for k in sorted(link_keys(target))]
        count[i] = len(keys)
        if keys:
            first[i] = keys[0]
        if len(keys) > 1:
            second[i] = keys[1]
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), np.int64)
    all_rows = np.arange(len(indices), dtype=np.int32)
    has_one, has_two = count[indices] >= 1, count[indices] == 2
    key_hashes = np.concatenate([first[indices][has_one], second[indices][has_two]])
    key_rows = np.concatenate([all_rows[has_one], all_rows[has_two]])
    order = np.argsort(key_hashes, kind="stable")
    return SegmentLinks(
        starts=starts,
        targets=targets,
        markdown=np.asarray(markdown, np.bool_),
        sources=np.asarray(sources, np.int32),
        key_hashes=key_hashes[order],
        key_rows=key_rows[order],
    )


def _segment_file(index_dir: Path, files: dict[str, str], table: str) -> Path | None:
    name = files.get(table)
    return index_dir / SEGMENTS_DIR / name if name else None


def _per_segment(cache: dict[Any, Any], kind: str, manifest: Manifest, build: Any) -> dict[int, Any]:
    """Per-segment layouts of a manifest, built once per segment file; entries of segments
    no longer named by this manifest are dropped (the reader keeps at most two snapshots)."""
    out: dict[int, Any] = {}
    names: set[Any] = set()
    for seg in manifest.segments:
        key = (kind, seg.segment_id, tuple(sorted(seg.files.items())))
        names.add(key)
        found = cache.get(key)
        if found is None:
            with _BUILD:
                found = cache.get(key)
                if found is None:
                    found = cache[key] = build(seg)
                    release_free_memory()  # each build's transients, before the next one's stack on them
        out[seg.segment_id] = found
    for key in [k for k in list(cache) if isinstance(k, tuple) and len(k) == 3 and k[0] == kind]:
        if key not in names and key[1] not in {s.segment_id for s in manifest.segments}:
            cache.pop(key, None)
    return out


def snapshot_links(
    index_dir: Path, view: SnapshotView, cache: dict[Any, Any]
) -> list[tuple[SegmentLinks, SegmentColumns, Mask | None]]:
    """The pinned snapshot's segments: links, note columns and live mask, newest first."""
    columns = {cols.segment_id: (cols, live) for cols, live in view.live.segment_views()}
    links = _per_segment(
        cache,
        "related_links",
        view.manifest,
        lambda seg: build_segment_links(
            _segment_file(index_dir, seg.files, "links"), columns[seg.segment_id][0]
        ),
    )
    return [(links[sid], cols, live) for sid, (cols, live) in columns.items()]


# ----------------------------------------------------------------------------- terms
@dataclass(frozen=True)
class SegmentDf:
    """The chunks of one segment holding each of its terms (codes of the reader's term vocab)."""

    codes: npt.NDArray[np.int32]
    counts: npt.NDArray[np.int64]


def build_segment_df(file: Path | None, vocab: Vocab) -> SegmentDf:
    if file is None:
        return SegmentDf(np.zeros(0, np.int32), np.zeros(0, np.int64))
    column = pq.read_table(file, columns=["term"], read_dictionary=["term"])["term"]
    if column.num_chunks == 0 or len(column) == 0:
        return SegmentDf(np.zeros(0, np.int32), np.zeros(0, np.int64))
    column = column.unify_dictionaries()
    names = column.chunk(0).dictionary
    counts = np.zeros(len(names), np.int64)
    for chunk in column.chunks:
        counts += np.bincount(chunk.indices.to_numpy(zero_copy_only=False), minlength=len(names))
    present = np.flatnonzero(counts)
    codes = vocab.intern(names.take(pa.array(present)).to_pylist())
    return SegmentDf(codes, counts[present])


@dataclass(frozen=True)
class SnapshotDf:
    """Live chunk counts per term code of one snapshot, and what they were derived from."""

    df: npt.NDArray[np.int64]
    segments: frozenset[int]
    dead: frozenset[tuple[int, str]]


def chunk_terms(texts: list[str]) -> list[list[str]]:
    """Per chunk text, its terms as the indexer counted them (`term_rows`: the tokens joined
    by one space and split again, empty ones dropped)."""
    return [[t for t in " ".join(tokenize(text)).split(" ") if t] for text in texts]


def _dead_postings(
    con: duckdb.DuckDBPyConnection, dead: set[tuple[int, str]], vocab: Vocab
) -> npt.NDArray[np.int32]:
    """One term code per (dead chunk, distinct term): the postings a snapshot tombstones."""
    by_seg: dict[int, list[str]] = {}
    for seg, path in dead:
        by_seg.setdefault(seg, []).append(path)
    codes: list[str] = []
    for seg, paths in sorted(by_seg.items()):
        table = SnapshotView.segment_table("chunks", seg)
        rows = con.execute(
            f"SELECT text FROM {table} WHERE path IN (SELECT unnest(?::VARCHAR[]))", [paths]
        ).fetchall()
        for terms in chunk_terms([text or "" for (text,) in rows]):
            codes.extend(set(terms))
    return vocab.intern(codes)


def snapshot_df(index_dir: Path, view: SnapshotView, cache: dict[Any, Any]) -> tuple[SnapshotDf, Vocab]:
    """The live document frequencies of the pinned snapshot (cached per snapshot; derived
    from the previous snapshot's when this one only added segments and tombstones)."""
    sid = view.manifest.snapshot_id
    vocab: Vocab = cache.setdefault(_VOCAB_KEY, Vocab())
    key = ("related_df", sid)
    if key in cache:
        return cache[key], vocab
    segs = _per_segment(
        cache,
        "related_segdf",
        view.manifest,
        lambda seg: build_segment_df(_segment_file(index_dir, seg.files, "terms"), vocab),
    )
    live: LiveNotes = view.live
    dead = frozenset(live.dead_rows())
    previous = next(
        (
            cache[k]
            for k in sorted(
                (k for k in cache if isinstance(k, tuple) and len(k) == 2 and k[0] == "related_df"),
                reverse=True,
            )
            if k[1] < sid and cache[k].segments <= segs.keys() and cache[k].dead <= dead
        ),
        None,
    )
    if previous is not None:
        df = np.zeros(len(vocab), np.int64)
        df[: len(previous.df)] = previous.df
        added, newly_dead = segs.keys() - previous.segments, dead - previous.dead
    else:
        df, added, newly_dead = np.zeros(len(vocab), np.int64), set(segs), dead
    for sid_added in added:
        seg_df = segs[sid_added]
        df[seg_df.codes] += seg_df.counts
    if newly_dead:
        gone = _dead_postings(view.con, set(newly_dead), vocab)
        if len(vocab) > len(df):
            df = np.concatenate([df, np.zeros(len(vocab) - len(df), np.int64)])
        np.subtract.at(df, gone, 1)
    out = SnapshotDf(df, frozenset(segs), dead)
    remember(cache, "related_df", sid, out)
    return out, vocab


def note_term_counts(view: SnapshotView, path: str) -> Counter[str]:
    """How often each term occurs in a note's live chunks (the sum of its `terms` tf)."""
    found = view.live.lookup(path)
    if found is None:
        return Counter()
    table = SnapshotView.segment_table("chunks", found[0])
    rows = view.con.execute(f"SELECT text FROM {table} WHERE path = ? ORDER BY ordinal", [path]).fetchall()
    counts: Counter[str] = Counter()
    for terms in chunk_terms([text or "" for (text,) in rows]):
        counts.update(terms)
    return counts
