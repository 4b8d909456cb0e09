"""The full-text engine's document shape: what the indexer writes and `search` reads.

One engine document per heading-bounded chunk (the unit `search` answers with). Each
document carries its note's name fields too, so a chunk can be found by the name of its
note as well as by its own words:

    field      text                                             boost
    title      note title (frontmatter `title`, else the stem)   4.0
    aliases    frontmatter `aliases` / `alias` values           3.5
    filename   file name without `.md`                         3.0
    folder     folder path (every folder name)                  1.0
    headings   the chunk's heading path                         1.5
    body       the chunk's text                                 1.0

Text fields are tokenized in Python by `text.tokenize` (NFKC, casefold, words for Latin
scripts, character bigrams for CJK) and stored as the tokens joined by single spaces; the
engine splits them on whitespace. So index and query use the same rules byte for byte, and
CJK gets bigrams the engine's own tokenizers do not make. The engine then applies the
English Snowball stemmer to each token ("installation" and "install" both index as
"instal"; CJK bigrams and most non-English words pass unchanged); query tokens go through
the same analyzer (`analyze_terms`). `path` (raw) keys deletes.

Each document also stores what a hit shows (`detail`: note title, heading path, line span,
chunk text; `encode_detail`), so a search answers from the engine alone: reading those
from the snapshot's Parquet segments cost 14-50 ms per search at 100k notes.
"""

from __future__ import annotations

import functools
import json
import posixpath
from json.encoder import encode_basestring  # the C encoder json.dumps(ensure_ascii=False) uses
from typing import Any

from vault_agent.text import tokenize

# Changing the field set, the tokenizer or the boosts needs a SCHEMA_VERSION bump (contracts.py).
SEARCH_DIR = "search"  # under the state dir: work/ (the writer's) + one dir per snapshot
WORK_DIR = "work"
TEXT_TOKENIZER = "va_words"  # whitespace split + English Snowball stemmer (registered per open)
STEM_LANGUAGE = "english"
PATH_FIELD = "path"
ORDINAL_FIELD = "ordinal"
DETAIL_FIELD = "detail"  # stored only: what a hit shows (encode_detail)

FIELD_BOOSTS: dict[str, float] = {
    "title": 4.0,
    "aliases": 3.5,
    "filename": 3.0,
    "folder": 1.0,
    "headings": 1.5,
    "body": 1.0,
}
NAME_FIELDS: tuple[str, ...] = ("title", "aliases", "filename", "folder")


def snapshot_dir_name(snapshot_id: int) -> str:
    """The engine dir a snapshot owns under `search/`."""
    return f"snap-{int(snapshot_id)}"


def build_schema() -> Any:
    """The engine schema (tantivy is imported lazily: query-only tools never load it)."""
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field(PATH_FIELD, stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field(ORDINAL_FIELD, stored=True, indexed=False, fast=True)
    sb.add_bytes_field(DETAIL_FIELD, stored=True, indexed=False, fast=False)
    for name in FIELD_BOOSTS:
        sb.add_text_field(name, stored=False, tokenizer_name=TEXT_TOKENIZER, index_option="position")
    return sb.build()


@functools.lru_cache(maxsize=1)
def analyzer() -> Any:
    """The engine-side analyzer of every text field (register on each opened Index)."""
    import tantivy

    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
    return builder.filter(tantivy.Filter.stemmer(STEM_LANGUAGE)).build()


def register(index: Any) -> Any:
    """Register the fields' analyzer on an opened tantivy Index; returns the index."""
    index.register_tokenizer(TEXT_TOKENIZER, analyzer())
    return index


def analyze_terms(tokens: list[str]) -> list[str]:
    """Query tokens as the engine indexed them (stemmed), distinct, in first-seen order."""
    if not tokens:
        return []
    return list(dict.fromkeys(analyzer().analyze(" ".join(tokens))))


def joined_tokens(text: str) -> str:
    """`text.tokenize` tokens joined by one space (the engine's whitespace tokenizer splits them)."""
    return " ".join(tokenize(text)) if text else ""


def name_fields(path: str, title: str | None, aliases: list[str] | None) -> dict[str, str]:
    """The per-note fields every chunk document of a note repeats."""
    folder, _, name = path.rpartition("/")
    stem = posixpath.splitext(name)[0]
    return {
        "title": joined_tokens(title or ""),
        "aliases": joined_tokens(" \n ".join(aliases or [])),
        "filename": joined_tokens(stem),
        "folder": joined_tokens(folder.replace("/", " \n ")),
    }


Detail = tuple[str | None, list[str], int, int, str]  # title, heading path, start, end, text


def encode_detail(
    title: str | None, heading_path: list[str] | None, start: int, end: int, text: str
) -> bytes:
    """What a hit shows, stored with its document (compact JSON).

    Byte for byte `json.dumps([title, heading_path, start, end, text], ensure_ascii=False,
    separators=(",", ":"))`, assembled around json's own C string encoder: json.dumps with
    options builds a new encoder per call, which cost ~0.05 CPU-s per 1,000 notes here.
    """
    head = "null" if title is None else encode_basestring(title)
    path = ",".join(map(encode_basestring, heading_path or ()))
    return f"[{head},[{path}],{int(start)},{int(end)},{encode_basestring(text)}]".encode()


def decode_detail(blob: bytes) -> Detail:
    title, heading_path, start, end, text = json.loads(blob)
    return title, heading_path, int(start), int(end), text
