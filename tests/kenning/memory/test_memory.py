"""remember / get / list / update / retag / forget and their audit events, bad input and outages."""

from __future__ import annotations

from pathlib import Path

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import BackendUnavailable, EmbeddingMismatch, InvalidInput, NotFound
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft, ForgetPreview, Forgotten
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder, SentenceTransformerEmbedder
from kenning.store import connect, digest
from tests.conftest import free_port, make_settings
from tests.margins import assert_pair


def test_remember_writes_every_field_and_audits(engine: Engine, clock: ManualClock) -> None:
    result = engine.memories.remember(
        Draft(
            "Use uv for virtualenvs in this repo.",
            namespace="preference",
            project="Kenning-API",
            tags=["Tooling", "python"],
            event_date="2026-03-14",
        ),
        actor="claude-code",
    )
    memory = engine.memories.get(result.key)
    assert (memory.namespace, memory.project, memory.tags) == (
        "preference",
        "kenning-api",
        ("tooling", "python"),
    )
    assert memory.created_at == clock.now()
    assert memory.actor == "claude-code"
    assert memory.event_date == 1773446400.0
    [event] = engine.store.audit.history(result.key)
    assert (event.actor, event.action, event.before, event.after) == (
        "claude-code",
        "remember",
        "",
        digest("Use uv for virtualenvs in this repo."),
    )


def test_duplicate_only_within_namespace_and_project(engine: Engine) -> None:
    text = "The API rate limit is 600 requests per minute."
    first = engine.memories.remember(Draft(text, project="a"), actor="t")
    other_project = engine.memories.remember(Draft(text, project="b"), actor="t")
    other_namespace = engine.memories.remember(
        Draft(text, project="a", namespace="episodic"), actor="t"
    )
    forced = engine.memories.remember(Draft(text, project="a"), actor="t", allow_duplicate=True)
    assert [r.status for r in (other_project, other_namespace, forced)] == ["stored"] * 3
    assert len({first.key, other_project.key, other_namespace.key, forced.key}) == 4
    assert len(engine.store.audit.history(forced.key)) == 1  # allow_duplicate never skips the audit


@pytest.mark.parametrize(
    ("draft", "message"),
    [
        (Draft("x" * 50_001), "50,000"),
        (Draft("   "), "empty"),
        (Draft("x", tags=[f"t{i}" for i in range(21)]), "at most 20"),
        (Draft("x", tags=["a" * 101]), "tag"),
        (Draft("x", namespace="secrets"), "namespace"),
        (Draft("x", kind="weird"), "kind"),
        (Draft("x", event_date="last blue moon"), "not a date"),
    ],
)
def test_bad_input_is_refused_with_a_hint_and_writes_nothing(
    engine: Engine, draft: Draft, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message) as info:
        engine.memories.remember(draft, actor="t")
    assert info.value.hint or "at most" in info.value.message
    assert engine.memories.list(Listing()).total == 0


def test_long_content_hint_says_how_to_rewrite(engine: Engine) -> None:
    with pytest.raises(InvalidInput) as info:
        engine.memories.remember(Draft("y" * 60_000), actor="t")
    assert "remember_document" in (info.value.hint or "")


def test_list_filters_sorts_and_pages_through_the_index(engine: Engine, clock: ManualClock) -> None:
    keys = []
    for n, topic in enumerate(
        [
            "docker layer caching",
            "pytest fixtures",
            "ruff rules",
            "mypy strict",
            "valkey persistence",
        ]
    ):
        clock.advance(60)
        keys.append(
            engine.memories.remember(
                Draft(f"Note about {topic}", project="p", tags=["t"]), actor="t"
            ).key
        )
        if n == 0:
            engine.memories.remember(Draft("Unrelated project note", project="q"), actor="t")
    first = engine.memories.list(Listing(projects=["p"], limit=2))
    second = engine.memories.list(Listing(projects=["p"], limit=2, offset=2))
    oldest = engine.memories.list(Listing(projects=["p"], limit=1, descending=False))
    assert first.total == 5
    assert [m.key for m in first.items] == [keys[4], keys[3]]
    assert [m.key for m in second.items] == [keys[2], keys[1]]
    assert [m.key for m in oldest.items] == [keys[0]]
    assert engine.memories.list(Listing(projects=["q"])).total == 1
    assert engine.memories.list(Listing(tags=["t"], namespaces=["knowledge"])).total == 5


