"""The search engine's documents of a parse batch, built in the parser worker.

The worker has tokenized every chunk already (for `terms` and `token_count`), so it also
hands the writer each document's analyzed text: the chunk's tokens joined by one space
(`search_fields.joined_tokens` of its text), the joined tokens of its heading path, the
note's name fields and the stored `detail`. The writer then only feeds these to the engine
(`SearchIndexWriter.add_tables`): tokenizing there again cost ~0.3 CPU-s per 1,000 notes,
all of it in the one serial process that bounds the wall time of a full index.

Two extra tables travel with the segment tables of a batch (they are never written to a
segment): `search_docs`, one row per engine document, and `search_names`, one row per note.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from vault_agent.contracts import ParsedNote
from vault_agent.search_fields import NAME_FIELDS, encode_detail, joined_tokens, name_fields

DOCS_TABLE = "search_docs"
NAMES_TABLE = "search_names"
DOCS_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("ordinal", pa.int32()),
        ("detail", pa.binary()),  # search_fields.encode_detail
        ("headings", pa.string()),  # joined tokens of the heading path ('' = none)
        ("body", pa.string()),  # joined tokens of the chunk text ('' = none)
    ]
)
NAMES_SCHEMA = pa.schema([("path", pa.string()), *((name, pa.string()) for name in NAME_FIELDS)])


def _add(
    cols: dict[str, list[object]], path: str, ordinal: int, detail: bytes, headings: str, body: str
) -> None:
    cols["path"].append(path)
    cols["ordinal"].append(ordinal)
    cols["detail"].append(detail)
    cols["headings"].append(headings)
    cols["body"].append(body)


def _chunk_docs(parsed: ParsedNote, cols: dict[str, list[object]]) -> None:
    path, title = parsed.note["path"], parsed.note["title"]
    bodies = parsed.chunk_tokens
    if len(bodies) != len(parsed.chunks):  # chunks not made by the parser (a test's rows)
        bodies = [joined_tokens(chunk["text"]) for chunk in parsed.chunks]
    heading_text: dict[int | None, str] = {}  # chunks of one section share its heading path
    for chunk, body in zip(parsed.chunks, bodies, strict=True):
        heading_path = chunk["heading_path"]
        key = chunk["heading_ordinal"]
        headings = heading_text.get(key)
        if headings is None:
            headings = heading_text[key] = joined_tokens(" \n ".join(heading_path)) if heading_path else ""
        start, end = chunk["start_line"], chunk["end_line"]
        detail = encode_detail(title, heading_path, start, end, chunk["text"])
        _add(cols, path, chunk["ordinal"], detail, headings, body)


def search_tables(notes: Sequence[ParsedNote]) -> dict[str, pa.Table]:
    """The engine documents (`search_docs`) and name fields (`search_names`) of a batch."""
    docs: dict[str, list[object]] = {f.name: [] for f in DOCS_SCHEMA}
    names: dict[str, list[object]] = {f.name: [] for f in NAMES_SCHEMA}
    for parsed in notes:
        _chunk_docs(parsed, docs)
    # Then one name-only doc per note without chunks (empty body), after all chunk docs:
    # the engine's document order (its tie order) stays what it was before this module.
    for parsed in notes:
        if not parsed.chunks:
            count = int(parsed.note["line_count"] or 0)
            detail = encode_detail(parsed.note["title"], [], min(1, count), count, "")
            _add(docs, parsed.note["path"], 0, detail, "", "")
    for parsed in notes:
        path = parsed.note["path"]
        names["path"].append(path)
        fields = name_fields(path, parsed.note["title"], parsed.note.get("aliases") or None)
        for name in NAME_FIELDS:
            names[name].append(fields[name])
    return {
        DOCS_TABLE: pa.Table.from_arrays(
            [pa.array(docs[f.name], f.type) for f in DOCS_SCHEMA], schema=DOCS_SCHEMA
        ),
        NAMES_TABLE: pa.Table.from_arrays(
            [pa.array(names[f.name], f.type) for f in NAMES_SCHEMA], schema=NAMES_SCHEMA
        ),
    }
