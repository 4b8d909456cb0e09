"""What gets embedded: per note, one note passage plus up to MAX_SECTIONS section passages.

- The note passage: title, distinct heading texts, then the body, cut at NOTE_CHARS: what
  the note is about as a whole (it answers questions about the note's topic).
- Section passages: one per chunk (heading-bounded section) in document order, each
  prefixed with "title › heading path" and cut at SECTION_CHARS: a question about a detail
  deep in a long note matches the section that says it, not a long average of the note.
A note's semantic score is its best passage (max-sim), and a hit points at that passage's
chunk. Why this granularity, measured on ops/bench/paraphrase-dev.json with
ops/bench/bench_granularity.py: see docs/retrieval.md. The caps bound the cost: embedding
time grows with the characters embedded (the model is a convolution over tokens), and
memory with the number of vectors (vectors.py: 516 bytes each plus the sketch).

A passage is keyed by the sha256 of its text: an unchanged passage is never embedded
again, across commits, moves between segments and compaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

NOTE_CHARS = 1_200
HEADINGS_CHARS = 300
SECTION_CHARS = 400
MAX_SECTIONS = 0
PASSAGE_CHARS = NOTE_CHARS  # kept for callers of the one-passage era

__all__ = [
    "MAX_SECTIONS",
    "NOTE_CHARS",
    "PASSAGE_CHARS",
    "SECTION_CHARS",
    "Passage",
    "build_passage",
    "passages_from_chunks",
    "section_passage",
    "text_sha",
]


@dataclass(frozen=True)
class Passage:
    path: str
    chunk_ordinal: int  # the chunk the passage starts at: where a semantic hit points
    text: str
    text_sha: str


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def build_passage(
    title: str | None, heading_paths: Iterable[Sequence[str] | None], bodies: Iterable[str]
) -> str:
    """The note passage: title, distinct heading texts (document order), then body text;
    whitespace folded; cut at NOTE_CHARS."""
    heads: dict[str, None] = {}
    for hp in heading_paths:
        if hp:
            heads[hp[-1]] = None
    head_text = " · ".join(h for h in heads if h and h != title)[:HEADINGS_CHARS]
    body = " ".join(" ".join(b.split()) for b in bodies if b)
    parts = [p for p in (title or "", head_text, body) if p]
    return "\n".join(parts)[:NOTE_CHARS]


def section_passage(title: str | None, heading_path: Sequence[str] | None, text: str) -> str:
    """'title › heading › subheading', then the section's text; cut at SECTION_CHARS
    ('' when the section has no text of its own)."""
    body = " ".join(text.split())
    if not body:
        return ""
    heads = [h for h in (heading_path or []) if h and h != title]
    prefix = " › ".join([t for t in (title or "",) if t] + heads)
    return (f"{prefix}\n{body}" if prefix else body)[:SECTION_CHARS]


def passages_from_chunks(
    paths: Sequence[str],
    ordinals: Sequence[int],
    heading_paths: Sequence[Sequence[str] | None],
    texts: Sequence[str | None],
    titles: dict[str, str | None],
    max_sections: int = MAX_SECTIONS,
) -> list[Passage]:
    """Passages of every note from chunk columns sorted by (path, ordinal)."""
    out: list[Passage] = []
    i, n = 0, len(paths)
    while i < n:
        path = paths[i]
        j = i
        while j < n and paths[j] == path:
            j += 1
        title = titles.get(path)
        bodies: list[str] = []
        body_len = 0
        for t in texts[i:j]:
            if body_len >= NOTE_CHARS:  # later chunks cannot reach the note passage
                break
            bodies.append(t or "")
            body_len += len(t or "")
        note_text = build_passage(title, heading_paths[i:j], bodies)
        seen: set[str] = set()
        if note_text.strip():
            out.append(Passage(path, int(ordinals[i]), note_text, text_sha(note_text)))
            seen.add(note_text)
        sections = 0
        for k in range(i, j):
            if sections >= max_sections:
                break
            text = section_passage(title, heading_paths[k], texts[k] or "")
            if not text or text in seen or note_text.startswith(text):
                continue  # nothing the note passage does not already say
            seen.add(text)
            out.append(Passage(path, int(ordinals[k]), text, text_sha(text)))
            sections += 1
        i = j
    return out
