"""Further `kenning` sub-commands, one module per concern; importing a
module registers its commands."""

from __future__ import annotations

# first: version, valkey, doctor and up lead --help
from kenning_cli.commands import basics  # noqa: F401

# isort: split
from kenning_cli.commands import (
    backups,  # noqa: F401
    bench,  # noqa: F401
    cluster,  # noqa: F401
    connect,  # noqa: F401
    deploy,  # noqa: F401
    feeds,  # noqa: F401
    imports,  # noqa: F401
    maintenance,  # noqa: F401
    mcp,  # noqa: F401
    oauth,  # noqa: F401
    queue,  # noqa: F401
    scan,  # noqa: F401
    skills,  # noqa: F401
    tokens,  # noqa: F401
    truth,  # noqa: F401
    users,  # noqa: F401
    web,  # noqa: F401
    worker,  # noqa: F401
)
