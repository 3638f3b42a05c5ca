"""The optional Anthropic extras' client, its daily spend and query expansion.
May import kenning.core, kenning.runtime and kenning.store; nothing above them.
"""
