"""Where bases are in a snapshot: `.base` files, ```` ```base ```` blocks, embeds.

- A `.base` file is named by the manifest (`Manifest.bases`) and its text read from the
  index (`bases/<sha256>.base`, written by the writer at that commit): never from the
  vault, so a base is the snapshot's, and nothing a base names is read from the disk.
- A ```` ```base ```` block is read from the note's text as the snapshot holds it (its
  chunks: the body's lines, comments blanked), its fences found by markdown-it
  (CommonMark), so a fence inside another code block is not a base. A block is addressed
  `Note.md#N` (the N-th base block of the note, from 1); `this` is the note.
- Notes holding blocks are found by one scan of each segment's chunk text for a fence
  opening `base` (kept per segment: segments never change); embeds `![[File.base#View]]`
  from the `links` table (kind `embed`), resolved like links.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from markdown_it import MarkdownIt

from vault_agent.contracts import (
    BASE_EXTENSION,
    BASES_DIR,
    MAX_BASE_BYTES,
    BaseFileRef,
    WarningItem,
    base_text_name,
)
from vault_agent.errors import IndexNotFound, InvalidQuery, NotFound
from vault_agent.names import parse_name
from vault_agent.paths import display
from vault_agent.per_owner import PerOwner
from vault_agent.query.bases.base_yaml import decode
from vault_agent.query.bases.rows import SnapshotRows
from vault_agent.query.note_names import resolve_indexed
from vault_agent.query.snapshot import SnapshotReader, SnapshotView

BLOCK_RE = re.compile(r"^(.+)#(\d{1,6})$")
MAX_BLOCKS_PER_NOTE = 1_000
_FENCE_SQL = r"regexp_matches(text, '(?m)^[ \t>*+\-0-9.)]*(```|~~~)[ \t]*base([ \t]|$)')"


@dataclass(frozen=True)
class BaseText:
    """One base's text and what `this` is for it by default."""

    address: str  # `Reading.base`, or `Notes/Plan.md#2`
    kind: Literal["file", "block"]
    text: str
    this: str  # the base file, or the note holding the block


@dataclass(frozen=True)
class Embed:
    note: str
    base: str
    view: str | None


@dataclass
class _Scans:
    lock: threading.Lock = field(default_factory=threading.Lock)
    block_notes: dict[int, tuple[str, frozenset[str]]] = field(default_factory=dict)


_scans: PerOwner[_Scans] = PerOwner(_Scans)


def file_text(index_dir: Path, ref: BaseFileRef) -> str:
    """A recorded `.base` file's text, from the index.

    Raises:
        InvalidQuery: the file is larger than the bound (its text was not recorded) or not UTF-8.
        IndexNotFound: the text is gone from the index (collected: retry).
    """
    if ref.sha256 is None:
        raise InvalidQuery(
            f"base file: '{display(ref.path)}' is larger than {MAX_BASE_BYTES // 1024} KiB; vault-agent does not read it"
        )
    try:
        data = (index_dir / BASES_DIR / base_text_name(ref.sha256)).read_bytes()
    except FileNotFoundError:
        raise IndexNotFound(
            "the base's text is no longer in the index (a newer snapshot replaced it); retry"
        ) from None
    return decode(data)


@dataclass(frozen=True)
class Target:
    """What a caller's `path` names: a base file, a note's N-th base block, or a note (whose
    bases are listed); `view` is a view named after `#` of a wikilink (`[[Reading.base#All]]`)."""

    kind: Literal["file", "block", "note"]
    path: str  # the base file, or the note
    number: int = 0  # the block, from 1
    view: str | None = None
    warning: WarningItem | None = None


def name_target(reader: SnapshotReader, view: SnapshotView, rows: SnapshotRows, raw: str) -> Target:
    """The base file, block or note `raw` names: a `.base` path (or a name resolving to
    one like a link), `Note.md#N`, or a note as people name it (path, name, title, alias,
    wikilink; names.resolve_name).

    Raises:
        NotFound: no such base file or note. InvalidPath, Forbidden, Ambiguous: as names.
    """
    request = parse_name(raw)
    wanted = request.heading[0] if request.heading else None
    target = request.target.strip()
    if target.lower().endswith(BASE_EXTENSION):
        ref = rows.bases.get(target) or rows.bases.get(rows.resolve(target, "") or "")
        if ref is None:
            raise NotFound(
                f"no base file '{display(target)}' in the index; list them with vault_base() (no path)"
            )
        warning = None
        if ref.path != raw:
            warning = WarningItem(
                code="NAME_RESOLVED",
                message=f"'{display(raw.strip())}' is '{display(ref.path)}' (resolved_from: link); "
                "use this path in later calls",
            )
        return Target("file", ref.path, view=wanted, warning=warning)
    m = BLOCK_RE.match(target) if not request.wikilink else None
    note_text, number = (m.group(1), int(m.group(2))) if m else (raw, 0)
    resolution = resolve_indexed(reader, view, note_text, "base")
    return Target(
        "block" if number else "note", resolution.path, number, view=None, warning=resolution.warning()
    )


