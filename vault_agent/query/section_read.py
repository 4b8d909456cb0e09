"""Sections as read addresses: a heading's id or text → the lines of its section.

`vault_read`, `vault_scan`, `get_note` (and seed 003's `read_file`) take, in place of a line
range, `section_id` (the heading id `get_note_outline` gives, `h2-install-0003`, or
SectionSource's `{slug(path)}:{heading id}`), `heading` (its text, or a path `A > B`:
case-insensitive, whitespace-normalised; `A` any ancestor of `B`, in order) or the
`#Heading` of a `[[Note#Heading]]` path. The section is the heading's line through the
line before the next heading of the same or a higher level (a level number no larger),
or the end of the file; it holds the heading's subsections.

Headings and their lines come from the pinned snapshot (the parser's headings: nothing
inside code, comments or frontmatter is one); the text from the file now. When the file
changed since the snapshot, the answer carries `NOTE_CHANGED` (its lines may be off until
the next index). The outline and section-source contracts keep line numbers out (seeds
001/004); only these reads use them.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass

from vault_agent.contracts import WarningItem
from vault_agent.errors import Ambiguous, InvalidParameter, NotFound, TooLarge
from vault_agent.names import name_key
from vault_agent.paths import display
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.text import slugify

MAX_CLOSE_HEADINGS = 3


@dataclass(frozen=True)
class SectionAddress:
    """The one section a caller named: by id, by heading text/path, or by a link's heading."""

    section_id: str | None = None
    heading: str | None = None
    link_heading: tuple[str, ...] = ()

    def shown(self) -> str:
        if self.section_id is not None:
            return self.section_id
        return self.heading if self.heading is not None else " > ".join(self.link_heading)


@dataclass(frozen=True)
class SectionSpan:
    """A section's heading and lines (end_line None: to the end of the file)."""

    id: str
    level: int
    text: str
    start_line: int
    end_line: int | None

    def last_line(self, total_lines: int) -> int:
        return total_lines if self.end_line is None else min(self.end_line, total_lines)


@dataclass(frozen=True)
class _Heading:
    level: int
    text: str
    id: str
    line: int
    parent: int | None


def choose_address(
    has_range: bool,
    section_id: str | None,
    heading: str | None,
    link_heading: tuple[str, ...],
    range_name: str | None,
) -> SectionAddress | None:
    """The section the caller named, or None for a read by range; at most one address
    (`range_name`: the tool's range parameter, None when it has none besides a section).

    Raises:
        InvalidParameter: more than one of range, section_id, heading and a link's #heading;
            an empty id or heading; a block reference (`#^id`).
    """
    given = [
        name
        for name, present in (
            (range_name or "range", has_range),
            ("section_id", section_id is not None),
            ("heading", heading is not None),
            ("the path's #heading", bool(link_heading)),
        )
        if present
    ]
    if len(given) > 1:
        choices = f"{range_name}, section_id or heading" if range_name else "section_id or heading"
        raise InvalidParameter(f"pass one of {choices}, not {' and '.join(given)}")
    for name, value in (("section_id", section_id), ("heading", heading)):
        if value is not None and not value.strip():
            raise InvalidParameter.about(name, "must not be empty")
    if any(part.startswith("^") for part in link_heading):
        raise InvalidParameter("'#^…' is a block reference, not a heading; name a heading, or read by range")
    if section_id is None and heading is None and not link_heading:
        return None
    return SectionAddress(section_id=section_id, heading=heading, link_heading=link_heading)


def _headings(reader: SnapshotReader, path: str) -> tuple[list[_Heading], str | None]:
    """The note's headings (document order, with parents) and its snapshot sha256.

    Raises:
        NotFound: the note is not in the snapshot. TooLarge: its structure is not served.
    """
    with reader.acquire() as view:
        found = view.live.lookup(path)
        if found is None:
            raise NotFound(
                f"'{display(path)}' is not indexed yet, so its sections have no address; read it "
                "by range, or retry after the next index"
            )
        segment, fields = found
        if fields.too_large:
            raise TooLarge(
                f"'{display(path)}' is over 1,000,000 characters; its sections are not served: read it by range"
            )
        spans = fields.headings.spans(path)
        row = view.con.execute(
            f"SELECT sha256 FROM {view.segment_table('notes', segment)} WHERE path = ?", [path]
        ).fetchone()
    out: list[_Heading] = []
    stack: list[int] = []
    for idx, (level, text, hid, line) in enumerate(spans):
        while stack and out[stack[-1]].level >= level:
            stack.pop()
        out.append(_Heading(int(level), text, hid, int(line), stack[-1] if stack else None))
        stack.append(idx)
    return out, (row[0] if row else None)


def _span(heads: list[_Heading], idx: int) -> SectionSpan:
    head = heads[idx]
    end: int | None = None
    for later in heads[idx + 1 :]:
        if later.level <= head.level:
            end = max(later.line - 1, head.line)  # two headings may share a line (a list item)
            break
    return SectionSpan(id=head.id, level=head.level, text=head.text, start_line=head.line, end_line=end)


