"""Does the query name the lexical list's first note? The switch of adaptive fusion.

A query that names a note (its title or file name, or a query holding that name) is
answered best by the engine's fielded match: hybrid keeps the lexical first hit first.
A query that describes a note in other words shares few tokens with any note's name, and
there the lexical first hit is often a note that merely shares common words; the model's
ranking deserves the larger say (fusion.fuse_adaptive).

`name_overlap` is the share of the note name's tokens found in the query, or of the
query's tokens found in the name, whichever is larger (tokens as the engine makes them:
words, CJK bigrams). Cheap: the lexical hit's title comes with the engine's stored detail.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from vault_agent.text import tokenize

# Measured on ops/bench/paraphrase-dev.json, confirmed on paraphrase-holdout.json
# (bench_granularity.py; docs/retrieval.md): "both at least half" and "name ≥ 2/3, query
# ≥ 1/3" tie; a single share (either one ≥ 1/2) loses title-as-query or paraphrase r@1.
NAME_SHARE = 0.5
QUERY_SHARE = 0.5

__all__ = ["NAME_SHARE", "QUERY_SHARE", "name_overlap", "names_note"]


def name_overlap(query_terms: list[str], title: str | None, path: str) -> tuple[float, float]:
    """(name share, query share): how much of the note's name the query holds (the
    larger of its title's and its file stem's share: "eip-1052" must not dilute
    "EXTCODEHASH opcode"), and how much of the query is made of name tokens."""
    q = set(query_terms)
    if not q:
        return 0.0, 0.0
    names = [set(tokenize(title or "")), set(tokenize(PurePosixPath(path).stem))]
    name_share = max((len(q & n) / len(n) for n in names if n), default=0.0)
    return name_share, len(q & (names[0] | names[1])) / len(q)


def names_note(query_terms: list[str], title: str | None, path: str) -> bool:
    """Whether the query names this note: it holds at least half of the note's name and
    at least half of it is name tokens ("Recurring Tasks", "recurring tasks setup"; not
    "how do I fill in a to-do's dates ..." against a note titled "Dates")."""
    name_share, query_share = name_overlap(query_terms, title, path)
    return name_share >= NAME_SHARE and query_share >= QUERY_SHARE
