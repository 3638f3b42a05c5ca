"""`kenning skills export DIR|import DIR|list|sync DIR`: skills as a folder of
SKILL.md files (docs/skills.md).

An import is the operator's own act at the shell, so it writes without a proposal; it is validated
as a whole first (front matter, size, citations this store can resolve) and refused, with the
reason, before anything is written when any file is malformed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kenning.core.settings import Settings
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = sub.add_parser("export", help="write every written skill to DIR/<name>/SKILL.md")
    export.add_argument("dir", type=Path)
    imported = sub.add_parser(
        "import", help="validate DIR/<name>/SKILL.md files, then write them all (audited)"
    )
    imported.add_argument("dir", type=Path)
    sub.add_parser("list", help="list the written skills (name, sha, who wrote it)")
    sync = sub.add_parser(
        "sync",
        help=(
            "write the approved skills into DIR/<name>/SKILL.md (a plugin's skills/ folder), "
            "marked with their skill and sha; remove synced ones that are gone"
        ),
    )
    sync.add_argument("dir", type=Path)


@command("skills", "Export, import or list skills (folders of SKILL.md files).", _arguments)
def _skills(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.knowledge import skill_bundle
    from kenning_cli.services import open_engine

    skills = open_engine(settings).skills
    if args.action == "sync":
        from kenning_cli.connect import plugin

        synced = plugin.sync_skills(skills, args.dir)
        print(
            f"{len(synced.written)} written, {len(synced.unchanged)} unchanged, "
            f"{len(synced.removed)} removed in {args.dir}"
        )
        return 0
    if args.action == "export":
        for path in skill_bundle.export(skills, args.dir):
            print(f"wrote {path}")
    elif args.action == "import":
        for skill in skill_bundle.import_bundle(skills, args.dir, actor="cli:skills-import"):
            print(f"imported {skill.domain} ({skill.sha[:12]})")
    else:
        for skill in skills.all():
            print(f"{skill.domain}  {skill.sha[:12]}  written by {skill.written_by}")
    return 0
