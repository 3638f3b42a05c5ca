"""Export and import of skills as folders of SKILL.md: malformed bundles are refused whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kenning.core.errors import InvalidInput
from kenning.engine import Engine
from kenning.knowledge import skill_bundle, skill_doc
from kenning.knowledge.skill_records import Skill
from tests.kenning.skill_history import DOMAIN, seed


def written(engine: Engine) -> Skill:
    seed(engine)
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    return engine.skills.write(proposal.id, actor="agent")


def other_skill(body: str, name: str) -> str:
    return body.replace(f"name: {DOMAIN}", f"name: {name}", 1)


def test_export_then_import_round_trips_and_audits(engine: Engine, tmp_path: Path) -> None:
    skill = written(engine)
    paths = skill_bundle.export(engine.skills, tmp_path / "out")
    assert paths == [tmp_path / "out" / DOMAIN / "SKILL.md"]
    assert paths[0].read_text(encoding="utf-8") == skill.body
    (tmp_path / "out" / "pg-copy").mkdir()
    (tmp_path / "out" / "pg-copy" / "SKILL.md").write_text(
        other_skill(skill.body, "pg-copy"), encoding="utf-8"
    )
    imported = skill_bundle.import_bundle(
        engine.skills, tmp_path / "out", actor="cli:skills-import"
    )
    assert [s.domain for s in imported] == ["pg-copy", DOMAIN]
    assert engine.skills.get("pg-copy").sha == skill_doc.sha(other_skill(skill.body, "pg-copy"))
    assert engine.skills.get(DOMAIN).key == skill.key  # the domain keeps its skill memory
    assert [e.action for e in engine.store.audit.history(skill.key)] == [
        "skill_write",
        "skill_import",
    ]


def bundle(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "bundle"
    for folder, text in files.items():
        (root / folder).mkdir(parents=True)
        if text:
            (root / folder / "SKILL.md").write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        (lambda body: body.replace("---\n", "", 1), "no YAML front matter"),
        (lambda body: body + "x" * skill_doc.MAX_BYTES, "the limit is"),
        (lambda body: body.replace("name: broken", "name: elsewhere"), "is not its folder's"),
        (
            lambda body: body.replace(
                " [episodic:", " [episodic:01J9Z8Q4M5X7B2C3D4E5F6G7HZ, episodic:", 1
            ),
            "does not hold",
        ),
        (lambda _: "", "no SKILL.md"),
    ],
)
def test_a_malformed_bundle_is_refused_and_nothing_is_imported(
    engine: Engine, tmp_path: Path, broken: Callable[[str], str], reason: str
) -> None:
    skill = written(engine)
    good = other_skill(
        skill.body, "aaa-good"
    )  # sorted first: would be written first if writing began early
    root = bundle(tmp_path, {"aaa-good": good, "broken": broken(other_skill(skill.body, "broken"))})
    with pytest.raises(InvalidInput, match=reason):
        skill_bundle.import_bundle(engine.skills, root, actor="cli:skills-import")
    assert engine.skills.store.current("aaa-good") is None
    assert [s.domain for s in engine.skills.all()] == [DOMAIN]
    fixed = bundle(
        tmp_path / "fixed", {"aaa-good": good}
    )  # positive control: the good file alone imports
    assert [s.domain for s in skill_bundle.import_bundle(engine.skills, fixed, actor="cli")] == [
        "aaa-good"
    ]


def test_an_empty_or_missing_folder_is_refused(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a folder"):
        skill_bundle.load(engine.skills, tmp_path / "nowhere")
    with pytest.raises(InvalidInput, match="no skill folders"):
        skill_bundle.load(engine.skills, tmp_path)
