"""Build e5's ONNX graph and SentencePiece model from the weights file, once per weights hash.

    python -m vault_agent.semantic.e5_build WEIGHTS_FILE OUT_DIR

Run as a child process by e5_encoder.py when its cache has no build for the weights' hash
(the first load after an install or an upgrade: ~1 s): `onnx` and the dequantized float
weights (~200 MB of transients) then never enter a server's memory, and a later process
loads the cached files in a fraction of a second. OUT_DIR gets `encoder.onnx` and
`tokenizer.model`, each written to a temporary name and renamed.

The graph (opset 21 + com.microsoft), per BERT block (post-LayerNorm, as e5.c):
- the Q, K, V projections as one int8 matrix product (Q's weights and bias pre-scaled by
  1/sqrt(head size), exact in float), K and V the same way, attention by onnxruntime's
  MultiHeadAttention in fp32, the Q/K/V bias added by it;
- every projection: weights re-quantised from Q4_0 to int8 per output channel (symmetric),
  activations quantised per token (row max / 127, zero point 128, uint8) by standard ops
  feeding MatMulIntegerToFloat (com.microsoft: the int8 product, rescaled by the column
  scales inside the product and by the row scales after it), then the bias (fused into
  GELU after the first feed-forward product). Measured against the alternatives on this
  machine (one thread): MatMulNBits with the original 4-bit blocks (accuracy level 4) was
  1.7–1.9x slower per passage, MatMulInteger with int8 activations (s8s8) 15x slower,
  MatMulInteger followed by Cast and two Muls (build 1) 3–5% slower; per-tensor activation
  scales (DynamicQuantize*) would make a passage's vector depend on the batch it ran in;
- GELU (erf) and LayerNormalization left unfused by us; the session disables onnxruntime's
  SkipLayerNormalization fusion (its CPU kernel was ~7x slower, still ~20% slower overall
  in 1.32; e5_encoder.py).
No padding and no mask (build 2): the encoder runs windows of one length per call
(e5_encoder.py), so every token is attended to and averaged. Without a key padding mask
onnxruntime's attention takes its flash-attention kernel (tiled, the T x T scores never
stored): with the two changes above a 126-token passage cost ~10% less CPU than build 1's
masked, padded batches (ops/bench/bench_e5.py).
Input: `x0` (batch, tokens, 384) float, the summed word + position + type embeddings
(gathered in numpy from the mapped file: the 250k-row table never enters the graph).
Output: `pooled` (batch, 384), the mean of the last hidden states over all the tokens
(<s> and </s> included).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from vault_agent.semantic.e5_encoder import GRAPH_FILE, TOKENIZER_FILE
from vault_agent.semantic.e5_tokenizer import build_model_proto
from vault_agent.semantic.e5_weights import E5Weights, dequantize_q4, read_weights

OPSET = 21
IR_VERSION = 10

__all__ = ["build_graph", "main", "requantize_int8"]


def requantize_int8(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(out, in) float weights → (in, out) int8 matrix and (out,) float32 scales, symmetric
    per output channel."""
    peak = np.abs(weights).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(weights / scale[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(codes.T), scale


class _Graph:
    """Nodes and initializers under construction, with unique output names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(
        self, kind: str, inputs: list[str], *, outputs: int = 1, domain: str = "", **attrs: Any
    ) -> list[str]:
        self._n += 1
        names = [f"{kind}_{self._n}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(kind, inputs, names, domain=domain, **attrs))
        return names

    def one(self, kind: str, inputs: list[str], *, domain: str = "", **attrs: Any) -> str:
        return self.op(kind, inputs, domain=domain, **attrs)[0]


class _Builder:
    def __init__(self, weights: E5Weights) -> None:
        self.w = weights
        self.g = _Graph()
        g = self.g
        self.c127 = g.const("c127", np.array(127.0, np.float32))
        self.tiny = g.const("tiny", np.array(1e-30, np.float32))
        self.last_axis = g.const("last_axis", np.array([-1], np.int64))
        self.zero_point = g.const("zero_point", np.array(128, np.uint8))

    def product(self, x: str, name: str, w: np.ndarray) -> str:
        """x @ w.T with int8 weights and per-token int8 activations (no bias)."""
        g = self.g
        codes, col_scale = requantize_int8(w)
        peak = g.one("ReduceMax", [g.one("Abs", [x]), self.last_axis], keepdims=1)
        row_scale = g.one("Div", [g.one("Max", [peak, self.tiny]), self.c127])  # (B, T, 1)
        zero_points = g.one("Expand", [self.zero_point, g.one("Shape", [row_scale])])
        quantised = g.one(
            "QuantizeLinear", [x, row_scale, zero_points], axis=2, block_size=int(w.shape[1])
        )  # one block per row: per-token scales
        return g.one(
            "MatMulIntegerToFloat",
            [
                quantised,
                g.const(f"{name}.w", codes),
                row_scale,
                g.const(f"{name}.s", col_scale),
                self.zero_point,
            ],
            domain="com.microsoft",
        )

    def linear(self, x: str, name: str, w: np.ndarray, bias: np.ndarray) -> str:
        """x @ w.T + bias (see `product`)."""
        return self.g.one(
            "Add", [self.product(x, name, w), self.g.const(f"{name}.b", bias.astype(np.float32))]
        )

    def layer_norm(self, x: str, prefix: str) -> str:
        return self.g.one(
            "LayerNormalization",
            [
                x,
                self.g.const(f"{prefix}.w", self.w.f32(f"{prefix}.w")),
                self.g.const(f"{prefix}.b", self.w.f32(f"{prefix}.b")),
            ],
            axis=-1,
            epsilon=self.w.dims.eps,
        )

    def dense(self, name: str, rows: int, cols: int, mul: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        w = dequantize_q4(self.w.q4(f"{name}.w", rows, cols)) * np.float32(mul)
        return w, self.w.f32(f"{name}.b") * np.float32(mul)

    def block(self, x: str, layer: int) -> str:
        d = self.w.dims
        g = self.g
        p = f"l{layer}"
        head_scale = 1.0 / float(np.sqrt(d.hidden // d.heads))
        parts = [
            self.dense(f"{p}.q", d.hidden, d.hidden, head_scale),
            self.dense(f"{p}.k", d.hidden, d.hidden),
            self.dense(f"{p}.v", d.hidden, d.hidden),
        ]
        qkv = self.product(x, f"{p}.qkv", np.concatenate([w for w, _ in parts]))
        q, k, v = g.op("Split", [qkv], outputs=3, axis=-1, num_outputs=3)
        qkv_bias = g.const(f"{p}.qkv.b", np.concatenate([b for _, b in parts]).astype(np.float32))
        ctx = g.one(
            "MultiHeadAttention", [q, k, v, qkv_bias], domain="com.microsoft", num_heads=d.heads, scale=1.0
        )
        x = self.layer_norm(
            g.one("Add", [x, self.linear(ctx, f"{p}.ao", *self.dense(f"{p}.ao", d.hidden, d.hidden))]),
            f"{p}.aln",
        )
        fi_w, fi_b = self.dense(f"{p}.fi", d.ff, d.hidden)
        mid = g.one(
            "BiasGelu",
            [self.product(x, f"{p}.fi", fi_w), g.const(f"{p}.fi.b", fi_b.astype(np.float32))],
            domain="com.microsoft",
        )
        out = self.linear(mid, f"{p}.fo", *self.dense(f"{p}.fo", d.hidden, d.ff))
        return self.layer_norm(g.one("Add", [x, out]), f"{p}.oln")

    def model(self) -> onnx.ModelProto:
        d = self.w.dims
        g = self.g
        x = self.layer_norm("x0", "emb.ln")
        for layer in range(d.layers):
            x = self.block(x, layer)
        axis1 = g.const("axis1", np.array([1], np.int64))
        g.nodes.append(helper.make_node("ReduceMean", [x, axis1], ["pooled"], keepdims=0))
        graph = helper.make_graph(
            g.nodes,
            "multilingual-e5-small",
            [helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["batch", "tokens", d.hidden])],
            [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", d.hidden])],
            g.initializers,
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
        )
        model.ir_version = IR_VERSION
        return model


def build_graph(weights: E5Weights) -> onnx.ModelProto:
    """The encoder graph of the module doc for these weights."""
    return _Builder(weights).model()


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    weights = read_weights(Path(args[0]))
    out = Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    _write(out / TOKENIZER_FILE, build_model_proto(weights))
    _write(out / GRAPH_FILE, build_graph(weights).SerializeToString())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
