"""Text rules shared by the indexer and the query layer: slugs, tokens, NFC, titles.

Both sides must agree byte for byte (heading ids are stored, query terms are matched
against stored postings), so these functions live in the kernel and nowhere else.
"""

from __future__ import annotations

import operator
import re
import unicodedata

SLUG_MAX_CHARS = 48

# CJK scripts get character bigrams; everything else word tokens (SPEC.md "Search").
_CJK_RANGES = (
    "\u3040-\u30ff"  # hiragana, katakana (incl. prolonged sound mark)
    "\u31f0-\u31ff"  # katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\u3005\u3006\u3007"  # iteration marks, ideographic zero
)
# A word stops where CJK starts ("obsidian如何" → "obsidian", then the CJK bigrams).
_TOKEN_RE = re.compile(rf"([{_CJK_RANGES}]+)|([^\W_{_CJK_RANGES}]+(?:['’][^\W_{_CJK_RANGES}]+)*)", re.UNICODE)
_WS_RE = re.compile(r"\s+")
# Fast paths of _TOKEN_RE with identical results: without CJK characters its first group
# never matches (so the word pattern alone, findall without the per-match tuple loop), and
# on casefolded ASCII text `[^\W_]` is exactly `[0-9a-z]`.
_CJK_RE = re.compile(f"[{_CJK_RANGES}]")
_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_ASCII_WORD_RE = re.compile(r"[0-9a-z]+(?:'[0-9a-z]+)*")
_ASCII_SLUG_RE = re.compile(r"[0-9a-z]+")


def nfc(value: str) -> str:
    """Unicode NFC, the one normal form of paths and stored text."""
    return unicodedata.normalize("NFC", value)


def collapse_ws(value: str) -> str:
    """Collapse runs of whitespace to one space and trim."""
    return _WS_RE.sub(" ", value).strip()


def _is_slug_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat.startswith("L") or cat == "Nd"


def slugify(value: str) -> str:
    """Heading-id slug: NFKC, lowercase, runs of non letter/digit → '-', trimmed, ≤ 48 chars."""
    text = unicodedata.normalize("NFKC", value).lower()
    if text.isascii():  # letters/digits are [0-9a-z]: runs joined by '-', as the loop below
        slug = "-".join(_ASCII_SLUG_RE.findall(text))[:SLUG_MAX_CHARS].strip("-")
        return slug or "heading"
    out: list[str] = []
    pending_dash = False
    for ch in text:
        if _is_slug_char(ch):
            if pending_dash and out:
                out.append("-")
            pending_dash = False
            out.append(ch)
        else:
            pending_dash = True
    slug = "".join(out)[:SLUG_MAX_CHARS].strip("-")
    return slug or "heading"


def heading_id(level: int, text: str, ordinal: int) -> str:
    """`h{level}-{slug}-{ordinal:04d}`; ordinal is 1-based among all headings of the note."""
    return f"h{level}-{slugify(text)}-{ordinal:04d}"


def tokenize(text: str) -> list[str]:
    """Search tokens: NFKC + casefold; Latin-like words; CJK runs as character bigrams."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    if norm.isascii():
        return _ASCII_WORD_RE.findall(norm)
    if _CJK_RE.search(norm) is None:
        return _WORD_RE.findall(norm)
    out: list[str] = []
    append = out.append
    # findall is ~40% faster than a finditer generator; this is the parser's hot loop.
    for cjk, word in _TOKEN_RE.findall(norm):
        if word:
            append(word)
        elif len(cjk) == 1:
            append(cjk)
        else:
            out.extend(map(operator.add, cjk, cjk[1:]))  # the character bigrams, at C speed
    return out


def title_from_stem(stem: str) -> str:
    """Fallback title: the file stem with '-' and '_' turned into spaces."""
    return stem.replace("-", " ").replace("_", " ")
