"""The vocabulary every wing shares: errors, settings, the clock, memory records, the schema,
query building, validation and file permissions. Pure: imports nothing else of Kenning's.
"""
