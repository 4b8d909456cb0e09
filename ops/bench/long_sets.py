"""A dev set with LONG notes (`dev-long`), built from the dev sets' own vaults and questions.

    nice .venv/bin/python ops/bench/bench_retrieval.py --lab dev-long --work W --model e5 \
        --shape w128x2     # retrieval_lab.load_group builds it: W/long/<vault>/, W/long/stats.json

Why: the public yardstick's notes (LoCoMo's conversation sessions) run to thousands of tokens
while the dev vaults' notes are mostly short, so a passage shape chosen on dev never saw a
question whose answer sits deep in a long note. Nothing public with long notes and
retrieval judgements reaches this machine besides LoCoMo and XQuAD (the yardstick, never
chosen on) and the held-out set; so the long notes are made from dev material: each dev
vault's notes in path order (neighbours share a folder and a topic, as a conversation's
sessions or a journal's days do) are joined into long notes of 1, 2, 4 or 10 notes in
turn (at most GROUP_CHARS characters; at most MAX_QUERIES questions a vault), frontmatter dropped, each part's text as it was
(its headings included), under a neutral title (`long/<folder>/part-0042.md`). The dev
questions of those vaults (every class but `title` and `name`: the original title is no
longer a note's name) keep their class; a target becomes the long note holding it. A
long vault keeps every long note holding a target and, in path order, every other one
until VAULT_CHARS characters (long distractors), and as short distractors up to MAX_SHORT
of the other notes of at most SHORT_CHARS characters, left alone (`short/<path>`): a
vault of short notes and some long ones, and embedding every window stays a few CPU-minutes. Deterministic; nothing fetched (the dev vaults are already in the work dir).
Nothing of it is committed: it is derived from the corpora at run time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

GROUP_SIZES = (1, 2, 4, 10)  # notes joined into one, in turn: short and long notes mixed
GROUP_CHARS = 20_000  # a long note's text at most (~5k tokens of English)
VAULT_CHARS = 400_000  # a long vault's text at most (targets' notes always kept)
SHORT_CHARS = 1_500  # a note left alone as a short distractor at most (~2 windows)
MAX_SHORT = 300  # short distractors a vault at most (every n-th of those that qualify)
MAX_QUERIES = 40  # a vault's questions at most (every n-th kept): bounds the targets' text
DROP_KINDS = ("title", "name")
FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)

__all__ = ["long_set"]


def _groups(paths: list[str], texts: dict[str, str]) -> list[list[str]]:
    """Consecutive notes (path order) in groups of GROUP_SIZES in turn, at most GROUP_CHARS."""
    out: list[list[str]] = []
    i = 0
    while i < len(paths):
        size = GROUP_SIZES[len(out) % len(GROUP_SIZES)]
        group = [paths[i]]
        total = len(texts[paths[i]])
        i += 1
        while len(group) < size and i < len(paths) and total + len(texts[paths[i]]) <= GROUP_CHARS:
            group.append(paths[i])
            total += len(texts[paths[i]])
            i += 1
        out.append(group)
    return out


def _long_vault(
    name: str, vault: Path, sets: list[dict[str, Any]], dest: Path
) -> tuple[dict[str, Any], dict[str, int]]:
    """The long vault of one dev vault (written under dest) and its query set."""
    files = sorted(p for p in vault.rglob("*.md") if p.is_file())
    paths = [p.relative_to(vault).as_posix() for p in files]
    texts = {
        rel: FRONTMATTER.sub("", f.read_text(encoding="utf-8", errors="replace")).strip()
        for rel, f in zip(paths, files, strict=True)
    }
    groups = _groups(paths, texts)
    long_of: dict[str, str] = {}
    names: list[str] = []
    for n, group in enumerate(groups):
        folder = group[0].rsplit("/", 1)[0] if "/" in group[0] else "root"
        names.append(f"long/{folder}/part-{n:04d}.md")
        long_of.update({p: names[-1] for p in group})
    queries: list[dict[str, Any]] = []
    for s in sets:
        for q in s["queries"]:
            if q.get("kind", "paraphrase") in DROP_KINDS:
                continue
            targets = sorted({long_of[t] for t in q.get("targets", []) if t in long_of})
            if q.get("kind") != "nonsense" and not targets:
                continue
            queries.append({**q, "targets": targets})
    queries = queries[:: -(-len(queries) // MAX_QUERIES)] if queries else queries
    wanted = {t for q in queries for t in q["targets"]}
    total = sum(len(texts[p]) for n, g in enumerate(groups) if names[n] in wanted for p in g)
    keep = set(wanted)
    for n, group in enumerate(groups):
        size = sum(len(texts[p]) for p in group)
        if names[n] not in keep and total + size <= VAULT_CHARS:
            keep.add(names[n])
            total += size
    short = [
        p for n, g in enumerate(groups) if names[n] not in keep for p in g if 0 < len(texts[p]) <= SHORT_CHARS
    ]
    short = short[:: -(-len(short) // MAX_SHORT)] if short else short
    if not dest.exists():
        tmp = dest.with_name(dest.name + ".tmp")
        notes = {names[n]: "\n\n".join(texts[p] for p in g) for n, g in enumerate(groups) if names[n] in keep}
        notes |= {f"short/{p}": texts[p] for p in short}
        for rel, text in notes.items():
            out = tmp / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text + "\n", encoding="utf-8")
        tmp.rename(dest)
    lengths = sorted(sum(len(texts[p]) for p in g) for n, g in enumerate(groups) if names[n] in keep)
    stats = {
        "notes": len(keep),
        "short": len(short),
        "chars": total,
        "median_chars": lengths[len(lengths) // 2] if lengths else 0,
    }
    return {"vault": f"path:{dest}", "queries": queries, "source": name}, stats


def long_set(work: Path, dev_sets: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """`{"sets": [...]}`: one long vault per dev vault (dev_sets: retrieval_lab.load_group's
    pairs of the dev groups; their vaults resolved by bench_vaults.vault_path)."""
    from bench_vaults import vault_key, vault_path

    by_vault: dict[str, list[dict[str, Any]]] = {}
    specs: dict[str, dict[str, Any]] = {}
    for _, s in dev_sets:
        key = vault_key(s)
        by_vault.setdefault(key, []).append(s)
        specs.setdefault(key, s)
    out: list[dict[str, Any]] = []
    stats: dict[str, Any] = {}
    for key in sorted(by_vault):
        vault = vault_path(specs[key], work)
        s, st = _long_vault(key, vault, by_vault[key], work / "long" / key)
        if s["queries"]:
            out.append(s)
            stats[key] = st | {"queries": len(s["queries"])}
    (work / "long").mkdir(parents=True, exist_ok=True)
    (work / "long" / "stats.json").write_text(json.dumps(stats, indent=1))
    return {"sets": out}
