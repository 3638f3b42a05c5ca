"""Skills as a folder of SKILL.md files: ``<dir>/<name>/SKILL.md``, the layout
agents load (docs/skills.md).

``export`` writes every written skill. ``load`` reads and validates a whole folder before anything
is written -- front matter, size, the folder named after the skill, every citation naming a memory
of this store -- and ``import_bundle`` writes it only when all of it is valid, so a malformed bundle
is refused with the reason and nothing is half-imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kenning.core.errors import InvalidInput
from kenning.knowledge import skill_doc
from kenning.knowledge.skill_doc import Document
from kenning.knowledge.skill_records import Skill
from kenning.knowledge.skills import Skills

FILE_NAME = "SKILL.md"
MAX_SKILLS = 200


@dataclass(frozen=True)
class Entry:
    path: Path
    document: Document


def export(skills: Skills, directory: Path) -> list[Path]:
    """Write every written skill to ``directory/<name>/SKILL.md``; the paths written."""
    written = []
    for skill in skills.all():
        path = directory / skill.domain / FILE_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(skill.body, encoding="utf-8")
        written.append(path)
    return written


def load(skills: Skills, directory: Path) -> list[Entry]:
    """Every skill of the folder, validated; raises InvalidInput naming
    the first bad file and why."""
    if not directory.is_dir():
        raise InvalidInput(
            f"{directory} is not a folder", hint=f"give a folder of <name>/{FILE_NAME} files"
        )
    folders = sorted(p for p in directory.iterdir() if p.is_dir())
    if not folders:
        raise InvalidInput(
            f"{directory} holds no skill folders", hint=f"expected <name>/{FILE_NAME}"
        )
    if len(folders) > MAX_SKILLS:
        raise InvalidInput(f"{len(folders)} skill folders; at most {MAX_SKILLS} in one import")
    entries = [_entry(folder / FILE_NAME) for folder in folders]
    _check_citations(skills, entries)
    return entries


def import_bundle(skills: Skills, directory: Path, *, actor: str) -> list[Skill]:
    """Validate the whole folder, then write each skill (replacing the
    domain's current one), audited."""
    entries = load(skills, directory)
    return [
        skills.put(
            e.document.text,
            actor=actor,
            action="skill_import",
            current=skills.current_memory(e.document.name),
            details={"file": str(e.path)},
        )
        for e in entries
    ]


def _entry(path: Path) -> Entry:
    if not path.is_file():
        raise InvalidInput(
            f"{path.parent.name}: no {FILE_NAME}", hint=f"each folder holds one {FILE_NAME}"
        )
    if path.stat().st_size > skill_doc.MAX_BYTES:
        raise InvalidInput(
            f"{path}: {path.stat().st_size:,} bytes; the limit is {skill_doc.MAX_BYTES:,}",
            hint="split it into narrower skills",
        )
    try:
        document = skill_doc.parse(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not UTF-8 text") from None
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc.message}", hint=exc.hint) from None
    if document.name != path.parent.name:
        raise InvalidInput(
            f"{path}: its name {document.name!r} is not its folder's",
            hint=f"put it in {document.name}/{FILE_NAME}",
        )
    return Entry(path, document)


def _check_citations(skills: Skills, entries: list[Entry]) -> None:
    prefix = skills.ctx.store.prefix
    wanted = sorted({c for e in entries for c in e.document.citations()})
    found = skills.store.existing([skill_doc.key_of(c, prefix) for c in wanted])
    for entry in entries:
        missing = sorted(
            c for c in entry.document.citations() if skill_doc.key_of(c, prefix) not in found
        )
        if missing:
            raise InvalidInput(
                f"{entry.path}: cites {len(missing)} memories this store does not hold, "
                f"e.g. {missing[0]}",
                hint="import the memories first (kenning restore), "
                "or drop the rules that cite them",
            )
