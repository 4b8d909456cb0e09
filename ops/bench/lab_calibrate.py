"""NO_CONFIDENT_MATCH calibration for `bench_retrieval.py --lab dev --calibrate N`: how
well each statistic of a query's own cosine distribution separates made-up queries from
real questions, on the dev vaults.

Made-up: N queries of holdout_gen.nonsense (seed 777, not the sets' seed) per dev vault,
made of words no dev vault holds. Real: the dev questions in natural language (paraphrase,
keyword, cjk, bridge: the rare-word, title and name queries are a vault's own words, never
without a lexical hit), and apart the ones that share no word with their target note (the
questions the gate must still answer; a query some note shares a word with never reaches
the gate in the product, so taking them all is the harder test). For each statistic: the threshold that refuses at least 90% of the
made-up queries, and the share of real questions it keeps; then the same for 95% and 99%.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from bench_metrics import kind_of
from bench_vaults import vault_key
from holdout_gen import nonsense
from retrieval_lab import POOL, LabVault, Model, QueryVectors, semantic_lists, vault_vectors

from vault_agent.query.search_modes import script_held
from vault_agent.search_fields import analyze_terms
from vault_agent.semantic import confidence
from vault_agent.text import tokenize

__all__ = ["FEATURES", "REAL_KINDS", "calibrate"]
KINDS = ("made-up", "real", "real, no word shared")
REAL_KINDS = frozenset({"paraphrase", "keyword", "cjk", "bridge"})


def _top(c: np.ndarray) -> np.ndarray:
    return np.sort(c)[::-1]


# Each statistic of a query's best-cosine-per-note vector `c` (every note of the vault).
FEATURES: dict[str, Callable[[np.ndarray], float]] = {
    "top1": lambda c: float(c.max()),
    "top1-median": lambda c: float(c.max() - np.median(c)),
    "z(all notes)": lambda c: float((c.max() - c.mean()) / max(float(c.std()), 1e-6)),
    "top1-top10": lambda c: float(_top(c)[0] - _top(c)[min(9, len(c) - 1)]),
    "top1-top50": lambda c: float(_top(c)[0] - _top(c)[min(POOL - 1, len(c) - 1)]),
    "z(top 50)": lambda c: float(
        (_top(c)[0] - _top(c)[:POOL].mean()) / max(float(_top(c)[:POOL].std()), 1e-6)
    ),
}


def _words(text: str) -> set[str]:
    return set(analyze_terms(tokenize(text)))


def _note_words(v: LabVault) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path, _, hp, text in v.rows:
        out.setdefault(path, _words(f"{v.titles.get(path) or ''} {path}")).update(
            _words(" ".join(hp or []) + " " + text)
        )
    return out


def _made_up(
    sets: list[tuple[str, dict[str, Any]]], vaults: dict[str, LabVault], work: Path, n: int
) -> list[str]:
    """n made-up queries no vault of the sets holds a word of (holdout_gen.nonsense, seed 777)."""
    vocab: set[str] = set()
    names: set[str] = set()
    for _, s in sets:
        v = vaults.setdefault(vault_key(s), LabVault(s, work))
        for _, _, hp, text in v.rows:
            vocab.update(tokenize(" ".join(hp or []) + " " + text))
        for p, title in v.titles.items():
            names.update(tokenize(f"{title or ''} {p}"))
    vocab |= names
    prefixes = {w[:5] for w in vocab if w.isalpha()}
    return nonsense(n, vocab, prefixes, names, {w for w in vocab if len(w) == 2}, 777)


def _summary(fake: list[float], real: list[float], apart: list[float]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for refuse in (0.90, 0.95, 0.99):
        cut = float(np.quantile(fake, refuse))
        row[f"refuse {refuse:.0%}"] = {
            "threshold": round(cut, 4),
            "real kept": round(float(np.mean(np.array(real) > cut)), 3),
            "no-word real kept": round(float(np.mean(np.array(apart) > cut)), 3) if apart else None,
        }
    row["made-up p50/p90"] = [round(float(np.quantile(fake, q)), 4) for q in (0.5, 0.9)]
    row["real p5/p50"] = [round(float(np.quantile(real, q)), 4) for q in (0.05, 0.5)]
    return row


def calibrate(
    sets: list[tuple[str, dict[str, Any]]],
    vaults: dict[str, LabVault],
    work: Path,
    model: Model,
    shape: str,
    n: int,
) -> dict[str, Any]:
    """Per statistic: thresholds at 90/95/99% of made-up queries refused, and the share of
    real questions (all, and those sharing no word with their note) each keeps."""
    made_up = _made_up(sets, vaults, work, n)
    qv = QueryVectors(work, model)
    fake: dict[str, list[float]] = {f: [] for f in FEATURES}
    real: dict[str, list[float]] = {f: [] for f in FEATURES}
    apart: dict[str, list[float]] = {f: [] for f in FEATURES}
    keys = sorted({vault_key(s) for _, s in sets})
    for key in keys:
        vv = vault_vectors(work, model, shape, vaults[key])
        for q in made_up:
            c = semantic_lists(vv, qv.get(q))[2]
            for f, fn in FEATURES.items():
                fake[f].append(fn(c))
        words = _note_words(vaults[key])
        items = [i for _, s in sets if vault_key(s) == key for i in s["queries"] if kind_of(i) in REAL_KINDS]
        for item in items:
            c = semantic_lists(vv, qv.get(item["q"]))[2]
            shares = any(_words(item["q"]) & words.get(t, set()) for t in item["targets"])
            for f, fn in FEATURES.items():
                real[f].append(fn(c))
                (apart[f].append(fn(c)) if not shares else None)
    out: dict[str, Any] = {"made_up": len(made_up) * len(keys), "real": len(real["top1"])}
    out["real_sharing_no_word"] = len(apart["top1"])
    out |= {f: _summary(fake[f], real[f], apart[f]) for f in FEATURES}
    out["shipped gate"] = _gate(sets, vaults, work, model, shape, made_up, qv)
    qv.save()
    return out


def _gate(
    sets: list[tuple[str, dict[str, Any]]],
    vaults: dict[str, LabVault],
    work: Path,
    model: Model,
    shape: str,
    made_up: list[str],
    qv: QueryVectors,
) -> dict[str, Any]:
    """The product's gate end to end per floor: made-up refused, real answered."""
    cases: list[tuple[str, bool, bool, float]] = []  # (kind, has lexical hit, same script, top1)
    for key in sorted({vault_key(s) for _, s in sets}):
        v = vaults[key]
        vv = vault_vectors(work, model, shape, v)
        engine = v.engine()
        words = _note_words(v)
        items = [(q, "made-up") for q in made_up]
        for _, s in sets:
            if vault_key(s) == key:
                for i in s["queries"]:
                    if kind_of(i) in REAL_KINDS:
                        shares = any(_words(i["q"]) & words.get(t, set()) for t in i["targets"])
                        items.append((i["q"], "real" if shares else "real, no word shared"))
        for q, kind in items:
            top1 = float(semantic_lists(vv, qv.get(q))[2].max())
            cases.append((kind, bool(v.lexical(q)[0]), script_held(engine, q), top1))
    base = confidence.floor(model.product_id)
    out: dict[str, Any] = {"shipped floor": base}
    for cut in sorted({round(base + d, 3) for d in (-0.02, -0.01, 0.0, 0.01, 0.02)}):
        answered = {
            k: [lex or not same or top >= cut for kk, lex, same, top in cases if kk == k] for k in KINDS
        }
        out[f"floor {cut}"] = {
            "made-up refused": round(1 - float(np.mean(answered["made-up"])), 3),
            "real answered": round(float(np.mean(answered["real"] + answered["real, no word shared"])), 3),
            "no word shared, answered": round(float(np.mean(answered["real, no word shared"])), 3),
        }
    return out
