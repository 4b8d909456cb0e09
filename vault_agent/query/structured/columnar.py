"""The common plans answered in memory: property and tag predicates over typed columns.

At 100k notes a property filter through DuckDB costs 15–35 ms, mostly planning and
scanning `read_parquet` over every segment per statement. Here each segment's `props` and
`tags` files are read once into numpy columns sorted by key (a key's rows are one slice,
found in a dict), each row naming its note by its row in the segment's notes table. A
snapshot maps those rows to positions in its live notes table (relations.live_notes; -1
for a dead row), so a predicate is a boolean mask over the snapshot's notes, `and`/`or`/
`not` are `&`/`|`/`~`, and a sort is one `numpy.lexsort` of the matches.

The semantics are sql.py's, row for row (its module doc); a plan holding anything else
(links, note columns, lengths, truthiness, `contains`) returns None and goes to SQL, as
does a comparison over a NaN (DuckDB orders NaN above every number) and a sort key a note
holds twice (the SQL join would repeat the note).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vault_agent.contracts import SEGMENTS_DIR
from vault_agent.per_owner import PerOwner
from vault_agent.query.structured.plan import (
    AndP,
    FalseP,
    NotP,
    OrP,
    Plan,
    Pred,
    PropCmp,
    PropExists,
    TagP,
    TrueP,
)
from vault_agent.query.structured.relations import KEEP_SNAPSHOTS, dead_by_segment, segment_notes
from vault_agent.query.structured.values import Lit

if TYPE_CHECKING:
    from vault_agent.query.snapshot import SnapshotReader, SnapshotView

Mask = npt.NDArray[np.bool_]
Ints = npt.NDArray[Any]  # integer (or boolean) arrays

KINDS = ("string", "number", "boolean", "date", "datetime", "null", "empty", "object", "list")
K_STRING, K_NUMBER, K_BOOLEAN, K_DATE, K_DATETIME, K_NULL, K_EMPTY, K_OBJECT, K_LIST = range(len(KINDS))
K_OTHER = len(KINDS)  # a kind this module does not know: scalar for SQL's `NOT IN (...)`
# sql.KIND_RANK: numbers, dates, text, booleans, the rest
_KIND_RANK = np.array([2, 0, 3, 1, 1, 4, 4, 4, 4, 4], np.int8)
_FILE_SORTS = ("path", "size", "mtime", "ctime")


def _ops(left: Any, op: str, right: Any) -> Any:
    if op == "=":
        return left == right
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    return left >= right


_ARROW_OPS = {"=": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}


@dataclass(frozen=True)
class _Keyed:
    """One segment's rows of a key-sorted table: `slices[key]` = (start, end)."""

    slices: dict[str, tuple[int, int]]
    row: npt.NDArray[np.int32]  # the note's row in the segment's notes table, -1 when none
    cols: dict[str, Any]  # numpy arrays, `s` an Arrow string array


def _valid(col: pa.ChunkedArray) -> Mask:
    return np.asarray(col.is_valid().to_numpy(zero_copy_only=False), np.bool_)


