"""The skill compiler: reviewed lessons become SKILL.md documents, written only with a person's
approval (docs/skills.md).

A domain is a tag. Its lessons are the experience records of the memories carrying that tag:
breakthroughs of successes become Do rules, gotchas Watch out rules, abandoned approaches Don't
rules; knowledge promoted to the domain becomes Reference rules. Lessons are clustered by their
memories' stored vectors (``kenning.knowledge.skill_doc.cluster``) and a rule is kept only when
enough
distinct memories back it (``skill_min_sources``) or a person blessed one of them.

The gate: ``compile_skill`` only stores a proposal (its body, the diff against the current skill,
the rule changes by risk, and the sha of the base). ``approve(proposal_id, sha, approver)`` is what
a person's approval calls (the dashboard, or an admin-scoped MCP caller naming the sha); ``write``
commits an approved proposal and refuses when the current skill is no longer the proposal's base.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal

from ulid import ULID

from kenning.core import query, validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import GLOBAL_PROJECT, Memory, iso
from kenning.core.schema import NAMESPACES, return_fields, vector_bytes
from kenning.knowledge import skill_doc
from kenning.knowledge.skill_doc import Lesson, Rule
from kenning.knowledge.skill_records import (
    Blessed,
    Found,
    Promoted,
    Proposal,
    Skill,
    checked_id,
    checked_sha,
    domain_name,
    skill_of,
)
from kenning.language import phrases
from kenning.memory.fields import content_sha
from kenning.runtime.context import Context
from kenning.runtime.once import once

MAX_SOURCES = 1_000  # memories read per namespace for one domain
RECOMPILE = "compile_skill again and have the new proposal approved"
Mode = Literal["propose", "preview"]


class Skills:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.store = ctx.store.skills

    # --- compiling ------------------------------------------------------------------------
    def compile_skill(
        self,
        domain: str,
        *,
        mode: Mode = "propose",
        actor: str,
        idempotency_key: str | None = None,
    ) -> Proposal:
        """Compile the domain's skill. ``preview`` stores nothing;
        ``propose`` stores it for review. With ``idempotency_key`` a retried proposal returns the
        first call's proposal instead of storing another (kenning.runtime.once)."""
        name = domain_name(domain)
        if mode not in ("propose", "preview"):
            raise InvalidInput(f"unknown mode {mode!r}", hint="use propose or preview")
        if idempotency_key is not None and mode == "propose":
            return once(
                self.ctx,
                "compile_skill",
                actor,
                idempotency_key,
                name,
                lambda: self._compile(name, mode, actor),
                public=lambda p: {"id": p.id},
                load=lambda reply: self.proposal(str(reply["id"])),
            )
        return self._compile(name, mode, actor)

    def _compile(self, name: str, mode: Mode, actor: str) -> Proposal:
        kept, held = skill_doc.gate(self.rules(name), self.ctx.settings.skill_min_sources)
        now = self.ctx.clock.now()
        body = skill_doc.render(name, kept, iso(now) or "")
        current = self.current_memory(name)
        base = current.content if current else ""
        old = skill_doc.parse(base).rules if current else ()
        proposal = Proposal(
            id=str(ULID()) if mode == "propose" else "",
            domain=name,
            body=body,
            sha=skill_doc.sha(body),
            base_sha=skill_doc.sha(base) if current else "",
            diff=skill_doc.diff(base, body, name),
            changes=tuple(c.public() for c in skill_doc.changes(old, kept)),
            held=tuple(r.public() for r in held),
            proposer=actor or "unknown",
            proposed_at=now,
        )
        if mode == "preview":
            return replace(proposal, status="preview")
        if not kept:
            raise InvalidInput(
                f"no lesson about {name!r} is reinforced enough to become a rule",
                hint=f"{len(held)} held back; a rule needs {self.ctx.settings.skill_min_sources} "
                "distinct source memories or one a person blessed (bless)",
            )
        skill_doc.parse(body)  # refuse now what write would refuse later (e.g. over the size limit)
        if not proposal.diff:
            raise Conflict(
                f"the skill {name!r} is already current: nothing to propose",
                hint="record more experience tagged with the domain first",
            )
        self.store.add_proposal(
            proposal.id,
            proposal.record(),
            now,
            [
                self.ctx.event(
                    actor,
                    "skill_propose",
                    current.key if current else "",
                    details=proposal.audit_details(),
                )
            ],
        )
        return proposal

    def rules(self, domain: str) -> list[Rule]:
        """Every candidate rule of a domain (clustered, before the reinforcement gate)."""
        memories = self._tagged(domain)
        vectors = self.store.vectors([m.key for m in memories])
        prefix = self.ctx.store.prefix
        lessons = [
            x
            for m in memories
            if m.key in vectors
            for x in _lessons(m, skill_doc.cite(m.key, prefix), vectors[m.key])
        ]
        blessed = self.store.blessed([m.key for m in memories])
        cites = frozenset(skill_doc.cite(k, prefix) for k in blessed)
        return skill_doc.cluster(
            lessons, self.ctx.settings.skill_cluster_threshold, cites
        ) + self._references(domain)

    def _tagged(self, domain: str) -> list[Memory]:
        """Non-archived, non-superseded memories tagged ``domain`` that
        carry an experience record."""
        clauses = (query.tag("tags", [domain]), query.not_tag("state", ["archived"]))
        searches = [
            query.Search(
                index=self.ctx.index,
                namespaces=(ns,),
                clauses=clauses,
                return_fields=tuple(return_fields()),
                sort_by="created_at",
                limit=MAX_SOURCES,
            )
            for ns in NAMESPACES
            if ns != "skill"
        ]
        return [
            h.memory
            for result in self.ctx.store.memories.search_many(searches)
            for h in result.hits
            if h.memory.metadata.get("experience") and h.memory.trust != "superseded"
        ]

    def _references(self, domain: str) -> list[Rule]:
        rules = []
        for key in self.store.references(domain):
            memory = self.ctx.store.memories.read(key)
            if memory is None:
                self.store.drop_reference(domain, key)  # forgotten elsewhere: clean up lazily
            elif memory.state != "archived":
                text = skill_doc.one_line(memory.title or memory.content.splitlines()[0], 300)
                rules.append(
                    Rule(
                        "reference",
                        text,
                        (skill_doc.cite(key, self.ctx.store.prefix),),
                        blessed=True,
                    )
                )
        return rules

    # --- the gate -------------------------------------------------------------------------
    def proposal(self, proposal_id: str) -> Proposal:
        raw = self.store.proposal(checked_id(proposal_id))
        if raw is None:
            raise NotFound(
                f"no skill proposal {proposal_id!r}", hint="compile_skill returns the proposal id"
            )
        record: dict[str, Any] = json.loads(raw["record"])
        return Proposal(
            **{**record, "changes": tuple(record["changes"]), "held": tuple(record["held"])},
            status=raw.get("status", "pending"),
            approved_by=raw.get("approved_by", ""),
            approved_sha=raw.get("approved_sha", ""),
        )

    def proposals(self, *, domain: str | None = None, limit: int = 50) -> list[Proposal]:
        """The newest proposals (of one domain when given), newest first:
        the dashboard's review list."""
        validation.bounded_int("limit", limit, 1, 500)
        name = domain_name(domain) if domain else None
        found = [
            self.proposal(i) for i in self.store.proposal_ids(limit if name is None else 10 * limit)
        ]
        return [p for p in found if name is None or p.domain == name][:limit]

    def approve(self, proposal_id: str, sha: str, approver: str) -> Proposal:
        """A person approves the reviewed draft whose sha they name; any other sha is refused."""
        named = checked_sha(sha)
        proposal = self.proposal(proposal_id)
        if named != proposal.sha:
            raise Conflict(
                f"the approval names sha {sha[:12]}… but proposal {proposal.id}"
                f" has {proposal.sha[:12]}…",
                hint="approve the sha shown with the proposal you reviewed; nothing was approved",
            )
        now = self.ctx.clock.now()
        event = self.ctx.event(
            approver,
            "skill_approve",
            self.store.current(proposal.domain) or "",
            details=proposal.audit_details(),
        )
        if not self.store.advance(
            proposal.id,
            "pending",
            "approved",
            [event],
            approved_by=approver or "unknown",
            approved_sha=proposal.sha,
            approved_at=repr(now),
        ):
            raise Conflict(
                f"proposal {proposal.id} is {self.proposal(proposal.id).status}, not pending",
                hint="only a pending proposal can be approved",
            )
        return self.proposal(proposal.id)

    def reject(self, proposal_id: str, approver: str, reason: str | None = None) -> Proposal:
        proposal = self.proposal(proposal_id)
        why = validation.reason(reason) or ""
        event = self.ctx.event(
            approver,
            "skill_reject",
            self.store.current(proposal.domain) or "",
            reason=why,
            details=proposal.audit_details(),
        )
        if not self.store.advance(
            proposal.id, "pending", "rejected", [event], approved_by=approver or "unknown"
        ):
            raise Conflict(
                f"proposal {proposal.id} is {self.proposal(proposal.id).status}, not pending",
                hint="only a pending proposal can be rejected; nothing was written",
            )
        return self.proposal(proposal.id)

    def write(self, proposal_id: str, *, actor: str) -> Skill:
        """Commit an approved proposal; refused when it is not approved or the skill moved since
        its base."""
        proposal = self.proposal(proposal_id)
        if proposal.status != "approved" or proposal.approved_sha != proposal.sha:
            raise Conflict(
                f"proposal {proposal.id} is {proposal.status}: only an "
                "approved proposal is written",
                hint=(
                    "a person approves it in the dashboard, or an admin calls "
                    "approve_skill with its sha"
                ),
            )
        lease = self.store.lease(proposal.domain, str(ULID()))
        if not lease.hold():
            raise Conflict(
                f"the skill {proposal.domain!r} is being written by another call",
                hint="retry shortly",
            )
        try:
            current = self.current_memory(proposal.domain)
            if (skill_doc.sha(current.content) if current else "") != proposal.base_sha:
                self.store.mark(proposal.id, "approved", "stale")
                raise Conflict(
                    f"the skill {proposal.domain!r} changed since proposal "
                    f"{proposal.id} was compiled",
                    hint=RECOMPILE,
                )
            self._cited(proposal)
            skill = self.put(
                proposal.body,
                actor=actor,
                action="skill_write",
                current=current,
                details=proposal.audit_details(),
            )
            self.store.mark(proposal.id, "approved", "written", written_key=skill.key)
            return skill
        finally:
            lease.release()

    def _cited(self, proposal: Proposal) -> None:
        """Refuse (marked stale) a proposal citing a memory forgotten since it was compiled."""
        prefix = self.ctx.store.prefix
        cited = {skill_doc.key_of(c, prefix): c for c in skill_doc.parse(proposal.body).citations()}
        missing = sorted(cited[k] for k in set(cited) - self.store.existing(list(cited)))
        if missing:
            self.store.mark(proposal.id, "approved", "stale")
            raise Conflict(
                f"proposal {proposal.id} cites {len(missing)} memories forgotten since, "
                f"e.g. {missing[0]}",
                hint=RECOMPILE,
            )

    def put(
        self, body: str, *, actor: str, action: str, current: Memory | None, details: dict[str, Any]
    ) -> Skill:
        """Write a validated SKILL.md as the domain's skill memory (re-using its key), audited."""
        document = skill_doc.parse(body)
        now = self.ctx.clock.now()
        meta = {
            "skill": {
                "domain": document.name,
                "sha": document.sha,
                "description": document.description,
                "written_by": actor or "unknown",
            }
        }
        if current is None:
            current = Memory(
                key=self.ctx.store.memories.new_key("skill", str(ULID())),
                namespace="skill",
                project=GLOBAL_PROJECT,
                tags=(document.name,),
                kind="skill",
                actor=actor,
                created_at=now,
                valid_from=now,
                title=document.name,
            )
        memory = replace(
            current, content=body, content_sha=content_sha(body), updated_at=now, metadata=meta
        )
        event = self.ctx.event(
            actor,
            action,
            memory.key,
            before=current.content or None,
            after=body,
            details={**details, "sha": document.sha},
        )
        self.ctx.store.memories.write(
            memory,
            self.ctx.embedder.embed(body),
            [event],
            self.store.pointing(document.name, memory.key),
        )
        return skill_of(memory)

    # --- reading ---------------------------------------------------------------------------
    def get(self, domain: str) -> Skill:
        name = domain_name(domain)
        memory = self.current_memory(name)
        if memory is None:
            raise NotFound(
                f"no skill {name!r} has been written", hint="find_skills lists the written skills"
            )
        return skill_of(memory)

    def find(self, text: str, *, limit: int = 5) -> list[Found]:
        """Written skills about ``text``, most similar first, none below
        ``skill_relevance_floor``."""
        validation.bounded_int("limit", limit, 1, 20)
        vector = self.ctx.embedder.embed(phrases.query_text(text))
        search = query.Search(
            index=self.ctx.index,
            namespaces=("skill",),
            knn=limit,
            vector=vector_bytes(vector),
            ef_runtime=self.ctx.settings.ef_runtime,
            limit=limit,
            clauses=(query.tag("kind", ["skill"]), query.not_tag("state", ["archived"])),
            return_fields=tuple(return_fields(with_distance=True)),
        )
        hits = sorted(self.ctx.store.memories.search(search).hits, key=lambda h: -h.similarity)
        floor = self.ctx.settings.skill_relevance_floor
        return [Found(skill_of(h.memory), h.similarity) for h in hits if h.similarity >= floor]

    def all(self) -> list[Skill]:
        """Every written skill, by domain."""
        out = []
        for domain in sorted(self.store.all_current()):
            memory = self.current_memory(domain)
            if memory is not None:
                out.append(skill_of(memory))
        return out

    def reindex(self, memory: Memory) -> None:
        """Point the domain at a skill memory written directly (a restore). Idempotent; any other
        memory is left alone."""
        domain = (memory.metadata.get("skill") or {}).get("domain")
        if memory.kind == "skill" and memory.namespace == "skill" and isinstance(domain, str):
            self.store.set_current(domain, memory.key)

    def current_memory(self, domain: str) -> Memory | None:
        """The skill memory written for ``domain`` (a valid name), or None."""
        key = self.store.current(domain)
        return self.ctx.store.memories.read(key) if key else None

    # --- what feeds the compiler ---------------------------------------------------------
    def bless(self, key: str, *, actor: str, reason: str | None = None) -> Blessed:
        """A person vouches for a memory: its lessons become rules without further reinforcement."""
        memory = self._memory(key)
        why = validation.reason(reason) or ""
        event = self.ctx.event(
            actor, "bless", memory.key, reason=why, before=memory.content, after=memory.content
        )
        self.store.bless(
            memory.key, {"actor": actor, "at": self.ctx.clock.now(), "reason": why}, [event]
        )
        return Blessed(memory.key, actor)

    def promote(self, key: str, domain: str, *, actor: str, reason: str | None = None) -> Promoted:
        """A knowledge memory becomes a Reference rule of the domain's next compilation."""
        memory = self._memory(key)
        name = domain_name(domain)
        if memory.namespace != "knowledge" or memory.state == "archived":
            raise InvalidInput(
                f"{key} is a {memory.state} {memory.namespace} memory",
                hint="only active or deprioritised knowledge memories can be promoted",
            )
        why = validation.reason(reason) or ""
        event = self.ctx.event(
            actor,
            "promote_knowledge",
            memory.key,
            reason=why,
            before=memory.content,
            after=memory.content,
            details={"domain": name},
        )
        self.store.promote(
            name, memory.key, {"actor": actor, "at": self.ctx.clock.now(), "reason": why}, [event]
        )
        return Promoted(memory.key, name)

    def _memory(self, key: str) -> Memory:
        validation.key(key, self.ctx.store.prefix)
        memory = self.ctx.store.memories.read(key)
        if memory is None:
            raise NotFound(
                f"no memory {key}", hint="it may have been forgotten; check history(key)"
            )
        return memory


def _lessons(memory: Memory, source: str, vector: Any) -> list[Lesson]:
    record = memory.metadata["experience"]
    out = []
    if record.get("outcome") == "succeeded" and record.get("breakthrough"):
        out.append(Lesson("do", skill_doc.one_line(record["breakthrough"]), source, vector))
    out += [
        Lesson("watch", skill_doc.one_line(g), source, vector) for g in record.get("gotchas", [])
    ]
    for a in record.get("abandoned_approaches", []):
        text = f"Don't use the {a['type']} `{a['name']}`" + (
            f": {a['reason']}" if a.get("reason") else "."
        )
        out.append(
            Lesson(
                "dont",
                skill_doc.one_line(text),
                source,
                vector,
                identity="dont:" + phrases.normalise(a["name"]),
            )
        )
    return out
