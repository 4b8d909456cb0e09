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

import hashlib
import json
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from bench_vaults import Row, by_note, chunk_rows  # noqa: E402

from vault_agent.config import Settings  # noqa: E402
from vault_agent.freshness import read_current_manifest, vault_for_settings  # noqa: E402
from vault_agent.indexer.build import build_index  # noqa: E402
from vault_agent.query.search import lexical_hits, query_terms  # noqa: E402
from vault_agent.query.snapshot import SnapshotReader  # noqa: E402
from vault_agent.search_fields import decode_detail  # noqa: E402
from vault_agent.semantic import passages as P  # noqa: E402
from vault_agent.semantic.encoder import load_encoder  # noqa: E402
from vault_agent.semantic.evidence import name_overlap  # noqa: E402
from vault_agent.semantic.fusion import fuse  # noqa: E402

CUTS = (1, 3, 5, 10)


def vault_dir(spec: str) -> Path:
    kind, name = spec.split(":", 1)
    return SHARED / "corpora" / name / "vault" if kind == "shared" else REPO / name


def v_note(chars: int) -> Callable[[list[Row], dict[str, str | None]], list[tuple[str, int, str]]]:
    def build(
        rows: list[Row], titles: dict[str, str | None], state: Path | None = None
    ) -> list[tuple[str, int, str]]:
        out = []
        for path, rs in by_note(rows).items():
            text = P.build_passage(titles.get(path), [r[2] for r in rs], [r[3] for r in rs])[:chars]
            out.append((path, rs[0][1], text))
        return out

    return build


