"""Orientation (seed 000): overview, tree, tags, facets, computed from one snapshot.

Counts are counts of list elements: the parser stores each tag, field name and type/status
value at most once per note, so an element is a note.

Every answer is computed at request time from the live notes of the snapshot the request
pinned (no precomputed orientation tables): `view.live` holds them as typed arrays laid
out for these aggregations (live_notes.py), and each count is a `numpy.bincount` over them.
Sorts are count descending, then the name ascending by Unicode code point (Python's
`sorted`, DuckDB's VARCHAR order).
"""

from __future__ import annotations

from vault_agent.contracts import Outcome, WarningItem
from vault_agent.query.folder_tree import folder_tree, top_level_folders
from vault_agent.query.live_notes import LiveNotes
from vault_agent.query.models import (
    FacetField,
    FacetsData,
    FieldCount,
    FolderCount,
    OverviewData,
    TagCount,
    TagsData,
    TreeData,
    ValueCount,
)
from vault_agent.query.orientation_limits import (  # bounds of the parameters (seed 000)
    FACETS_LIMIT_DEFAULT,
    FACETS_LIMIT_MAX,
    FACETS_LIMIT_MIN,
    TAGS_LIMIT_DEFAULT,
    TAGS_LIMIT_MAX,
    TAGS_LIMIT_MIN,
    TREE_DEPTH_DEFAULT,
    TREE_DEPTH_MAX,
    TREE_DEPTH_MIN,
    TREE_LIMIT_DEFAULT,
    TREE_LIMIT_MAX,
    TREE_LIMIT_MIN,
)
from vault_agent.query.snapshot import SnapshotReader

# Fixed by design (seed 000): not parameters.
OVERVIEW_FOLDERS_LIMIT = 20
OVERVIEW_TAGS_LIMIT = 50
OVERVIEW_FIELDS_LIMIT = 50
# Values of an allowlisted field are bounded too (every answer fits a context window).
FACET_VALUES_LIMIT = 50
ALLOWLISTED_FIELDS: dict[str, str] = {"type": "type_values", "status": "status_values"}


def _warn(code: str, message: str) -> WarningItem:
    return WarningItem(code=code, message=message)


def _tag_counts(live: LiveNotes, limit: int) -> tuple[list[TagCount], bool]:
    rows, cut = live.ranked("tags", limit, skip_empty=True)
    return [TagCount(tag=t, note_count=n) for t, n in rows], cut


def _field_counts(live: LiveNotes, limit: int) -> tuple[list[tuple[str, int]], bool]:
    return live.ranked("fm_fields", limit, skip_empty=False)


def overview(reader: SnapshotReader) -> Outcome[OverviewData]:
    """Compact vault metadata: counts, top folders, top tags, frontmatter fields.

    Raises:
        IndexNotFound: no snapshot. IndexIncompatible: reindex needed.
    """
    with reader.acquire() as view:
        live = view.live
        note_count, chunk_count = live.note_count, live.chunk_count()
        top, folders_cut = top_level_folders(live.folders, live.folder_vocab, OVERVIEW_FOLDERS_LIMIT)
        folders = [FolderCount(path=p, note_count=n) for p, n in top]
        tags, tags_cut = _tag_counts(live, OVERVIEW_TAGS_LIMIT)
        fields, fields_cut = _field_counts(live, OVERVIEW_FIELDS_LIMIT)
        warnings = view.warnings()
        freshness = view.freshness
    if folders_cut:
        warnings.append(
            _warn(
                "TOP_LEVEL_FOLDERS_TRUNCATED",
                f"only the {OVERVIEW_FOLDERS_LIMIT} largest top-level folders are listed; use 'tree' for all",
            )
        )
    if tags_cut:
        warnings.append(
            _warn(
                "TOP_TAGS_TRUNCATED",
                f"only the {OVERVIEW_TAGS_LIMIT} most used tags are listed; use 'tags' with a higher limit",
            )
        )
    if fields_cut:
        warnings.append(
            _warn(
                "FRONTMATTER_FIELDS_TRUNCATED",
                f"only the {OVERVIEW_FIELDS_LIMIT} most used frontmatter fields are listed; "
                "use 'facets' with a higher limit",
            )
        )
    data = OverviewData(
        note_count=int(note_count),
        chunk_count=int(chunk_count),
        top_level_folders=folders,
        top_tags=tags,
        frontmatter_fields=[FieldCount(name=n, note_count=c) for n, c in fields],
        index_freshness=freshness,
    )
    return Outcome(data=data, warnings=warnings, freshness=freshness)


