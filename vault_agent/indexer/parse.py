"""One note's bytes → its rows in every table (docs/parsing.md has the rules).

`parse_note` is pure and deterministic and never raises: any unexpected failure becomes a
note with flag `parse_error` (no text is logged).
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from vault_agent.contracts import MAX_NOTE_CHARS_FOR_STRUCTURE, ParsedNote
from vault_agent.indexer.frontmatter import Frontmatter, parse_frontmatter
from vault_agent.indexer.inline_tags import inline_tags
from vault_agent.indexer.links import extract_links
from vault_agent.indexer.markdown import Heading, parse_structure
from vault_agent.indexer.parse_fields import facet_values, facets_json, tag_list, title_of
from vault_agent.indexer.properties import property_rows
from vault_agent.indexer.tasks import task_rows
from vault_agent.note_syntax import blank_comments
from vault_agent.text import heading_id, title_from_stem, tokenize

BOM = b"\xef\xbb\xbf"
BINARY_SNIFF_BYTES = 8192
# A file is binary when more than this share of its first 8 KiB is NUL, another C0 control
# or undecodable: a text note quoting a few stray NULs stays a note with an outline.
BINARY_ODD_SHARE = 0.3
_ODD_CHARS = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
MAX_CHUNK_CHARS = 8000
PLAIN_WINDOW_LINES = 50
_EMPTY_FACETS = facets_json({})


def _looks_binary(head: bytes) -> bool:
    """True when the sniffed bytes are mostly not text (the share of odd characters)."""
    sample = head.decode("utf-8", errors="replace")
    return len(_ODD_CHARS.findall(sample)) > BINARY_ODD_SHARE * len(sample)


def _decode(raw: bytes, flags: list[str]) -> str:
    """Bytes → text (BOM dropped, U+FFFD for bad bytes and NUL); flags what happened."""
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
        flags.append("bom")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        flags.append("undecodable")
    if "\r" in text:
        if "\r\n" in text:
            flags.append("crlf")
        if "\r" in text.replace("\r\n", ""):
            flags.append("cr_only")
    if "\x00" in text:
        flags.append("nul")
        if _looks_binary(raw[:BINARY_SNIFF_BYTES]):
            flags.append("binary")
        text = text.replace("\x00", "\ufffd")
    return text


def _split_lines(text: str) -> list[str]:
    """File lines with LF, CRLF and lone CR as line ends; a final newline ends the last line."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _base_note(rel: str, raw: bytes, mtime_ns: int, size: int, ctime_ns: int | None) -> dict[str, Any]:
    folder, _, name = rel.rpartition("/")
    return {
        "path": rel,
        "folder": folder,
        "depth": len(folder.split("/")) if folder else 0,
        "title": title_from_stem(os.path.splitext(name)[0]),
        "mtime_ns": mtime_ns,
        "size": size,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "fm_status": "none",
        "fm_error": None,
        "fm_fields": [],
        "tags": [],
        "type_values": [],
        "status_values": [],
        "facets_json": _EMPTY_FACETS,
        "line_count": 0,
        "char_count": 0,
        "heading_count": 0,
        "chunk_count": 0,
        "too_large": False,
        "aliases": [],
        "flags": [],
        "ctime_ns": mtime_ns if ctime_ns is None else ctime_ns,
        "all_tags": [],
    }


def _query_tags(parsed: ParsedNote, inline: list[str]) -> None:
    """`all_tags` (frontmatter then inline, once each case-insensitively, first spelling
    kept) and the `tags` rows: each tag casefolded, with its parents (`a/b` → `a`, `a/b`)."""
    note = parsed.note
    seen: dict[str, str] = {}
    for tag in (*note["tags"], *inline):
        seen.setdefault(tag.casefold(), tag)
    note["all_tags"] = list(seen.values())
    keys: dict[str, bool] = {}
    for folded in seen:
        parts = folded.split("/")
        for i in range(1, len(parts)):
            keys.setdefault("/".join(parts[:i]), False)
        keys[folded] = True
    rel = note["path"]
    parsed.tags = [{"path": rel, "tag": tag, "exact": exact} for tag, exact in keys.items()]


