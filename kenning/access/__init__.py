"""Who may come in: accounts, scoped tokens, login sessions and the OAuth 2.1 rules and records.
May import kenning.core and kenning.store only.
"""
