"""Valkey Cluster's rule for atomic work, checked on what the code really sends
(docs/architecture.md, scaling).

In a cluster every key lives in one of 16384 hash slots, and a command, a MULTI/EXEC block or a
script can only touch keys of one slot (else CROSSSLOT). ``Recorder`` wraps the packing of every
command a client sends, so a scenario run through the engine leaves the exact command stream, per
connection; ``atomic_groups`` cuts it into the units that must be single-slot -- each MULTI...EXEC
block, each script call (EVAL, EVALSHA, FCALL), each other command naming two keys or more -- and
``cross_slot`` lists the groups whose keys span slots.

The keys of a command are the server's answer (COMMAND GETKEYS on the real Valkey), so no table of
command shapes is kept here; slots are Valkey's CRC16 with hash tags (``valkey.crc.key_slot``).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any

import valkey
from valkey.crc import key_slot

SCRIPTS = frozenset({"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"})
Command = tuple[bytes, ...]


def _arg(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, memoryview):
        return value.tobytes()
    return str(value).encode()


class Recorder:
    """Every command sent through the clients it wires, as (connection
    id, args), in sending order."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, Command]] = []
        self._lock = threading.Lock()

    def add(self, connection: int, args: tuple[Any, ...]) -> None:
        with self._lock:
            self.sent.append((connection, tuple(_arg(a) for a in args)))

    def wire(self, client: valkey.Valkey) -> valkey.Valkey:
        """Make ``client``'s pool build recording connections (call before it sends anything)."""
        recorder = self
        base: type[valkey.Connection] = client.connection_pool.connection_class

        class Recording(base):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                inner: Any = getattr(self, "_command_packer")  # noqa: B009 -- the base sets it; not in the stubs
                self._command_packer = _Packer(inner, recorder, id(self))

        client.connection_pool.connection_class = Recording
        return client


class _Packer:
    """The connection's command packer, telling the recorder what it packs."""

    def __init__(self, inner: Any, recorder: Recorder, connection: int) -> None:
        self.inner = inner
        self.recorder = recorder
        self.connection = connection

    def pack(self, *args: Any) -> Any:
        self.recorder.add(self.connection, args)
        return self.inner.pack(*args)


@dataclass(frozen=True)
class Group:
    """One unit the server runs atomically: its kind (MULTI, a script command,
    or the command) and keys."""

    kind: str
    keys: tuple[bytes, ...]
    commands: tuple[str, ...]
    script: str = ""  # which script it is: the SHA1 an EVALSHA names, or of the body an EVAL sends

    def slots(self) -> set[int]:
        return {key_slot(k) for k in self.keys}


class KeysOf:
    """The keys of a command, as the server says (COMMAND GETKEYS); none for keyless commands."""

    def __init__(self, server: valkey.Valkey) -> None:
        self.server = server

    def __call__(self, command: Command) -> tuple[bytes, ...]:
        name = command[0].upper()
        if name in (b"MULTI", b"EXEC", b"DISCARD") or name.startswith(b"FT."):
            # FT.* names an index, not a key; a cluster fans it out (docs/architecture.md)
            return ()
        try:
            keys: Any = self.server.command_getkeys(*command)
        except valkey.ResponseError:
            return ()  # "the command has no key arguments" (PING, INFO, MODULE LIST, SCRIPT ...)
        return tuple(_arg(k) for k in keys)


def atomic_groups(sent: list[tuple[int, Command]], keys_of: KeysOf) -> list[Group]:
    """The single-slot units of a command stream: MULTI..EXEC blocks (per connection), script
    calls, and any other command naming two keys or more."""
    groups: list[Group] = []
    open_blocks: dict[int, list[Command]] = {}
    for connection, command in sent:
        name = command[0].upper()
        if name == b"MULTI":
            open_blocks[connection] = []
        elif name in (b"EXEC", b"DISCARD") and connection in open_blocks:
            block = open_blocks.pop(connection)
            keys = tuple(k for c in block for k in keys_of(c))
            groups.append(Group("MULTI", keys, tuple(c[0].decode().upper() for c in block)))
        elif connection in open_blocks:
            open_blocks[connection].append(command)
        else:
            keys = keys_of(command)
            if name.decode() in SCRIPTS or len(set(keys)) > 1:
                sha = _script_id(name, command)
                groups.append(Group(name.decode(), keys, (name.decode(),), sha))
    return groups


def cross_slot(groups: list[Group]) -> list[Group]:
    """The groups a cluster would refuse: keys in more than one hash slot."""
    return [g for g in groups if len(g.slots()) > 1]


def _script_id(name: bytes, command: Command) -> str:
    """The script's SHA1 (Valkey's script id) for EVAL and EVALSHA, else ''."""
    if len(command) < 2:
        return ""
    if name.startswith(b"EVALSHA"):
        return _arg(command[1]).decode()
    if name.startswith(b"EVAL"):
        return hashlib.sha1(_arg(command[1]), usedforsecurity=False).hexdigest()
    return ""
