"""`get_note`: one note's current text and its snapshot metadata.

The text is read from the file now (bounded like vault_read: default 20,000 characters,
hard limit 100,000); metadata (title, tags, allowlisted type/status values, frontmatter
field names, outline heading ids) comes from the committed snapshot. `snapshotMatches`
says whether the file's bytes still hash to the snapshot's sha256.
"""

from __future__ import annotations

import hashlib

from vault_agent.contracts import MAX_OUTLINE_HEADINGS, Outcome, WarningItem
from vault_agent.errors import InvalidPath
from vault_agent.paths import display
from vault_agent.query.files import effective_max_chars
from vault_agent.query.lines import decode, read_capped, resolve_file, split_lines
from vault_agent.query.models import Camel
from vault_agent.query.outline import HEADINGS_NOT_INDEXED, heading_warnings
from vault_agent.query.section_read import choose_address, find_section
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.query.wire import omit_none


class NoteHeading(Camel):
    id: str
    level: int
    text: str


class NoteSection(Camel):
    """The section a get_note read (section_id / heading): its heading and lines in the file."""

    id: str
    level: int
    text: str
    start_line: int
    end_line: int


class NoteData(Camel):
    path: str
    title: str | None
    tags: list[str]
    type_values: list[str]
    status_values: list[str]
    frontmatter_fields: list[str]
    headings: list[NoteHeading]
    headings_truncated: bool
    text: str
    truncated: bool
    returned_chars: int
    total_chars: int
    line_count: int
    in_snapshot: bool
    snapshot_matches: bool
    index_freshness: str
    section: NoteSection | None = omit_none()  # only for a section read; then text is the section's


def get_note(
    reader: SnapshotReader,
    path: object,
    max_chars: int | None = None,
    section_id: str | None = None,
    heading: str | None = None,
) -> Outcome[NoteData]:
    """A note's text (bounded) and metadata; says whether the file changed since the snapshot.

    The note is named by path or name (names.resolve_name). With `section_id` or `heading`
    (or a path `[[Note#Heading]]`), `text` is that section (section_read) and `section`
    says which lines of the file it is; total_chars and line_count stay the note's.

    Raises:
        InvalidPath: malformed, a symlink, a folder, or not a note. Forbidden: protected.
        Ambiguous, NotFound: the name matches several notes / none (with close names), or
        the section. TooLarge: over 32 MiB. InvalidParameter: max_chars < 1, two addresses.
        IndexNotFound, IndexIncompatible: no usable snapshot.
    """
    budget, capped = effective_max_chars(max_chars)
    vault = reader.vault
    resolved, resolution = resolve_file(vault, path, reader, "get")
    if not vault.is_note_name(resolved.rel):
        raise InvalidPath(f"'{display(resolved.rel)}' is not a note; read other files with vault_read")
    address = choose_address(False, section_id, heading, resolution.heading, None)
    warnings: list[WarningItem] = []
    with reader.acquire() as view:
        raw = read_capped(vault, resolved)
        text = decode(raw)
        cols = "path, title, tags, type_values, status_values, fm_fields, sha256"
        # The segment holding the note's live rows is known without a query (view.live), so
        # both reads scan one segment's path-sorted table instead of the snapshot's union.
        found = view.live.lookup(resolved.rel)
        rows = (
            view.con.execute(
                f"SELECT {cols} FROM {view.segment_table('notes', found[0])} WHERE path = ?", [resolved.rel]
            ).fetchall()
            if found is not None
            else []
        )
        warnings += view.warnings()
        not_outlined = False
        if rows and found is not None:
            rel, title, tags, types, statuses, fields, sha = rows[0]
            heads = [(i, lv, t) for _o, lv, t, i, _b in found[1].headings.of(rel, MAX_OUTLINE_HEADINGS + 1)]
            not_outlined = found[1].too_large  # its headings were never indexed: say so, not "none"
        else:
            rel, title, tags, types, statuses, fields, sha, heads = (
                resolved.rel,
                None,
                [],
                [],
                [],
                [],
                None,
                [],
            )
            warnings.append(
                WarningItem(
                    code="NOTE_NOT_INDEXED",
                    message="this note is not in the snapshot yet; metadata appears after the next index",
                )
            )
        freshness = view.freshness
    warnings += [w for w in [resolution.warning()] if w is not None]
    matches = sha is not None and hashlib.sha256(raw).hexdigest() == sha
    if sha is not None and not matches:
        warnings.append(
            WarningItem(
                code="NOTE_CHANGED",
                message="the file changed since the snapshot; metadata may be outdated until the next index",
            )
        )
    source, section = text, None
    if address is not None:
        span, _changed = find_section(reader, rel, address, raw)  # NOTE_CHANGED is said above
        lines = split_lines(text)
        last = span.last_line(len(lines))
        source = "".join(lines[span.start_line - 1 : last])
        section = NoteSection(
            id=span.id, level=span.level, text=span.text, start_line=span.start_line, end_line=last
        )
    body = source[:budget]
    data = NoteData(
        path=rel,
        title=title,
        tags=list(tags or []),
        type_values=list(types or []),
        status_values=list(statuses or []),
        frontmatter_fields=list(fields or []),
        headings=[NoteHeading(id=i, level=int(lv), text=t) for i, lv, t in heads[:MAX_OUTLINE_HEADINGS]],
        headings_truncated=len(heads) > MAX_OUTLINE_HEADINGS or not_outlined,
        text=body,
        truncated=len(body) < len(source),
        returned_chars=len(body),
        total_chars=len(text),
        line_count=len(split_lines(text)),
        in_snapshot=bool(rows),
        snapshot_matches=matches,
        index_freshness=freshness,
        section=section,
    )
    if not_outlined:
        warnings.append(HEADINGS_NOT_INDEXED)
    else:
        warnings += heading_warnings(data.headings_truncated)
    if data.truncated and capped:
        warnings.append(
            WarningItem(
                code="HARD_LIMIT",
                message="text cut at the 100,000-character hard limit; read the rest with vault_read",
            )
        )
    return Outcome(data=data, warnings=warnings, freshness=freshness)
