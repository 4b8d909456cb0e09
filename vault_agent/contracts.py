"""What the indexer (only writer) and the query layer (readers) agree on.

State dir layout (`<index-dir>/`):
    CURRENT                      name of the committed manifest (atomically replaced)
    snapshots/manifest-<id>.json one immutable manifest per snapshot
    segments/seg-<id>.<table>.parquet  immutable segment files, one per logical table
    events/events.log            append-only, checksummed event log
    writer.lock                  flock held by the single writer for its lifetime
    writer.json                  the writer's published state + heartbeat (atomic replace)
    token                        bearer token of `serve` (0600)
    tmp/                         temporaries; anything here at start-up is garbage

A snapshot is its manifest: the ordered list of segments plus, per segment, the paths
whose rows it no longer serves (tombstones). A path's live rows are in the newest segment
that holds it, unless that segment tombstones it. Every table row carries `path`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import pyarrow as pa
from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 2  # 2: full-text engine dir per snapshot (`search_index`), notes.aliases
PARSER_VERSION = 2  # 2: a Latin word ends where CJK starts (text.tokenize)

CURRENT_FILE = "CURRENT"
SNAPSHOTS_DIR = "snapshots"
SEGMENTS_DIR = "segments"
EVENTS_DIR = "events"
TMP_DIR = "tmp"
LOCK_FILE = "writer.lock"
WRITER_STATE_FILE = "writer.json"
TOKEN_FILE = "token"

# Heartbeat: the writer republishes at least this often; readers treat a heartbeat older
# than HEARTBEAT_STALE_S as "writer gone" (→ `unknown` until a stat scan says more).
HEARTBEAT_INTERVAL_S = 1.0
HEARTBEAT_STALE_S = 10.0

MAX_NOTE_CHARS_FOR_STRUCTURE = 1_000_000  # SPEC: larger notes → outline TOO_LARGE
MAX_OUTLINE_HEADINGS = 500

Freshness = Literal["fresh", "stale", "pending", "updating", "incompatible", "unknown"]
FRESHNESS_STATES: tuple[str, ...] = ("fresh", "stale", "pending", "updating", "incompatible", "unknown")

FRESHNESS_ACTIONS: dict[str, str] = {
    "stale": "the vault changed since the last snapshot; run 'vault-agent index' or serve with --watch",
    "pending": "changes are queued and will be indexed shortly; retry in a moment for the newest data",
    "updating": "the index is being updated; answers come from the previous snapshot until it commits",
    "unknown": "freshness cannot be determined yet; run 'vault-agent status' or 'vault-agent index'",
}

# ----------------------------------------------------------------------------- tables
NOTES_SCHEMA = pa.schema(
    [
        ("path", pa.string()),  # vault-relative, NFC, '/'
        ("folder", pa.string()),  # '' for the root
        ("depth", pa.int32()),  # number of folder components
        ("title", pa.string()),
        ("mtime_ns", pa.int64()),
        ("size", pa.int64()),
        ("sha256", pa.string()),  # of the raw bytes
        ("fm_status", pa.string()),  # none | valid | invalid
        ("fm_error", pa.string()),  # null, or the rule that made it invalid
        ("fm_fields", pa.list_(pa.string())),  # top-level keys (stringified), file order
        ("tags", pa.list_(pa.string())),
        ("type_values", pa.list_(pa.string())),
        ("status_values", pa.list_(pa.string())),
        ("facets_json", pa.string()),  # seed 004 MetadataFacets `facets`, already capped
        ("line_count", pa.int32()),
        ("char_count", pa.int64()),
        ("heading_count", pa.int32()),
        ("chunk_count", pa.int32()),
        ("too_large", pa.bool_()),  # char_count > MAX_NOTE_CHARS_FOR_STRUCTURE
        ("aliases", pa.list_(pa.string())),  # frontmatter `aliases` / `alias` (searchable names)
        ("flags", pa.list_(pa.string())),  # bom, crlf, cr_only, undecodable, nul, binary, empty
    ]
)

HEADINGS_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("ordinal", pa.int32()),  # 1-based among all headings of the note
        ("level", pa.int8()),
        ("text", pa.string()),
        ("id", pa.string()),  # h{level}-{slug}-{ordinal:04d}
        ("parent_ordinal", pa.int32()),  # nearest previous heading of lower level, or null
        ("line", pa.int32()),  # 1-based line in the file (internal only)
        ("body_available", pa.bool_()),
    ]
)

CHUNKS_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("ordinal", pa.int32()),  # 0 = text before the first heading (when any)
        ("heading_ordinal", pa.int32()),  # null for the preamble chunk
        ("heading_path", pa.list_(pa.string())),  # ancestor texts + own heading text
        ("start_line", pa.int32()),  # 1-based, inclusive, file lines
        ("end_line", pa.int32()),
        ("text", pa.string()),
        ("token_count", pa.int32()),
    ]
)

TERMS_SCHEMA = pa.schema(
    [
        ("term", pa.string()),
        ("path", pa.string()),
        ("chunk_ordinal", pa.int32()),
        ("tf", pa.int32()),
    ]
)

LINKS_SCHEMA = pa.schema(
    [
        ("path", pa.string()),  # source note
        ("ordinal", pa.int32()),
        ("target", pa.string()),  # raw target without '#anchor' or '|alias'
        ("anchor", pa.string()),
        ("kind", pa.string()),  # wikilink | embed | markdown
        ("line", pa.int32()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "notes": NOTES_SCHEMA,
    "headings": HEADINGS_SCHEMA,
    "chunks": CHUNKS_SCHEMA,
    "terms": TERMS_SCHEMA,
    "links": LINKS_SCHEMA,
}
# Sort order inside each segment file: path-sorted tables give row-group pruning on
# `path = ?`; terms are term-sorted so a query reads only the row groups of its terms.
TABLE_SORT: dict[str, tuple[str, ...]] = {
    "notes": ("path",),
    "headings": ("path", "ordinal"),
    "chunks": ("path", "ordinal"),
    "terms": ("term", "path", "chunk_ordinal"),
    "links": ("path", "ordinal"),
}
ROW_GROUP_SIZE = 8192


@dataclass
class ParsedNote:
    """One note's rows for every table; produced by the parser, consumed by the builder."""

    note: dict[str, Any]
    headings: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    terms: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)

    def rows(self, table: str) -> list[dict[str, Any]]:
        return [self.note] if table == "notes" else getattr(self, table)


