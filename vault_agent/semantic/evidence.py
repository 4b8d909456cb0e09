"""What a query's own words say about the notes: does it name the lexical first note, does
it quote a phrase, hold a CJK word, or type a keyword exactly? The evidence behind
fusion's pins (query.search_modes) and vault_find's agreed lead.

A query that names a note (its title, file name or top heading) is answered best by the
engine's fielded match: that note goes first. A keyword query typed in a form the
stemmer widens ("tagged" also matches "tags") is answered by the hit holding the form as
typed.

`name_overlap` is the share of the note name's tokens found in the query, or of the
query's tokens found in the name, whichever is larger (tokens as the engine makes them:
words, CJK bigrams). Cheap: the lexical hit's title and text come with the engine's
stored detail; document frequencies are the engine's own (a dictionary look-up).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath

from vault_agent.search_fields import analyze_terms
from vault_agent.text import tokenize

# Measured on ops/bench/paraphrase-dev.json, confirmed on paraphrase-holdout.json
# (issue 11's bench_granularity.py; docs/benchmarks.md): "both at least half" and "name ≥ 2/3, query
# ≥ 1/3" tie; a single share (either one ≥ 1/2) loses title-as-query or paraphrase r@1.
NAME_SHARE = 0.5
QUERY_SHARE = 0.5
# A word typed exactly that at most this many lexical hits hold picks the first of them
# (exact_lead; chosen on the dev sets of issue 22, kept by issue 29's measurement).
RARE_MAX_NOTES = 3
# A query of fewer words is a keyword or a name, not a description (a CJK run counts one
# word per three characters): only then does a word typed exactly lead.
DESCRIBED_MIN_WORDS = 4
CJK_CHARS = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
CJK_RUN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]{3,}")
ANCHOR_RE = re.compile(r"\{#[^}]*\}")
QUOTE_RE = re.compile(r"\"([^\"]+)\"|“([^”]+)”|「([^」]+)」|『([^』]+)』")

__all__ = [
    "NAME_SHARE",
    "QUERY_SHARE",
    "DESCRIBED_MIN_WORDS",
    "RARE_MAX_NOTES",
    "cjk_runs",
    "exact_lead",
    "name_overlap",
    "names_note",
    "quoted_phrases",
    "word_count",
]


def word_count(query: str) -> int:
    """Words of a query: Latin-like words, and one per three characters of a CJK run (the
    engine's bigrams would count "基本文法" as three tokens)."""
    text = unicodedata.normalize("NFKC", query)
    runs = re.findall(CJK_CHARS, text)
    return len(tokenize(re.sub(CJK_CHARS, " ", text))) + sum((len(run) + 2) // 3 for run in runs)


def _names(title: str | None, path: str, heading: str | None) -> list[set[str]]:
    """Token sets of a note's names: title, file stem and, given, the top heading, whole and
    after its last colon ("第一部: 基本文法 {#basic-grammar}" → "基本文法")."""
    names = [title or "", PurePosixPath(path).stem]
    if heading:
        heading = ANCHOR_RE.sub("", heading).strip()
        names += [heading, re.split(r"[:：]", heading)[-1]]
    return [set(tokenize(n)) for n in names]


def name_overlap(
    query_terms: list[str], title: str | None, path: str, heading: str | None = None
) -> tuple[float, float]:
    """(name share, query share): how much of the note's name the query holds (the
    largest share among its title, its file stem and, given, its top heading: "eip-1052"
    must not dilute "EXTCODEHASH opcode", and a README's name is its first heading), and
    how much of the query is made of name tokens."""
    q = set(query_terms)
    if not q:
        return 0.0, 0.0
    names = _names(title, path, heading)
    name_share = max((len(q & n) / len(n) for n in names if n), default=0.0)
    return name_share, len(q & set().union(*names)) / len(q)


def names_note(query_terms: list[str], title: str | None, path: str, heading: str | None = None) -> bool:
    """Whether the query names this note: it holds at least half of the note's name and
    at least half of it is name tokens ("Recurring Tasks", "recurring tasks setup"; not
    "how do I fill in a to-do's dates ..." against a note titled "Dates")."""
    name_share, query_share = name_overlap(query_terms, title, path, heading)
    return name_share >= NAME_SHARE and query_share >= QUERY_SHARE


def quoted_phrases(query: str) -> list[str]:
    """The query's quoted phrases ("…", “…”, 「…」, 『…』), whitespace folded, casefolded."""
    out = []
    for groups in QUOTE_RE.findall(query):
        phrase = " ".join(next(g for g in groups if g).split()).casefold()
        if phrase:
            out.append(phrase)
    return out


def cjk_runs(query: str) -> list[str]:
    """The query's runs of at least three CJK characters: a word the engine splits into
    bigrams ("メタデータ" → メタ, タデ, デー, ータ), so its rarity is the run's, not a bigram's."""
    return CJK_RUN_RE.findall(query)


def exact_forms(query: str) -> list[str]:
    """The query's words as typed, where the engine's matching is looser: Latin words its
    stemmer changes ("tagged" also matches "tags") and CJK runs (matched by bigrams)."""
    text = unicodedata.normalize("NFKC", query).casefold()
    words = [w for w in tokenize(re.sub(CJK_CHARS, " ", text)) if w.isalpha() and analyze_terms([w]) != [w]]
    return words + cjk_runs(text)


def exact_lead(query: str, texts: list[str]) -> int | None:
    """For a keyword query (fewer than DESCRIBED_MIN_WORDS words): the index of the first of
    the lexical hits (`texts`: each hit's name and chunk text, in rank order) that holds one
    of the query's words exactly as typed, when at most RARE_MAX_NOTES of them do and the
    first hit does not ("tagged": the engine ranks the notes about tags first; the one note
    that says "tagged" is what was asked for). None otherwise."""
    if word_count(query) >= DESCRIBED_MIN_WORDS:
        return None
    for form in exact_forms(query):
        if CJK_RUN_RE.fullmatch(form):
            holding = [i for i, t in enumerate(texts) if form in unicodedata.normalize("NFKC", t).casefold()]
        else:
            holding = [i for i, t in enumerate(texts) if form in tokenize(t)]
        if holding and holding[0] > 0 and len(holding) <= RARE_MAX_NOTES:
            return holding[0]
    return None