def _trail(heads: list[_Heading], idx: int) -> str:
    names = []
    parent = heads[idx].parent
    while parent is not None:
        names.append(heads[parent].text)
        parent = heads[parent].parent
    return " > ".join([*reversed(names), heads[idx].text])


def _by_id(heads: list[_Heading], path: str, section_id: str) -> list[int]:
    wanted = section_id.strip()
    if ":" in wanted:  # SectionSource's "{slug(path)}:{heading id}"
        prefix, wanted = wanted.rsplit(":", 1)
        if prefix != slugify(path):
            raise NotFound(
                f"section '{display(section_id)}' is not one of '{display(path)}' (its prefix names "
                f"another note); pass that note's path, or use 'get-section-source' on this one"
            )
    wanted = wanted.casefold()
    return [i for i, h in enumerate(heads) if h.id == wanted]


def _ancestors(heads: list[_Heading], idx: int) -> list[str]:
    """name_keys of a heading's ancestors, nearest first."""
    out = []
    parent = heads[idx].parent
    while parent is not None:
        out.append(name_key(heads[parent].text))
        parent = heads[parent].parent
    return out


def _follows(wanted: list[str], ancestors: list[str], gaps: bool) -> bool:
    """Whether wanted (outermost first) are the ancestors: the nearest ones in a row, or in
    order with others between (gaps)."""
    needed = list(wanted)
    for key in ancestors:
        if not needed:
            break
        if key == needed[-1]:
            needed.pop()
        elif not gaps:
            return False
    return not needed


def _by_heading(heads: list[_Heading], parts: list[str]) -> list[int]:
    """Headings named parts[-1] under parts[:-1]: as their nearest ancestors, else (when none
    is) as any ancestors in order (`Project > Install` over `Project > Setup > Install`)."""
    want = [name_key(p) for p in parts]
    named = [i for i, h in enumerate(heads) if name_key(h.text) == want[-1]]
    if len(want) == 1:
        return named
    for gaps in (False, True):
        hits = [i for i in named if _follows(want[:-1], _ancestors(heads, i), gaps)]
        if hits:
            return hits
    return []


def _not_found(heads: list[_Heading], path: str, address: SectionAddress) -> NotFound:
    shown = display(address.shown())
    if not heads:
        return NotFound(f"'{display(path)}' has no headings; read it by range (or full)")
    by_id = address.section_id is not None
    wanted = name_key(shown.rsplit(":", 1)[-1] if by_id else shown.split(">")[-1])
    keys = [h.id if by_id else name_key(h.text) for h in heads]
    close = difflib.get_close_matches(wanted, list(dict.fromkeys(keys)), n=MAX_CLOSE_HEADINGS, cutoff=0.5)
    listed = ", ".join(f"'{heads[keys.index(k)].text}' ({heads[keys.index(k)].id})" for k in close)
    what = "section" if by_id else "heading"
    hint = " (ids change when a heading is added or removed above it)" if by_id else ""
    near = f"; close: {listed}" if close else ""
    return NotFound(
        f"'{display(path)}' has no {what} '{shown}'{hint}{near}; use 'get-note-outline' for its headings and ids"
    )


def find_section(
    reader: SnapshotReader, path: str, address: SectionAddress, raw: bytes
) -> tuple[SectionSpan, list[WarningItem]]:
    """The section `address` names in the indexed note `path`, and NOTE_CHANGED when the
    file's bytes (`raw`) differ from the snapshot's.

    Raises:
        NotFound: no such section (with close headings), or the note is not indexed.
        Ambiguous: a heading text that names several sections (their ids are listed).
        TooLarge: a note whose structure is not served.
    """
    heads, sha = _headings(reader, path)
    if address.section_id is not None:
        hits = _by_id(heads, path, address.section_id)
    elif address.heading is not None:
        hits = _by_heading(heads, [address.heading])
        if not hits and ">" in address.heading:
            hits = _by_heading(heads, [p for p in address.heading.split(">") if p.strip()])
    else:
        hits = _by_heading(heads, list(address.link_heading))
    if not hits:
        raise _not_found(heads, path, address)
    if len(hits) > 1:
        listed = ", ".join(f"{heads[i].id} ({_trail(heads, i)})" for i in hits[:10])
        more = f" and {len(hits) - 10} more" if len(hits) > 10 else ""
        raise Ambiguous(
            f"heading '{display(address.shown())}' names {len(hits)} sections of '{display(path)}': "
            f"{listed}{more}; pass section_id with one of these ids"
        )
    warnings = []
    if sha is not None and hashlib.sha256(raw).hexdigest() != sha:
        warnings.append(
            WarningItem(
                code="NOTE_CHANGED",
                message="the file changed since the snapshot; the section's lines come from the "
                "snapshot and may be off until the next index",
            )
        )
    return _span(heads, hits[0]), warnings
