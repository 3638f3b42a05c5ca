"""Belief and truth maintenance: contradictions, their resolution, belief states and a memory's
history. May import kenning.core, kenning.language, kenning.store and kenning.runtime.
"""
