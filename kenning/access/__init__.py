"""Who may come in: accounts, scoped tokens, login sessions, OAuth (rules, records, connections).
May import kenning.core and kenning.store only.
"""
