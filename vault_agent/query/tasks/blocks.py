"""```` ```tasks ```` blocks: find the query a note's dashboard runs.

A block is addressed as `NOTE#N` (the note as people name it, names.resolve_name, then the
N-th `tasks` block of the note, 1-based, in document order) or `NOTE#Heading` (the block in
the section of that heading, the nearest heading above it, compared case-insensitively; a
heading holding several blocks is AMBIGUOUS, naming each block's `NOTE#N`). `NOTE` alone
means its only block.

Where the text comes from: the note's file, read when asked, its sha256 compared with the
pinned snapshot's. The tasks the block selects always come from that snapshot; when the file
changed since, the answer carries `NOTE_CHANGED` (the block text is the file's current one,
and its line numbers may be off until the next index). Blocks are found as CommonMark
fenced code blocks (markdown-it, the parser the indexer uses for heading text): inside lists,
block quotes and callouts too; the info string's first word must be `tasks`, as Obsidian's
code-block processors read it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from vault_agent.contracts import WarningItem
from vault_agent.errors import Ambiguous, InvalidParameter, NotFound
from vault_agent.paths import display
from vault_agent.query.lines import decode, load_text
from vault_agent.query.outline import resolve_note
from vault_agent.query.snapshot import SnapshotReader, SnapshotView

MAX_BLOCK_ADDRESS_CHARS = 1_000
_MD = MarkdownIt("commonmark")
_WIKILINK = re.compile(r"^\[\[(.*)\]\]$")


@dataclass(frozen=True)
class TasksBlock:
    """One ```tasks block of a note."""

    path: str
    index: int  # 1-based among the note's tasks blocks
    line: int  # 1-based line of the opening fence
    heading: str | None  # text of the nearest heading above it
    text: str  # the query, as the block holds it

    def address(self) -> str:
        return f"{self.path}#{self.index}"


@dataclass(frozen=True)
class BlockAddress:
    note: str
    index: int | None
    heading: str | None


def parse_address(raw: str) -> BlockAddress:
    """`NOTE#N`, `NOTE#Heading`, `[[NOTE#Heading]]` or `NOTE`.

    Raises:
        InvalidParameter: empty, too long, or a block index below 1.
    """
    text = raw.strip()
    if m := _WIKILINK.match(text):
        text = m[1].split("|", 1)[0]
    if not text or len(text) > MAX_BLOCK_ADDRESS_CHARS:
        raise InvalidParameter.about(
            "block", f"takes NOTE#N or NOTE#Heading (1 to {MAX_BLOCK_ADDRESS_CHARS} characters)"
        )
    note, sep, rest = text.rpartition("#")
    if not sep:
        return BlockAddress(text, None, None)
    rest = rest.strip()
    if rest.isdigit():
        if int(rest) < 1:
            raise InvalidParameter.naming("{block:lead}: blocks are numbered from 1 (NOTE#1 is the first)")
        return BlockAddress(note.strip(), int(rest), None)
    if not rest or not note.strip():
        raise InvalidParameter.about("block", "takes NOTE#N or NOTE#Heading")
    return BlockAddress(note.strip(), None, rest)


def blocks_of(path: str, text: str, headings: list[tuple[int, str]]) -> list[TasksBlock]:
    """The note's tasks blocks; `headings` are (line, text) in document order."""
    out: list[TasksBlock] = []
    for token in _MD.parse(text):
        if token.type != "fence" or token.map is None:
            continue
        words = token.info.split()
        if not words or words[0] != "tasks":
            continue
        line = token.map[0] + 1
        above = [h for h_line, h in headings if h_line < line]
        out.append(TasksBlock(path, len(out) + 1, line, above[-1] if above else None, token.content))
    return out


def _pick(blocks: list[TasksBlock], address: BlockAddress, path: str) -> TasksBlock:
    shown = display(path)
    if not blocks:
        raise NotFound(f"'{shown}' holds no ```tasks block")
    if address.index is not None:
        if address.index > len(blocks):
            raise NotFound(
                f"'{shown}' holds {len(blocks)} ```tasks block(s); #{address.index} is past the last"
            )
        return blocks[address.index - 1]
    if address.heading is None:
        if len(blocks) > 1:
            raise Ambiguous(
                f"'{shown}' holds {len(blocks)} ```tasks blocks; name one: "
                + ", ".join(b.address() for b in blocks[:20])
            )
        return blocks[0]
    wanted = address.heading.casefold()
    hits = [b for b in blocks if b.heading is not None and b.heading.strip().casefold() == wanted]
    if not hits:
        under = sorted({b.heading for b in blocks if b.heading})
        listed = ", ".join(under[:10]) if under else "none"
        raise NotFound(
            f"no ```tasks block of '{shown}' is under that heading; headings with a block: {listed}"
        )
    if len(hits) > 1:
        raise Ambiguous(
            f"{len(hits)} ```tasks blocks of '{shown}' are under that heading; name one: "
            + ", ".join(b.address() for b in hits[:20])
        )
    return hits[0]


def read_block(reader: SnapshotReader, view: SnapshotView, raw: str) -> tuple[TasksBlock, list[WarningItem]]:
    """The block a caller's address names, in the note of the pinned snapshot `view`.

    Raises:
        InvalidParameter: a malformed address. InvalidPath, Forbidden, Ambiguous, NotFound:
            the note (as every note name); NotFound, Ambiguous: the block. TooLarge: a note
            over the read cap.
    """
    address = parse_address(raw)
    note = resolve_note(reader, view, address.note, "tasks", structure=False)
    file = load_text(reader.vault, note.path, reader, "tasks")
    headings = [
        (int(line), str(text))
        for _level, text, _id, line in (note.headings.spans(note.path) if note.headings else [])
    ]
    block = _pick(blocks_of(note.path, decode(file.raw), headings), address, note.path)
    warnings = note.warnings()
    rows = view.con.execute(
        f"SELECT sha256 FROM {view.segment_table('notes', note.segment_id)} WHERE path = ?", [note.path]
    ).fetchall()
    if rows and hashlib.sha256(file.raw).hexdigest() != rows[0][0]:
        warnings.append(
            WarningItem(
                code="NOTE_CHANGED",
                message="the note changed since the snapshot; the block's query is the file's current "
                "one, the tasks it selects come from the snapshot",
            )
        )
    return block, warnings
