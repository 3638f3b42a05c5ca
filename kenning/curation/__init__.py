"""Curating what is stored: duplicate clusters, scheduled maintenance, the session briefing and
project context. May import kenning.memory and the wings below it.
"""
