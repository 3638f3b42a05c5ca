"""Credentials kept out of the store at every write path (docs/memory-model.md, "Secrets"):
remember, update, bulk import, `kenning import`, the redact policy, and `kenning scan` for what an
older store already holds. Each refusal has its positive control: the same memory without the
secret is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.knowledge.feeds.config import Feed
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from kenning_cli.main import load_commands, main
from tests.conftest import make_settings
from tests.feeds_server import FeedServer, feed_server  # noqa: F401 (a fixture)

load_commands()
KEY = "AKIAZ3MSJV4WPLQ2ZQ7X"
SAFE = "The release job uploads the wheel to the artifacts bucket with the CI role"
LEAKY = f"The release job uploads the wheel to the artifacts bucket with key {KEY}"


def _contents(engine: Engine) -> list[str]:
    return [m.content for m in engine.memories.list(Listing(projects=("rel",))).items]


def test_remember_refuses_a_credential_and_stores_nothing(engine: Engine) -> None:
    with pytest.raises(InvalidInput, match="AWS Access Key") as refused:
        engine.memories.remember(Draft(LEAKY, project="rel"), actor="t")
    assert KEY not in f"{refused.value.message} {refused.value.hint}"
    assert _contents(engine) == []
    engine.memories.remember(Draft(SAFE, project="rel"), actor="t")  # positive control
    assert _contents(engine) == [SAFE]


def test_an_edit_that_adds_a_credential_is_refused(engine: Engine) -> None:
    key = engine.memories.remember(Draft(SAFE, project="rel"), actor="t").key
    with pytest.raises(InvalidInput, match="credential"):
        engine.memories.update(key, LEAKY, actor="t")
    assert _contents(engine) == [SAFE]
    engine.memories.update(key, SAFE + " (since March)", actor="t")  # positive control
    assert _contents(engine) == [SAFE + " (since March)"]


def test_the_redact_policy_stores_the_text_without_the_secret(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    redacting = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        credentials="redact",
    )
    engine = Engine.open(redacting, client, embedder, clock=clock)
    try:
        engine.memories.remember(Draft(LEAKY, project="rel"), actor="t")
        assert _contents(engine) == [
            "The release job uploads the wheel to the artifacts bucket with key "
            "[REDACTED: AWS Access Key]"
        ]
    finally:
        engine.close()


def test_bulk_import_names_the_line_with_a_credential(engine: Engine) -> None:
    drafts = [Draft(SAFE, project="rel"), Draft(LEAKY, project="rel")]
    problems = engine.imports.bulk.problems(drafts, actor="t")
    assert [(index, "AWS Access Key" in exc.message) for index, exc in problems] == [(1, True)]


def test_kenning_import_refuses_the_file_whole(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path, settings)
    path = tmp_path / "in.jsonl"
    rows = [{"content": SAFE, "project": "rel"}, {"content": LEAKY, "project": "rel"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert main(["import", str(path)]) == 2
    out = capsys.readouterr()
    assert "line 2" in out.err
    assert "AWS Access Key" in out.err
    assert KEY not in out.out + out.err
    assert _contents(engine) == []
    path.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")  # positive control
    assert main(["import", str(path)]) == 0
    assert _contents(engine) == [SAFE]


def test_kenning_scan_finds_what_an_older_store_holds_and_redacts_it(
    engine: Engine,
    client: valkey.Valkey,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path, settings)
    key = engine.memories.remember(Draft(SAFE, project="rel"), actor="t").key
    assert main(["scan"]) == 0  # positive control: a clean store
    assert "no stored credentials found" in capsys.readouterr().out
    client.hset(key, "content", LEAKY)  # as a store written before the check holds it
    assert [hit.key for hit in engine.inspection.credentials()] == [key]
    assert main(["scan"]) == 1
    out = capsys.readouterr().out
    assert key in out
    assert "AWS Access Key" in out
    assert KEY not in out
    assert main(["scan", "--redact"]) == 0
    assert KEY not in engine.memories.get(key).content
    assert "[REDACTED: AWS Access Key]" in engine.memories.get(key).content
    assert engine.inspection.credentials() == []


def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("LOG_LEVEL", "WARNING"),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))


LEAKY_FEED = f"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>ops notes</title><link>http://example.org/</link>
<description>ops</description>
<item><title>Bucket migration done</title><link>http://example.org/a</link><guid>a</guid>
<description>The artifacts bucket moved to eu-west-1; CI writes with the new role.</description>
</item>
<item><title>Temporary access</title><link>http://example.org/b</link><guid>b</guid>
<description>Until Friday CI uses the access key {KEY} for the bucket.</description></item>
</channel></rss>"""


def test_a_feed_item_with_a_credential_is_rejected_and_said_so(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    feed_server: FeedServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    tuned = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        feed_allow=feed_server.allow,
        feeds_file=tmp_path / "feeds.yml",
    )
    engine = Engine.open(tuned, client, embedder, clock=clock)
    try:
        feed_server.serve("/ops.xml", LEAKY_FEED.encode())
        run = engine.feeds.run(Feed(name="ops", url=feed_server.url("/ops.xml")))
        assert (run.outcome, len(run.new), run.rejected) == ("fetched", 1, 1)
        assert any("AWS Access Key" in note for note in run.notes)
        assert all(KEY not in note for note in run.notes)
        stored = [m.content for m in engine.memories.list(Listing(namespaces=["knowledge"])).items]
        assert len(stored) == 1  # the other item is stored: the positive control
        assert "eu-west-1" in stored[0]
    finally:
        engine.close()
