"""What the skill compiler keeps and answers: proposals, written skills, blessings and promotions,
and the checks of the names and digests a caller hands back (kenning.knowledge.skills)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kenning.core.errors import InvalidInput
from kenning.core.models import Memory, iso
from kenning.knowledge import skill_doc

SHA_LENGTH = 64


@dataclass(frozen=True)
class Proposal:
    """A compiled skill waiting for (or past) review.

    ``status``: pending, approved, rejected, written or stale.
    """

    id: str
    domain: str
    body: str
    sha: str
    base_sha: str
    diff: str
    changes: tuple[dict[str, Any], ...]
    held: tuple[dict[str, Any], ...]
    proposer: str
    proposed_at: float
    status: str = "pending"
    approved_by: str = ""
    approved_sha: str = ""

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "domain": self.domain,
            "body": self.body,
            "sha": self.sha,
            "base_sha": self.base_sha,
            "diff": self.diff,
            "changes": list(self.changes),
            "held": list(self.held),
            "proposer": self.proposer,
            "proposed_at": self.proposed_at,
        }

    def audit_details(self) -> dict[str, Any]:
        """What the audit events of its review carry."""
        return {
            "proposal": self.id,
            "domain": self.domain,
            "sha": self.sha,
            "base_sha": self.base_sha,
            "changes": list(self.changes),
        }

    def public(self) -> dict[str, Any]:
        return {
            **self.record(),
            "proposed_at": iso(self.proposed_at),
            "status": self.status,
            "approved_by": self.approved_by or None,
        }


@dataclass(frozen=True)
class Skill:
    """A written skill: the current SKILL.md of a domain."""

    domain: str
    key: str
    body: str
    sha: str
    written_at: float
    written_by: str
    description: str

    def public(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "key": self.key,
            "sha": self.sha,
            "written_at": iso(self.written_at),
            "written_by": self.written_by,
            "description": self.description,
            "body": self.body,
        }


@dataclass(frozen=True, slots=True)
class Blessed:
    """A memory a person vouched for (``bless``)."""

    key: str
    by: str

    def public(self) -> dict[str, Any]:
        return {"key": self.key, "blessed": True, "by": self.by}


@dataclass(frozen=True, slots=True)
class Promoted:
    """A knowledge memory made a Reference rule of ``domain`` (``promote``)."""

    key: str
    domain: str

    def public(self) -> dict[str, Any]:
        return {"key": self.key, "domain": self.domain, "promoted": True}


@dataclass(frozen=True)
class Found:
    skill: Skill
    similarity: float

    def public(self) -> dict[str, Any]:
        return {
            "domain": self.skill.domain,
            "key": self.skill.key,
            "similarity": round(self.similarity, 4),
            "description": self.skill.description,
        }


def domain_name(value: str) -> str:
    """A domain: a tag that is also a valid skill name."""
    normal = value.strip().lower() if isinstance(value, str) else ""
    if not skill_doc.NAME_RE.match(normal):
        raise InvalidInput(f"domain {value!r} is not allowed", hint=skill_doc.NAME_RULE)
    return normal


def skill_of(memory: Memory) -> Skill:
    meta = memory.metadata.get("skill") or {}
    return Skill(
        domain=str(meta.get("domain", memory.title or "")),
        key=memory.key,
        body=memory.content,
        sha=skill_doc.sha(memory.content),
        written_at=memory.updated_at,
        written_by=str(meta.get("written_by", memory.actor)),
        description=str(meta.get("description", "")),
    )


def checked_id(value: str) -> str:
    if not isinstance(value, str) or len(value) != 26 or not value.isalnum():
        raise InvalidInput(
            f"{value!r} is not a proposal id", hint="copy the id compile_skill returned"
        )
    return value.upper()


def checked_sha(value: str) -> str:
    if (
        not isinstance(value, str)
        or len(value) != SHA_LENGTH
        or any(c not in "0123456789abcdef" for c in value)
    ):
        raise InvalidInput(
            "the sha must be the 64 hex digits shown with the proposal",
            hint="copy it from compile_skill's result or the dashboard",
        )
    return value
