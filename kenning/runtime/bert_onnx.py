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
    w = _weights(model)
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    g = _Graph()
    i64 = np.int64

    def c(name: str, value: Any, dtype: Any = np.float32) -> str:
        return g.const(name, np.asarray(value, dtype=dtype))

    def linear(x: str, prefix: str) -> str:
        weight = g.const(f"{prefix}.weight.T", np.ascontiguousarray(w[f"{prefix}.weight"].T))
        return g.op(
            "Add", g.const(f"{prefix}.bias", w[f"{prefix}.bias"]), g.op("MatMul", x, weight)
        )

    def layer_norm(x: str, prefix: str) -> str:
        scale = g.const(f"{prefix}.weight", w[f"{prefix}.weight"])
        bias = g.const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return g.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)

    zero = c("i0", [0], i64)
    shape = g.op("Shape", "input_ids")
    batch = g.op("Gather", shape, c("s0", 0, i64), axis=0)
    tokens = g.op("Gather", shape, c("s1", 1, i64), axis=0)
    positions = g.op("Range", c("r0", 0, i64), tokens, c("r1", 1, i64))
    embedded = g.op(
        "Add",
        g.op(
            "Add",
            g.op(
                "Gather",
                c("embeddings.word_embeddings.weight", w["embeddings.word_embeddings.weight"]),
                "input_ids",
            ),
            g.op(
                "Gather",
                c(
                    "embeddings.token_type_embeddings.weight",
                    w["embeddings.token_type_embeddings.weight"],
                ),
                "token_type_ids",
            ),
        ),
        g.op(
            "Gather",
            c("embeddings.position_embeddings.weight", w["embeddings.position_embeddings.weight"]),
            positions,
        ),
    )
    x = layer_norm(embedded, "embeddings.LayerNorm")

    # the key mask, [batch, 1, 1, tokens]: 0 where attended, -inf where padded
    keep = g.op(
        "Cast", g.op("Unsqueeze", "attention_mask", c("axes12", [1, 2], i64)), to=TensorProto.BOOL
    )
    key_bias = g.op("Where", keep, c("f0", [0.0]), c("ninf", [-math.inf]))
    b1, t1 = g.op("Unsqueeze", batch, zero), g.op("Unsqueeze", tokens, zero)
    split = g.op("Concat", b1, t1, c("m1", [-1], i64), c("head", [head], i64), axis=0)
    merge = g.op("Concat", b1, t1, c("m1b", [-1], i64), axis=0)
    scale = c("scale", math.sqrt(1.0 / math.sqrt(head)))
    sqrt2, f1, half = c("sqrt2", math.sqrt(2.0)), c("f1", 1.0), c("half", 0.5)

    for n in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{n}"
        q = g.op(
            "Transpose",
            g.op("Reshape", linear(x, f"{p}.attention.self.query"), split),
            perm=[0, 2, 1, 3],
        )
        k = g.op(
            "Transpose",
            g.op("Reshape", linear(x, f"{p}.attention.self.key"), split),
            perm=[0, 2, 3, 1],
        )
        v = g.op(
            "Transpose",
            g.op("Reshape", linear(x, f"{p}.attention.self.value"), split),
            perm=[0, 2, 1, 3],
        )
        scores = g.op("Add", g.op("MatMul", g.op("Mul", q, scale), g.op("Mul", k, scale)), key_bias)
        probs = g.op("Softmax", scores, axis=-1)
        probs = g.op("Where", g.op("IsNaN", probs), c(f"nan0.{n}", [0.0]), probs)
        context = g.op(
            "Reshape", g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3]), merge
        )
        attended = layer_norm(
            g.op("Add", linear(context, f"{p}.attention.output.dense"), x),
            f"{p}.attention.output.LayerNorm",
        )
        inner = linear(attended, f"{p}.intermediate.dense")
        gelu = g.op(
            "Mul", g.op("Mul", inner, g.op("Add", g.op("Erf", g.op("Div", inner, sqrt2)), f1)), half
        )
        x = layer_norm(
            g.op("Add", linear(gelu, f"{p}.output.dense"), attended), f"{p}.output.LayerNorm"
        )

    g.nodes[-1].output[0] = "last_hidden_state"
    dims = ["batch", "tokens"]
    graph = helper.make_graph(
        g.nodes,
        "bert-encoder",
        [helper.make_tensor_value_info(name, TensorProto.INT64, dims) for name in INPUTS],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])],
        g.initializers,
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="kenning", ir_version=8
    )


def export(model: Path, target: Path) -> None:
    """Write the ONNX file of the BERT encoder in ``model`` to ``target`` (about 90 MB)."""
    import onnx

    proto = build_model(model)
    onnx.checker.check_model(proto)
    onnx.save(proto, str(target))