@pytest.mark.parametrize(
    "listing",
    [
        Listing(sort="content"),
        Listing(limit=0),
        Listing(limit=500),
        Listing(states=["gone"]),
        Listing(projects=["bad name"]),
    ],
)
def test_bad_listing_is_refused(engine: Engine, listing: Listing) -> None:
    with pytest.raises(InvalidInput):
        engine.memories.list(listing)


def test_update_reembeds_and_keeps_the_old_text_in_the_audit(engine: Engine) -> None:
    key = engine.memories.remember(Draft("We host on Heroku."), actor="t").key
    engine.memories.update(
        key, "We host on a Hetzner VM with Kamal.", actor="person", reason="moved off Heroku"
    )
    hits = engine.recaller.recall(RecallRequest("hetzner kamal hosting")).hits
    assert hits[0].memory.key == key
    event = engine.store.audit.history(key)[-1]
    assert (event.action, event.actor, event.reason) == ("update", "person", "moved off Heroku")
    assert event.details["previous_content"] == "We host on Heroku."
    assert event.before == digest("We host on Heroku.")


def test_retag_adds_and_removes(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("Prefer httpx over requests.", tags=["http", "old"]), actor="t"
    ).key
    memory = engine.memories.retag(key, add=["python"], remove=["old"], actor="t")
    assert memory.tags == ("http", "python")
    assert engine.store.audit.history(key)[-1].details == {
        "before": ["http", "old"],
        "after": ["http", "python"],
    }


def test_forget_previews_then_deletes_by_key_with_a_snapshot(engine: Engine) -> None:
    key = engine.memories.remember(Draft("Temporary note about the old CI runner."), actor="t").key
    preview = engine.memories.forget(key, actor="t")
    assert isinstance(preview, ForgetPreview)
    assert engine.memories.get(key).content.startswith("Temporary")  # a preview deletes nothing
    done = engine.memories.forget(key, actor="person", confirm=True, reason="obsolete")
    assert done == Forgotten(key)
    with pytest.raises(NotFound):
        engine.memories.get(key)
    event = engine.store.audit.history(key)[-1]
    assert (event.action, event.actor, event.reason) == ("forget", "person", "obsolete")
    assert event.details["snapshot"]["kept"] is True
    # the audit stream never keeps a forgotten text
    assert "content" not in event.details["snapshot"]
    snapshot = engine.store.snapshots.read(key)
    assert snapshot is not None
    assert snapshot["content"] == "Temporary note about the old CI runner."


def test_forget_snapshot_expires_with_the_retention_window(
    engine: Engine, client: valkey.Valkey
) -> None:
    key = engine.memories.remember(Draft("A note that should really go away."), actor="t").key
    engine.memories.forget(key, actor="t", confirm=True)
    ttl = int(client.ttl(engine.store.snapshots.key(key)))  # type: ignore[arg-type]
    days = engine.ctx.settings.forget_retention_days
    assert days * 86_400 - 60 < ttl <= days * 86_400


def test_update_and_retag_with_a_refused_reason_change_nothing(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("CI runs on the self-hosted runner.", tags=["ci"]), actor="t"
    ).key
    with pytest.raises(InvalidInput, match="reason"):
        engine.memories.update(
            key, "CI runs on GitHub-hosted runners.", actor="t", reason="x" * 10_000
        )
    with pytest.raises(InvalidInput, match="reason"):
        engine.memories.retag(key, add=["infra"], actor="t", reason="x" * 10_000)
    memory = engine.memories.get(key)
    assert (memory.content, memory.tags) == ("CI runs on the self-hosted runner.", ("ci",))
    assert [e.action for e in engine.store.audit.history(key)] == ["remember"]
    engine.memories.retag(key, add=["infra"], actor="t", reason="control")
    assert engine.memories.get(key).tags == ("ci", "infra")


def test_forget_with_a_refused_reason_deletes_nothing(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("Note about the staging database password rotation."), actor="t"
    ).key
    with pytest.raises(InvalidInput, match="reason"):
        engine.memories.forget(key, actor="t", confirm=True, reason="x" * 10_000)
    assert engine.memories.get(key).content.startswith("Note about")
    assert [e.action for e in engine.store.audit.history(key)] == ["remember"]
    assert engine.store.snapshots.read(key) is None
    assert engine.memories.forget(key, actor="t", confirm=True, reason="rotated") == Forgotten(key)


