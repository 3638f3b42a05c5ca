"""The ONNX export of a BERT encoder without torch: the weights read from ``model.safetensors``
with numpy, the graph written with ``onnx.helper``.

It is the graph torch's TorchScript exporter wrote for ``BertModel`` (opset 17, inputs
``input_ids``, ``attention_mask``, ``token_type_ids``, output ``last_hidden_state``), op for op
where it matters: the same MatMul weights (the Linear weights transposed), the attention scale
split as ``sqrt(1/sqrt(head))`` over Q and K, an additive ``-inf`` key mask, the same LayerNorm
and erf-GELU. So ONNX Runtime computes the vectors of that export and ``quantize_dynamic`` makes
its int8 weights (tests/kenning/runtime/test_bert_onnx.py compares both with vectors recorded
from the torch export and from sentence-transformers).

Serving and the one-time export need ``onnx`` and ``onnxruntime`` only, never torch.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

from kenning.core.errors import BackendUnavailable

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray[Any, Any]]:
    """Every tensor of a ``.safetensors`` file as a numpy array (the format: an 8-byte little-endian
    header length, a JSON header of dtype/shape/offsets, then the raw little-endian data)."""
    blob = path.read_bytes()
    (length,) = struct.unpack("<Q", blob[:8])
    header: dict[str, Any] = json.loads(blob[8 : 8 + length])
    start = 8 + length
    tensors: dict[str, np.ndarray[Any, Any]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise BackendUnavailable(f"{path}: tensor {name} has dtype {spec['dtype']}")
        begin, end = spec["data_offsets"]
        array = np.frombuffer(
            blob[start + begin : start + end], dtype=np.dtype(dtype).newbyteorder("<")
        )
        tensors[name] = array.reshape(spec["shape"]).astype(dtype)
    return tensors


def _weights(model: Path) -> dict[str, np.ndarray[Any, Any]]:
    file = model / "model.safetensors"
    if not file.exists():
        raise BackendUnavailable(
            f"{model} has no model.safetensors: the torch-free export reads only that format",
            hint="convert the model to safetensors, or set KENNING_EMBEDDING_BACKEND=torch",
        )
    tensors = read_safetensors(file)
    # a BertModel saved from BertForX carries a "bert." prefix
    return {name.removeprefix("bert."): value.astype(np.float32) for name, value in tensors.items()}


class _Graph:
    """A small builder: nodes, initializers and unique names."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray[Any, Any]) -> str:
        self.initializers.append(self.numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"/{op_type}_{self._count}"
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out


def build_model(model: Path) -> Any:
    """The ``onnx.ModelProto`` of the BERT encoder in the folder ``model``. Pure (reads files)."""
    from onnx import TensorProto, helper

    config: dict[str, Any] = json.loads((model / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu":
        raise BackendUnavailable(
            f"{model} is not a BERT model with GELU (model_type {config.get('model_type')!r})",
            hint="the torch-free export knows BERT encoders only: KENNING_EMBEDDING_BACKEND=torch",
        )
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise BackendUnavailable(f"{model}: only absolute position embeddings are supported")
    encoder = _Encoder(config, _weights(model))
    x = encoder.embeddings()
    for n in range(int(config["num_hidden_layers"])):
        x = encoder.layer(x, n)
    g = encoder.g
    g.nodes[-1].output[0] = "last_hidden_state"
    dims = ["batch", "tokens"]
    graph = helper.make_graph(
        g.nodes,
        "bert-encoder",
        [helper.make_tensor_value_info(name, TensorProto.INT64, dims) for name in INPUTS],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, [*dims, encoder.hidden]
            )
        ],
        g.initializers,
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="kenning", ir_version=8
    )


class _Encoder:
    """The encoder's graph, written part by part in the exporter's node order: the embeddings and
    the key mask first, then each layer's attention and feed-forward block."""

    def __init__(self, config: dict[str, Any], weights: dict[str, np.ndarray[Any, Any]]) -> None:
        self.g = _Graph()
        self.w = weights
        self.hidden = int(config["hidden_size"])
        self.head = self.hidden // int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))

    def c(self, name: str, value: Any, dtype: Any = np.float32) -> str:
        return self.g.const(name, np.asarray(value, dtype=dtype))

    def linear(self, x: str, prefix: str) -> str:
        g, w = self.g, self.w
        weight = g.const(f"{prefix}.weight.T", np.ascontiguousarray(w[f"{prefix}.weight"].T))
        return g.op(
            "Add", g.const(f"{prefix}.bias", w[f"{prefix}.bias"]), g.op("MatMul", x, weight)
        )

    def layer_norm(self, x: str, prefix: str) -> str:
        scale = self.g.const(f"{prefix}.weight", self.w[f"{prefix}.weight"])
        bias = self.g.const(f"{prefix}.bias", self.w[f"{prefix}.bias"])
        return self.g.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=self.eps)

    def _table(self, name: str, ids: str) -> str:
        return self.g.op(
            "Gather", self.c(f"embeddings.{name}.weight", self.w[f"embeddings.{name}.weight"]), ids
        )

    def embeddings(self) -> str:
        """Word + token type + position embeddings, normalised; then the shared constants of
        every layer (the key mask, the head split and merge shapes, the scale, GELU's)."""
        from onnx import TensorProto

        g, c, i64 = self.g, self.c, np.int64
        zero = c("i0", [0], i64)
        shape = g.op("Shape", "input_ids")
        batch = g.op("Gather", shape, c("s0", 0, i64), axis=0)
        tokens = g.op("Gather", shape, c("s1", 1, i64), axis=0)
        positions = g.op("Range", c("r0", 0, i64), tokens, c("r1", 1, i64))
        words_and_types = g.op(
            "Add",
            self._table("word_embeddings", "input_ids"),
            self._table("token_type_embeddings", "token_type_ids"),
        )
        embedded = g.op("Add", words_and_types, self._table("position_embeddings", positions))
        x = self.layer_norm(embedded, "embeddings.LayerNorm")
        # the key mask, [batch, 1, 1, tokens]: 0 where attended, -inf where padded
        keep = g.op(
            "Cast",
            g.op("Unsqueeze", "attention_mask", c("axes12", [1, 2], i64)),
            to=TensorProto.BOOL,
        )
        self.key_bias = g.op("Where", keep, c("f0", [0.0]), c("ninf", [-math.inf]))
        b1, t1 = g.op("Unsqueeze", batch, zero), g.op("Unsqueeze", tokens, zero)
        self.split = g.op("Concat", b1, t1, c("m1", [-1], i64), c("head", [self.head], i64), axis=0)
        self.merge = g.op("Concat", b1, t1, c("m1b", [-1], i64), axis=0)
        self.scale = c("scale", math.sqrt(1.0 / math.sqrt(self.head)))
        self.sqrt2, self.f1, self.half = c("sqrt2", math.sqrt(2.0)), c("f1", 1.0), c("half", 0.5)
        return x

    def _heads(self, x: str, prefix: str, perm: list[int]) -> str:
        return self.g.op(
            "Transpose", self.g.op("Reshape", self.linear(x, prefix), self.split), perm=perm
        )

    def layer(self, x: str, n: int) -> str:
        """One encoder layer: self-attention, then the feed-forward block with erf-GELU."""
        g, p = self.g, f"encoder.layer.{n}"
        q = self._heads(x, f"{p}.attention.self.query", [0, 2, 1, 3])
        k = self._heads(x, f"{p}.attention.self.key", [0, 2, 3, 1])
        v = self._heads(x, f"{p}.attention.self.value", [0, 2, 1, 3])
        scaled = g.op("MatMul", g.op("Mul", q, self.scale), g.op("Mul", k, self.scale))
        probs = g.op("Softmax", g.op("Add", scaled, self.key_bias), axis=-1)
        probs = g.op("Where", g.op("IsNaN", probs), self.c(f"nan0.{n}", [0.0]), probs)
        context = g.op(
            "Reshape", g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3]), self.merge
        )
        attended = self.layer_norm(
            g.op("Add", self.linear(context, f"{p}.attention.output.dense"), x),
            f"{p}.attention.output.LayerNorm",
        )
        inner = self.linear(attended, f"{p}.intermediate.dense")
        erf = g.op("Add", g.op("Erf", g.op("Div", inner, self.sqrt2)), self.f1)
        gelu = g.op("Mul", g.op("Mul", inner, erf), self.half)
        return self.layer_norm(
            g.op("Add", self.linear(gelu, f"{p}.output.dense"), attended), f"{p}.output.LayerNorm"
        )


def export(model: Path, target: Path) -> None:
    """Write the ONNX file of the BERT encoder in ``model`` to ``target`` (about 90 MB)."""
    import onnx

    proto = build_model(model)
    onnx.checker.check_model(proto)
    onnx.save(proto, str(target))
