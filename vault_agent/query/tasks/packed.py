"""Compact forms of the task columns that most requests do not read row by row.

A snapshot's tasks stay in serve's memory for as long as it runs, so their columns are held
in the smallest form that still answers a request in milliseconds (issue 30: ≤ 40 MB at
300k tasks):

- `PackedTexts`: a text column (descriptions, heading paths) zstd-compressed in blocks of
  `BLOCK` rows, under half its Arrow size. A page of results unpacks only the blocks its
  rows fall in (~25 CPU-µs a block); a text filter over every task unpacks them all
  (~40 ms at 300k descriptions), which beats holding them plain at every other moment.
- `SparseTexts`: a text that few rows hold (recurrence rules, on-completion actions) as the
  rows holding one and their texts.
- `DayColumn`: a date column as int16 days from 2000-01-01, with the query language's
  int32 day numbers and sentinels (lang_columns) given back on indexing; a segment holding
  a date outside 1910–2089 keeps int32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.query.tasks.lang_columns import INVALID, MISSING

BLOCK = 256  # ~25 µs to unpack one: a page of 50 tasks unpacks at most ~100
_CODEC = pa.Codec("zstd", compression_level=3)
_EMPTY = pa.array([], pa.string())


@dataclass(frozen=True)
class _Block:
    rows: int
    raw_size: int
    packed: bytes  # the block's int32 offsets (rows + 1) then its UTF-8 data, compressed


def _pack_block(part: pa.StringArray) -> _Block:
    n = len(part)
    offsets = np.frombuffer(part.buffers()[1], np.int32, count=n + 1, offset=part.offset * 4)
    data = part.buffers()[2]
    start, end = int(offsets[0]), int(offsets[-1])
    raw = (offsets - offsets[0]).astype(np.int32).tobytes() + (data[start:end].to_pybytes() if data else b"")
    return _Block(n, len(raw), _CODEC.compress(raw, asbytes=True))


def _unpack_block(block: _Block) -> pa.Array:
    raw = _CODEC.decompress(block.packed, block.raw_size)
    cut = 4 * (block.rows + 1)
    return pa.StringArray.from_buffers(block.rows, raw.slice(0, cut), raw.slice(cut))


@dataclass(frozen=True)
class PackedTexts:
    """A string column in compressed blocks (module doc); null is held as ''."""

    size: int
    blocks: tuple[_Block, ...]

    @staticmethod
    def pack(column: pa.Array | pa.ChunkedArray) -> PackedTexts:
        """Pack a string column (any chunking; nulls become '')."""
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        array = pc.fill_null(array.cast(pa.string()), "")
        blocks = tuple(_pack_block(array.slice(s, BLOCK)) for s in range(0, len(array), BLOCK))
        return PackedTexts(len(array), blocks)

    @property
    def nbytes(self) -> int:
        return sum(len(b.packed) for b in self.blocks)

    def array(self) -> pa.Array:
        """Every row, unpacked (a text filter over the whole segment)."""
        if not self.blocks:
            return _EMPTY
        return pa.concat_arrays([_unpack_block(b) for b in self.blocks])

    def texts(self, rows: npt.NDArray[Any]) -> list[str]:
        """The rows asked for as Python strings, in that order (a page of results: each
        block is unpacked once and only the rows asked for are decoded)."""
        out: list[str] = [""] * len(rows)
        rows = np.asarray(rows, np.int64)
        order = np.argsort(rows, kind="stable")
        block_of = rows // BLOCK
        k = 0
        while k < len(order):
            block = int(block_of[order[k]])
            unpacked = self.blocks[block]
            raw = _CODEC.decompress(unpacked.packed, unpacked.raw_size, asbytes=True)
            data = 4 * (unpacked.rows + 1)
            offsets = np.frombuffer(raw, np.int32, count=unpacked.rows + 1)
            while k < len(order) and block_of[order[k]] == block:
                local = int(rows[order[k]]) - block * BLOCK
                start, end = data + int(offsets[local]), data + int(offsets[local + 1])
                out[int(order[k])] = raw[start:end].decode("utf-8")
                k += 1
        return out

    def take(self, rows: npt.NDArray[Any]) -> pa.Array:
        """The rows asked for, in that order, unpacking only the blocks they fall in."""
        rows = np.asarray(rows, np.int64)
        if not len(rows):
            return _EMPTY
        block_of = rows // BLOCK
        wanted = np.unique(block_of)
        parts = [_unpack_block(self.blocks[int(b)]) for b in wanted]
        base = np.zeros(len(wanted) + 1, np.int64)
        base[1:] = np.cumsum([len(p) for p in parts])
        local = base[np.searchsorted(wanted, block_of)] + rows % BLOCK
        return pa.concat_arrays(parts).take(pa.array(local))


@dataclass(frozen=True)
class SparseTexts:
    """A text few rows hold: the rows that hold one (ascending) and their texts."""

    rows: npt.NDArray[np.int32]
    texts: pa.Array

    @staticmethod
    def of(column: pa.ChunkedArray | pa.Array) -> SparseTexts:
        """The non-null rows of a column."""
        rows = pc.indices_nonzero(pc.is_valid(column)).to_numpy()
        picked = column.take(pa.array(rows)) if len(rows) else _EMPTY
        if isinstance(picked, pa.ChunkedArray):
            picked = picked.combine_chunks()
        return SparseTexts(np.asarray(rows, np.int32), picked.cast(pa.string()))

    def get(self, row: int) -> str | None:
        """The row's text, or None."""
        at = int(np.searchsorted(self.rows, row))
        return str(self.texts[at]) if at < len(self.rows) and self.rows[at] == row else None

    def dense(self, size: int) -> pa.Array:
        """Every row's text ('' where none), for a text filter or sort."""
        codes = np.full(size, len(self.texts), np.int64)
        codes[self.rows] = np.arange(len(self.rows))
        return pa.concat_arrays([self.texts, pa.array([""], pa.string())]).take(pa.array(codes))


