"""Rankings the retrieval lab compares (retrieval_lab.run_group's `modes`): the two rankers
alone, plain RRF, the product's shipped hybrid, and one variant per fusion rule (plain RRF
plus that rule only, and the main-branch fusion minus that rule), so each rule's effect is
measured alone and in company.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from retrieval_lab import POOL, QueryCase, Ranking

import vault_agent.query.search_modes as modes
from vault_agent.query.search import query_terms
from vault_agent.semantic.confidence import confident_hits
from vault_agent.semantic.encoder import active_model
from vault_agent.semantic.fusion import HELD_RANK, fuse_explained, rrf

__all__ = ["RANKINGS", "rankings"]

_EVIDENCE: dict[tuple[str, str], Any] = {}


def _notes(hits: list[Any]) -> list[str]:
    return list(dict.fromkeys(h[0] if isinstance(h, tuple) else h.path for h in hits))


def _evidence(c: QueryCase) -> Any:
    key = (c.vault.key, c.q)
    if key not in _EVIDENCE:
        engine = c.vault.engine() if c.lexical else None
        _EVIDENCE[key] = modes.lexical_evidence(engine, c.q, query_terms(c.q), c.lexical, c.details)
    return _EVIDENCE[key]


def _gated(c: QueryCase, model: str) -> tuple[list[Any], np.ndarray] | None:
    """The semantic list the product fuses: all of it when a note holds a query word, else
    the hits that stand out under the model's gate (semantic.confidence; None: no
    confident match)."""
    if c.lexical:
        return c.semantic, c.vectors
    keep = confident_hits([h[2] for h in c.semantic], model)
    if not keep:
        return None
    return c.semantic[:keep], c.vectors[:keep]


def _fused(c: QueryCase, tau: str | None, **rules: Any) -> list[str] | None:
    sem = _gated(c, tau) if tau is not None else (c.semantic, c.vectors)
    if sem is None:
        return None
    ev = _evidence(c)
    lock = rules.pop("lock", ())
    reason = ev.lock if ev.lock in lock else None
    lead = ev.lead if reason else 0
    shape = rules.pop("shape", False)
    params: dict[str, Any] = {
        "semantic_weight": 1.0,
        "semantic_margin": None,
        "lexical_top_bonus": 0.0,
        "duplicate_cosine": None,
    }
    if shape:  # weights by query shape (main: keyword or named queries weigh the model 0.25)
        params |= {"semantic_weight": None, "lexical_top_bonus": None}
    params |= rules
    fused = fuse_explained(
        c.lexical, sem[0], POOL, described=ev.described, locked=reason, lead=lead, vectors=sem[1], **params
    )
    return _notes(fused)


MAIN: dict[str, Any] = {
    "lock": ("title", "alias", "quote", "rare", "exact"),
    "shape": True,
    # the model's own values (encoder.ModelChoice: USE 0.07 / 0.8, e5 0.025 / 0.93)
    "semantic_margin": active_model().semantic_margin,
    "duplicate_cosine": active_model().duplicate_cosine,
}
RULES: dict[str, dict[str, Any]] = {
    "lock-title": {"lock": ("title",)},
    "lock-alias": {"lock": ("alias",)},
    "lock-quote": {"lock": ("quote",)},
    "lock-rare": {"lock": ("rare",)},
    "exact-lead": {"lock": ("exact",)},
    "shape-weights": {"shape": True},
    "margin": {"semantic_margin": MAIN["semantic_margin"]},
    "copies": {"duplicate_cosine": MAIN["duplicate_cosine"]},
}


def _without(rule: str) -> dict[str, Any]:
    conf = dict(MAIN)
    for k, val in RULES[rule].items():
        if k == "lock":
            conf["lock"] = tuple(r for r in MAIN["lock"] if r not in val)
        elif k == "shape":
            conf["shape"] = False
        else:
            conf[k] = None
    return conf


_ENGINES: dict[str, Any] = {}
_PINS: dict[tuple[str, str, str], Any] = {}


def _pin(c: QueryCase, kind: str) -> Any:
    """The product's pin of that kind for the query (search_modes), cached."""
    key = (c.vault.key, c.q, kind)
    if key not in _PINS:
        terms = query_terms(c.q)
        if kind == "title":
            _PINS[key] = modes.named_pin(terms, c.lexical, c.details)
        elif kind == "held":
            engine = _ENGINES.setdefault(c.vault.key, c.vault.engine()) if c.lexical else None
            _PINS[key] = modes.held_pin(engine, c.q, terms) if engine is not None and terms else None
        else:
            _PINS[key] = modes.exact_pin(c.q, c.lexical, c.details, 1 if kind == "exact1" else HELD_RANK)
    return _PINS[key]


def _pinned(c: QueryCase, tau: str | None, kinds: tuple[str, ...]) -> list[str] | None:
    """Plain RRF with the product's pins of those kinds (an exact pin only where no
    held pin is), over the gated semantic list when `tau` is given."""
    sem = _gated(c, tau) if tau is not None else (c.semantic, c.vectors)
    if sem is None:
        return None
    pins = [p for p in (_pin(c, k) for k in kinds if k not in ("exact1", "exact3")) if p is not None]
    for k in kinds:
        if k in ("exact1", "exact3") and not any(p.reason in ("rare", "quote") for p in pins):
            pins += [p for p in (_pin(c, k),) if p is not None]
    return _notes(rrf(c.lexical, sem[0], POOL, pins))


def _shipped(c: QueryCase, tau: str) -> list[str] | None:
    """The product's hybrid path (search.ranked_hits) over the lab's lists."""
    sem = _gated(c, tau)
    if sem is None:
        return None
    engine = _ENGINES.setdefault(c.vault.key, c.vault.engine()) if c.lexical else None
    terms = query_terms(c.q)
    return _notes(modes.hybrid_ranking(engine, c.q, terms, c.lexical, c.details, sem[0], POOL))


PIN_VARIANTS = {
    "rrf+held": ("held",),
    "rrf+title": ("title",),
    "rrf+held+title": ("held", "title"),
    "rrf+held+title+exact1": ("held", "title", "exact1"),
    "rrf+held+title+exact3": ("held", "title", "exact3"),
    "rrf+exact1": ("exact1",),
    "rrf+exact3": ("exact3",),
}


def rankings(tau: str) -> dict[str, Ranking]:
    """name → ranking. `tau`: the product's id of the model measured (its confidence gate)."""
    out: dict[str, Ranking] = {
        "lexical": lambda c: _notes(c.lexical),
        "semantic": lambda c: None if (g := _gated(c, tau)) is None else _notes(g[0]),
        "rrf": lambda c: _fused(c, None),
        "main": lambda c: _fused(c, tau, **MAIN),
        "shipped": lambda c: _shipped(c, tau),
    }
    for name, kinds in PIN_VARIANTS.items():
        out[name] = _bind_pins(kinds, None)
    for name, conf in RULES.items():
        out[f"rrf+{name}"] = _bind(dict(conf), None)
        out[f"main-{name}"] = _bind(_without(name), tau)
    return out


def _bind_pins(kinds: tuple[str, ...], tau: str | None) -> Callable[[QueryCase], list[str] | None]:
    return lambda c: _pinned(c, tau, kinds)


def _bind(conf: dict[str, Any], tau: str | None) -> Callable[[QueryCase], list[str] | None]:
    return lambda c: _fused(c, tau, **dict(conf))


RANKINGS = ("lexical", "semantic", "rrf", "shipped")
