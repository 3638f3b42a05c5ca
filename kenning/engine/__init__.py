"""The engine's face: ``Engine`` composes every wing's services once per process (``assembly``),
and ``hosting`` is what a door keeps while it serves. Imports every wing; nothing imports it but
doors.
"""

from kenning.engine.assembly import Engine

__all__ = ["Engine"]
