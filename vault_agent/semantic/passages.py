"""What gets embedded: one passage per note, built from its chunk rows.

Granularity (measured in ops/bench/bench_semantic.py, see docs/retrieval.md): one vector
per note — its title, its distinct heading texts, then its body, cut at PASSAGE_CHARS.
Per chunk was no better on the dev set's paraphrase questions and costs ~8x the vectors
(a 100k-note vault has ~800k chunks: 1.6 GB of float32 vectors, over the 1 GiB budget of
`serve`), and the embedding time of the whole body grows with the note while the opening,
the title and the headings carry what a note is about.

A passage is keyed by the sha256 of its text: an unchanged note (same passage text) is
never embedded again, across commits, moves between segments and compaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PASSAGE_CHARS = 1_200
HEADINGS_CHARS = 300

__all__ = ["PASSAGE_CHARS", "Passage", "build_passage", "passages_from_chunks", "text_sha"]


@dataclass(frozen=True)
class Passage:
    path: str
    chunk_ordinal: int  # the note's first chunk: where a semantic hit points
    text: str
    text_sha: str


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def build_passage(title: str | None, heading_paths: Iterable[Sequence[str] | None], bodies: Iterable[str]) -> str:
    """Title, distinct heading texts (document order), then body text; whitespace folded."""
    heads: dict[str, None] = {}
    for hp in heading_paths:
        if hp:
            heads[hp[-1]] = None
    head_text = " · ".join(h for h in heads if h and h != title)[:HEADINGS_CHARS]
    body = " ".join(" ".join(b.split()) for b in bodies if b)
    parts = [p for p in (title or "", head_text, body) if p]
    return "\n".join(parts)[:PASSAGE_CHARS]


def passages_from_chunks(
    paths: Sequence[str],
    ordinals: Sequence[int],
    heading_paths: Sequence[Sequence[str] | None],
    texts: Sequence[str | None],
    titles: dict[str, str | None],
) -> list[Passage]:
    """One passage per note from chunk columns sorted by (path, ordinal)."""
    out: list[Passage] = []
    i, n = 0, len(paths)
    while i < n:
        path = paths[i]
        j = i
        body_len = 0
        bodies: list[str] = []
        while j < n and paths[j] == path:
            if body_len < PASSAGE_CHARS:  # later chunks cannot reach the passage
                t = texts[j] or ""
                bodies.append(t)
                body_len += len(t)
            j += 1
        text = build_passage(titles.get(path), heading_paths[i:j], bodies)
        if text.strip():
            out.append(Passage(path, int(ordinals[i]), text, text_sha(text)))
        i = j
    return out
