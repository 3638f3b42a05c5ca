"""The memory schema, declared once. Pure: no I/O.

FT.CREATE arguments, the RETURN list, the hash codec and the index fingerprint are all derived from
``FIELDS`` so a field can never silently disappear from results or from an index.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from kenning.core.models import Memory

NAMESPACES: tuple[str, ...] = ("episodic", "knowledge", "preference", "project", "skill")
INDEX = "memories"  # the one index's name part and its field in the index registry
VECTOR_FIELD = "vector"
DISTANCE_ALIAS = "distance"
TAG_SEPARATOR = ","
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200
# The TEXT index keeps no term positions (no query asks for a phrase or a slop: every caller looks
# words up one by one and confirms them in the content) and no stems (every caller confirms a
# match on the literal word): -0.2 KB per memory on RediSearch. Both engines take both options.
INDEX_OPTIONS: tuple[str, ...] = ("NOOFFSETS",)
TEXT_OPTIONS: tuple[str, ...] = ("NOSTEM",)


class Kind(Enum):
    TEXT = "TEXT"
    TAG = "TAG"
    NUMERIC = "NUMERIC"
    STORED = "STORED"  # kept in the hash, not indexed
    JSON = "JSON"  # a list or mapping kept as JSON text, not indexed


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: Kind
    sortable: bool = False
    integer: bool = False  # decodes to int
    number: bool = False  # a STORED field that decodes to float

    def create_args(self) -> list[str]:
        if self.kind in (Kind.STORED, Kind.JSON):
            return []
        args = [self.name, self.kind.value]
        if self.kind is Kind.TAG:
            args += ["SEPARATOR", TAG_SEPARATOR]
        if self.kind is Kind.TEXT:
            args += TEXT_OPTIONS
        if self.sortable:
            args.append("SORTABLE")
        return args


# Only what a query filters or sorts on is indexed: each indexed field costs index bytes per memory
# (bench/FINDINGS.md, issue 38). The others are STORED: written, returned and decoded, not indexed.
# SORTABLE (a per-document copy of the value in RediSearch) only on the default listing order:
# SORTBY another NUMERIC field works on both engines, which then read the value from the document.
FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("content", Kind.TEXT),
    FieldSpec("project", Kind.TAG),
    FieldSpec("tags", Kind.TAG),
    FieldSpec("kind", Kind.TAG),
    # one index holds every namespace: a search names the ones it wants
    FieldSpec("namespace", Kind.TAG),
    FieldSpec("state", Kind.TAG),
    FieldSpec("trust", Kind.TAG),
    FieldSpec("actor", Kind.TAG),
    FieldSpec("source_key", Kind.STORED),
    FieldSpec("doc_id", Kind.STORED),
    FieldSpec("created_at", Kind.NUMERIC, sortable=True),
    FieldSpec("updated_at", Kind.NUMERIC),
    FieldSpec("valid_from", Kind.STORED, number=True),
    FieldSpec("valid_to", Kind.STORED, number=True),
    FieldSpec("event_date", Kind.NUMERIC),
    FieldSpec("expires_at", Kind.NUMERIC),
    FieldSpec("recall_count", Kind.NUMERIC, integer=True),
    FieldSpec("last_recalled", Kind.NUMERIC),
    FieldSpec("weight", Kind.STORED, number=True),
    FieldSpec("experience_weight", Kind.STORED, number=True),
    FieldSpec("title", Kind.STORED),
    FieldSpec("source", Kind.STORED),
    FieldSpec("chunk_index", Kind.STORED, integer=True),
    FieldSpec("superseded_by", Kind.STORED),
    FieldSpec("state_reason", Kind.STORED),
    FieldSpec("state_actor", Kind.STORED),
    FieldSpec("state_changed_at", Kind.STORED, number=True),
    # derived from the content by ``decode``, never written (a hash written before keeps its copy)
    FieldSpec("content_sha", Kind.STORED),
    FieldSpec("reinstate_hints", Kind.JSON),
    FieldSpec("metadata", Kind.JSON),
)
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
_BY_NAME = {f.name: f for f in FIELDS}


def create_args(index: str, key_prefix: str, dim: int) -> list[str]:
    """FT.CREATE arguments for the memory index (every namespace,
    ``key_prefix`` = ``memory_prefix``)."""
    schema: list[str] = []
    for spec in FIELDS:
        schema += spec.create_args()
    schema += [
        VECTOR_FIELD,
        "VECTOR",
        "HNSW",
        "10",
        "TYPE",
        "FLOAT32",
        "DIM",
        str(dim),
        "DISTANCE_METRIC",
        "COSINE",
        "M",
        str(HNSW_M),
        "EF_CONSTRUCTION",
        str(HNSW_EF_CONSTRUCTION),
    ]
    head = ["FT.CREATE", index, "ON", "HASH", "PREFIX", "1", key_prefix, *INDEX_OPTIONS]
    return [*head, "SCHEMA", *schema]


def fingerprint(dim: int) -> str:
    """A short digest of everything that shapes an index; a change means a migration."""
    declared = [
        [f.name, f.kind.value, f.sortable] for f in FIELDS if f.kind not in (Kind.STORED, Kind.JSON)
    ]
    payload = json.dumps(
        {
            "fields": declared,
            "dim": dim,
            "sep": TAG_SEPARATOR,
            "hnsw": [HNSW_M, HNSW_EF_CONSTRUCTION],
            "options": [*INDEX_OPTIONS, *TEXT_OPTIONS],
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:10]


def return_fields(*, with_distance: bool = False) -> list[str]:
    """The RETURN list: every declared field, never the vector."""
    names = list(FIELD_NAMES)
    return [*names, DISTANCE_ALIAS] if with_distance else names


def vector_bytes(vector: np.ndarray[Any, Any]) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def bytes_vector(raw: bytes) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.frombuffer(raw, dtype="<f4")


# Values a memory hash leaves out because decoding restores them (less per memory, hash and index):
# the weights at their neutral 1.0 and a count of 0 (a filter on it is a negation,
# ``-@recall_count:[1 +inf]``, which also matches a 0 an older layout stored). Not the default trust
# or kind: decisions are gated on the value as read.
_NEUTRAL: dict[str, object] = {"weight": 1.0, "experience_weight": 1.0, "recall_count": 0}

# Times left out while they equal ``created_at`` (``decode`` restores them): a validity that starts
# when the memory was written, and a memory never changed since (a SORTBY on ``updated_at`` is two
# searches, merged: kenning.store.ordering; no query filters on either).
IMPLIED_TIMES = ("valid_from", "updated_at")
# A field derived from another, never written: the checksum of the content (-77 B per memory).
DERIVED = "content_sha"


def content_sha(text: str) -> str:
    """The content's checksum as memories carry it (``Memory.content_sha``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def encode(memory: Memory, vector: np.ndarray[Any, Any] | None = None) -> dict[str, str | bytes]:
    """Memory -> hash fields. Empty values are omitted, never written as empty strings; so are
    neutral values, the times equal to ``created_at`` and the content's checksum (``decode``
    restores them)."""
    out: dict[str, str | bytes] = {}
    for spec in FIELDS:
        value = getattr(memory, spec.name)
        if (
            spec.name == DERIVED
            or _NEUTRAL.get(spec.name) == value
            or (spec.name in IMPLIED_TIMES and value == memory.created_at)
        ):
            continue
        text = _encode_value(spec, value)
        if text is not None:
            out[spec.name] = text
    if vector is not None:
        out[VECTOR_FIELD] = vector_bytes(vector)
    return out


