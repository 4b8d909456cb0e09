"""Body-free per-note contracts from the snapshot: SectionSource (seed 004), MetadataFacets.

Neither ever carries body text, snippets, full frontmatter, line ranges, byte offsets or
body lengths: they are built only from the `headings` rows and `notes.facets_json`.
"""

from __future__ import annotations

import json

from vault_agent.contracts import Outcome
from vault_agent.query.models import Facets, Inferred, MetadataFacets, Section, SectionSource
from vault_agent.query.outline import parents, pinned_note
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.text import slugify

# `inferred.source_type`: every indexed note is a Markdown note of the vault; other kinds
# (imported documents, PDFs) would get their own value if they are ever indexed.
SOURCE_TYPE_NOTE = "note"
PROJECTS_FOLDER = "projects"


def get_section_source(reader: SnapshotReader, path: object) -> Outcome[SectionSource]:
    """SectionSource of one note (knowtation.section_source/v0): body-free section metadata.

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    with pinned_note(reader, path, "get-section-source") as pinned:
        note, heads, truncated = pinned.note, pinned.heads, pinned.truncated
        done = pinned.outcome(None)
    prefix = slugify(note.path)
    ids = [f"{prefix}:{h.id}" for h in heads]
    parent_of = parents(heads)
    children: list[list[str]] = [[] for _ in heads]
    trail: list[list[str]] = []
    for idx, parent in enumerate(parent_of):
        if parent is None:
            trail.append([])
        else:
            children[parent].append(ids[idx])
            trail.append([*trail[parent], heads[parent].text])
    sections = [
        Section(
            section_id=ids[idx],
            heading_id=h.id,
            level=h.level,
            heading_path=trail[idx],
            heading_text=h.text,
            child_section_ids=children[idx],
            body_available=h.body_available,
        )
        for idx, h in enumerate(heads)
    ]
    data = SectionSource(path=note.path, title=note.title, sections=sections, truncated=truncated)
    return Outcome(data=data, warnings=done.warnings, freshness=done.freshness)


def infer_project(folder: str) -> str | None:
    """Project slug from a `projects/<slug>/` folder (first such pair, case-insensitive)."""
    parts = folder.split("/") if folder else []
    for i, part in enumerate(parts[:-1]):
        if part.casefold() == PROJECTS_FOLDER:
            slug = slugify(parts[i + 1])
            return None if slug == "heading" and not any(c.isalnum() for c in parts[i + 1]) else slug
    return None


def get_metadata_facets(reader: SnapshotReader, path: object) -> Outcome[MetadataFacets]:
    """MetadataFacets of one note (knowtation.metadata_facets/v0): allowlisted keys only.

    Raises:
        InvalidPath, Forbidden, Ambiguous, NotFound, TooLarge, IndexNotFound, IndexIncompatible.
    """
    with pinned_note(reader, path, "get-metadata-facets", headings=False) as pinned:
        note = pinned.note
        done = pinned.outcome(None, next_read_hint=False)
    stored = json.loads(note.facets_json or "{}")
    raw = stored.get("facets", {}) if isinstance(stored, dict) else {}
    project = raw.get("project") or infer_project(note.folder)
    facets = Facets(
        project=project,
        tags=list(raw.get("tags") or []),
        date=raw.get("date"),
        updated=raw.get("updated"),
        causal_chain_id=raw.get("causal_chain_id"),
        entity=list(raw.get("entity") or []),
        episode_id=raw.get("episode_id"),
    )
    data = MetadataFacets(
        path=note.path,
        facets=facets,
        inferred=Inferred(folder=note.folder, source_type=SOURCE_TYPE_NOTE),
        truncated=bool(stored.get("truncated", False)) if isinstance(stored, dict) else False,
    )
    return Outcome(data=data, warnings=done.warnings, freshness=done.freshness)
