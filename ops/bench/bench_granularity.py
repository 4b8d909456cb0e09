"""Choose what to embed and how to fuse: passage variants x fusion settings on our own sets.

    .venv/bin/python ops/bench/bench_granularity.py [--work /tmp/bench-granularity] [--variants a,b]

Development set: ops/bench/paraphrase-dev.json (paraphrase questions written for this
purpose, English and CJK, over the shared corpora and the CJK fixture). Guard rails, so a
variant that helps paraphrases cannot quietly hurt the other kinds of question:
title-as-query recall@1 over every note of each vault, and the keyword questions of
../shared/bench/retrieval-dev.json (its paraphrase questions are NOT used here: they are
reported only as a check by bench_retrieval.py --embed).

Each vault is indexed lexically once (into --work, outside the vault); passages of each
variant are built from the segment's chunk rows and embedded with the real model (vectors
cached by passage hash in --work, so variants share work); a note's semantic score is the
best cosine over its passages. Hybrid = vault_agent.semantic.fusion.fuse over the engine's
note-grouped lexical list. Prints JSON: recall@1/3/5/10 per set, mode, variant, fusion.
Deterministic (no timing). Not part of CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from vault_agent.freshness import read_current_manifest, vault_for_settings  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.query.search import search  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402
from vault_agent.semantic import passages as P  # noqa: E402
from vault_agent.semantic.encoder import load_encoder  # noqa: E402
from vault_agent.semantic.fusion import fuse  # noqa: E402

CUTS = (1, 3, 5, 10)
Row = tuple[str, int, list[str] | None, str]  # path, ordinal, heading path, text


def vault_dir(spec: str) -> Path:
    kind, name = spec.split(":", 1)
    return SHARED / "corpora" / name / "vault" if kind == "shared" else REPO / name


def chunk_rows(index_dir: Path) -> tuple[list[Row], dict[str, str | None]]:
    manifest = read_current_manifest(index_dir)
    assert manifest is not None
    rows: list[Row] = []
    titles: dict[str, str | None] = {}
    for seg in manifest.segments:
        base = index_dir / "segments"
        t = pq.read_table(base / seg.files["chunks"], columns=["path", "ordinal", "heading_path", "text"]).to_pylist()
        rows += [(r["path"], r["ordinal"], r["heading_path"], r["text"] or "") for r in t if r["path"] not in seg.deleted]
        n = pq.read_table(base / seg.files["notes"], columns=["path", "title"]).to_pylist()
        titles.update({r["path"]: r["title"] for r in n})
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows, titles


# ----- passage variants: (path, ordinal, text) per note -------------------------------
def by_note(rows: list[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(r)
    return out


def v_note(chars: int) -> Callable[[list[Row], dict[str, str | None]], list[tuple[str, int, str]]]:
    def build(rows: list[Row], titles: dict[str, str | None]) -> list[tuple[str, int, str]]:
        out = []
        for path, rs in by_note(rows).items():
            text = P.build_passage(titles.get(path), [r[2] for r in rs], [r[3] for r in rs])[:chars]
            out.append((path, rs[0][1], text))
        return out

    return build


def v_sections(chars: int, max_per_note: int, budget: int, with_note: int = 0) -> Callable[..., list[tuple[str, int, str]]]:
    """One passage per chunk: 'title › heading path' then the chunk text, cut at `chars`;
    at most `max_per_note` passages and `budget` characters per note; optionally the
    note passage (`with_note` chars) too."""

    def build(rows: list[Row], titles: dict[str, str | None]) -> list[tuple[str, int, str]]:
        out = []
        for path, rs in by_note(rows).items():
            title = titles.get(path) or Path(path).stem
            if with_note:
                out.append((path, rs[0][1], P.build_passage(title, [r[2] for r in rs], [r[3] for r in rs])[:with_note]))
            used = 0
            n = 0
            for _, ordinal, hp, text in rs:
                body = " ".join(text.split())
                if not body:
                    continue
                heads = [h for h in (hp or []) if h and h != title]
                prefix = " › ".join([title, *heads])
                passage = f"{prefix}\n{body}"[:chars]
                out.append((path, ordinal, passage))
                used += len(passage)
                n += 1
                if n >= max_per_note or used >= budget:
                    break
            if n == 0 and not with_note:
                out.append((path, rs[0][1], title))
        return out

    return build


def v_prod(max_sections: int, note_chars: int | None = None) -> Callable[..., list[tuple[str, int, str]]]:
    """What the product embeds (passages.passages_from_chunks), with other caps."""

    def build(rows: list[Row], titles: dict[str, str | None]) -> list[tuple[str, int, str]]:
        saved = P.NOTE_CHARS
        if note_chars is not None:
            P.NOTE_CHARS = note_chars
        try:
            ps = P.passages_from_chunks(
                [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
                {p: t or Path(p).stem for p, t in titles.items()}, max_sections=max_sections,
            )
        finally:
            P.NOTE_CHARS = saved
        return [(p.path, p.chunk_ordinal, p.text) for p in ps]

    return build


VARIANTS: dict[str, Callable[..., list[tuple[str, int, str]]]] = {
    "prod-s0": v_prod(0),
    "prod-s2": v_prod(2),
    "prod-s4": v_prod(4),
    "prod-s8": v_prod(8),
    "prod600-s4": v_prod(4, 600),
    "note1200": v_note(1200),
    "note600": v_note(600),
    "sec400x8": v_sections(400, 8, 2400),
    "sec600x6": v_sections(600, 6, 2400),
    "sec300x8": v_sections(300, 8, 2400),
    "sec400x4+note600": v_sections(400, 4, 1600, with_note=600),
    "sec600x4": v_sections(600, 4, 1800),
}


class Embeds:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.cache: dict[str, np.ndarray] = pickle.loads(path.read_bytes()) if path.exists() else {}
        enc = load_encoder()
        assert enc is not None
        self.enc = enc
        self.dirty = False

    def passages(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in self.cache]
        if todo:
            vecs = self.enc.embed_passages([texts[i] for i in todo])
            for i, v in zip(todo, vecs, strict=True):
                self.cache[keys[i]] = v.astype(np.float16)
            self.dirty = True
        return np.stack([self.cache[k].astype(np.float32) for k in keys]) if keys else np.zeros((0, 512), np.float32)

    def query(self, q: str) -> np.ndarray:
        key = "q:" + q
        if key not in self.cache:
            self.cache[key] = self.enc.embed_query(q).astype(np.float16)
            self.dirty = True
        return self.cache[key].astype(np.float32)

    def save(self) -> None:
        if self.dirty:
            self.path.write_bytes(pickle.dumps(self.cache))
            self.dirty = False


def semantic_notes(q: np.ndarray, plist: list[tuple[str, int, str]], mat: np.ndarray, k: int = 50) -> list[tuple[str, int, float]]:
    scores = mat @ q
    best: dict[str, tuple[float, int]] = {}
    for (path, ordinal, _), s in zip(plist, scores.tolist(), strict=True):
        if path not in best or s > best[path][0]:
            best[path] = (s, ordinal)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
    return [(p, o, round(s, 6)) for p, (s, o) in ranked]


FUSIONS: dict[str, dict[str, Any]] = {
    "rrf60": {},
    "rrf60-nomargin": {"semantic_margin": None},
    "rrf60-m.1": {"semantic_margin": 0.1},
    "rrf60-sw1.5": {"semantic_weight": 1.5},
    "rrf30": {"rrf_k": 30},
    "rrf30-sw1.5": {"rrf_k": 30, "semantic_weight": 1.5},
    "rrf10": {"rrf_k": 10},
}


def rank_of(hits: list[tuple[str, int, float]], targets: list[str]) -> int:
    seen = list(dict.fromkeys(h[0] for h in hits))
    return next((i for i, p in enumerate(seen) if p in targets), 99)


def recall(ranks: list[int]) -> dict[str, float]:
    arr = np.array(ranks)
    return {f"r@{c}": round(float((arr < c).mean()), 3) for c in CUTS} | {"n": len(ranks)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-granularity"))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--fusions", default=",".join(FUSIONS))
    ap.add_argument("--titles", action="store_true", help="also title-as-query recall@1 (slow on eips)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    emb = Embeds(args.work / "cache.pkl")
    sets = json.loads((REPO / "ops/bench/paraphrase-dev.json").read_text())["sets"]
    dev = json.loads((SHARED / "bench/retrieval-dev.json").read_text())
    keyword = [q for q in dev["queries"] if q["kind"] == "keyword"]
    sets.append({"vault": "shared:obsidian-tasks-docs", "queries": [{**q, "lang": "keyword"} for q in keyword], "name": "dev-keyword"})
    variants = args.variants.split(",")
    fusions = args.fusions.split(",")
    ranks: dict[str, list[int]] = {}
    title_ranks: dict[str, list[int]] = {}

    def add(key: str, r: int) -> None:
        ranks.setdefault(key, []).append(r)

    readers: dict[str, tuple[SnapshotReader, list[Row], dict[str, str | None]]] = {}
    for s in sets:
        spec = s["vault"]
        if spec not in readers:
            state = args.work / spec.replace(":", "_").replace("/", "_")
            settings = Settings(vault=vault_dir(spec), index_dir=state)
            if read_current_manifest(state) is None:
                build_index(settings, full=True)
            reader = SnapshotReader(settings, vault_for_settings(settings), freshness=lambda _m: "fresh")
            rows, titles = chunk_rows(state)
            readers[spec] = (reader, rows, titles)
        reader, rows, titles = readers[spec]
        name = s.get("name", "paraphrase")
        mats = {}
        for v in variants:
            plist = VARIANTS[v](rows, titles)
            mats[v] = (plist, emb.passages([t for _, _, t in plist]))
            emb.save()
            print(f"{spec} {v}: {len(plist)} passages, {sum(len(t) for *_, t in plist)} chars", file=sys.stderr)
        for q in s["queries"]:
            lex = [(r.path, r.start_line, r.score) for r in search(reader, q["q"], 50, mode="lexical", group="note").data.results]
            add(f"{name}|lexical", rank_of(lex, q["targets"]))
            qv = emb.query(q["q"])
            for v in variants:
                sem = semantic_notes(qv, *mats[v])
                add(f"{name}|semantic|{v}", rank_of(sem, q["targets"]))
                for f in fusions:
                    add(f"{name}|hybrid|{v}|{f}", rank_of(fuse(lex, sem, 50, **FUSIONS[f]), q["targets"]))
                    if name == "paraphrase":
                        add(f"para-{q['lang'] if q['lang'] == 'en' else 'cjk'}|hybrid|{v}|{f}", rank_of(fuse(lex, sem, 50, **FUSIONS[f]), q["targets"]))
        emb.save()
        if args.titles and name == "paraphrase":
            for path, title in sorted(titles.items()):
                t = title or Path(path).stem
                lex = [(r.path, r.start_line, r.score) for r in search(reader, t, 50, mode="lexical", group="note").data.results]
                qv = emb.query(t)
                title_ranks.setdefault("lexical", []).append(rank_of(lex, [path]))
                for v in variants:
                    sem = semantic_notes(qv, *mats[v])
                    for f in fusions:
                        title_ranks.setdefault(f"{v}|{f}", []).append(rank_of(fuse(lex, sem, 50, **FUSIONS[f]), [path]))
            emb.save()
    out = {k: recall(v) for k, v in sorted(ranks.items())}
    out |= {f"titles|{k}": recall(v)["r@1"] for k, v in sorted(title_ranks.items())}
    for r, _, _ in readers.values():
        r.close()
    print(json.dumps(out, indent=0))


if __name__ == "__main__":
    main()