def _load(file: str, notes: pa.Table, key: str, columns: list[str]) -> _Keyed:
    table = pq.read_table(
        file, columns=["path", key, *columns], use_threads=False
    )  # one arena: less RSS left
    encoded = pc.dictionary_encode(table[key]).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    if (np.diff(codes) < 0).any():  # the writer sorts by key: only then is a key's rows one slice
        table = table.take(pc.sort_indices(table, sort_keys=[(key, "ascending")]))
        encoded = pc.dictionary_encode(table[key]).combine_chunks()
        codes = encoded.indices.to_numpy(zero_copy_only=False)
    row = pc.index_in(table["path"], value_set=notes["path"]).fill_null(-1).to_numpy().astype(np.int32)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1]).astype(np.int64)
    ends = np.append(starts[1:], len(codes))
    if not len(codes):  # a segment whose notes hold no property (or tag): no runs at all
        starts = ends = np.zeros(0, np.int64)
    names = encoded.dictionary.to_pylist()
    slices = {str(names[codes[a]]): (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}
    cols: dict[str, Any] = {}
    for name in columns:
        col = table[name]
        if name in ("item", "is_list"):  # never null (the writer's rows)
            cols[name] = col.fill_null(0 if name == "item" else False).to_numpy()
            if name == "item" and len(cols[name]) and cols[name].max() < 2**15:
                cols[name] = cols[name].astype(np.int16)  # list items: 100 at most (indexer/properties.py)
        elif name == "kind":
            index = pc.index_in(col, value_set=pa.array(KINDS)).fill_null(K_OTHER)
            cols[name] = index.to_numpy().astype(np.int8)
        elif name == "s":
            cols[name] = col.combine_chunks()
        else:
            cols[name + "_ok"] = _valid(col)
            fill = {pa.bool_(): False, pa.float64(): 0.0}.get(col.type, 0)
            cols[name] = col.fill_null(fill).to_numpy()
    if "n" in cols:
        cols["nan"] = bool(np.isnan(cols["n"][cols["n_ok"]]).any())
        if not (cols["n_ok"] & cols["d_ok"]).any():  # numbers and dates share one buffer
            shared = np.array(cols["d"], np.int64)
            shared[cols["n_ok"]] = cols["n"][cols["n_ok"]].view(np.int64)
            cols["d"], cols["n"] = shared, shared.view(np.float64)  # each read under its `_ok` mask
    return _Keyed(slices, row, cols)


@dataclass
class Columns:
    notes: pa.Table
    size: int
    # per segment: (props, tags, segment row → snapshot position or -1)
    segments: list[tuple[_Keyed | None, _Keyed | None, Ints]]
    path_rank: Ints | None = None


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    props: dict[int, _Keyed | None] = field(default_factory=dict)
    tags: dict[int, _Keyed | None] = field(default_factory=dict)
    snapshots: dict[int, Columns] = field(default_factory=dict)


def _forget(cache: _Cache, snapshots: set[int], segments: set[int]) -> None:
    with cache.lock:
        for sid in [s for s in cache.snapshots if s not in snapshots]:
            del cache.snapshots[sid]
        for store in (cache.props, cache.tags):
            for seg_id in [s for s in store if s not in segments]:
                del store[seg_id]


_caches: PerOwner[_Cache] = PerOwner(_Cache, _forget)


def answerable(pred: Pred) -> bool:
    """Whether `mask_of` may answer the plan (then its columns are worth building)."""
    if isinstance(pred, AndP | OrP):
        return all(answerable(i) for i in pred.items)
    if isinstance(pred, NotP):
        return answerable(pred.item)
    return isinstance(pred, TrueP | FalseP | TagP | PropExists | PropCmp)


def columns_of(
    reader: SnapshotReader, view: SnapshotView, notes: pa.Table, build: bool = True
) -> Columns | None:
    """The snapshot's columns (built from the segments' cached ones; with `build` False
    only when they are already there); None when a segment's notes are not loaded."""
    cache = _caches.of(reader)
    sid = view.manifest.snapshot_id
    with cache.lock:
        known = cache.snapshots.get(sid)
        if known is not None and known.notes is notes:
            return known
        if not build:
            return None
        seg_dir = Path(reader.settings.index_dir) / SEGMENTS_DIR
        dead = dead_by_segment(view)
        seg_of = notes["seg"].to_numpy()
        parts: list[tuple[_Keyed | None, _Keyed | None, Ints]] = []
        for seg in view.manifest.segments:
            sid_ = seg.segment_id
            table = segment_notes(reader, sid_)
            if table is None:
                return None
            for name, store, key, cols in (
                ("props", cache.props, "key", ["item", "is_list", "kind", "s", "n", "d", "b"]),
                ("tags", cache.tags, "tag", ["exact"]),
            ):
                if sid_ not in store:
                    file = seg.files.get(name)
                    store[sid_] = _load(str(seg_dir / file), table, key, cols) if file else None
            live = np.ones(len(table), np.bool_)
            gone = dead.get(sid_)
            if gone:
                live = ~np.asarray(
                    pc.is_in(table["path"], value_set=pa.array(gone, pa.string())).to_numpy(
                        zero_copy_only=False
                    )
                )
            where = np.flatnonzero(seg_of == sid_)
            if len(where) != int(live.sum()):
                return None
            pos = np.full(len(table), -1, np.int64)
            pos[live] = where
            parts.append((cache.props[sid_], cache.tags[sid_], pos))
        snap = Columns(notes, len(notes), parts)
        cache.snapshots[sid] = snap
        for old in sorted(cache.snapshots)[:-KEEP_SNAPSHOTS]:
            del cache.snapshots[old]
        current = {s.segment_id for s in view.manifest.segments}
        for store in (cache.props, cache.tags):
            for gone_id in [s for s in store if s not in current]:
                del store[gone_id]
        return snap


# ---------------------------------------------------------------------- predicates
def _rows(snap: Columns, table: int, key: str) -> list[tuple[_Keyed, int, int, Ints]]:
    """(columns, start, end, snapshot positions of the rows) of `key` in every segment;
    `table` 0: props, 1: tags."""
    out = []
    for props, tags, positions in snap.segments:
        keyed = tags if table else props
        if keyed is None or key not in keyed.slices:
            continue
        a, b = keyed.slices[key]
        rows = keyed.row[a:b]
        pos = np.where(rows >= 0, positions[np.maximum(rows, 0)], -1)
        out.append((keyed, a, b, pos))
    return out


def _mark(snap: Columns, hits: list[tuple[Ints, Mask]]) -> Mask:
    mask = np.zeros(snap.size, np.bool_)
    for pos, cond in hits:
        chosen = pos[cond]
        mask[chosen[chosen >= 0]] = True
    return mask


def _text_eq(s: pa.Array, a: int, b: int, op: str, value: str) -> Mask:
    return np.asarray(
        _ARROW_OPS[op](s.slice(a, b - a), value).fill_null(False).to_numpy(zero_copy_only=False), np.bool_
    )


def _cmp(cols: dict[str, Any], a: int, b: int, op: str, value: Lit) -> Mask | None:
    """sql.SqlBuilder.cmp_cond over rows a:b (None: not answered here)."""
    kind = cols["kind"][a:b]
    if value.kind in ("number", "boolean"):
        if value.kind == "number" and (
            cols["nan"] or not isinstance(value.value, int | float) or isinstance(value.value, bool)
        ):
            return None
        if value.kind == "boolean" and not isinstance(value.value, bool):
            return None
        col = "n" if value.kind == "number" else "b"
        want = K_NUMBER if value.kind == "number" else K_BOOLEAN
        cond = (kind == want) & cols[col + "_ok"][a:b] & _ops(cols[col][a:b], op, value.value)
        if op == "=" and value.text is not None:
            cond |= _text_eq(cols["s"], a, b, "=", value.text)
        return np.asarray(cond, np.bool_)
    if value.kind == "date":
        if not isinstance(value.value, int) or isinstance(value.value, bool):
            return None
        cond = cols["d_ok"][a:b] & _ops(cols["d"][a:b], op, value.value)
        if op == "=" and value.text is not None:
            cond |= _text_eq(cols["s"], a, b, "=", value.text)
        return np.asarray(cond, np.bool_)
    if value.kind == "string" and isinstance(value.value, str):
        cond = _text_eq(cols["s"], a, b, op, value.value)
        return cond if op == "=" else cond & (kind == K_STRING)
    return None


def mask_of(snap: Columns, pred: Pred) -> Mask | None:
    """The notes matching `pred` as a mask over the snapshot's notes, or None when the
    plan holds a predicate answered by SQL only."""
    if isinstance(pred, TrueP):
        return np.ones(snap.size, np.bool_)
    if isinstance(pred, FalseP):
        return np.zeros(snap.size, np.bool_)
    if isinstance(pred, AndP | OrP):
        masks = [mask_of(snap, item) for item in pred.items]
        if any(m is None for m in masks):
            return None
        out = masks[0]
        for m in masks[1:]:
            out = out & m if isinstance(pred, AndP) else out | m  # type: ignore[operator]
        return out
    if isinstance(pred, NotP):
        inner = mask_of(snap, pred.item)
        return None if inner is None else ~inner
    return _leaf(snap, pred)


def _leaf(snap: Columns, pred: Pred) -> Mask | None:
    """A tag or property predicate's mask (None: answered by SQL)."""
    if isinstance(pred, TagP):
        hits = []
        for keyed, a, b, pos in _rows(snap, 1, pred.tag):
            hits.append((pos, np.ones(b - a, np.bool_) if pred.nested else keyed.cols["exact"][a:b]))
        return _mark(snap, hits)
    if isinstance(pred, PropExists):
        hits = []
        for keyed, a, b, pos in _rows(snap, 0, pred.key):
            hits.append((pos, ~((keyed.cols["kind"][a:b] == K_NULL) & ~keyed.cols["is_list"][a:b])))
        return _mark(snap, hits)
    if isinstance(pred, PropCmp):
        if not (
            pred.value.kind in ("number", "boolean", "date", "string")
            or (pred.value.kind == "link" and pred.op == "=")
        ):
            return np.zeros(snap.size, np.bool_)  # sql: no condition, no note
        hits = []
        for keyed, a, b, pos in _rows(snap, 0, pred.key):
            cond = _cmp(keyed.cols, a, b, pred.op, pred.value)
            if cond is None:
                return None
            hits.append((pos, cond))
        if pred.value.kind == "link":
            return None
        return _mark(snap, hits)
    return None


def mismatched(snap: Columns, key: str, value: Lit) -> int | None:
    """sql.mismatch_sql's count: notes holding `key` with a scalar of another type."""
    hits = []
    for keyed, a, b, pos in _rows(snap, 0, key):
        cols = keyed.cols
        kind = cols["kind"][a:b]
        scalar = ~np.isin(kind, (K_NULL, K_EMPTY, K_OBJECT, K_LIST))
        if value.kind == "number":
            ok = (kind == K_NUMBER) & cols["n_ok"][a:b]
        elif value.kind == "date":
            ok = cols["d_ok"][a:b]
        elif value.kind == "string":
            ok = kind == K_STRING
        elif value.kind == "boolean":
            ok = kind == K_BOOLEAN
        else:
            return None
        hits.append((pos, scalar & ~ok))
    return int(_mark(snap, hits).sum())


# ---------------------------------------------------------------------- order
def _path_rank(snap: Columns) -> Ints:
    if snap.path_rank is None:
        order = pc.sort_indices(snap.notes["path"]).to_numpy()
        rank = np.empty(snap.size, np.int32)
        rank[order] = np.arange(snap.size, dtype=np.int32)
        snap.path_rank = rank
    return snap.path_rank


def _dense(values: Any) -> Ints:
    return np.unique(values, return_inverse=True)[1]


def _prop_sort_keys(snap: Columns, key: str, matched: Ints, descending: bool) -> list[Ints] | None:
    """sql.SqlBuilder.order's terms for one property: missing last, then the type's rank,
    then the value (nulls last), as integer keys over `matched`."""
    present = np.zeros(snap.size, np.bool_)
    kind = np.full(snap.size, K_NULL, np.int8)
    null = np.ones(snap.size, np.bool_)
    value = np.zeros(snap.size, np.int32)  # dense ranks: fewer than the rows
    groups: dict[int, list[tuple[Ints, Any]]] = {}  # kind rank → (positions, values)
    for keyed, a, b, pos in _rows(snap, 0, key):
        cols = keyed.cols
        first = (cols["item"][a:b] == 0) & (pos >= 0)
        where = pos[first]
        if present[where].any() or len(np.unique(where)) != len(where):
            return None  # a note with two first items: the SQL join repeats it
        present[where] = True
        k = cols["kind"][a:b][first]
        kind[where] = k
        for rank, col, kinds in (
            (0, "n", (K_NUMBER,)),
            (1, "d", (K_DATE, K_DATETIME)),
            (3, "b", (K_BOOLEAN,)),
        ):
            sel = np.isin(k, kinds) & cols[col + "_ok"][a:b][first]
            if col == "n" and cols["nan"]:
                return None
            groups.setdefault(rank, []).append((where[sel], cols[col][a:b][first][sel]))
        s_sel = (k == K_STRING) & np.asarray(
            cols["s"].slice(a, b - a).is_valid().to_numpy(zero_copy_only=False), np.bool_
        )[first]
        idx = np.flatnonzero(first)[s_sel]
        groups.setdefault(2, []).append(
            (where[s_sel], cols["s"].slice(a, b - a).take(pa.array(idx, pa.int64())))
        )
    for rank, items in groups.items():
        where = np.concatenate([w for w, _ in items]) if items else np.zeros(0, np.int64)
        if not len(where):
            continue
        if rank == 2:
            texts = pa.concat_arrays([v for _, v in items])
            dense = pc.rank(texts, tiebreaker="dense").to_numpy()
        else:
            dense = _dense(np.concatenate([np.asarray(v) for _, v in items]))
        null[where] = False
        value[where] = dense
    rank_of = _KIND_RANK[np.minimum(kind, K_OTHER)]
    null_value = null | (rank_of == 4)
    sign = -1 if descending else 1
    return [~present[matched], rank_of[matched], null_value[matched], sign * value[matched]]


def ordered(snap: Columns, plan: Plan, mask: Mask) -> Ints | None:
    """The matches' positions in the plan's order (sql.SqlBuilder.order), or None."""
    matched = np.flatnonzero(mask)
    keys: list[Ints] = []
    for sort in plan.sort:
        sign = -1 if sort.descending else 1
        if sort.file:
            if sort.key not in _FILE_SORTS:
                return None
            if sort.key == "path":
                keys.append(sign * _path_rank(snap)[matched])
                continue
            col = snap.notes["size" if sort.key == "size" else f"{sort.key}_ns"]
            if col.null_count:
                return None
            values = col.to_numpy().astype(np.int64)
            keys.append(sign * (values[matched] if sort.key == "size" else values[matched] // 1000))
            continue
        prop = _prop_sort_keys(snap, sort.key, matched, sort.descending)
        if prop is None:
            return None
        keys += prop
    keys.append(_path_rank(snap)[matched])
    return matched[np.lexsort(keys[::-1])]


# ---------------------------------------------------------------------- page values
def _items(keyed: _Keyed, idx: Ints, paths: list[str], key: str) -> list[tuple[Any, ...]]:
    """The props rows `idx` as DuckDB answers them (Python values, None for NULL)."""
    cols = keyed.cols
    out = []
    texts = cols["s"].take(pa.array(idx, pa.int64())).to_pylist()
    for j, i in enumerate(idx.tolist()):
        out.append((
            paths[j], key, int(cols["item"][i]), bool(cols["is_list"][i]), KINDS[cols["kind"][i]], texts[j],
            float(cols["n"][i]) if cols["n_ok"][i] else None, int(cols["d"][i]) if cols["d_ok"][i] else None,
            bool(cols["b"][i]) if cols["b_ok"][i] else None,
        ))  # fmt: skip
    return out


def page_rows(snap: Columns, path_of: dict[int, str], keys: list[str]) -> list[tuple[Any, ...]] | None:
    """run._Run.properties' rows (path, key, item, is_list, kind, s, n, d, b) of the notes
    at these positions, for `keys` and the children of those that are maps; None when a
    row's kind is not one this module knows."""
    wanted = np.fromiter(path_of, np.int64, len(path_of))
    out: list[tuple[Any, ...]] = []

    def take(key: str) -> bool:
        for keyed, a, b, pos in _rows(snap, 0, key):
            chosen = np.isin(pos, wanted)
            if not chosen.any():
                continue
            if (keyed.cols["kind"][a:b][chosen] == K_OTHER).any():
                return False
            out.extend(
                _items(keyed, np.flatnonzero(chosen) + a, [path_of[p] for p in pos[chosen].tolist()], key)
            )
        return True

    for key in keys:
        if not take(key):
            return None
    maps = sorted({r[1] for r in out if r[4] == "object"})
    if maps:
        prefixes = tuple(m + "." for m in maps)
        children = sorted(
            {
                k
                for parts in snap.segments
                if parts[0] is not None
                for k in parts[0].slices
                if k.startswith(prefixes)
            }
        )
        for key in children:
            if not take(key):
                return None
    return out
