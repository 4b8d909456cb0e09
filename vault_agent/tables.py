"""The Arrow schema of every index table (one segment file per table).

Kept apart from `vault_agent.contracts` so that importing the contracts (the CLI does)
does not import pyarrow; `contracts.NOTES_SCHEMA` etc. still resolve here lazily.
"""

from __future__ import annotations

import pyarrow as pa

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
        ("ctime_ns", pa.int64()),  # the file's birth time where the OS keeps one (indexer/birthtime.py)
        # vault_query's tags: frontmatter then inline `#tags`, once each case-insensitively
        # (first spelling kept); `tags` above stays frontmatter only (seed 000 orientation).
        ("all_tags", pa.list_(pa.string())),
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

# Frontmatter properties with their YAML types (indexer/properties.py): one row per scalar,
# per list item, and a marker row for null, an empty list or a map (whose keys follow as
# `parent.child` rows). Sorted by key so that a filter on one property reads its row groups.
PROPS_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("key", pa.string()),  # Dataview's canonical name: casefolded, spaces → '-', punctuation dropped
        ("item", pa.int32()),  # 0-based position in a list; 0 for a scalar
        ("is_list", pa.bool_()),
        ("kind", pa.string()),  # string | number | boolean | date | datetime | null | empty | object | list
        ("s", pa.string()),  # the value as text (dates ISO, booleans true/false); null for markers
        ("n", pa.float64()),  # numbers
        ("d", pa.int64()),  # dates and datetimes, and strings that are ISO dates: µs since the epoch, UTC
        ("b", pa.bool_()),  # booleans
    ]
)

# vault_query's tags (frontmatter and inline), one row per tag and per parent of a nested tag
# (`a/b` → `a`, `a/b`), casefolded; sorted by tag so that a tag filter reads its rows only.
TAGS_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("tag", pa.string()),
        ("exact", pa.bool_()),  # the note carries this tag itself (not only a child of it)
    ]
)

# Checkbox list items outside code (indexer/tasks.py; vault_tasks, DQL TASK), in note and
# line order. Status types and the global filter are applied by readers (task_settings.py).
TASKS_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("line", pa.int32()),  # 1-based file line of the checkbox
        ("parent_line", pa.int32()),  # the nearest enclosing task's line, or null
        ("status", pa.string()),  # the symbol between the brackets
        ("description", pa.string()),  # as the Tasks plugin shows it (task_syntax)
        ("tags", pa.list_(pa.string())),  # the description's inline tags, case kept
        # the section's heading texts, outermost first, joined by NUL (which no text holds):
        # one string, so a reader decodes each distinct section once (Parquet dictionary)
        ("section", pa.string()),
        ("due", pa.string()),  # date fields as written (YYYY-MM-DD, possibly no calendar date)
        ("scheduled", pa.string()),
        ("start", pa.string()),
        ("created", pa.string()),
        ("done", pa.string()),
        ("cancelled", pa.string()),
        ("priority", pa.int8()),  # 0 highest … 5 lowest, 3 none
        ("recurrence", pa.string()),
        ("id", pa.string()),
        ("depends_on", pa.list_(pa.string())),
        ("on_completion", pa.string()),
        ("notation", pa.string()),  # emoji | dataview | mixed | null (no field)
    ]
)

TABLES: dict[str, pa.Schema] = {
    "notes": NOTES_SCHEMA,
    "headings": HEADINGS_SCHEMA,
    "chunks": CHUNKS_SCHEMA,
    "terms": TERMS_SCHEMA,
    "links": LINKS_SCHEMA,
    "props": PROPS_SCHEMA,
    "tags": TAGS_SCHEMA,
    "tasks": TASKS_SCHEMA,
}


def duck_type(t: object) -> str:
    """DuckDB type name of a pyarrow type used in contracts.py (for empty placeholders)."""
    assert isinstance(t, pa.DataType)
    if pa.types.is_list(t):
        return duck_type(t.value_type) + "[]"
    return {
        pa.string(): "VARCHAR",
        pa.int8(): "TINYINT",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.bool_(): "BOOLEAN",
        pa.float64(): "DOUBLE",
    }[t]