@pytest.mark.parametrize("key", ["", "nearest", "kenning:mem:knowledge", "x:mem:knowledge:01ABC"])
def test_forget_needs_a_real_key(engine: Engine, key: str) -> None:
    with pytest.raises(InvalidInput, match="not a memory key"):
        engine.memories.forget(key, actor="t", confirm=True)


def test_valkey_outage_is_an_error_never_an_empty_result(
    tmp_path: Path, embedder: Embedder
) -> None:
    from kenning.ops.embedded import EmbeddedValkey

    settings = make_settings(tmp_path, free_port())
    with EmbeddedValkey(settings):
        engine = Engine.open(settings, connect(settings), embedder)
        engine.memories.remember(Draft("Something worth keeping."), actor="t")
    with pytest.raises(BackendUnavailable, match="unreachable"):
        engine.recaller.recall(RecallRequest("something"))
    with pytest.raises(BackendUnavailable):
        engine.memories.list(Listing())


def test_model_pin_refuses_another_model(
    settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    Engine.open(settings, client, embedder)

    class Other:
        model_name = "some-other-model"
        dimension = 384

        def embed(self, text: str) -> object:
            raise AssertionError("never called")

    with pytest.raises(EmbeddingMismatch, match="some-other-model"):
        Engine.open(settings, client, Other())  # type: ignore[arg-type]


def test_missing_model_is_backend_unavailable(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="could not be loaded"):
        SentenceTransformerEmbedder(str(tmp_path / "no-model"))


def test_search_module_missing_is_reported(tmp_path: Path, embedder: Embedder) -> None:
    import subprocess

    from kenning.ops.embedded import default_binary

    port = free_port()
    proc = subprocess.Popen(
        [
            str(default_binary()),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        plain = valkey.Valkey(port=port)
        for _ in range(100):
            try:
                plain.ping()
                break
            except valkey.exceptions.ConnectionError:
                import time

                time.sleep(0.05)
        settings = make_settings(tmp_path, port, valkey_url=f"redis://127.0.0.1:{port}/0")
        with pytest.raises(BackendUnavailable, match="no search module"):
            Engine.open(settings, connect(settings), embedder)
    finally:
        proc.terminate()
        proc.wait()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Pin numpy to 1.23.3 in the data service.", "Pin numpy to 1.26.1 in the data service."),
        (
            "The importer retries at most 2 times before it gives up.",
            "The importer retries at most 4 times before it gives up.",
        ),
        (
            "Error E11000 means a duplicate key in the orders collection.",
            "Error E11001 means a duplicate key in the orders collection.",
        ),
    ],
)
def test_a_changed_number_or_version_is_an_update_not_a_duplicate(
    engine: Engine, first: str, second: str
) -> None:
    kept = engine.memories.remember(Draft(first, project="svc"), actor="t")
    control = engine.memories.remember(Draft(first.rstrip(".") + "!", project="svc"), actor="t")
    # positive control: a true repeat
    assert (control.status, control.key) == ("duplicate", kept.key)
    update = engine.memories.remember(Draft(second, project="svc"), actor="t")
    assert update.status == "stored"
    assert update.key != kept.key


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "payments-gateway calls tax-engine over gRPC.",
            "tax-engine calls payments-gateway over gRPC.",
        ),
        (
            "The vault-proxy connection timeout is short on purpose, so that failing upstreams are "
            "dropped before the client retries.",
            "The vault-proxy connection timeout is long on purpose, so that failing upstreams are "
            "dropped before the client retries.",
        ),
    ],
)
def test_swapped_roles_other_actors_and_values_are_not_duplicates(
    engine: Engine, embedder: Embedder, first: str, second: str
) -> None:
    threshold = engine.ctx.settings.duplicate_threshold
    assert_pair(embedder, first, second, above=threshold)  # the embedding alone calls them one
    kept = engine.memories.remember(Draft(first, project="svc"), actor="t")
    control = engine.memories.remember(Draft("Note: " + first, project="svc"), actor="t")
    # positive control: a true repeat is refused
    assert (control.status, control.key) == ("duplicate", kept.key)
    other = engine.memories.remember(Draft(second, project="svc"), actor="t")
    assert other.status == "stored"
    assert other.key != kept.key
