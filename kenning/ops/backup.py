"""Backup and restore (docs/backup.md).

A backup is one JSON file in the backup directory, named ``kenning-backup-<UTC time>[-label].json``:
format name and version, the key prefix, the embedding model and dimension, and then every memory
(all hash fields, optionally the vector as base64 float32), every suppression, every contradiction
record, and the keys of the project contexts (memories themselves). Recall counters are exported
live, and a restored memory gets exactly the backup's counts.

Restore reads and validates the WHOLE file before writing anything (a malformed or oversized file is
refused with the reason), then plans each item: ``add`` (absent here), ``update`` (the backup's copy
is newer by ``updated_at``), or ``skip`` (ours is newer or the same), each with its reason.
``dry_run=True`` (the default) only reports the plan. Applying it writes and audits every change;
vectors are reused when the backup's model and dimension match the loaded model, re-embedded
otherwise. Reading and checking the file, and moving keys to this prefix: kenning.ops.backup_file.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import iso
from kenning.core.schema import NAMESPACES, decode, encode
from kenning.curation.graph import GraphSelfCheck
from kenning.ops import export
from kenning.ops.backup_file import (
    FORMAT,
    MB,
    VERSION,
    changed_at,
    check,
    decide,
    load,
    rekey,
    rekeyed,
    rekeyed_record,
    rekeyed_suppression,
)
from kenning.ops.backup_results import BackupFile, BackupWritten, Plan, RestoreReport, Uploaded
from kenning.ops.seal import Seal
from kenning.runtime.context import Context
from kenning.runtime.once import once
from kenning.runtime.sweep import Sweep
from kenning.store import Contradiction, Stored, pair_id
from kenning.truth.history import Reindex

NAME_RE = re.compile(r"^kenning-backup-\d{8}T\d{6}Z(?:-[a-z0-9][a-z0-9-]{0,39})?\.json$")
LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
REPORT_ITEMS = 200
# a retry with the same idempotency key waits this long for a backup still being written
BACKUP_PENDING_SECONDS = 3_600.0
Progress = Callable[[str, int, int], None]


class Backups:
    def __init__(
        self,
        ctx: Context,
        derived: tuple[Reindex, ...] = (),
        graph: GraphSelfCheck | None = None,
    ) -> None:
        self.ctx = ctx
        self.derived = derived
        self.graph = graph or GraphSelfCheck(ctx)
        self.records = ctx.store.contradictions
        self.suppressions = ctx.store.suppressions

    @property
    def directory(self) -> Path:
        return self.ctx.settings.resolved_backup_dir

    # --- backup ---------------------------------------------------------------------------
    def backup(
        self,
        *,
        vectors: bool = False,
        label: str | None = None,
        actor: str,
        progress: Progress | None = None,
        idempotency_key: str | None = None,
    ) -> BackupWritten:
        """Write a backup file; returns its name, path and counts. With ``idempotency_key``, a
        retry (same caller, same key, same arguments) returns the first call's file instead of
        writing another (kenning.runtime.once)."""
        if label is not None and not LABEL_RE.match(label):
            raise InvalidInput(f"label {label!r} is not allowed", hint="1-40 of a-z, 0-9 and '-'")
        if idempotency_key is not None:
            return once(
                self.ctx,
                "backup",
                actor,
                idempotency_key,
                json.dumps({"vectors": vectors, "label": label}),
                lambda: self._backup(vectors=vectors, label=label, actor=actor, progress=progress),
                public=BackupWritten.public,
                load=lambda reply: BackupWritten(**reply),
                pending_seconds=BACKUP_PENDING_SECONDS,
            )
        return self._backup(vectors=vectors, label=label, actor=actor, progress=progress)

    def _backup(
        self, *, vectors: bool, label: str | None, actor: str, progress: Progress | None
    ) -> BackupWritten:
        now = self.ctx.clock.now()
        stamp = (iso(now) or "").replace("-", "").replace(":", "")
        name = f"kenning-backup-{stamp}{'-' + label if label else ''}.json"
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.directory / name
        if path.exists():  # never overwrite a backup
            raise Conflict(
                f"{name} exists already", hint="wait a second, or pass a different label"
            )
        partial = path.with_suffix(".partial")
        try:
            counts = self._write(partial, vectors=vectors, at=now, progress=progress)
        # e.g. Valkey went away mid-way: leave no half file behind, then report it
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(path)
        result = BackupWritten(name, str(path), path.stat().st_size, vectors, **counts)
        self.ctx.audit(actor, "backup", "", details=result.public())
        return result

    def _write(
        self, path: Path, *, vectors: bool, at: float, progress: Progress | None
    ) -> dict[str, int]:
        # the keys only: each memory is read whole later, as one snapshot (``_write_memories``)
        keys = [m.key for m in Sweep(self.ctx).memories(NAMESPACES, fields=("created_at",))]
        header = {
            "format": FORMAT,
            "version": VERSION,
            "created_at": iso(at),
            "prefix": self.ctx.store.prefix,
            "embedding": {
                "model": self.ctx.embedder.model_name,
                "dim": self.ctx.embedder.dimension,
            },
            "vectors": vectors,
        }
        seal = Seal(header)
        # The file holds every memory: readable by the owner only, like the data directory.
        with os.fdopen(
            os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8"
        ) as out:
            out.write(json.dumps(header)[:-1] + ', "memories": [\n')
            written, contexts = self._write_memories(
                out, keys, seal, vectors=vectors, progress=progress
            )
            # read after the memories: a record or decision made meanwhile names memories the
            # file holds (or that a restore re-checks)
            sections = self._registries(contexts)
            out.write("]")
            for name, value in sections.items():
                out.write(f',\n"{name}": ' + json.dumps(value))
            out.write(',\n"checksum": ' + json.dumps(seal.finish(sections)) + "}\n")
        return {
            "memories": written,
            "suppressions": len(sections["suppressions"]),
            "contradictions": len(sections["contradictions"]),
            "project_contexts": len(contexts),
            "kept_apart": len(sections["kept_apart"]),
        }

    def _registries(self, contexts: list[Any]) -> dict[str, list[Any]]:
        """The file's sections after its memories: suppressions, contradiction records, pairs kept
        apart and the project contexts."""
        records = self.records.many(
            self.records.ids(open_only=False, limit=max(1, self.records.count(open_only=False)))
        )
        return {
            "suppressions": [{"term": t, "record": r} for t, r in self.suppressions.all().items()],
            "contradictions": [r.encode() for r in records],
            "kept_apart": [
                {"pair": pair.split("|"), "record": record}
                for pair, record in sorted(self.ctx.store.distinct.decisions().items())
            ],
            "project_contexts": contexts,
        }

    def _write_memories(
        self,
        out: Any,
        keys: list[str],
        seal: Seal,
        *,
        vectors: bool,
        progress: Progress | None,
    ) -> tuple[int, list[str]]:
        """Each memory as one snapshot: its fields and vector from one read of its hash (a
        memory changed during the backup is in the file as one version, never half of two);
        one gone meanwhile is left out. Returns how many were written and the project
        contexts among them."""
        batch = 500
        written, contexts = 0, []
        for start in range(0, len(keys), batch):
            for snapshot in self.ctx.store.memories.snapshots(keys[start : start + batch]):
                if snapshot is None:
                    continue
                memory, vector = snapshot
                entry: dict[str, Any] = {"key": memory.key, "fields": encode(memory)}
                if vectors and vector is not None:
                    entry["vector"] = base64.b64encode(vector).decode()
                seal.memory(entry)
                out.write(("," if written else "") + json.dumps(entry, sort_keys=True) + "\n")
                written += 1
                if memory.kind == "context":
                    contexts.append(memory.key)
            if progress is not None:
                progress("backup", min(start + batch, len(keys)), len(keys))
        return written, contexts

    def export(self, out: Any) -> int:
        """Write every memory to ``out`` as a line of the lossless export (kenning.ops.export);
        how many were written. Read through the index, page by page."""
        sweep = Sweep(self.ctx)
        count = 0
        for line in export.lines(sweep.memories(NAMESPACES), self.ctx.store.prefix):
            out.write(line)
            count += 1
        return count

    def import_export(self, data: bytes, name: str, *, dry_run: bool, actor: str) -> RestoreReport:
        """Restore an export's whole records (``kenning import --from kenning``): checked, planned
        by updated_at like a backup, vectors embedded again."""
        document = export.as_backup(
            data, model=self.ctx.embedder.model_name, dim=self.ctx.embedder.dimension
        )
        check(document)
        return self.restore_data(document, Path(name), dry_run=dry_run, actor=actor)

    def list_backups(self) -> list[BackupFile]:
        """Backup files in the backup directory, newest first."""
        if not self.directory.is_dir():
            return []
        files = [p for p in self.directory.iterdir() if p.is_file() and NAME_RE.match(p.name)]
        files.sort(key=lambda p: p.name, reverse=True)
        return [BackupFile(p.name, p.stat().st_size, iso(p.stat().st_mtime)) for p in files]

    def path_of(self, name: str) -> Path:
        """A backup file by name, only inside the backup directory (no paths from callers)."""
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise InvalidInput(
                f"{name!r} is not a backup file name", hint="copy a name from list_backups"
            )
        path = self.directory / name
        if not path.is_file():
            raise NotFound(f"no backup {name}", hint="list_backups shows the files that exist")
        return path

    def receive(self, name: str, data: bytes, *, actor: str) -> Uploaded:
        """Keep an uploaded backup in the backup directory under its own name, once it reads as a
        valid backup (a damaged or foreign file is refused and nothing is kept)."""
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise InvalidInput(
                f"{name!r} is not a backup file name",
                hint="upload a file as Kenning named it: kenning-backup-<time>[-label].json",
            )
        limit = self.ctx.settings.restore_max_mb * MB
        if len(data) > limit:
            raise InvalidInput(
                f"{name} is {len(data):,} bytes; the limit is {limit:,}",
                hint="raise KENNING_RESTORE_MAX_MB if the file is trusted",
            )
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.directory / name
        if path.exists():  # never overwrite a backup
            raise Conflict(
                f"{name} exists already", hint="restore it from the list, or rename the upload"
            )
        partial = self.directory / f"upload-{os.getpid()}-{name}.partial"
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            out.write(data)
        try:
            load(partial, max_bytes=limit)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(path)
        result = Uploaded(name, len(data))
        self.ctx.audit(actor, "upload_backup", "", details=result.public())
        return result

    # --- restore --------------------------------------------------------------------------
    def restore_file(self, name: str, *, dry_run: bool = True, actor: str) -> RestoreReport:
        """``restore`` of a file in the backup directory, by name only
        (what the MCP tool offers)."""
        return self.restore(self.path_of(name), dry_run=dry_run, actor=actor)

    def restore(
        self,
        path: Path,
        *,
        dry_run: bool = True,
        actor: str,
        max_bytes: int | None = None,
        progress: Progress | None = None,
    ) -> RestoreReport:
        """Validate the whole file, plan every item, and (unless ``dry_run``)
        apply and audit the plan.

        ``max_bytes`` defaults to ``KENNING_RESTORE_MAX_MB``."""
        data = load(
            path,
            max_bytes=self.ctx.settings.restore_max_mb * MB if max_bytes is None else max_bytes,
        )
        return self.restore_data(data, path, dry_run=dry_run, actor=actor, progress=progress)

    def restore_data(
        self,
        data: dict[str, Any],
        path: Path,
        *,
        dry_run: bool = True,
        actor: str,
        progress: Progress | None = None,
    ) -> RestoreReport:
        """``restore`` of a document already read and checked (a backup file's, or an export's:
        kenning.ops.export.as_backup); ``path`` names it in the report."""
        plan = self.plan(data)
        same_model = data["embedding"] == {
            "model": self.ctx.embedder.model_name,
            "dim": self.ctx.embedder.dimension,
        }
        report = self._report(path, plan, data, dry_run=dry_run, same_model=same_model)
        if not dry_run:
            self._apply(plan, same_model=same_model, actor=actor, progress=progress)
            # a restore builds the graph one memory at a time: every memory searched by its own
            # vector, the missed ones re-inserted (kenning.curation.graph)
            report = replace(report, self_check=self.graph.run(actor=actor).public())
            self.ctx.audit(
                actor,
                "restore",
                "",
                details={k: v for k, v in report.public().items() if k != "items"},
            )
        return report

    def plan(self, data: dict[str, Any]) -> Plan:
        source, target = data["prefix"], self.ctx.store.prefix
        plan = Plan()
        memories = [
            rekeyed(decode(rekey(e["key"], source, target), e["fields"]), source, target)
            for e in data["memories"]
        ]
        changed = self.ctx.store.times([m.key for m in memories], "updated_at")
        for entry, memory, current in zip(data["memories"], memories, changed, strict=True):
            action, reason = decide(current, memory.updated_at)
            plan.memories.append((action, memory, reason))
            if "vector" in entry and action != "skip":
                plan.vectors[memory.key] = base64.b64decode(entry["vector"])
        current_terms = self.suppressions.all()
        for entry in data["suppressions"]:
            ours = current_terms.get(entry["term"])
            action, reason = decide(
                None if ours is None else float(ours.get("at", 0.0)),
                float(entry["record"].get("at", 0.0)),
            )
            plan.suppressions.append(
                (
                    action,
                    entry["term"],
                    rekeyed_suppression(entry["record"], source, target),
                    reason,
                )
            )
        records = [
            rekeyed_record(Contradiction.decode(raw), source, target)
            for raw in data["contradictions"]
        ]
        # one round trip
        ours_records = {c.id: c for c in self.records.many([r.id for r in records])}
        for record in records:
            ours_record = ours_records.get(record.id)
            action, reason = decide(
                None if ours_record is None else changed_at(ours_record), changed_at(record)
            )
            plan.contradictions.append((action, record, reason))
        decided = self.ctx.store.distinct.decisions()
        for entry in data.get("kept_apart", []):  # absent from backups written before it existed
            a, b = (rekey(k, source, target) for k in entry["pair"])
            ours_decision = decided.get(pair_id(a, b))
            action, reason = decide(
                None if ours_decision is None else float(ours_decision.get("at", 0.0)),
                float(entry["record"].get("at", 0.0)),
            )
            plan.kept_apart.append((action, (a, b), entry["record"], reason))
        return plan

    def _report(
        self, path: Path, plan: Plan, data: dict[str, Any], *, dry_run: bool, same_model: bool
    ) -> RestoreReport:
        items = [
            {"kind": "memory", "key": m.key, "action": a, "reason": r} for a, m, r in plan.memories
        ]
        items += [
            {"kind": "suppression", "key": t, "action": a, "reason": r}
            for a, t, _, r in plan.suppressions
        ]
        items += [
            {"kind": "contradiction", "key": c.id, "action": a, "reason": r}
            for a, c, r in plan.contradictions
        ]
        items += [
            {"kind": "kept_apart", "key": pair_id(*p), "action": a, "reason": r}
            for a, p, _, r in plan.kept_apart
        ]
        changes = [i for i in items if i["action"] != "skip"]
        vectors = (
            ("reused" if same_model else "re-embedded (the backup used another model)")
            if data["vectors"]
            else "re-embedded (the backup has no vectors)"
        )
        return RestoreReport(
            dry_run,
            path.name,
            data.get("created_at"),
            plan.counts(plan.memories),
            plan.counts(plan.suppressions),
            plan.counts(plan.contradictions),
            plan.counts(plan.kept_apart),
            vectors,
            (changes + [i for i in items if i["action"] == "skip"])[:REPORT_ITEMS],
            len(items),
        )

    def _apply(
        self, plan: Plan, *, same_model: bool, actor: str, progress: Progress | None
    ) -> None:
        self._apply_memories(plan, same_model=same_model, actor=actor, progress=progress)
        self._apply_registries(plan, actor=actor)

    def _apply_memories(
        self, plan: Plan, *, same_model: bool, actor: str, progress: Progress | None
    ) -> None:
        """Write memories in chunks: stored vectors reused when the model matches,
        the rest embedded in bulk."""
        todo = [(a, m, r) for a, m, r in plan.memories if a != "skip"]
        dim = self.ctx.embedder.dimension
        for start in range(0, len(todo), 100):
            chunk = todo[start : start + 100]
            reuse = {  # the stored bytes, written as they are (kenning.store.vectors.Stored)
                m.key: Stored(plan.vectors[m.key])
                for _, m, _ in chunk
                if same_model and len(plan.vectors.get(m.key, b"")) == dim * 4
            }
            fresh = [m for _, m, _ in chunk if m.key not in reuse]
            embedded = dict(
                zip(
                    [m.key for m in fresh],
                    self.ctx.embedder.embed_many([m.content for m in fresh]),
                    strict=True,
                )
            )
            # the backup's counts apply
            self.ctx.store.memories.recalls.drop([m.key for _, m, _ in chunk])
            for action, memory, reason in chunk:
                self.ctx.store.memories.write(
                    memory,
                    reuse.get(memory.key, embedded.get(memory.key)),
                    [
                        self.ctx.event(
                            actor,
                            "restore",
                            memory.key,
                            reason=reason,
                            after=memory.content,
                            details={"restore": action},
                        )
                    ],
                )
                for rebuild in self.derived:
                    rebuild(memory)
            if progress is not None:
                progress("restore", min(start + 100, len(todo)), len(todo))

    def _apply_registries(self, plan: Plan, *, actor: str) -> None:
        self._apply_suppressions(plan, actor=actor)
        self._apply_contradictions(plan, actor=actor)
        self._apply_kept_apart(plan, actor=actor)

    def _apply_suppressions(self, plan: Plan, *, actor: str) -> None:
        for action, term, record, reason in plan.suppressions:
            if action != "skip":
                self.suppressions.put(
                    term,
                    record,
                    [
                        self.ctx.event(
                            actor,
                            "restore_suppression",
                            "",
                            reason=reason,
                            details={"term": term, "restore": action},
                        )
                    ],
                )

    def _apply_contradictions(self, plan: Plan, *, actor: str) -> None:
        for action, contradiction, reason in plan.contradictions:
            if action != "skip":
                self.records.save(
                    contradiction,
                    [
                        self.ctx.event(
                            actor,
                            "restore_contradiction",
                            "",
                            reason=reason,
                            details={
                                "contradiction": contradiction.id,
                                "a": contradiction.a,
                                "b": contradiction.b,
                                "status": contradiction.status,
                                "restore": action,
                            },
                        )
                    ],
                )

    def _apply_kept_apart(self, plan: Plan, *, actor: str) -> None:
        for action, pair, decision, reason in plan.kept_apart:
            if action != "skip":
                self.ctx.store.distinct.record(
                    [pair],
                    decision,
                    [
                        self.ctx.event(
                            actor,
                            "restore_kept_apart",
                            pair[0],
                            reason=reason,
                            details={"pair": list(pair), "restore": action},
                        )
                    ],
                )
