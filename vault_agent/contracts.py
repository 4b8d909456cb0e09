"""What the indexer (only writer) and the query layer (readers) agree on.

State dir layout (`<index-dir>/`):
    CURRENT                      name of the committed manifest (atomically replaced)
    snapshots/manifest-<id>.json one immutable manifest per snapshot
    segments/seg-<id>.<table>.parquet  immutable segment files, one per logical table
    bases/<sha256>.base          the texts of the `.base` files some manifest lists (Manifest.bases)
    events/events.log            append-only, checksummed event log
    writer.lock                  flock held by the single writer for its lifetime
    writer.json                  the writer's published state + heartbeat (atomic replace)
    token                        bearer token of `serve` (0600)
    server.json                  address of the running `serve` (url, host, port, pid) for the CLI
    tmp/                         temporaries; anything here at start-up is garbage

A snapshot is its manifest: the ordered list of segments plus, per segment, the paths
whose rows it no longer serves (tombstones). A path's live rows are in the newest segment
that holds it, unless that segment tombstones it. Every table row carries `path`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

# 2: full-text engine dir per snapshot (`search_index`), notes.aliases; 3: hit details stored
# in the engine; 4: notes.ctime_ns/all_tags and the `props` and `tags` tables (vault_query)
SCHEMA_VERSION = 4
# 2: a Latin word ends where CJK starts (text.tokenize); 3: block structure by comrak, where
# CommonMark (cmark) disagrees with markdown-it (headings, code lines, body_available);
# 4: inline #tags, typed frontmatter properties, birth time
PARSER_VERSION = 4

CURRENT_FILE = "CURRENT"
SNAPSHOTS_DIR = "snapshots"
SEGMENTS_DIR = "segments"
EVENTS_DIR = "events"
TMP_DIR = "tmp"
# The texts of the vault's `.base` files (Obsidian Bases) that some manifest names, one
# immutable file per content: `bases/<sha256>.base` (indexer/base_files.py).
BASES_DIR = "bases"
BASE_EXTENSION = ".base"
MAX_BASE_BYTES = 512 * 1024  # a larger `.base` file is recorded without its text (vault_base refuses it)
LOCK_FILE = "writer.lock"
WRITER_STATE_FILE = "writer.json"

# Heartbeat: the writer republishes at least this often; readers treat a heartbeat older
# than HEARTBEAT_STALE_S as "writer gone" (→ `unknown` until a stat scan says more).
HEARTBEAT_INTERVAL_S = 1.0
HEARTBEAT_STALE_S = 10.0

MAX_PATH_CHARS = 4096  # any path parameter; longer paths are refused before touching the disk
RANKED_LIMIT_MAX = 50  # search and related: limit 1-50 (SPEC)
MAX_QUERY_CHARS = 1_000  # search, find and grep queries; the params models say the same
MAX_NOTE_CHARS_FOR_STRUCTURE = 1_000_000  # SPEC: larger notes → outline TOO_LARGE
MAX_OUTLINE_HEADINGS = 500
MAX_TAG_CHARS = 256  # a tag name (vault_rename_tag; tag_syntax)

Freshness = Literal["fresh", "stale", "pending", "updating", "incompatible", "unknown"]

FRESHNESS_ACTIONS: dict[str, str] = {
    "stale": "the vault changed since the last snapshot; run 'vault-agent index' or serve with --watch",
    "pending": "changes are queued and will be indexed shortly; retry in a moment for the newest data",
    "updating": "the index is being updated; answers come from the previous snapshot until it commits",
    "unknown": "freshness cannot be determined yet; run 'vault-agent status' or 'vault-agent index'",
}

# ----------------------------------------------------------------------------- tables
# The Arrow schemas live in `vault_agent.tables` (pyarrow is imported only when one is
# used: a server-backed CLI command imports these contracts without pyarrow).
if TYPE_CHECKING:  # re-exported for type checkers; at run time through __getattr__
    from vault_agent.tables import CHUNKS_SCHEMA as CHUNKS_SCHEMA
    from vault_agent.tables import HEADINGS_SCHEMA as HEADINGS_SCHEMA
    from vault_agent.tables import LINKS_SCHEMA as LINKS_SCHEMA
    from vault_agent.tables import NOTES_SCHEMA as NOTES_SCHEMA
    from vault_agent.tables import PROPS_SCHEMA as PROPS_SCHEMA
    from vault_agent.tables import TABLES as TABLES
    from vault_agent.tables import TAGS_SCHEMA as TAGS_SCHEMA
    from vault_agent.tables import TERMS_SCHEMA as TERMS_SCHEMA

_ARROW_NAMES = frozenset(
    {
        "NOTES_SCHEMA",
        "HEADINGS_SCHEMA",
        "CHUNKS_SCHEMA",
        "TERMS_SCHEMA",
        "LINKS_SCHEMA",
        "PROPS_SCHEMA",
        "TAGS_SCHEMA",
        "TABLES",
    }
)


def __getattr__(name: str) -> Any:
    if name in _ARROW_NAMES:
        from vault_agent import tables

        return getattr(tables, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Sort order inside each segment file: path-sorted tables give row-group pruning on
# `path = ?`; terms are term-sorted so a query reads only the row groups of its terms.
TABLE_SORT: dict[str, tuple[str, ...]] = {
    "notes": ("path",),
    "headings": ("path", "ordinal"),
    "chunks": ("path", "ordinal"),
    "terms": ("term", "path", "chunk_ordinal"),
    "links": ("path", "ordinal"),
    # by type, then value within a key: a comparison reads its own row groups
    "props": ("key", "kind", "n", "d", "b", "s", "path", "item"),
    "tags": ("tag", "path"),
}
ROW_GROUP_SIZE = 8192


@dataclass
class ParsedNote:
    """One note's rows for every table; produced by the parser, consumed by the builder."""

    note: dict[str, Any]
    headings: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    props: list[dict[str, Any]] = field(default_factory=list)
    tags: list[dict[str, Any]] = field(default_factory=list)  # the `tags` table's rows (not notes.tags)
    # Per chunk, its tokens joined by one space: the search engine's `body` text, and what
    # the batch's `terms` rows are counted from (term_rows.py, column-wise; there is no
    # per-note `terms` list: tests count one note's with `testkit.parsed_rows`).
    chunk_tokens: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- manifest