def encode_changes(changes: dict[str, Any]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Field changes -> (fields to set, fields to remove): a None or empty value removes the field;
    so does the derived checksum (an older layout's stored copy must not outlive its content)."""
    sets: dict[str, str] = {}
    removes: list[str] = []
    for name, value in changes.items():
        spec = _BY_NAME.get(name)
        if spec is None:
            raise ValueError(f"{name!r} is not a declared memory field")
        text = None if name == DERIVED else _encode_value(spec, value)
        if text is None:
            removes.append(name)
        else:
            sets[name] = text
    return sets, tuple(removes)


def _encode_value(spec: FieldSpec, value: Any) -> str | None:
    if value is None:
        return None
    if spec.kind is Kind.JSON:
        return json.dumps(value, sort_keys=True) if value else None
    if spec.name == "tags":
        return TAG_SEPARATOR.join(value) if value else None
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    return text if text != "" else None


def decode(key: str, fields: dict[str, str]) -> Memory:
    """Hash fields (already decoded to str) -> Memory. Unknown fields are ignored."""
    values: dict[str, Any] = {}
    for name, raw in fields.items():
        convert = _DECODERS.get(name)
        if convert is not None:
            values[name] = convert(raw)
    for name in IMPLIED_TIMES:
        if name not in values and "created_at" in values:
            values[name] = values["created_at"]
    if "content" in values:
        values[DERIVED] = content_sha(values["content"])
    return Memory(key=key, **values)


def _json(raw: str) -> Any:
    loaded = json.loads(raw)
    return tuple(loaded) if isinstance(loaded, list) else loaded


def _tags(raw: str) -> tuple[str, ...]:
    return tuple(t for t in raw.split(TAG_SEPARATOR) if t)


def _integer(raw: str) -> int:
    return int(float(raw))


def _text(raw: str) -> str:
    return raw


def _decoder(spec: FieldSpec) -> Callable[[str], Any]:
    if spec.kind is Kind.JSON:
        return _json
    if spec.name == "tags":
        return _tags
    if spec.integer:
        return _integer
    if spec.kind is Kind.NUMERIC or spec.number:
        return float
    return _text


# One converter per field, chosen once: decoding runs for every search hit on the recall hot path.
_DECODERS: dict[str, Callable[[str], Any]] = {spec.name: _decoder(spec) for spec in FIELDS}


def key_prefix(prefix: str, namespace: str) -> str:
    return f"{prefix}mem:{namespace}:"


def memory_prefix(prefix: str) -> str:
    """The key prefix of every memory hash (and of nothing else): the one index covers it."""
    return f"{prefix}mem:"


def index_name(prefix: str, dim: int) -> str:
    """The one index over every namespace's memories (``namespace`` is a TAG field in it)."""
    return f"{prefix}idx:{INDEX}:{fingerprint(dim)}"


def generation_name(prefix: str, dim: int, stamp: int) -> str:
    """A rebuilt index of the current schema: the canonical name and the rebuild's stamp. A rebuild
    never drops the index searches use; it builds a new generation and the registry switches."""
    return f"{index_name(prefix, dim)}:r{stamp}"


def is_current(name: str | None, prefix: str, dim: int) -> bool:
    """Whether ``name`` indexes the current schema: the canonical index or a rebuilt generation."""
    canonical = index_name(prefix, dim)
    return name is not None and (name == canonical or name.startswith(f"{canonical}:r"))


def namespace_of(key: str, prefix: str) -> str:
    """The namespace encoded in a memory key, or '' when the key is not a
    memory key of this prefix."""
    head = f"{prefix}mem:"
    if not key.startswith(head):
        return ""
    namespace, _, rest = key[len(head) :].partition(":")
    return namespace if namespace in NAMESPACES and rest else ""
