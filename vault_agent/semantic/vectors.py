"""Compact vectors and their top-k: int8 codes in memory, a float32 sketch to find candidates.

Why not a float32 matrix: at 100k notes with a few passages each, float32 vectors alone
(2 KB each) would take most of `serve`'s 1 GiB budget. Each vector is kept as int8 codes
with one float32 scale (v ≈ codes × scale; cosine error < 0.01 on unit vectors), 516 bytes.
numpy has no fast int8 or float16 matrix-vector product (converting 400k int8 rows to
float32 per query costs ~200 ms), so the search runs in two steps:
1. a sketch: every vector minus its block's mean, projected on the block's top SKETCH_DIM
   principal directions (VectorBlock), float32, one BLAS matrix-vector product over all
   rows (512 bytes a row);
2. exact rescoring: the best CANDIDATES rows of the sketch over the whole snapshot (all
   its embedding files) are dequantized and scored exactly against the query; the best k
   of those are the answer (a snapshot with fewer rows is scored exactly).
Deterministic (the SVD of the same rows gives the same basis); `bench_semantic_scale.py
sketch-recall` measures how often the two steps return the exact top-k on real vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SKETCH_DIM = 128
CANDIDATES = 4_000  # rows rescored exactly per query (over all embedding files)
SAMPLE_ROWS = 20_000  # rows of a block its principal subspace is computed from
BUILD_ROWS = 2_048  # rows dequantized at a time while building a block (bounded transient)

__all__ = ["CANDIDATES", "SKETCH_DIM", "VectorBlock", "dequantize", "quantize", "search"]


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 codes, float32 per-row scale) with vectors ≈ codes * scale[:, None]."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8)
    return codes, scale


def dequantize(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    out: np.ndarray = codes.astype(np.float32) * scale[:, None]
    return out


@dataclass
class VectorBlock:
    """The vectors of one embedding file, held once and shared by every snapshot naming it.

    The sketch is the block's own principal subspace: rows minus their mean, projected on
    the top SKETCH_DIM right singular vectors of (a sample of) the block. Sentence vectors
    share a large common direction and their cosines sit in a narrow band, so a random
    projection (tried first) kept too little of what separates them (top-50 overlap 0.96
    with 27% of 7.3k rows rescored); the principal subspace keeps most of the variance.
    q·v = q·mean + (q W)·((v - mean) W) + (the small part outside the subspace).
    """

    codes: np.ndarray  # (n, dim) int8
    scale: np.ndarray  # (n,) float32
    mean: np.ndarray  # (dim,) float32
    basis: np.ndarray  # (dim, SKETCH_DIM) float32, orthonormal columns
    sketch: np.ndarray  # (n, SKETCH_DIM) float32

    @classmethod
    def build(cls, codes: np.ndarray, scale: np.ndarray) -> VectorBlock:
        n, dim = codes.shape
        step = max(1, n // SAMPLE_ROWS)
        sample_codes, sample_scale = codes[::step], scale[::step]
        width = min(SKETCH_DIM, dim)
        mean, basis = _principal_subspace(sample_codes, sample_scale, width)
        sketch = np.empty((n, width), np.float32)
        for start in range(0, n, BUILD_ROWS):  # bounded float32 transient
            part = slice(start, start + BUILD_ROWS)
            sketch[part] = (dequantize(codes[part], scale[part]) - mean) @ basis
        return cls(codes, scale, mean, basis, sketch)

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scale.nbytes + self.sketch.nbytes + self.basis.nbytes)

    def rough(self, query: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """Approximate cosines of `rows` (None: all rows), in that order."""
        scores: np.ndarray = self.sketch @ (query @ self.basis)
        scores += float(query @ self.mean)
        return scores if rows is None else scores[rows]

    def exact(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        out: np.ndarray = (self.codes[rows].astype(np.float32) @ query) * self.scale[rows]
        return out


def _principal_subspace(codes: np.ndarray, scale: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows' mean (dim,) and their top `width` principal directions (dim, width), float32.

    From the eigenvectors of the centred rows' (dim, dim) Gram matrix, summed in float64 over
    BUILD_ROWS rows at a time: the same subspace as the SVD of the centred rows (their right
    singular vectors), whose float copies and LAPACK workspace took the embed worker ~110 MB
    above its steady state for a 10,240-row block (the worker's peak: bench_embed.py).
    """
    n, dim = codes.shape
    basis = np.zeros((dim, width), np.float32)
    if n == 0:
        return np.zeros(dim, np.float32), basis
    total = np.zeros(dim, np.float64)
    for start in range(0, n, BUILD_ROWS):
        part = slice(start, start + BUILD_ROWS)
        total += dequantize(codes[part], scale[part]).sum(axis=0, dtype=np.float64)
    mean = (total / n).astype(np.float32)
    if n < 2:
        return mean, basis
    gram = np.zeros((dim, dim), np.float64)
    for start in range(0, n, BUILD_ROWS):
        part = slice(start, start + BUILD_ROWS)
        centred = (dequantize(codes[part], scale[part]) - mean).astype(np.float64)
        gram += centred.T @ centred
    values, vectors = np.linalg.eigh(gram)  # ascending
    rank = min(width, n - 1)  # directions beyond the rows' rank are noise: left at zero, as the SVD's
    basis[:, :rank] = vectors[:, ::-1][:, :rank].astype(np.float32)
    return mean, basis


def search(
    blocks: Sequence[tuple[VectorBlock, np.ndarray | None]], query: np.ndarray, candidates: int | None = None
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(block number, row indices, exact cosines) of the best `candidates` rows over all
    (block, live rows) pairs by the sketch, rescored exactly; unordered.

    The candidate budget is global (not per block), so a snapshot of many segments rescores
    no more rows than one of a single segment."""
    budget = CANDIDATES if candidates is None else candidates
    rough: list[np.ndarray] = []
    index: list[np.ndarray] = []
    for block, rows in blocks:
        rough.append(block.rough(query, rows))
        index.append(np.arange(len(block.codes)) if rows is None else rows)
    sizes = [len(r) for r in rough]
    total = sum(sizes)
    if total == 0:
        return []
    flat = np.concatenate(rough) if len(rough) > 1 else rough[0]
    take = min(budget, total)
    best = np.argpartition(-flat, take - 1)[:take] if take < total else np.arange(total)
    bounds = np.cumsum([0, *sizes])
    out = []
    for i, (block, _) in enumerate(blocks):
        mine = best[(best >= bounds[i]) & (best < bounds[i + 1])] - bounds[i]
        if len(mine):
            rows = index[i][mine]
            out.append((i, rows, block.exact(query, rows)))
    return out
