"""`kenning import` through the real entry point (``main``), against the real store and model:
stored and findable, duplicates of the store and of earlier lines, bad input refused whole, the
dry run, stdin, and an outage part-way (a TCP proxy in front of the test Valkey cuts the
connection: the only fake)."""

from __future__ import annotations

import contextlib
import getpass
import io
import json
import socket
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import valkey

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.imports import Defaults
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder
from kenning_cli.main import load_commands, main

load_commands()

DEPLOY = "Deploy atlas-api with `fly deploy --app atlas-svc` after CI is green."
TESTS = "Run the tests with `pytest -x -q` in atlas-api."
NUMPY = "Pin numpy==1.26.4: the 2.x ABI breaks our extension."
NO_DUPLICATES = "0 duplicates (0 of memories in the store, 0 of an earlier line)"


@pytest.fixture
def cwd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> Path:
    """The environment `kenning` reads: this test's store and prefix; no developer .env leaks in."""
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("LOG_LEVEL", "WARNING"),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))
    return tmp_path


@pytest.fixture
def store(settings: Settings, client: valkey.Valkey, embedder: Embedder) -> Iterator[Engine]:
    """The test's store on the system clock, as the command writes with it."""
    opened = Engine.open(settings, client, embedder)
    yield opened
    opened.close()


def jsonl(path: Path, *rows: dict[str, Any] | str) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def total(store: Engine) -> int:
    return store.memories.list(Listing(limit=1)).total


