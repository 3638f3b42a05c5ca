"""Front door 2: the dashboard (Starlette + Jinja2). Imports ``kenning``, never another door.

Every page is a thin view over the engine calls the MCP tools make, built as one data dict and
rendered as HTML or JSON (``web_ui.views``). ``web_ui.app.build_app`` is the
factory; ``kenning web`` runs it.
"""
