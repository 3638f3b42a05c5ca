"""The memory model's pipelines: remember, recall, lifecycle, suppression, experience and the
graveyard, bulk imports, inspection and telemetry. May import the wings below it (core to truth).
"""
