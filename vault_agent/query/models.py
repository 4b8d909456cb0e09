"""Payloads of the query layer, with the exact JSON field names of their contracts.

Orientation and status payloads (seed 000, SPEC "status") are camelCase and travel in
the envelope's `data`; the versioned per-note contracts (seeds 001/004) are snake_case
and travel raw. Field order here is the order on the wire.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class Camel(BaseModel):
    """Base of envelope payloads: snake_case in Python, camelCase on the wire."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


# ------------------------------------------------------------------ orientation (seed 000)
class FolderCount(Camel):
    path: str
    note_count: int


class TagCount(Camel):
    tag: str
    note_count: int


class FieldCount(Camel):
    name: str
    note_count: int


class ValueCount(Camel):
    value: str
    note_count: int


class FacetField(Camel):
    """One frontmatter field; `values` exists only for the allowlisted fields type/status."""

    name: str
    note_count: int
    values: list[ValueCount] | None = Field(default=None, exclude_if=lambda v: v is None)


class OverviewData(Camel):
    note_count: int
    chunk_count: int
    top_level_folders: list[FolderCount]
    top_tags: list[TagCount]
    frontmatter_fields: list[FieldCount]
    index_freshness: str


class TreeNode(Camel):
    path: str
    note_count: int
    child_folders: int
    children: list[TreeNode]


class TreeData(Camel):
    root: TreeNode
    index_freshness: str


class TagsData(Camel):
    tags: list[TagCount]
    index_freshness: str


class FacetsData(Camel):
    fields: list[FacetField]
    index_freshness: str


# ------------------------------------------------------------------ status (SPEC.md CLI)
class StatusDetails(Camel):
    """`status --verbose` only (CLI-local): never served over HTTP or MCP."""

    skipped: dict[str, int]
    invalid_frontmatter_paths: list[str]
    invalid_frontmatter_paths_truncated: bool
    # Indexed as notes but without structure (mostly NUL/control bytes): named, never silent.
    binary_paths: list[str] = []
    # Indexed (distinct paths) but colliding on case-insensitive file systems: not skipped.
    case_twin_paths: list[str] = []
    segment_count: int
    applied_seq: int
    # Semantic search (vault_agent/semantic): ready | pending | off | unavailable, and the
    # share of live notes whose embeddings are in the snapshot (SPEC: status --json keeps
    # its seven keys, so the lag is reported here and as SEMANTIC_PENDING on search).
    semantic_search: str = "off"
    embedded_share: float = 0.0
    # Progress of the embeddings: notes with vectors of the current model (of noteCount),
    # the time left at the embedder's recent rate (None: unknown or nothing computes them),
    # and what computes them: the embedder's phase (starting | running | idle | restarting |
    # failed) or `none`, with its worker restarts after crashes.
    embedded_notes: int = 0
    embedding_eta_seconds: int | None = None
    embedder: str = "none"
    embedder_restarts: int = 0
    # Why the index is stale (contracts.STALE_REASONS keys, e.g. "vault-missing"), and the
    # restarts of the live writer's supervised threads and watcher (vault_agent/supervise.py).
    stale_reason: str | None = None
    restarts: dict[str, Restarts] = {}


class Restarts(Camel):
    """One supervised component of the writer: restarts so far and the last failure's type."""

    restarts: int
    last_error: str | None = None
    last_failure_at: str | None = None  # ISO 8601 UTC


class StatusData(Camel):
    index_freshness: str
    snapshot_id: int
    note_count: int
    chunk_count: int
    invalid_frontmatter_count: int
    last_commit_at: str
    schema_version: int
    details: StatusDetails | None = Field(default=None, exclude_if=lambda v: v is None)


# ------------------------------------------------------------------ per-note contracts
class Raw(BaseModel):
    """Base of the versioned raw contracts: names on the wire are the Python names."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class OutlineHeading(Raw):
    level: int
    text: str
    id: str


class NoteOutline(Raw):
    schema_: Literal["knowtation.note_outline/v1"] = Field(
        default="knowtation.note_outline/v1", alias="schema"
    )
    path: str
    title: str | None
    headings: list[OutlineHeading]
    truncated: bool


class DocNode(Raw):
    id: str
    level: int
    text: str
    children: list[DocNode]


class DocRoot(Raw):
    children: list[DocNode]


class DocumentTree(Raw):
    schema_: Literal["knowtation.document_tree/v0"] = Field(
        default="knowtation.document_tree/v0", alias="schema"
    )
    path: str
    title: str | None
    root: DocRoot
    truncated: bool


class Section(Raw):
    section_id: str
    heading_id: str
    level: int
    heading_path: list[str]
    heading_text: str
    child_section_ids: list[str]
    body_available: bool


class SectionSource(Raw):
    schema_: Literal["knowtation.section_source/v0"] = Field(
        default="knowtation.section_source/v0", alias="schema"
    )
    path: str
    title: str | None
    sections: list[Section]
    truncated: bool
    body_returned: Literal[False] = False
    snippet_returned: Literal[False] = False


class Facets(Raw):
    project: str | None
    tags: list[str]
    date: str | None
    updated: str | None
    causal_chain_id: str | None
    entity: list[str]
    episode_id: str | None


class Inferred(Raw):
    folder: str
    source_type: str


class MetadataFacets(Raw):
    schema_: Literal["knowtation.metadata_facets/v0"] = Field(
        default="knowtation.metadata_facets/v0", alias="schema"
    )
    path: str
    facets: Facets
    inferred: Inferred
    truncated: bool
