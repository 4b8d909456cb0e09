"""The mechanical classes of the issue-22 query sets: exact rare terms, titles, nonsense.

    .venv/bin/python ops/bench/holdout_gen.py --work /tmp/bench-holdout [--out mech.json]

Deterministic (sha256 order, fixed seed): the same vaults give the same queries, so
`ops/bench/holdout3.json` (held-out) and `ops/bench/dev3.json` (its dev split) can be
regenerated and compared. For each vault of the two files (`--sets`), the lexical index is
built into --work and every note's indexed text (chunk text, heading paths, title, path)
is tokenized like the engine (`text.tokenize`). Then:
- `rare`: a word of at least 6 letters (no digits, not CJK) that occurs in exactly one
  note, and no other note has a word with the same first five letters (the issue's
  measure); words seen only inside URLs are not chosen. Japanese vaults also give katakana
  words of at least 4 characters that occur in one note only. Target: that note.
- `title`: a note's title (frontmatter `title`, else the file stem) that no other note
  shares (casefold), at least 4 characters, not a generic file name (README, index, …).
- `nonsense`: made-up words (consonant-vowel syllables, seeded) that no vault holds, that
  share no five-letter prefix with any word of any vault, and that are at least 3 edits
  from every name token (the engine matches unknown words against names within 1–2
  edits); plus CJK strings whose character bigrams no vault holds. Targets: none.
Candidates are ordered by sha256(vault, query); the first N go to the held-out split and
the next M to the dev split, so the two never share a query or a rare-term note.

--smoke: the vaults are two synthetic fixtures of this repository (fixtures/semantic,
fixtures/query) instead of the sets' corpora; a throw-away work dir.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import benchkit
import pyarrow.parquet as pq
from bench_vaults import vault_key, vault_path

from vault_agent.config import Settings
from vault_agent.freshness import read_current_manifest
from vault_agent.indexer.build import build_index
from vault_agent.text import tokenize

REPO = benchkit.REPO
SMOKE_SETS = "smoke"  # --smoke's --sets: synthetic fixtures, no shared corpus

URL_RE = re.compile(r"https?://\S+|\]\([^)]*\)|<[^>]+>")
KATAKANA_RE = re.compile(r"[ァ-ヺー]{4,}")
GENERIC_STEMS = {
    "readme",
    "index",
    "outline",
    "notes",
    "changelog",
    "license",
    "contributing",
    "template",
    "untitled",
}
CJK_NONSENSE_CHARS = "犇猋骉麤鱻羴赑掱垚焱淼森嚞譶鑫贔飍龘靐齉爩鬱灪驫龖"
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["qua", "zor", "vex", "plo", "gri", "thu"]


def _hash(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def note_texts(
    settings: Settings,
) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]], dict[str, str]]:
    """(full indexed text, title, aliases, first top-level heading) per note of the built index."""
    index_dir = Path(settings.index_dir)
    manifest = read_current_manifest(index_dir)
    assert manifest is not None
    texts: dict[str, list[str]] = defaultdict(list)
    titles: dict[str, str] = {}
    aliases: dict[str, list[str]] = {}
    h1: dict[str, str] = {}
    newer: set[str] = set()
    for seg in sorted(manifest.segments, key=lambda s: s.segment_id, reverse=True):
        base = index_dir / "segments"
        notes = pq.read_table(base / seg.files["notes"], columns=["path", "title", "aliases"]).to_pylist()
        held = {n["path"] for n in notes}
        dead = set(seg.deleted) | newer
        for n in notes:
            if n["path"] not in dead:
                titles[n["path"]] = n["title"] or Path(n["path"]).stem
                aliases[n["path"]] = list(n["aliases"] or [])
        chunks = pq.read_table(
            base / seg.files["chunks"], columns=["path", "ordinal", "heading_path", "text"]
        )
        for r in sorted(chunks.to_pylist(), key=lambda r: (r["path"], r["ordinal"])):
            if r["path"] not in dead:
                texts[r["path"]].append(" ".join(r["heading_path"] or []) + "\n" + (r["text"] or ""))
                if r["heading_path"] and r["path"] not in h1:
                    h1[r["path"]] = r["heading_path"][0]
        newer |= held
    return {p: "\n".join(texts.get(p, [])) for p in titles}, titles, aliases, h1


def rare_terms(texts: dict[str, str], titles: dict[str, str], japanese: bool) -> list[tuple[str, str]]:
    """(term, its one note) candidates."""
    notes_of: dict[str, set[str]] = defaultdict(set)
    prefix_notes: dict[str, set[str]] = defaultdict(set)
    clean_tokens: dict[str, set[str]] = {}
    for path, text in texts.items():
        full = text + "\n" + titles[path] + "\n" + path
        for tok in set(tokenize(full)):
            notes_of[tok].add(path)
            if tok.isalpha():
                prefix_notes[tok[:5]].add(path)
        clean_tokens[path] = set(tokenize(URL_RE.sub(" ", text)))
    out: list[tuple[str, str]] = []
    for tok, notes in notes_of.items():
        if (
            len(notes) != 1
            or len(tok) < 6
            or len(set(tok)) < 4
            or not tok.isalpha()
            or (not tok.isascii() and not _latin(tok))
        ):
            continue
        (path,) = notes
        if prefix_notes[tok[:5]] != {path} or tok not in clean_tokens[path]:
            continue
        out.append((tok, path))
    if japanese:
        runs: dict[str, set[str]] = defaultdict(set)
        for path, text in texts.items():
            for run in set(KATAKANA_RE.findall(URL_RE.sub(" ", text))):
                runs[run].add(path)
        everything = "\n".join(texts.values())
        for run, notes in runs.items():
            if len(notes) == 1 and everything.count(run) == sum(texts[p].count(run) for p in notes):
                out.append((run, next(iter(notes))))
    return out


def _latin(tok: str) -> bool:
    return all("a" <= c <= "z" or "\u00c0" <= c <= "\u024f" for c in tok)


def heading_titles(h1: dict[str, str]) -> dict[str, str]:
    """Titles as the reader sees them where file names say nothing (README.md, issue-200.md):
    the first top-level heading, without a series prefix ("Weekly (No. 200): topic" ->
    "topic") and without an `{#anchor}`."""
    out = {}
    for path, head in h1.items():
        head = re.sub(r"\s*\{#[^}]*\}\s*$", "", head).strip()
        tail = re.split(r"[：:]", head)[-1].strip()
        out[path] = tail if len(tail) >= 4 else head
    return out


def unique_titles(titles: dict[str, str], by_stem: bool) -> list[tuple[str, str]]:
    count: dict[str, int] = defaultdict(int)
    for t in titles.values():
        count[t.casefold().strip()] += 1
    return [
        (t, p)
        for p, t in titles.items()
        if count[t.casefold().strip()] == 1
        and len(t.strip()) >= 4
        and not (by_stem and Path(p).stem.casefold() in GENERIC_STEMS)
    ]


def _edits_at_most(a: str, b: str, k: int) -> bool:
    if abs(len(a) - len(b)) > k:
        return False
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        if min(cur) > k:
            return False
        prev = cur
    return prev[-1] <= k


def nonsense(
    count: int, vocab: set[str], prefixes: set[str], names: set[str], bigrams: set[str], seed: int
) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []

    def ok(word: str) -> bool:
        return (
            word not in vocab
            and word[:5] not in prefixes
            and not any(_edits_at_most(word, n, 2) for n in names if abs(len(n) - len(word)) <= 2)
        )

    while len(out) < count:
        if len(out) % 6 == 5:  # a CJK one every sixth
            s = "".join(rng.choice(CJK_NONSENSE_CHARS) for _ in range(rng.randint(3, 4)))
            if all(s[i : i + 2] not in bigrams for i in range(len(s) - 1)) and s not in out:
                out.append(s)
            continue
        words = []
        for _ in range(rng.choice((1, 1, 2, 2, 3))):
            w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(3, 4)))
            if ok(w):
                words.append(w)
        if words and " ".join(words) not in out:
            out.append(" ".join(words))
    return out


def set_vaults(sets: str) -> dict[str, dict[str, Any]]:
    """The first set of each vault the set files (comma-separated, repo-relative) name."""
    if sets == SMOKE_SETS:
        return {spec: {"vault": spec} for spec in ("repo:fixtures/semantic", "repo:fixtures/query")}
    vaults: dict[str, dict[str, Any]] = {}
    for f in sets.split(","):
        for s in json.loads((REPO / f).read_text())["sets"]:
            vaults.setdefault(s["vault"], s)
    return vaults


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-holdout",
                    help="keeps the vaults' indexes between runs")  # fmt: skip
    ap.add_argument("--sets", default="ops/bench/holdout3.json,ops/bench/dev3.json")
    ap.add_argument("--rare", type=int, default=20, help="rare terms per vault and split")
    ap.add_argument("--titles", type=int, default=10, help="titles per vault and split")
    ap.add_argument("--nonsense", type=int, default=24, help="nonsense queries per split")
    ap.add_argument("--out", default="")
    args = benchkit.parse(ap, smoke={"sets": SMOKE_SETS, "work": None, "rare": 3, "titles": 2, "nonsense": 4})
    with benchkit.workdir("bench-holdout", keep=args.work) as work:
        _generate(args, work)


def _generate(args: argparse.Namespace, work: Path) -> None:
    vaults = set_vaults(args.sets)
    splits: dict[str, dict[str, list[dict[str, Any]]]] = {"holdout": {}, "dev": {}}
    vocab: set[str] = set()
    prefixes: set[str] = set()
    names: set[str] = set()
    bigrams: set[str] = set()
    for spec, s in vaults.items():
        settings = Settings(vault=vault_path(s, work), index_dir=work / "gen-states" / vault_key(s))
        if not (Path(settings.index_dir) / "CURRENT").exists():
            build_index(settings, full=True)
        texts, titles, aliases, h1 = note_texts(settings)
        for path, text in texts.items():
            toks = tokenize(text + "\n" + titles[path] + "\n" + path)
            vocab.update(toks)
            prefixes.update(t[:5] for t in toks if t.isalpha())
            names.update(tokenize(" ".join([titles[path], path, *aliases[path]])))
            bigrams.update(t for t in toks if len(t) == 2)
        japanese = s.get("lang") == "ja" or "japanese" in s.get("about", "").casefold()
        rare = sorted(rare_terms(texts, titles, japanese), key=lambda tp: _hash(spec, "rare", tp[0]))
        by_heading = s.get("titles") == "h1"
        shown = heading_titles(h1) if by_heading else titles
        tits = sorted(unique_titles(shown, not by_heading), key=lambda tp: _hash(spec, "title", tp[0]))
        used: set[str] = set()
        for split, start in (("holdout", 0), ("dev", 1)):
            qs = splits[split].setdefault(spec, [])
            picked = 0
            for term, path in rare[start::2]:
                if picked >= args.rare or path in used:
                    continue
                used.add(path)
                qs.append({"q": term, "targets": [path], "kind": "rare", "gen": "mech"})
                picked += 1
            qs += [
                {"q": t, "targets": [p], "kind": "title", "gen": "mech"}
                for t, p in tits[start::2][: args.titles]
            ]
        print(
            f"{spec}: {len(texts)} notes, {len(rare)} rare-term candidates, {len(tits)} unique titles",
            file=sys.stderr,
        )
    specs = list(vaults)
    for split, seed in (("holdout", 22), ("dev", 2222)):
        made = nonsense(args.nonsense, vocab, prefixes, names, bigrams, seed)
        random.Random(seed).shuffle(made)  # the CJK ones spread over the vaults
        for i, q in enumerate(made):
            splits[split][specs[i % len(specs)]].append(
                {"q": q, "targets": [], "kind": "nonsense", "gen": "mech"}
            )
    text = json.dumps(splits, indent=1, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)


if __name__ == "__main__":
    main()
