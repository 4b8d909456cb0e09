"""What the writer knows of each indexed note (`NoteInfo`), read from a segment's `notes`
rows, and the index-wide counts kept from them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from vault_agent.indexer.scan import KnownNote


@dataclass(frozen=True)
class NoteInfo(KnownNote):
    segment_id: int
    chunks: int
    headings: int
    fm_invalid: bool


def infos_of(tables: dict[str, pa.Table], segment_id: int) -> dict[str, NoteInfo]:
    n = tables["notes"]
    cols = [n.column(c).to_pylist() for c in ("path", "mtime_ns", "size", "sha256")]
    chunks = n.column("chunk_count").to_pylist()
    heads = n.column("heading_count").to_pylist()
    fm = n.column("fm_status").to_pylist()
    return {
        p: NoteInfo(m, s, h, segment_id, c or 0, hc or 0, f == "invalid")
        for p, m, s, h, c, hc, f in zip(*cols, chunks, heads, fm, strict=True)
    }


def note_totals(infos: Iterable[NoteInfo]) -> tuple[int, int, int]:
    c = h = inv = 0
    for info in infos:
        c += info.chunks
        h += info.headings
        inv += info.fm_invalid
    return c, h, inv
