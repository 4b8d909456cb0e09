"""Sort keys of many notes at once, from vault_query's columns (vector.py's module doc).

`sort_arrays(vectors, ref, matched)` gives (empty, type rank, value) lexsort keys of a note
property or a file field for the matched notes, in wire_values.order_key's order: empty
last, numbers, dates, text (case-insensitive first, then by code point), booleans. None
when one of the matched notes holds a value the columns do not settle (a list, a map, a
wikilink text, a date-time, a number the columns do not hold, a key spelled otherwise):
the caller then sorts by the values the interpreter reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vault_agent.property_values import canonical_key
from vault_agent.query.bases.shapes import PropertyRef
from vault_agent.query.bases.vector import FILE_TEXT, TAG_KEYS, Vectors
from vault_agent.query.structured.columnar import K_BOOLEAN, K_DATE, K_NULL, K_NUMBER, K_STRING


def sort_arrays(
    vectors: Vectors, ref: PropertyRef, matched: npt.NDArray[np.int64]
) -> list[npt.NDArray[Any]] | None:
    """Ascending lexsort keys (empty last, type rank, value) of a property or file field
    for the notes at `matched`; None when one of them holds a value they do not settle."""
    if ref.namespace == "file":
        return _file_sort(vectors, ref.name, matched)
    if ref.namespace != "note" or vectors.rows.props.columns is None or ref.name.casefold() in TAG_KEYS:
        return None
    key = canonical_key(ref.name)
    if vectors.ambiguous_notes(ref.name, key) is not None:
        return None
    n = vectors.n
    rank = np.full(n, 9, np.int8)  # 9: no value (empty)
    numbers = np.zeros(n, np.float64)
    text_codes = np.full(n, -1, np.int64)
    texts: list[str] = []
    wanted = np.zeros(n, np.bool_)
    wanted[matched] = True
    for keyed, a, b, pos in vectors.rows.props.key_rows(key):
        cols = keyed.cols
        mine = (pos >= 0) & wanted[np.maximum(pos, 0)]
        if not mine.any():
            continue
        kinds = cols["kind"][a:b]
        is_list = cols["is_list"][a:b].astype(np.bool_)
        bad = is_list | ~np.isin(kinds, (K_STRING, K_NUMBER, K_BOOLEAN, K_DATE, K_NULL))
        bad |= ((kinds == K_NUMBER) & ~cols["n_ok"][a:b]) | ((kinds == K_DATE) & ~cols["d_ok"][a:b])
        if (mine & bad).any():
            return None
        for kind, r in ((K_NUMBER, 0), (K_DATE, 1), (K_BOOLEAN, 3)):
            sel = mine & (kinds == kind)
            rank[pos[sel]] = r
            source = cols["n"] if kind == K_NUMBER else cols["d"] if kind == K_DATE else cols["b"]
            numbers[pos[sel]] = np.asarray(source[a:b][sel], np.float64)
        sel = mine & (kinds == K_STRING)
        if sel.any():
            values = cols["s"].slice(a, b - a).filter(pa.array(sel)).to_pylist()
            if any(v is not None and "[[" in v for v in values):
                return None  # a wikilink text is a link: the interpreter orders it
            nonempty = np.asarray([bool(v) for v in values], np.bool_)
            where = pos[sel][nonempty]
            rank[where] = 2
            text_codes[where] = np.arange(len(texts), len(texts) + len(where))
            texts += [v for v in values if v]
    return _keys(rank, numbers, text_codes, texts, matched)


def _file_sort(vectors: Vectors, name: str, matched: npt.NDArray[np.int64]) -> list[npt.NDArray[Any]] | None:
    n = vectors.n
    rank = np.zeros(n, np.int8)
    numbers = np.zeros(n, np.float64)
    text_codes = np.full(n, -1, np.int64)
    texts: list[str] = []
    if name == "size":
        numbers = vectors.rows.notes["size"].fill_null(0).to_numpy().astype(np.float64)
    elif name in ("mtime", "ctime"):
        column = vectors.rows.notes[f"{name}_ns"]
        if column.null_count:
            return None
        rank[:] = 1
        numbers = column.to_numpy().astype(np.float64)
    elif name in FILE_TEXT:
        texts = vectors.file_text(name).to_pylist()
        rank[:] = 2
        text_codes = np.arange(n, dtype=np.int64)
    else:
        return None
    return _keys(rank, numbers, text_codes, texts, matched)


def _keys(
    rank: npt.NDArray[np.int8],
    numbers: npt.NDArray[np.float64],
    text_codes: npt.NDArray[np.int64],
    texts: list[str],
    matched: npt.NDArray[np.int64],
) -> list[npt.NDArray[Any]]:
    """(empty, rank, value) keys for the matched notes, strings case-insensitive first."""
    r = rank[matched]
    value = numbers[matched].copy()
    codes = text_codes[matched]
    has_text = codes >= 0
    if has_text.any():
        chosen = codes[has_text]
        order = sorted(range(len(chosen)), key=lambda i: (texts[chosen[i]].casefold(), texts[chosen[i]]))
        dense = np.empty(len(chosen), np.float64)
        previous: str | None = None
        level = -1
        for i in order:
            text = texts[chosen[i]]
            if text != previous:
                level += 1
                previous = text
            dense[i] = level
        value[has_text] = dense
    empty = (r == 9).astype(np.int8)
    return [empty, np.where(r == 9, 0, r), np.where(r == 9, 0.0, value)]