def test_every_line_is_stored_audited_and_found_by_recall(
    cwd: Path, store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    source = jsonl(
        cwd / "notes.jsonl",
        {"content": DEPLOY, "tags": ["deploy"]},
        {
            "content": "Prefer uv over pip for new Python projects.",
            "namespace": "preference",
            "project": "global",
        },
        {
            "content": "The staging database is reset every Monday at 06:00 UTC.",
            "title": "staging reset",
            "event_date": "2026-03-14",
            "source": "wiki/ops",
        },
    )
    assert (
        main(
            [
                "import",
                str(source),
                "--project",
                "atlas-api",
                "--tag",
                "migrated",
                "--report",
                "report.jsonl",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert out.strip() == f"stored 3, {NO_DUPLICATES}, failed 0"
    assert err.endswith(f"\rimport  [{'#' * 30}]       3/3\n")  # the progress bar, complete
    report = read_jsonl(cwd / "report.jsonl")
    assert [(r["line"], r["status"]) for r in report] == [
        (1, "stored"),
        (2, "stored"),
        (3, "stored"),
    ]
    deploy, uv, staging = (store.memories.get(r["key"]) for r in report)
    assert (deploy.namespace, deploy.project, deploy.tags) == (
        "knowledge",
        "atlas-api",
        ("deploy", "migrated"),
    )
    assert (uv.namespace, uv.project, uv.tags) == ("preference", "global", ("migrated",))
    assert (staging.title, staging.source) == ("staging reset", "wiki/ops")
    assert staging.event_date == datetime(2026, 3, 14, tzinfo=UTC).timestamp()
    found = store.recaller.recall(
        RecallRequest("how do we ship atlas-api to production?", projects=["atlas-api"])
    )
    assert found.hits[0].memory.key == deploy.key
    actor = f"cli:import:{getpass.getuser()}"
    assert [(e.action, e.actor) for e in store.store.audit.history(deploy.key)] == [
        ("remember", actor)
    ]
    summary = store.store.audit.recent(limit=1)[0]
    assert (summary.action, summary.actor) == ("import", actor)
    assert summary.details["source"] == str(source)
    assert summary.details["stored"] == 3


def test_duplicates_of_the_store_and_of_earlier_lines_are_reported_not_stored(
    cwd: Path, store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = store.memories.remember(Draft(TESTS, project="atlas-api"), actor="tester")
    source = jsonl(
        cwd / "notes.jsonl",
        {"content": NUMPY},
        {"content": TESTS},  # the store holds it
        {"content": NUMPY},  # line 1 again
        {"content": NUMPY, "project": "borealis-web"},
    )  # another project: not a duplicate
    assert (
        main(
            [
                "import",
                str(source),
                "--project",
                "atlas-api",
                "--actor",
                "import:alice",
                "--report",
                "report.jsonl",
            ]
        )
        == 0
    )
    assert (
        capsys.readouterr().out.strip()
        == "stored 2, 2 duplicates (1 of memories in the store, 1 of an earlier line), failed 0"
    )
    first, again, repeat, other = read_jsonl(cwd / "report.jsonl")
    assert (first["status"], other["status"]) == ("stored", "stored")
    assert (again["status"], again["key"], "duplicate_of_line" in again) == (
        "duplicate",
        existing.key,
        False,
    )
    assert (repeat["status"], repeat["key"], repeat["duplicate_of_line"]) == (
        "duplicate",
        first["key"],
        1,
    )
    assert store.memories.list(Listing(projects=["atlas-api"])).total == 2
    assert store.memories.get(other["key"]).project == "borealis-web"
    assert store.store.audit.history(first["key"])[0].actor == "import:alice"


BAD_LINES = (  # (line, what stderr says about it); the file's lines 1 and 10 are good
    ('{"content": "Deploy with fly."', "not valid JSON: Expecting ',' delimiter"),
    (
        '{"content": "Deploy with fly.", "kind": "skill"}',
        "unknown field(s) kind (the fields are content, ",
    ),
    (
        '{"content": "Deploy with fly.", "tags": "deploy,ci"}',
        "tags must be a list of strings, not a string",
    ),
    ('{"content": "   "}', "content is empty"),
    (json.dumps({"content": "x" * 50_001}), "content is 50,001 characters; the limit is 50,000"),
    ('{"content": "Deploy with fly.", "namespace": "notes"}', "unknown namespace 'notes'"),
    (
        '{"content": "Deploy with fly.", "project": "Atlas API!"}',
        "project name 'Atlas API!' is not allowed",
    ),
    (
        '{"content": "Deploy with fly.", "event_date": "next tuesday"}',
        "event_date 'next tuesday' is not a date",
    ),
)


def test_bad_lines_are_each_named_and_nothing_is_written(
    cwd: Path, store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    good = ({"content": DEPLOY}, {"content": NUMPY})
    source = jsonl(cwd / "notes.jsonl", good[0], *(line for line, _ in BAD_LINES), good[1])
    assert main(["import", str(source), "--report", "errors.jsonl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kenning import: 8 of 10 lines are invalid; nothing was written")
    for number, (_, said) in enumerate(BAD_LINES, start=2):
        assert f"\n  line {number}: {said}" in err
    assert [e["line"] for e in read_jsonl(cwd / "errors.jsonl")] == list(range(2, 10))
    assert total(store) == 0
    # the control: the good lines import
    assert main(["import", str(jsonl(cwd / "good.jsonl", *good))]) == 0
    assert capsys.readouterr().out.strip() == f"stored 2, {NO_DUPLICATES}, failed 0"
    assert total(store) == 2


def test_limits_and_unreadable_input_are_refused_and_write_nothing(
    cwd: Path, store: Engine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    three = jsonl(cwd / "three.jsonl", {"content": DEPLOY}, {"content": TESTS}, {"content": NUMPY})
    monkeypatch.setenv("KENNING_IMPORT_MAX_LINES", "2")
    monkeypatch.setenv("KENNING_IMPORT_MAX_MB", "1")
    big = jsonl(cwd / "big.jsonl", {"content": "x" * 40_000, "title": "y" * (1024 * 1024 - 40_000)})
    for argv, said in (
        (
            [str(three)],
            "the input holds more than 2 memories (line 3) (split it into smaller files, "
            "or raise KENNING_IMPORT_MAX_LINES)",
        ),
        ([str(big)], "the input is larger than 1 MiB"),
        ([str(cwd / "absent.jsonl")], "absent.jsonl is not a file"),
        (
            [str(jsonl(cwd / "array.json", json.dumps([{"content": DEPLOY}])))],
            "a JSON array, not JSON Lines",
        ),
        ([str(jsonl(cwd / "blank.jsonl", "", "  "))], "the input holds no memories"),
        ([str(three), "--actor", " "], "actor ' ' is not allowed"),
        ([str(three), "--namespace", "notes"], "unknown namespace 'notes'"),
        ([str(three), "--tag", "Not A Tag"], "tag 'Not A Tag' is not allowed"),
        (
            [str(three), "--report", str(cwd / "no" / "report.jsonl")],
            "no is not a writable directory",
        ),
    ):
        assert main(["import", *argv]) == 2, argv
        assert said in capsys.readouterr().err
    assert total(store) == 0
    # the control: the same file within the limit
    monkeypatch.setenv("KENNING_IMPORT_MAX_LINES", "3")
    assert main(["import", str(three)]) == 0
    assert total(store) == 3


def test_a_dry_run_writes_nothing_and_says_what_the_import_does(
    cwd: Path, store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = store.memories.remember(Draft(TESTS, project="atlas-api"), actor="tester")
    source = jsonl(
        cwd / "notes.jsonl", {"content": DEPLOY}, {"content": TESTS}, {"content": DEPLOY}
    )
    argv = ["import", str(source), "--project", "atlas-api"]
    assert main([*argv, "--dry-run", "--report", "plan.jsonl"]) == 0
    assert capsys.readouterr().out.strip() == (
        "dry run: would store 1, 2 duplicates (1 of memories in the store, "
        "1 of an earlier line); nothing was written"
    )
    plan = read_jsonl(cwd / "plan.jsonl")
    assert [(r["status"], r["key"], r.get("duplicate_of_line")) for r in plan] == [
        ("new", "", None),
        ("duplicate", existing.key, None),
        ("duplicate", "", 1),
    ]
    assert total(store) == 1  # only the memory stored before
    assert [e.action for e in store.store.audit.recent(limit=5)] == ["remember"]
    # the control: the same file without --dry-run
    assert main([*argv, "--report", "done.jsonl"]) == 0
    assert (
        capsys.readouterr().out.strip()
        == "stored 1, 2 duplicates (1 of memories in the store, 1 of an earlier line), failed 0"
    )
    done = read_jsonl(cwd / "done.jsonl")
    assert [r["status"] for r in done] == ["stored", "duplicate", "duplicate"]
    assert done[2]["key"] == done[0]["key"]
    assert total(store) == 2


def test_stdin(
    cwd: Path, store: Engine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (
        f"{json.dumps({'content': 'Prefer uv over pip.'})}"
        f"\n{json.dumps({'content': 'Tabs, never spaces.'})}\n"
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode("utf-8"))))
    assert main(["import", "-", "--namespace", "preference"]) == 0
    assert capsys.readouterr().out.strip() == f"stored 2, {NO_DUPLICATES}, failed 0"
    listed = store.memories.list(Listing(namespaces=["preference"]))
    assert sorted(m.content for m in listed.items) == ["Prefer uv over pip.", "Tabs, never spaces."]
    assert store.store.audit.recent(limit=1)[0].details["source"] == "stdin"


class Cutter:
    """A TCP proxy to the test Valkey that cuts every connection, and refuses new ones, when the
    client sends more than ``searches`` FT.SEARCH commands: an outage at a
    known point of an import."""

    MARK = b"FT.SEARCH"

    def __init__(self, port: int, searches: int) -> None:
        self.target, self.left = port, searches
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.cut = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:  # the listener is closed: cut
                return
            far = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.sockets += [near, far]
            threading.Thread(target=self._pump, args=(near, far, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(far, near, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, counting: bool) -> None:
        tail = b""
        try:
            while chunk := source.recv(65536):
                if counting:
                    with self.lock:
                        self.left -= (tail + chunk).count(self.MARK) - tail.count(self.MARK)
                        if self.left < 0:
                            self._cut()
                            return
                    tail = chunk[-(len(self.MARK) - 1) :]
                sink.sendall(chunk)
        except OSError:
            pass  # the other side closed, or the cut did

    def _cut(self) -> None:
        self.cut = True
        self._refuse()
        for sock in self.sockets:
            with contextlib.suppress(OSError):  # already closed by its other side
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _refuse(self) -> None:
        """Stop accepting: a shutdown wakes the thread blocked in accept (a close alone does
        not, and the blocked accept would still take one more connection)."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()

    def close(self) -> None:
        with self.lock:
            if not self.cut:
                self._cut()
            else:
                self._refuse()


class Snipper(Cutter):
    """A TCP proxy to the test Valkey that cuts the connection carrying ``marker`` just before
    it: the commands sent before it arrive whole, the one holding it half. ``refuse``: every
    connection is cut and new ones refused from then on (the store stays away); else only that
    one, and new connections pass (a dropped connection, the store still up)."""

    def __init__(self, port: int, marker: bytes, *, refuse: bool) -> None:
        super().__init__(port, searches=1 << 30)
        self.marker, self.refuse = marker, refuse

    def _pump(self, source: socket.socket, sink: socket.socket, counting: bool) -> None:
        tail = b""
        try:
            while chunk := source.recv(65536):
                if counting and not self.cut:
                    at = (tail + chunk).find(self.marker)
                    if at >= 0:
                        sink.sendall(chunk[: max(0, at - len(tail))])
                        self._snip(source, sink)
                        return
                    tail = chunk[-(len(self.marker) - 1) :]
                sink.sendall(chunk)
        except OSError:
            pass  # the other side closed, or the cut did

    def _snip(self, near: socket.socket, far: socket.socket) -> None:
        """Close the client's side; half-close Valkey's (FIN, never a reset that would drop
        what it has not read yet) and read it to its end."""
        with self.lock:
            self.cut = True
            if self.refuse:
                self._refuse()
                others = [s for s in self.sockets if s not in (near, far)]
                for sock in others:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                    sock.close()
        with contextlib.suppress(OSError):
            near.shutdown(socket.SHUT_RDWR)
        near.close()
        far.shutdown(socket.SHUT_WR)
        threading.Thread(target=self._drain, args=(far,), daemon=True).start()

    @staticmethod
    def _drain(far: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while far.recv(65536):
                pass
        far.close()


FLEET = [
    f"Service {i} of the fleet listens on port {8000 + i} and is owned by team {i % 7}."
    for i in range(600)
]


def test_an_outage_part_way_writes_the_lines_not_stored_to_a_retry_file(
    cwd: Path,
    store: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = jsonl(cwd / "fleet.jsonl", *({"content": text} for text in FLEET))
    # Batches of 256: the first batch's 256 duplicate searches, its write pass and its 256
    # contradiction searches pass, the second batch's searches are cut (the start-up sends none).
    cutter = Cutter(settings.valkey_port, searches=2 * 256 + 10)
    monkeypatch.setenv("KENNING_VALKEY_PORT", str(cutter.port))
    try:
        assert main(["import", str(source), "--project", "fleet", "--report", "report.jsonl"]) == 1
    finally:
        cutter.close()
    assert cutter.cut
    out, err = capsys.readouterr()
    report = read_jsonl(cwd / "report.jsonl")
    assert {r["status"] for r in report[:256]} <= {"stored", "duplicate"}
    assert [r["status"] for r in report[256:]] == ["failed"] * (600 - 256)
    stored = sum(r["status"] == "stored" for r in report)
    repeats = 256 - stored  # the store held none of them: any duplicate repeats an earlier line
    assert (
        out.strip() == f"stored {stored}, {repeats} duplicates (0 of memories in the store, "
        f"{repeats} of an earlier line), failed 344"
    )
    retry = next(cwd.glob("fleet.failed-*.jsonl"))
    assert "kenning import: stopped: Valkey is unreachable" in err
    # the second batch was cut in its duplicate searches, before its write: certainly not stored
    assert f"344 lines were not stored; they are in {retry}" in err
    # the retry file holds the failed lines as given, the --project applied: it
    # imports without the option
    assert read_jsonl(retry) == [{"content": text, "project": "fleet"} for text in FLEET[256:]]
    # the first batch
    assert store.memories.list(Listing(projects=["fleet"], limit=1)).total == stored
    monkeypatch.setenv("KENNING_VALKEY_PORT", str(settings.valkey_port))  # the store is back
    assert main(["import", str(retry), "--report", "retried.jsonl"]) == 0
    retried = read_jsonl(cwd / "retried.jsonl")
    assert {r["status"] for r in retried} <= {"stored", "duplicate"}
    assert store.memories.list(Listing(projects=["fleet"], limit=1)).total == stored + sum(
        r["status"] == "stored" for r in retried
    )


def stored_contents(store: Engine, project: str) -> dict[str, str]:
    """Every memory of ``project`` in the store: content -> key (read page by page)."""
    found: dict[str, str] = {}
    while True:
        page = store.memories.list(Listing(projects=[project], offset=len(found), limit=200))
        before = len(found)
        found.update({m.content: m.key for m in page.items})
        if len(found) >= page.total:
            return found
        # a page that adds nothing would page forever: say what the listing answered instead
        assert len(found) > before, (
            f"page at {before} of {page.total} added nothing: {[m.key for m in page.items]}"
        )


def check_against_store(report: list[dict[str, Any]], store: Engine) -> dict[str, int]:
    """Each line of the report against the store: a stored line's key holds its text, a failed
    line's text is nowhere in the project; the statuses counted."""
    held = stored_contents(store, "fleet")
    counted: dict[str, int] = {}
    for line, row in zip(FLEET, report, strict=True):
        counted[row["status"]] = counted.get(row["status"], 0) + 1
        if row["status"] == "stored":
            assert held.get(line) == row["key"], row
        elif row["status"] == "failed":
            assert line not in held, row
    return counted


def cut_import(
    cwd: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch, *, refuse: bool
) -> list[dict[str, Any]]:
    """Import FLEET with the connection cut inside the second batch's write pipeline, just
    before the unit of line 301 (the first place its text is sent): the units of lines 257-300
    reached Valkey whole and ran, the rest of the batch did not. The report, line by line."""
    source = jsonl(cwd / "fleet.jsonl", *({"content": text} for text in FLEET))
    snipper = Snipper(settings.valkey_port, FLEET[300].encode(), refuse=refuse)
    monkeypatch.setenv("KENNING_VALKEY_PORT", str(snipper.port))
    try:
        assert main(["import", str(source), "--project", "fleet", "--report", "report.jsonl"]) == 1
    finally:
        snipper.close()
    assert snipper.cut
    return read_jsonl(cwd / "report.jsonl")


def test_a_write_cut_part_way_reports_line_by_line_what_landed(
    cwd: Path,
    store: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # New connections pass after the cut: the store is back at once.
    report = cut_import(cwd, settings, monkeypatch, refuse=False)
    assert [r["status"] for r in report] == ["stored"] * 300 + ["failed"] * 300
    assert check_against_store(report, store) == {"stored": 300, "failed": 300}
    # the part of the failed batch that landed is reported stored (the positive control: the
    # report read the store back rather than calling the whole batch failed)
    assert all(r["status"] == "stored" and r["key"] for r in report[256:300])
    assert total(store) == 300
    out, err = capsys.readouterr()
    assert out.strip() == f"stored 300, {NO_DUPLICATES}, failed 300"
    retry = next(cwd.glob("fleet.failed-*.jsonl"))
    assert f"300 lines were not stored; they are in {retry}" in err
    assert read_jsonl(retry) == [{"content": text, "project": "fleet"} for text in FLEET[300:]]
    monkeypatch.setenv("KENNING_VALKEY_PORT", str(settings.valkey_port))
    assert main(["import", str(retry), "--report", "retried.jsonl"]) == 0
    assert [r["status"] for r in read_jsonl(cwd / "retried.jsonl")] == ["stored"] * 300
    assert set(stored_contents(store, "fleet")) == set(FLEET)


def test_a_write_cut_with_the_store_gone_reports_the_unchecked_lines_unknown(
    cwd: Path,
    store: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the same cut, and the store stays away: the batch's write cannot be read back
    report = cut_import(cwd, settings, monkeypatch, refuse=True)
    statuses = [r["status"] for r in report]
    assert statuses == ["stored"] * 256 + ["unknown"] * 256 + ["failed"] * 88
    out, err = capsys.readouterr()
    assert out.strip() == f"stored 256, {NO_DUPLICATES}, failed 88, unknown 256"
    assert "88 lines were not stored, and 256 lines whose write did not answer" in err
    # what the store really holds: the unknown lines are those that may have landed, and part
    # of them did (257-300); no failed line did
    held = stored_contents(store, "fleet")
    assert set(held) == set(FLEET[:300])
    assert check_against_store(report, store) == {"stored": 256, "unknown": 256, "failed": 88}
    retry = next(cwd.glob("fleet.failed-*.jsonl"))
    assert read_jsonl(retry) == [{"content": text, "project": "fleet"} for text in FLEET[256:]]
    monkeypatch.setenv("KENNING_VALKEY_PORT", str(settings.valkey_port))
    assert main(["import", str(retry), "--report", "retried.jsonl"]) == 0
    retried = [r["status"] for r in read_jsonl(cwd / "retried.jsonl")]
    assert retried == ["duplicate"] * 44 + ["stored"] * 300
    assert set(stored_contents(store, "fleet")) == set(FLEET)


def test_an_import_runs_the_contradiction_check_remember_runs(
    cwd: Path, store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    older = store.memories.remember(
        Draft("The atlas-api rate limit is 100 requests per minute", project="atlas-api"),
        actor="tester",
    )
    source = jsonl(
        cwd / "notes.jsonl",
        {"content": "The atlas-api rate limit is 1000 requests per minute (raised in March)"},
        {"content": "Deploys of atlas-api need a green CI run"},
    )
    argv = ["import", str(source), "--project", "atlas-api", "--report", "report.jsonl"]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip().startswith("stored 2,")
    changed, other = read_jsonl(cwd / "report.jsonl")
    (record_id,) = changed["contradictions"]
    record = store.contradictions.get(record_id)
    assert (record.a, record.b, record.detector) == (older.key, changed["key"], "value")
    assert (record.evidence["old_value"], record.evidence["new_value"]) == (
        "100 request/minute",
        "1000 request/minute",
    )
    assert store.memories.get(older.key).trust == "disputed"
    assert "contradictions" not in other  # positive control beside it: nothing to flag


RETRIED = [
    "The billing service reads its feature flags from flagd on port 8013.",
    "Invoices are rendered by a headless Chromium in the pdf worker.",
    "The nightly ledger reconciliation fails loudly when a currency is missing.",
]


def test_an_import_retried_with_its_idempotency_key_stores_once(
    cwd: Path, store: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    source = jsonl(cwd / "billing.jsonl", *({"content": t, "project": "billing"} for t in RETRIED))
    key = "import-7f3c2a9e-billing"
    lines = store.imports.read(source.open("rb"), Defaults(), actor="cli:import:ci")
    # the same bulk submitted twice at once with one key: one import runs, the other gets its report
    reports: list[Any] = [None, None]
    start = threading.Barrier(2)

    def submit(n: int) -> None:
        start.wait()
        reports[n] = store.imports.run(lines, actor="cli:import:ci", idempotency_key=key)

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.replayed for r in reports) == [False, True]
    assert [o.public() for o in reports[0].outcomes] == [o.public() for o in reports[1].outcomes]
    assert reports[0].counts["stored"] == 3
    # a retry through the command, as the same caller: the first report, nothing written
    args = ["import", str(source), "--idempotency-key", key, "--actor", "cli:import:ci"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"stored 3, {NO_DUPLICATES}, failed 0 (the report of the first import" in out
    assert store.memories.list(Listing(projects=["billing"], limit=1)).total == 3
    assert len(store.store.audit.recent(action="import", actor="cli:import:ci")) == 1
    # the positive control: without the key the same lines are checked again (all duplicates)
    assert main(["import", str(source), "--actor", "cli:import:ci"]) == 0
    assert "stored 0, 3 duplicates (3 of memories in the store" in capsys.readouterr().out
    assert len(store.store.audit.recent(action="import", actor="cli:import:ci")) == 2
    # the same key for other lines is refused, and a bad key is named
    other = jsonl(cwd / "other.jsonl", {"content": DEPLOY})
    assert main(["import", str(other), "--idempotency-key", key, "--actor", "cli:import:ci"]) != 0
    assert "this idempotency key was used for a different import" in capsys.readouterr().err
    assert main(["import", str(other), "--idempotency-key", "short"]) == 2
    assert "idempotency key 'short' is not allowed" in capsys.readouterr().err
    assert total(store) == 3