def block_text(view: SnapshotView, note: str, number: int) -> BaseText:
    """The N-th base block of a note (from 1).

    Raises:
        NotFound: the note has fewer blocks.
    """
    blocks = note_blocks(view, note)
    if not 1 <= number <= len(blocks):
        raise NotFound(
            f"'{display(note)}' has {len(blocks)} base block{'s' if len(blocks) != 1 else ''}; "
            f"address one as '{display(note)}#1'"
            if blocks
            else f"'{display(note)}' holds no ```base block; its bases: vault_base(path)"
        )
    return BaseText(f"{note}#{number}", "block", blocks[number - 1], note)


def base_file_text(rows: SnapshotRows, path: str) -> BaseText:
    """A base file of the snapshot with its text.

    Raises:
        InvalidQuery, IndexNotFound: as `file_text`.
    """
    return BaseText(path, "file", file_text(rows.index_dir, rows.bases[path]), path)


def note_lines(view: SnapshotView, path: str) -> list[str]:
    """A note's lines as the snapshot's chunks hold them (1-based positions kept; lines
    no chunk holds, frontmatter and blank stretches, are empty)."""
    found = view.live.lookup(path)
    if found is None:
        return []
    table = SnapshotView.segment_table("chunks", found[0])
    rows = view.con.execute(
        f"SELECT start_line, end_line, text FROM {table} WHERE path = ? ORDER BY ordinal", [path]
    ).fetchall()
    lines: dict[int, str] = {}
    for start, end, text in rows:
        parts = str(text).split("\n")
        if start == end and start in lines:  # a long line cut into pieces
            lines[start] += parts[0]
            continue
        for offset, part in enumerate(parts[: end - start + 1]):
            lines[start + offset] = part
    last = max(lines, default=0)
    return [lines.get(i, "") for i in range(1, last + 1)]


def note_blocks(view: SnapshotView, path: str) -> list[str]:
    """The YAML of each ```` ```base ```` block of a note, in order, each preceded by blank
    lines so that positions in it are the note's lines."""
    lines = note_lines(view, path)
    if not any("base" in line for line in lines):
        return []
    out: list[str] = []
    for token in MarkdownIt("commonmark").parse("\n".join(lines)):
        if token.type != "fence" or token.map is None:
            continue
        info = token.info.strip().split()
        if info and info[0] == "base":
            out.append("\n" * (token.map[0] + 1) + token.content)
            if len(out) >= MAX_BLOCKS_PER_NOTE:
                break
    return out


def notes_with_blocks(reader: SnapshotReader, view: SnapshotView, rows: SnapshotRows) -> list[str]:
    """The live notes whose text holds a fence opening a base block (sorted)."""
    scans = _scans.of(reader)
    found: set[str] = set()
    index_dir = Path(reader.settings.index_dir)
    for seg in view.manifest.segments:
        name = seg.files.get("chunks")
        if name is None:
            continue
        with scans.lock:
            known = scans.block_notes.get(seg.segment_id)
        if known is None or known[0] != name:
            file = str(index_dir / "segments" / name).replace("'", "''")
            paths = view.con.execute(
                f"SELECT DISTINCT path FROM read_parquet('{file}') WHERE contains(text, 'base') AND {_FENCE_SQL}"
            ).fetchall()
            known = (name, frozenset(str(p[0]) for p in paths))
            with scans.lock:
                scans.block_notes[seg.segment_id] = known
                current = {s.segment_id for s in view.manifest.segments}
                for gone in [s for s in scans.block_notes if s not in current]:
                    del scans.block_notes[gone]
        found |= {p for p in known[1] if _live_in(view, p, seg.segment_id)}
    return sorted(p for p in found if p in rows.position)


def _live_in(view: SnapshotView, path: str, segment_id: int) -> bool:
    hit = view.live.lookup(path)
    return hit is not None and hit[0] == segment_id


def embeds(view: SnapshotView, rows: SnapshotRows) -> list[Embed]:
    """Every `![[File.base]]` / `![[File.base#View]]` of the snapshot's notes, resolved."""
    found = view.con.execute(
        "SELECT path, target, anchor FROM links WHERE kind = 'embed' AND lower(target) LIKE '%.base' "
        "ORDER BY path, ordinal"
    ).fetchall()
    out: list[Embed] = []
    for note, target, anchor in found:
        base = rows.resolve(str(target), str(note))
        if base is not None and base in rows.bases and note in rows.position:
            out.append(Embed(str(note), base, str(anchor) if anchor else None))
    return out


def embeds_of(all_embeds: Iterable[Embed], base: str) -> list[Embed]:
    """The embeds of one base file."""
    return [e for e in all_embeds if e.base == base]