def _pieces(lines: list[str], start: int, end: int) -> list[tuple[int, int, str]]:
    """Lines start..end as (first, last, text) pieces of at most MAX_CHUNK_CHARS, whole lines
    where possible; a single over-long line is cut into pieces that share its line number."""
    whole = "\n".join(lines[start - 1 : end])
    if len(whole) <= MAX_CHUNK_CHARS:
        return [(start, end, whole)]  # the common case: one piece
    out: list[tuple[int, int, str]] = []
    buf: list[str] = []
    size = 0
    first = start
    for line_no in range(start, end + 1):
        line = lines[line_no - 1]
        if len(line) > MAX_CHUNK_CHARS:
            if buf:
                out.append((first, line_no - 1, "\n".join(buf)))
            out.extend(
                (line_no, line_no, line[off : off + MAX_CHUNK_CHARS])
                for off in range(0, len(line), MAX_CHUNK_CHARS)
            )
            buf, size, first = [], 0, line_no + 1
            continue
        if buf and size + 1 + len(line) > MAX_CHUNK_CHARS:
            out.append((first, line_no - 1, "\n".join(buf)))
            buf, size, first = [], 0, line_no
        size += len(line) + (1 if buf else 0)
        buf.append(line)
    if buf:
        out.append((first, end, "\n".join(buf)))
    return out


def _chunk_rows(
    rel: str, spans: list[tuple[int | None, list[str], int, int]], lines: list[str]
) -> list[dict[str, Any]]:
    """One row per piece of each (heading ordinal, heading path, start, end) span."""
    rows: list[dict[str, Any]] = []
    for heading_ordinal, path, start, end in spans:
        for first, last, text in _pieces(lines, start, end):
            rows.append(
                {
                    "path": rel,
                    "ordinal": len(rows),
                    "heading_ordinal": heading_ordinal,
                    "heading_path": list(path),
                    "start_line": first,
                    "end_line": last,
                    "text": text,
                    "token_count": 0,  # set with the terms
                }
            )
    return rows


def _tokenize_chunks(chunks: list[dict[str, Any]], joined: list[str]) -> None:
    """Each chunk's token_count, and its tokens joined by one space into `joined` (the
    engine's body text; the batch's `terms` rows are counted from it: vault_agent/term_rows.py)."""
    for chunk in chunks:
        tokens = tokenize(chunk["text"])
        chunk["token_count"] = len(tokens)
        joined.append(" ".join(tokens))


def _heading_rows(rel: str, headings: list[Heading]) -> tuple[list[dict[str, Any]], list[list[str]]]:
    rows: list[dict[str, Any]] = []
    paths: list[list[str]] = []
    stack: list[int] = []  # 0-based indices of open ancestors
    for idx, h in enumerate(headings):
        while stack and headings[stack[-1]].level >= h.level:
            stack.pop()
        parent = stack[-1] + 1 if stack else None
        paths.append([*(paths[stack[-1]] if stack else []), h.text])
        stack.append(idx)
        ordinal = idx + 1
        rows.append(
            {
                "path": rel,
                "ordinal": ordinal,
                "level": h.level,
                "text": h.text,
                "id": heading_id(h.level, h.text, ordinal),
                "parent_ordinal": parent,
                "line": h.line,
                "body_available": h.body_available,
            }
        )
    return rows, paths


def _is_blank(lines: list[str], start: int, end: int) -> bool:
    return all(not lines[i - 1].strip() for i in range(start, end + 1))


