"""Rankings the retrieval lab compares (retrieval_lab.run_group's `modes`): the two rankers
alone, plain RRF (k = 60, the issue's baseline), the product's shipped hybrid, and each of its pins alone on plain RRF
and taken out of the shipped ranking (`--rules`), so every rule's effect is measured alone
and in company. The rules issue 29 removed were measured the same way before their code
went (docs/benchmarks.md "Fusion rules (issue 29)", at the commit named there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from retrieval_lab import POOL, QueryCase, Ranking

import vault_agent.query.search_modes as modes
import vault_agent.semantic.fusion as fusion
from vault_agent.query.search import query_terms
from vault_agent.semantic.confidence import confident_hits, model_reads
from vault_agent.semantic.fusion import HELD_RANK, rrf

__all__ = ["FUSION_VARIANTS", "PIN_VARIANTS", "RANKINGS", "rankings"]

RANKINGS = ("lexical", "semantic", "rrf", "shipped")
_ENGINES: dict[str, Any] = {}
_PINS: dict[tuple[str, str, str], Any] = {}


def _notes(hits: list[Any]) -> list[str]:
    return list(dict.fromkeys(h[0] if isinstance(h, tuple) else h.path for h in hits))


def _engine(c: QueryCase) -> Any:
    return _ENGINES.setdefault(c.vault.key, c.vault.engine())


def _gated(c: QueryCase, model: str) -> tuple[list[Any], np.ndarray] | None:
    """The semantic list the product fuses: all of it when a note holds a query word, else
    the hits that stand out under the model's gate (semantic.confidence; None: no
    confident match)."""
    if c.lexical:
        return c.semantic, c.vectors
    same_script = not model_reads(c.q) or modes.script_held(_engine(c), c.q)
    keep = confident_hits([h[2] for h in c.semantic], model, same_script)
    if not keep:
        return None
    return c.semantic[:keep], c.vectors[:keep]


def _pin(c: QueryCase, kind: str) -> Any:
    """The product's pin of that kind for the query (search_modes), cached."""
    key = (c.vault.key, c.q, kind)
    if key not in _PINS:
        terms = query_terms(c.q)
        if kind == "title":
            _PINS[key] = modes.named_pin(terms, c.lexical, c.details)
        elif kind == "held":
            _PINS[key] = modes.held_pin(_engine(c), c.q, terms) if c.lexical and terms else None
        else:
            _PINS[key] = modes.exact_pin(c.q, c.lexical, c.details, 1 if kind == "exact1" else HELD_RANK)
    return _PINS[key]


def _pinned(c: QueryCase, model: str | None, kinds: tuple[str, ...]) -> list[str] | None:
    """Plain RRF with the product's pins of those kinds (an exact pin only where no held
    pin is, as the product does), over the gated semantic list when `model` is given."""
    sem = _gated(c, model) if model is not None else (c.semantic, c.vectors)
    if sem is None:
        return None
    pins = [p for p in (_pin(c, k) for k in kinds if not k.startswith("exact")) if p is not None]
    for k in kinds:
        if k.startswith("exact") and not any(p.reason in ("rare", "quote") for p in pins):
            pins += [p for p in (_pin(c, k),) if p is not None]
    return _notes(rrf(c.lexical, sem[0], POOL, pins))


def _shipped(c: QueryCase, model: str) -> list[str] | None:
    """The product's hybrid path (search.ranked_hits) over the lab's lists."""
    sem = _gated(c, model)
    if sem is None:
        return None
    engine = _engine(c) if c.lexical else None
    request = modes.HybridRequest(c.q, query_terms(c.q), c.lexical, c.details, sem[0], POOL)
    ranked = modes.hybrid_ranking(engine, request)
    return _notes(ranked)


SHIPPED_PINS = ("title", "held", "exact1")
PIN_VARIANTS: dict[str, tuple[str, ...]] = {
    **{f"rrf+{k}": (k,) for k in (*SHIPPED_PINS, "exact3")},
    **{f"shipped-{k}": tuple(p for p in SHIPPED_PINS if p != k) for k in SHIPPED_PINS},
    "shipped-exact1+exact3": ("title", "held", "exact3"),
}


# RRF's k (fusion.RRF_K) set otherwise, on plain RRF and on the shipped ranking:
# `--fusion`. (A depth cut per list, ranks past 5, 10 or 20 adding nothing, was measured the
# same way on dev and dropped: docs/benchmarks.md.)
FUSION_VARIANTS: dict[str, dict[str, int]] = {
    f"{base}-k{k}": {"RRF_K": k} for base in ("rrf", "shipped") for k in (10, 20, 30, 60, 120)
}


@contextmanager
def _fusion_set(knobs: dict[str, int]) -> Iterator[None]:
    """fusion's module constants set to `knobs` for the block (its functions read them at
    call time), then restored."""
    old = {name: getattr(fusion, name) for name in knobs}
    for name, value in knobs.items():
        setattr(fusion, name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            setattr(fusion, name, value)


def _with_knobs(base: Ranking, knobs: dict[str, int]) -> Ranking:
    def ranking(c: QueryCase) -> list[str] | None:
        with _fusion_set(knobs):
            return base(c)

    return ranking


def rankings(model: str) -> dict[str, Ranking]:
    """name → ranking. `model`: the product's id of the model measured (its confidence gate)."""
    plain: Ranking = lambda c: _notes(rrf(c.lexical, c.semantic, POOL))  # noqa: E731
    out: dict[str, Ranking] = {
        "lexical": lambda c: _notes(c.lexical),
        "semantic": lambda c: None if (g := _gated(c, model)) is None else _notes(g[0]),
        # the issue's baseline: k = 60 whatever the product's fusion.RRF_K
        "rrf": _with_knobs(plain, {"RRF_K": 60}),
        "shipped": lambda c: _shipped(c, model),
    }
    for name, kinds in PIN_VARIANTS.items():
        out[name] = _bind(kinds, model if name.startswith("shipped") else None)
    for name, knobs in FUSION_VARIANTS.items():
        base = plain if name.startswith("rrf-") else out["shipped"]
        out[name] = _with_knobs(base, knobs)
    return out


def _bind(kinds: tuple[str, ...], model: str | None) -> Callable[[QueryCase], list[str] | None]:
    return lambda c: _pinned(c, model, kinds)