# --------------------------------------------------------------------------- manifest
class SegmentRef(BaseModel):
    segment_id: int
    files: dict[str, str]  # table name → file name inside segments/
    note_count: int
    deleted: list[str] = []  # tombstoned paths (sorted)


class Manifest(BaseModel):
    snapshot_id: int
    schema_version: int
    parser_version: int
    config_fingerprint: str
    applied_seq: int
    created_at: str  # ISO 8601 UTC
    segments: list[SegmentRef]
    note_count: int
    chunk_count: int
    heading_count: int
    invalid_frontmatter_count: int
    skipped: dict[str, int] = {}  # rule → files passed over by the walk (not notes)
    search_index: str | None = None  # the full-text engine dir of this snapshot (search/<name>)


class WriterState(BaseModel):
    """Published by the writer in `writer.json`; read by every reader for freshness."""

    pid: int
    started_at: str
    heartbeat_at: float  # time.time() of the last publish
    phase: Literal["idle", "building"]
    log_head_seq: int
    applied_seq: int
    snapshot_id: int | None
    watcher_ok: bool
    watching: bool
    stale_reason: str | None = None  # e.g. "overflow", "watch-error"


# --------------------------------------------------------------------------- envelope
class WarningItem(BaseModel):
    code: str
    message: str


T = TypeVar("T")


class Outcome(BaseModel, Generic[T]):
    """What a core function returns: the payload, envelope warnings, and the freshness of
    the snapshot it was computed from (None for answers that do not come from the index)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    data: T
    warnings: list[WarningItem] = []
    freshness: str | None = None


def freshness_warning(state: str) -> WarningItem | None:
    """The one `INDEX_<STATE>` warning for a usable but not fresh snapshot."""
    if state == "fresh" or state not in FRESHNESS_ACTIONS:
        return None
    return WarningItem(code=f"INDEX_{state.upper()}", message=f"index is {state}: {FRESHNESS_ACTIONS[state]}")
