"""What gets embedded: per note, windows of its text in the model's own tokens.

A note's text is its title, its distinct heading texts (document order, at most
HEADINGS_CHARS characters), then its body, whitespace folded. It is cut into consecutive
windows of PASSAGE_TOKENS tokens of the model that embeds it (the encoder's `truncate`:
prefix and special tokens included), and its first WINDOWS windows are embedded (a layout
may pick others: `note_windows`, the lab's shapes). Each window after the first is headed
by the title; a note scores its best window (max-sim), and a semantic hit points at the
chunk its window starts in. The cut is in tokens, not characters: the same thousand
characters are ~250 tokens of English and 600-900 of Chinese or Japanese, so a character
cap either starves Latin notes or makes CJK notes cost three times as much.

Why the opening and not windows spread through a long note: measured by quality per
CPU-second on the dev sets and on `dev-long`, a dev set of long notes (bench_retrieval.py
--lab dev,dev-extra,dev-long --shape ...; docs/retrieval.md "Passage shape"). The first and
last window (same cost) win on dev-long (shipped r@5 0.863 -> 0.888) but lose on the dev
sets' natural notes, whose openings say what they are about (dev paraphrase 0.714 -> 0.571)
and on the public set; more windows cost CPU on every note of ~1,000 tokens.

A passage is keyed by the sha256 of its text: an unchanged passage is never embedded
again, across commits, moves between segments and compaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vault_agent.semantic.encoder import load_encoder

PASSAGE_TOKENS = 128
WINDOWS = 2  # a note's windows: the first two
HEADINGS_CHARS = 300
# Characters a window's cut reads (no script averages more than 12 characters a token).
CHARS_PER_TOKEN_MAX = 12
MAX_SECTIONS = WINDOWS - 1  # passages a note has besides its opening (semantic.query reads it)
READ_CHARS = WINDOWS * PASSAGE_TOKENS * CHARS_PER_TOKEN_MAX  # a note's text its passages can read

Cut = Callable[[str, int], str]  # (text, max tokens) → its longest start within them

__all__ = [
    "HEADINGS_CHARS",
    "MAX_SECTIONS",
    "PASSAGE_TOKENS",
    "READ_CHARS",
    "Cut",
    "WINDOWS",
    "Layout",
    "Passage",
    "first_windows",
    "note_windows",
    "passages_from_chunks",
    "spread",
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


def _model_cut() -> Cut:
    """The loaded model's token cut; without a model, a cut at four characters a token
    (nothing is embedded then, but the passages stay defined)."""
    encoder = load_encoder()
    if encoder is not None:
        return encoder.truncate
    return lambda text, tokens: text[: 4 * tokens]


def _note_text(
    title: str | None, heading_paths: Sequence[Sequence[str] | None], bodies: Sequence[str]
) -> tuple[str, list[int]]:
    """The note's text as its passages read it (title, distinct heading texts at most
    HEADINGS_CHARS, then the body, whitespace folded) and where each body starts in it."""
    heads: dict[str, None] = {}
    for hp in heading_paths:
        if hp:
            heads[hp[-1]] = None
    head_text = " · ".join(h for h in heads if h and h != title)[:HEADINGS_CHARS]
    lead = "\n".join(p for p in (title or "", head_text) if p)
    starts: list[int] = []
    at = len(lead) + 1 if lead else 0
    folded = []
    for b in bodies:
        starts.append(at)
        if b:
            folded.append(" ".join(b.split()))
            at += len(folded[-1]) + 1
    body = " ".join(folded)
    return "\n".join(p for p in (lead, body) if p), starts


def spread(total: int, count: int) -> list[int]:
    """`count` indices of `total` windows, evenly through the note, first and last included."""
    if count >= total:
        return list(range(total))
    if count <= 1:
        return [0][:count]
    return sorted({round(k * (total - 1) / (count - 1)) for k in range(count)})


Layout = Callable[[int], list[int]]  # a note's number of windows → the ones embedded


def first_windows(windows: int) -> Layout:
    """The opening `windows` windows of a note."""
    return lambda total: list(range(min(total, windows)))


def note_windows(
    title: str | None,
    heading_paths: Sequence[Sequence[str] | None],
    bodies: Sequence[str],
    cut: Cut,
    tokens: int = PASSAGE_TOKENS,
    layout: Layout | None = None,
    read_chars: int | None = None,
) -> list[tuple[int, str]]:
    """(body index where it starts, text) of a note's windows: its text (at most
    `read_chars`, default READ_CHARS) in consecutive windows of `tokens` tokens, each after
    the first headed by the title, those `layout` picks (default: the first WINDOWS); none
    for a note without text."""
    layout = layout or first_windows(WINDOWS)
    text, starts = _note_text(title, heading_paths, bodies)
    rest = text[: READ_CHARS if read_chars is None else read_chars]
    at = 0
    cuts: list[tuple[int, str]] = []  # (where the window starts in `text`, its text)
    while rest.strip():
        # a window never needs more than tokens * CHARS_PER_TOKEN_MAX characters; twice that
        # keeps the product's two windows exactly what cutting the whole opening gave
        window = cut(rest[: 2 * tokens * CHARS_PER_TOKEN_MAX], tokens)
        if not window.strip():
            break
        cuts.append((at, window))
        rest, at = rest[len(window) :], at + len(window)
    out: list[tuple[int, str]] = []
    for i in layout(len(cuts)):
        at, window = cuts[i]
        where = max((k for k, s in enumerate(starts) if s <= at), default=0)
        out.append((where, window if i == 0 else f"{title or ''}\n{window}".strip()))
    return out


def passages_from_chunks(
    paths: Sequence[str],
    ordinals: Sequence[int],
    heading_paths: Sequence[Sequence[str] | None],
    texts: Sequence[str | None],
    titles: dict[str, str | None],
    cut: Cut | None = None,
) -> list[Passage]:
    """The passages of every note from chunk columns sorted by (path, ordinal), each
    pointing at the chunk its window starts in; `cut`: the model's token cut (None: the
    loaded encoder's)."""
    cut = cut or _model_cut()
    out: list[Passage] = []
    i, n = 0, len(paths)
    while i < n:
        path = paths[i]
        j = i
        while j < n and paths[j] == path:
            j += 1
        bodies: list[str] = []
        body_len = 0
        for t in texts[i:j]:
            if body_len >= READ_CHARS:  # later chunks cannot reach the last window
                break
            bodies.append(t or "")
            body_len += len(t or "")
        for where, text in note_windows(titles.get(path), heading_paths[i:j], bodies, cut):
            out.append(Passage(path, int(ordinals[i + where]), text, text_sha(text)))
        i = j
    return out