def tree(
    reader: SnapshotReader,
    depth: int = TREE_DEPTH_DEFAULT,
    limit: int = TREE_LIMIT_DEFAULT,
    direct_only: bool = False,
) -> Outcome[TreeData]:
    """Bounded folder tree with note counts.

    Raises:
        InvalidParameter: depth or limit out of range. IndexNotFound / IndexIncompatible.
    """
    _check_range("depth", depth, TREE_DEPTH_MIN, TREE_DEPTH_MAX)
    _check_range("limit", limit, TREE_LIMIT_MIN, TREE_LIMIT_MAX)
    with reader.acquire() as view:
        root, truncated = folder_tree(view.live.folders, view.live.folder_vocab, depth, limit, direct_only)
        warnings = view.warnings()
        freshness = view.freshness
    if truncated:
        warnings.append(
            _warn(
                "TREE_LIMIT_EXCEEDED",
                f"the tree was cut at {limit} nodes (breadth-first); raise 'limit' (max {TREE_LIMIT_MAX}) "
                "or lower 'depth'",
            )
        )
    return Outcome(
        data=TreeData(root=root, index_freshness=freshness), warnings=warnings, freshness=freshness
    )


def tags(reader: SnapshotReader, limit: int = TAGS_LIMIT_DEFAULT) -> Outcome[TagsData]:
    """Frontmatter tags with note-level counts.

    Raises:
        InvalidParameter: limit out of range. IndexNotFound / IndexIncompatible.
    """
    _check_range("limit", limit, TAGS_LIMIT_MIN, TAGS_LIMIT_MAX)
    with reader.acquire() as view:
        items, cut = _tag_counts(view.live, limit)
        warnings = view.warnings()
        freshness = view.freshness
    if cut:
        warnings.append(
            _warn("TAGS_TRUNCATED", f"only the {limit} most used tags are listed; raise 'limit' (max 200)")
        )
    return Outcome(
        data=TagsData(tags=items, index_freshness=freshness), warnings=warnings, freshness=freshness
    )


def _values(live: LiveNotes, column: str) -> tuple[list[ValueCount], bool]:
    rows, cut = live.ranked(column, FACET_VALUES_LIMIT, skip_empty=True)
    return [ValueCount(value=v, note_count=n) for v, n in rows], cut


def facets(reader: SnapshotReader, limit: int = FACETS_LIMIT_DEFAULT) -> Outcome[FacetsData]:
    """Frontmatter field names with note counts, and values for `type` and `status`.

    Raises:
        InvalidParameter: limit out of range. IndexNotFound / IndexIncompatible.
    """
    _check_range("limit", limit, FACETS_LIMIT_MIN, FACETS_LIMIT_MAX)
    cut_values: list[str] = []
    with reader.acquire() as view:
        fields, cut = _field_counts(view.live, limit)
        items: list[FacetField] = []
        for name, n in fields:
            column = ALLOWLISTED_FIELDS.get(name)
            if column is None:
                items.append(FacetField(name=name, note_count=n))
                continue
            values, values_cut = _values(view.live, column)
            if values_cut:
                cut_values.append(name)
            items.append(FacetField(name=name, note_count=n, values=values))
        warnings = view.warnings()
        freshness = view.freshness
    if cut:
        warnings.append(
            _warn(
                "FACETS_TRUNCATED",
                f"only the {limit} most used frontmatter fields are listed; raise 'limit' (max 200)",
            )
        )
    for name in cut_values:
        warnings.append(
            _warn(
                "FACET_VALUES_TRUNCATED",
                f"only the {FACET_VALUES_LIMIT} most used values of '{name}' are listed",
            )
        )
    data = FacetsData(fields=items, index_freshness=freshness)
    return Outcome(data=data, warnings=warnings, freshness=freshness)


def _check_range(name: str, value: int, low: int, high: int) -> None:
    """Raises: InvalidParameter when value is not an int in [low, high]."""
    from vault_agent.errors import out_of_range

    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise out_of_range(name, low, high)