def _apply_frontmatter(note: dict[str, Any], fm: Frontmatter) -> None:
    note["fm_status"] = fm.status
    note["fm_error"] = fm.error
    note["fm_fields"] = list(fm.fields)
    note["title"] = title_of(fm.fields, note["title"])
    note["tags"] = tag_list(fm.fields.get("tags"))
    note["type_values"] = facet_values(fm.fields.get("type"))
    note["status_values"] = facet_values(fm.fields.get("status"))
    note["facets_json"] = facets_json(fm.fields, note["tags"])
    note["aliases"] = facet_values(fm.fields.get("aliases", fm.fields.get("alias")))


def _parse(rel: str, raw: bytes, mtime_ns: int, size: int, ctime_ns: int | None) -> ParsedNote:
    note = _base_note(rel, raw, mtime_ns, size, ctime_ns)
    flags: list[str] = note["flags"]
    text = _decode(raw, flags)
    lines = _split_lines(text)
    note["line_count"] = len(lines)
    note["char_count"] = len(text)
    if not text.strip():
        flags.append("empty")
    if "binary" in flags:
        return ParsedNote(note=note)
    fm = parse_frontmatter(lines)
    _apply_frontmatter(note, fm)
    first = fm.end_line + 1  # first body line (1-based)
    too_large = len(text) > MAX_NOTE_CHARS_FOR_STRUCTURE
    note["too_large"] = too_large
    parsed = ParsedNote(note=note, props=property_rows(rel, fm.fields))
    if first > len(lines):
        _query_tags(parsed, [])
        return parsed
    body_lines = blank_comments("\n".join(lines[first - 1 :])).split("\n")
    # From here on lines[] holds the blanked body at its file positions.
    lines = [""] * (first - 1) + body_lines
    last = len(lines)
    spans: list[tuple[int | None, list[str], int, int]] = []
    inline: list[str] = []
    if too_large:
        for start in range(first, last + 1, PLAIN_WINDOW_LINES):
            end = min(start + PLAIN_WINDOW_LINES - 1, last)
            if not _is_blank(lines, start, end):
                spans.append((None, [], start, end))
    else:
        body_text = "\n".join(lines)
        structure = parse_structure(body_text)
        inline = inline_tags(body_text, 1, structure.code_ranges)
        parsed.headings, paths = _heading_rows(rel, structure.headings)
        heads = structure.headings
        lead_end = heads[0].line - 1 if heads else last
        if lead_end >= first and not _is_blank(lines, first, lead_end):
            spans.append((None, [], first, lead_end))
        for idx, h in enumerate(heads):
            end = heads[idx + 1].line - 1 if idx + 1 < len(heads) else last
            # Two headings can share a line (a list item holding a heading in a heading); the
            # chunk then spans just that line.
            spans.append((idx + 1, paths[idx], h.line, max(end, h.line)))
        parsed.links = extract_links(rel, body_lines, first, structure.code_ranges)
        if structure.items and "[" in body_text:
            parsed.tasks = task_rows(
                rel, lines, structure.items, [(h.line, paths[i]) for i, h in enumerate(heads)]
            )
    _query_tags(parsed, inline)
    parsed.chunks = _chunk_rows(rel, spans, lines)
    _tokenize_chunks(parsed.chunks, parsed.chunk_tokens)
    note["heading_count"] = len(parsed.headings)
    note["chunk_count"] = len(parsed.chunks)
    return parsed


def parse_note(rel: str, raw: bytes, mtime_ns: int, size: int, ctime_ns: int | None = None) -> ParsedNote:
    """Parse one note's raw bytes into NOTES/HEADINGS/CHUNKS/TERMS/LINKS/PROPS/TAGS/TASKS rows
    (`ctime_ns`: the file's birth time, indexer/birthtime.py; default its mtime).

    Raises:
        nothing: an unexpected failure yields a bare note row flagged `parse_error`.
    """
    try:
        return _parse(rel, raw, mtime_ns, size, ctime_ns)
    except Exception:  # last resort so one bad file never stops a build; no text is logged
        note = _base_note(rel, raw, mtime_ns, size, ctime_ns)
        note["flags"] = ["parse_error"]
        return ParsedNote(note=note)
