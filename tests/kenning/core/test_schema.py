"""The schema declaration and everything derived from it (pure)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from kenning.core import schema
from kenning.core.models import Memory


def test_codec_round_trips_every_field() -> None:
    memory = Memory(
        key="k:mem:knowledge:01",
        content="c",
        namespace="knowledge",
        project="p",
        tags=("a", "b/c"),
        kind="fact",
        state="deprioritised",
        trust="verified",
        actor="me",
        source_key="k:mem:knowledge:00",
        doc_id="d1",
        created_at=1.5,
        updated_at=2.5,
        valid_from=1.0,
        valid_to=3.0,
        event_date=4.0,
        expires_at=5.0,
        recall_count=7,
        last_recalled=6.0,
        weight=0.5,
        experience_weight=1.8,
        title="t",
        source="s",
        chunk_index=2,
        superseded_by="k:mem:knowledge:02",
        state_reason="why",
        state_actor="who",
        state_changed_at=8.0,
        content_sha=schema.content_sha("c"),
        reinstate_hints=("deploy",),
        metadata={"x": [1, 2]},
    )
    fields = schema.encode(memory)
    decoded = schema.decode(
        memory.key, {k: v.decode() if isinstance(v, bytes) else v for k, v in fields.items()}
    )
    assert decoded == memory


def test_empty_values_are_omitted_not_written_empty() -> None:
    fields = schema.encode(Memory(key="k", content="c", created_at=1.0))
    assert "valid_to" not in fields
    assert "tags" not in fields
    assert "metadata" not in fields
    assert all(v != "" for v in fields.values())


def test_neutral_weights_and_a_validity_starting_at_creation_are_left_out_and_restored() -> None:
    sha = schema.content_sha("c")
    plain = Memory(
        key="k",
        content="c",
        created_at=1.0,
        valid_from=1.0,
        weight=1.0,
        experience_weight=1.0,
        content_sha=sha,
    )
    fields = schema.encode(plain)
    assert {"weight", "experience_weight", "valid_from"} & set(fields) == set()
    assert schema.decode("k", {k: str(v) for k, v in fields.items()}) == plain
    # positive control: values that say something are written
    moved = Memory(
        key="k",
        content="c",
        created_at=2.0,
        valid_from=1.0,
        weight=0.5,
        experience_weight=1.8,
        content_sha=sha,
    )
    kept = schema.encode(moved)
    assert (kept["weight"], kept["experience_weight"], kept["valid_from"]) == ("0.5", "1.8", "1.0")
    assert schema.decode("k", {k: str(v) for k, v in kept.items()}) == moved


def test_the_content_checksum_is_derived_on_decode_never_written() -> None:
    memory = Memory(key="k", content="deploy on friday", created_at=1.0)
    fields = schema.encode(replace(memory, content_sha=schema.content_sha(memory.content)))
    assert "content_sha" not in fields
    decoded = schema.decode("k", {k: str(v) for k, v in fields.items()})
    assert decoded.content_sha == hashlib.sha256(b"deploy on friday").hexdigest()
    # a hash written before the checksum was derived still reads, and as the same value
    old = {**{k: str(v) for k, v in fields.items()}, "content_sha": decoded.content_sha}
    assert schema.decode("k", old) == decoded
    # a change of the checksum removes a stored copy instead of writing it
    sets, removes = schema.encode_changes({"content": "x", "content_sha": "y"})
    assert (sets, removes) == ({"content": "x"}, ("content_sha",))


def test_only_filtered_or_sorted_fields_are_indexed_and_the_text_keeps_no_offsets_or_stems() -> (
    None
):
    args = schema.create_args("idx", "p:", 384)
    body = args[args.index("SCHEMA") + 1 :]
    assert "NOOFFSETS" in args[: args.index("SCHEMA")]
    assert body[: body.index("project")] == ["content", "TEXT", "NOSTEM"]
    for name in ("source_key", "doc_id", "valid_from", "valid_to", "weight", "content_sha"):
        assert name not in body
        assert name in schema.return_fields()  # stored and returned all the same
    # positive control: what queries filter or sort on is in the index
    for name in ("project", "state", "created_at", "updated_at", "recall_count", "expires_at"):
        assert name in body
    assert [body[i - 2] for i, a in enumerate(body) if a == "SORTABLE"] == ["created_at"]


def test_create_args_declare_every_indexed_field_and_the_vector() -> None:
    args = schema.create_args("idx", "p:", 384)
    for spec in schema.FIELDS:
        if spec.kind in (schema.Kind.TEXT, schema.Kind.TAG, schema.Kind.NUMERIC):
            assert spec.name in args
    assert args[args.index("DIM") + 1] == "384"
    assert "COSINE" in args


def test_return_list_never_carries_the_vector() -> None:
    assert schema.VECTOR_FIELD not in schema.return_fields(with_distance=True)
    assert "distance" in schema.return_fields(with_distance=True)
    assert set(schema.FIELD_NAMES) <= set(schema.return_fields())


def test_fingerprint_changes_with_the_dimension_and_is_stable() -> None:
    assert schema.fingerprint(384) == schema.fingerprint(384)
    assert schema.fingerprint(384) != schema.fingerprint(768)


def test_namespace_of_keys() -> None:
    assert schema.namespace_of("kenning:mem:episodic:01ABC", "kenning:") == "episodic"
    assert schema.namespace_of("kenning:mem:nope:01ABC", "kenning:") == ""
    assert schema.namespace_of("other:mem:episodic:01ABC", "kenning:") == ""