class BaseFileRef(BaseModel):
    """One `.base` file of the vault as a snapshot records it; its text is the file
    `BASES_DIR/<sha256>.base` (None: larger than MAX_BASE_BYTES, its text not kept)."""

    path: str
    mtime_ns: int
    size: int
    sha256: str | None


def base_text_name(sha256: str) -> str:
    """The file holding a recorded `.base` text inside BASES_DIR."""
    return f"{sha256}{BASE_EXTENSION}"


class SegmentRef(BaseModel):
    segment_id: int
    files: dict[str, str]  # table name → file name inside segments/
    note_count: int
    deleted: list[str] = []  # tombstoned paths (sorted)
    # Notes covered by the segment's partial embedding files while it is being embedded
    # (vault_agent/semantic/store.py); 0, and left out of the manifest, otherwise.
    embedded_notes: int = Field(default=0, exclude_if=lambda v: v == 0)


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
    # The vault's `.base` files at this commit, by path (indexer/base_files.py). A manifest
    # written before they were recorded has none; the writer's start-up scan adds them.
    bases: list[BaseFileRef] = []


class ComponentHealth(BaseModel):
    """How often one supervised thread (or the watcher) was restarted, and why last."""

    restarts: int = 0
    last_error: str | None = None
    last_failure_at: float | None = None


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
    stale_reason: str | None = None  # e.g. "overflow", "watch-error" (STALE_REASONS)
    # Restarts of the writer's supervised threads and watcher (vault_agent/supervise.py),
    # by name; `status --verbose` shows them.
    components: dict[str, ComponentHealth] = {}


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
    freshness: Freshness | None = None


# Why a snapshot is stale, in words, for the reasons a caller can do something about (or
# must wait out); other reasons get FRESHNESS_ACTIONS["stale"].
STALE_REASONS: dict[str, str] = {
    "vault-missing": "vault folder missing (moved, deleted or not mounted); answers come from the "
    "last snapshot, and indexing resumes by itself when the folder is back",
    "rescan": "the vault was not watched for a while (its folder was replaced or came back); "
    "a rescan is catching up",
    "index-folder-deleted": "the index folder was deleted; the server is rebuilding the index",
}


def freshness_warning(state: Freshness, reason: str | None = None) -> WarningItem | None:
    """The one `INDEX_<STATE>` warning for a usable but not fresh snapshot (a known stale
    `reason` says what is happening instead of the generic advice)."""
    if state == "fresh" or state not in FRESHNESS_ACTIONS:
        return None
    action = STALE_REASONS.get(reason or "") if state == "stale" else None
    return WarningItem(
        code=f"INDEX_{state.upper()}", message=f"index is {state}: {action or FRESHNESS_ACTIONS[state]}"
    )


def segment_file_name(segment_id: int, table: str) -> str:
    """The file of one table of one segment in the snapshot layout (any Parquet reader can open it)."""
    return f"seg-{segment_id}.{table}.parquet"


def fsync_dir(path: Path) -> None:
    """Make a directory's entries durable (the commit protocol: files, then their directory)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
