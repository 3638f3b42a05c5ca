"""Running a store: backup and restore, the doctor, the embedded valkey-server, scheduled job
records. May import every wing but kenning.engine.
"""
