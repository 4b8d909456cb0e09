"""The `terms` rows of a parse batch, counted column-wise (Arrow and numpy, no row objects).

In the kernel beside `tables.py`: the indexer writes these rows, and tests count one note's
the same way (`testkit.parsed_rows`).

Per chunk: its distinct tokens with their counts (`tf`), in code point order, chunks in
batch order (each note's in ordinal order). The parser leaves each chunk's tokens joined by
one space (`ParsedNote.chunk_tokens`, also the engine's body text); here a whole batch's are
split, dictionary-encoded and counted at once by `np.unique` on (chunk, rank of the term).
A `Counter` and a `sorted` per chunk, then Arrow arrays built from the Python lists, cost
~0.25 CPU-s per 1,000 notes; this costs ~0.05.

Order: Arrow sorts strings by their UTF-8 bytes, which is code point order, the order of
Python's `sorted` on `str`.

`term` and `path` are dictionary-coded (`CODED_TERMS_SCHEMA`: int32 codes into the batch's
vocabulary and its note paths); the segment writer holds them coded until it writes them
as plain strings (indexer/segments.py). A batch's plain rows were ~60 % of what a parser
worker sent the writer (~31 KB a note: the path repeated on every row), and the writer
dictionary-encoded them again on arrival; `to_pylist` reads the same rows either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vault_agent.contracts import ParsedNote
from vault_agent.tables import TERMS_SCHEMA

_CODED = pa.dictionary(pa.int32(), pa.string())
CODED_TERMS_SCHEMA = pa.schema(
    [pa.field(f.name, _CODED) if f.name in ("term", "path") else f for f in TERMS_SCHEMA]
)


def terms_table(notes: Sequence[ParsedNote]) -> pa.Table:
    """The TERMS rows of `notes` (each note's `chunk_tokens`, one entry per chunk), with
    `term` and `path` dictionary-coded (CODED_TERMS_SCHEMA)."""
    joined: list[str] = []
    chunk_note: list[int] = []  # per chunk: its note's index in `notes`
    chunk_ordinal: list[int] = []
    for index, note in enumerate(notes):
        tokens = note.chunk_tokens
        joined.extend(tokens)
        chunk_note.extend([index] * len(tokens))
        chunk_ordinal.extend(chunk["ordinal"] for chunk in note.chunks[: len(tokens)])
    if not joined:
        return CODED_TERMS_SCHEMA.empty_table()
    lists = pc.split_pattern(pa.array(joined, pa.string()), " ")
    words = pc.list_flatten(lists)
    owner = pc.list_parent_indices(lists)  # the chunk of each token
    if not all(joined):  # a chunk without tokens splits into one empty string
        keep = pc.greater(pc.binary_length(words), 0)
        words, owner = words.filter(keep), owner.filter(keep)
        if not len(words):
            return CODED_TERMS_SCHEMA.empty_table()
    coded = pc.dictionary_encode(words)
    vocabulary = coded.dictionary
    by_term = pc.sort_indices(vocabulary).to_numpy()
    rank = np.empty(len(vocabulary), np.int64)
    rank[by_term] = np.arange(len(vocabulary), dtype=np.int64)
    width = len(vocabulary)
    keys, tf = np.unique(
        owner.to_numpy().astype(np.int64) * width + rank[coded.indices.to_numpy()], return_counts=True
    )
    chunk = keys // width
    note_paths = pa.array([note.note["path"] for note in notes], pa.string())
    columns = {
        "term": pa.DictionaryArray.from_arrays(pa.array(by_term[keys % width].astype(np.int32)), vocabulary),
        "path": pa.DictionaryArray.from_arrays(pa.array(np.asarray(chunk_note, np.int32)[chunk]), note_paths),
        "chunk_ordinal": pa.array(np.asarray(chunk_ordinal, np.int32)[chunk], pa.int32()),
        "tf": pa.array(tf.astype(np.int32), pa.int32()),
    }
    return pa.Table.from_arrays([columns[f.name] for f in CODED_TERMS_SCHEMA], schema=CODED_TERMS_SCHEMA)