_BASE = 10957  # 2000-01-01 as a day number since 1970
_SHORT_MISSING = np.int16(2**15 - 1)
_SHORT_INVALID = np.int16(-(2**15))
# Every 16-bit value's day number (indexed by the value's bits): decoding is one gather.
_WIDE = np.arange(2**16, dtype=np.uint16).view(np.int16).astype(np.int32) + np.int32(_BASE)
_WIDE[np.uint16(_SHORT_MISSING)] = MISSING
_WIDE[np.array(_SHORT_INVALID).view(np.uint16)] = INVALID


@dataclass(frozen=True)
class DayColumn:
    """A date column (module doc): index it like the int32 array it stands for."""

    days: npt.NDArray[Any]  # int16 from _BASE with its own sentinels, or the int32 day numbers

    @staticmethod
    def of(days: npt.NDArray[np.int32]) -> DayColumn:
        """Hold int32 day numbers (lang_columns' sentinels) in 16 bits when they fit."""
        real = days[(days != MISSING) & (days != INVALID)]
        if len(real) and (
            int(real.min()) - _BASE <= _SHORT_INVALID or int(real.max()) - _BASE >= _SHORT_MISSING
        ):
            return DayColumn(days)
        short = (days.astype(np.int64) - _BASE).clip(_SHORT_INVALID, _SHORT_MISSING).astype(np.int16)
        short[days == MISSING] = _SHORT_MISSING
        short[days == INVALID] = _SHORT_INVALID
        return DayColumn(short)

    @overload
    def __getitem__(self, rows: int) -> np.int32: ...
    @overload
    def __getitem__(self, rows: npt.NDArray[Any]) -> npt.NDArray[np.int32]: ...
    def __getitem__(self, rows: Any) -> Any:
        picked = self.days[rows]
        if self.days.dtype == np.int32:
            return picked
        return _WIDE[np.asarray(picked).view(np.uint16)]

    def __len__(self) -> int:
        return len(self.days)

    @property
    def nbytes(self) -> int:
        return int(self.days.nbytes)