def v_sections(
    chars: int, max_per_note: int, budget: int, with_note: int = 0
) -> Callable[..., list[tuple[str, int, str]]]:
    """One passage per chunk: 'title › heading path' then the chunk text, cut at `chars`;
    at most `max_per_note` passages and `budget` characters per note; optionally the
    note passage (`with_note` chars) too."""

    def build(
        rows: list[Row], titles: dict[str, str | None], state: Path | None = None
    ) -> list[tuple[str, int, str]]:
        out = []
        for path, rs in by_note(rows).items():
            title = titles.get(path) or Path(path).stem
            if with_note:
                out.append(
                    (
                        path,
                        rs[0][1],
                        P.build_passage(title, [r[2] for r in rs], [r[3] for r in rs])[:with_note],
                    )
                )
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

    def build(
        rows: list[Row], titles: dict[str, str | None], state: Path | None = None
    ) -> list[tuple[str, int, str]]:
        saved = P.NOTE_CHARS
        if note_chars is not None:
            P.NOTE_CHARS = note_chars
        try:
            ps = P.passages_from_chunks(
                [r[0] for r in rows],
                [r[1] for r in rows],
                [r[2] for r in rows],
                [r[3] for r in rows],
                {p: t or Path(p).stem for p, t in titles.items()},
                max_sections=max_sections,
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
        return (
            np.stack([self.cache[k].astype(np.float32) for k in keys])
            if keys
            else np.zeros((0, 512), np.float32)
        )

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


def semantic_notes(
    q: np.ndarray, plist: list[tuple[str, int, str]], mat: np.ndarray, k: int = 50
) -> list[tuple[str, int, float]]:
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
from query_scaffolding import model_text  # noqa: E402  (the rejected query cleanup)

# Query-side variants: what the model sees (the lexical list always gets the raw query).
QUERY_FORMS: dict[str, Callable[[str], str]] = {"raw": lambda q: q, "clean": model_text}
# Adaptive fusions: name=(overlap threshold, semantic weight and lexical-top bonus when
# the query does not name the lexical first note).
ADAPTIVE: dict[str, tuple[float, float, float, float, float]] = {
    # name: (name share ≥, query share ≥, or the larger of both ≥) → the query names the
    # lexical first note; otherwise this semantic weight and lexical-top bonus
    "max67-w1.5": (9, 9, 0.67, 1.5, 0.0),
    "max50-w1.5": (9, 9, 0.5, 1.5, 0.0),
    "n50q50-w1.5": (0.5, 0.5, 9, 1.5, 0.0),
    "n67q34-w1.5": (0.67, 0.34, 9, 1.5, 0.0),
    "n50q50-w1": (0.5, 0.5, 9, 1.0, 0.0),
    "n50q50-w1.5-b.005": (0.5, 0.5, 9, 1.5, 0.005),
    "n50q50-w1.5-b.01": (0.5, 0.5, 9, 1.5, 0.01),
    "n50q50-w2-b.01": (0.5, 0.5, 9, 2.0, 0.01),
    "nobonus": (9, 9, 9, 1.0, 0.0),
}
SETS = {"dev": "ops/bench/paraphrase-dev.json", "holdout": "ops/bench/paraphrase-holdout.json"}


# The fusion constants of rounds 2-3 (this bench's era; issue 22 changed the defaults).
ROUND3: dict[str, Any] = {"semantic_weight": 1.0, "semantic_margin": 0.15, "lexical_top_bonus": 0.02}
Lex = tuple[
    list[tuple[str, int, float]], tuple[float, float]
]  # note-grouped lexical hits, name overlap of the first


def fused(name: str, lex: Lex, sem: list[tuple[str, int, float]]) -> list[tuple[str, int, float]]:
    hits, overlap = lex
    if name in ADAPTIVE:
        n_min, q_min, either_min, weight, bonus = ADAPTIVE[name]
        names = (overlap[0] >= n_min and overlap[1] >= q_min) or max(overlap) >= either_min
        if names:  # round 3's rule: a named note keeps the plain fusion and its bonus
            return fuse(hits, sem, 50, **ROUND3)
        return fuse(hits, sem, 50, **(ROUND3 | {"semantic_weight": weight, "lexical_top_bonus": bonus}))
    return fuse(hits, sem, 50, **(ROUND3 | FUSIONS[name]))


def lexical(reader: SnapshotReader, query: str) -> Lex:
    """The engine's note-grouped top 50 and the name overlap of its first hit (what
    search.ranked_hits computes)."""
    terms = query_terms(query)
    details: dict[tuple[str, int], bytes] = {}
    with reader.acquire() as view:
        hits = lexical_hits(reader, view, terms, 50, "note", details) if terms else []
    if not hits:
        return hits, (0.0, 0.0)
    top = details.get((hits[0][0], hits[0][1]))
    title = decode_detail(top)[0] if top is not None else None
    return hits, name_overlap(terms, title, hits[0][0])


def rank_of(hits: list[tuple[str, int, float]], targets: list[str]) -> int:
    seen = list(dict.fromkeys(h[0] for h in hits))
    return next((i for i, p in enumerate(seen) if p in targets), 99)


def recall(ranks: list[int]) -> dict[str, float]:
    arr = np.array(ranks)
    return {f"r@{c}": round(float((arr < c).mean()), 3) for c in CUTS} | {"n": len(ranks)}


def load_sets(names: list[str]) -> list[dict[str, Any]]:
    if names == ["smoke"]:  # --smoke: three questions over a synthetic fixture, no shared corpus
        doc = json.loads((REPO / "fixtures" / "semantic-queries.json").read_text())
        queries = [{**q, "lang": q["kind"]} for q in doc["queries"][:3]]
        return [{"vault": "repo:fixtures/semantic", "queries": queries, "name": "smoke"}]
    out = []
    for name in names:
        for s in json.loads((REPO / SETS[name]).read_text())["sets"]:
            out.append({**s, "name": name})
    dev = json.loads((SHARED / "bench/retrieval-dev.json").read_text())
    keyword = [{**q, "lang": "keyword"} for q in dev["queries"] if q["kind"] == "keyword"]
    out.append({"vault": "shared:obsidian-tasks-docs", "queries": keyword, "name": "dev-keyword"})
    return out


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-granularity")
    ap.add_argument("--variants", default="prod-s0")
    ap.add_argument("--fusions", default="rrf60", help=f"{','.join(FUSIONS)},{','.join(ADAPTIVE)}")
    ap.add_argument("--queries", default="raw", help=f"query forms for the model: {','.join(QUERY_FORMS)}")
    ap.add_argument("--sets", default="dev,holdout")
    ap.add_argument(
        "--titles", action="store_true", help="also title-as-query recall@1 over every note (slow on eips)"
    )
    ap.add_argument("--dump", type=Path, help="per-question ranks (JSON) for error analysis")
    args = benchkit.parse(ap, smoke={"sets": "smoke"})
    args.work.mkdir(parents=True, exist_ok=True)
    emb = Embeds(args.work / "cache.pkl")
    sets = load_sets(args.sets.split(","))
    variants, fusions, qforms = args.variants.split(","), args.fusions.split(","), args.queries.split(",")
    combos = [(v, f, qf) for v in variants for f in fusions for qf in qforms]
    ranks: dict[str, list[int]] = {}
    title_ranks: dict[str, list[int]] = {}
    dump: list[dict[str, Any]] = []

    def add(key: str, r: int) -> None:
        ranks.setdefault(key, []).append(r)

    readers: dict[str, tuple[SnapshotReader, list[Row], dict[str, str | None]]] = {}
    mats: dict[tuple[str, str], tuple[list[tuple[str, int, str]], np.ndarray]] = {}
    titled: set[str] = set()
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
            for v in variants:
                plist = VARIANTS[v](rows, titles, state)
                mats[(spec, v)] = (plist, emb.passages([t for _, _, t in plist]))
                emb.save()
                print(
                    f"{spec} {v}: {len(plist)} passages, {sum(len(t) for *_, t in plist)} chars",
                    file=sys.stderr,
                )
        reader, rows, titles = readers[spec]
        name = s["name"]
        for q in s["queries"]:
            lex = lexical(reader, q["q"])
            lr = rank_of(lex[0], q["targets"])
            add(f"{name}|lexical", lr)
            row: dict[str, Any] = {
                "set": name,
                "q": q["q"],
                "lang": q["lang"],
                "lexical": lr,
                "overlap": [round(x, 2) for x in lex[1]],
            }
            for qf in qforms:
                qv = emb.query(QUERY_FORMS[qf](q["q"]))
                for v in variants:
                    sem = semantic_notes(qv, *mats[(spec, v)])
                    add(f"{name}|semantic|{v}|{qf}", rank_of(sem, q["targets"]))
                    row[f"sem|{v}|{qf}"] = rank_of(sem, q["targets"])
                    for f in fusions:
                        r = rank_of(fused(f, lex, sem), q["targets"])
                        row[f"hyb|{v}|{f}|{qf}"] = r
                        add(f"{name}|hybrid|{v}|{f}|{qf}", r)
                        if name != "dev-keyword":
                            lang = "en" if q["lang"] == "en" else "cjk"
                            add(f"{name}-{lang}|hybrid|{v}|{f}|{qf}", r)
            dump.append(row)
        emb.save()
        if args.titles and spec not in titled and spec.startswith("shared:"):
            titled.add(spec)
            for path, title in sorted(titles.items()):
                t = title or Path(path).stem
                lex = lexical(reader, t)
                title_ranks.setdefault("lexical", []).append(rank_of(lex[0], [path]))
                for qf in qforms:
                    qv = emb.query(QUERY_FORMS[qf](t))
                    for v in variants:
                        sem = semantic_notes(qv, *mats[(spec, v)])
                        for f in fusions:
                            title_ranks.setdefault(f"{v}|{f}|{qf}", []).append(
                                rank_of(fused(f, lex, sem), [path])
                            )
            emb.save()
    out: dict[str, Any] = {k: recall(v) for k, v in sorted(ranks.items())}
    out |= {f"titles|{k}": recall(v)["r@1"] for k, v in sorted(title_ranks.items())}
    out["combos"] = [list(c) for c in combos]
    for open_reader, _, _ in readers.values():
        open_reader.close()
    if args.dump:
        args.dump.write_text(json.dumps(dump, ensure_ascii=False, indent=0))
    print(json.dumps(out, indent=0))


if __name__ == "__main__":
    main()
