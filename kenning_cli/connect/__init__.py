"""Wiring a client to this Kenning (`kenning connect`, docs/clients.md): each client's configuration
(clients.py), merged into its own file with a backup; the Claude Code plugin (plugin.py) with its
hook script (kenning_hook.py, standard library only: it runs on a laptop with no Kenning installed).
"""
