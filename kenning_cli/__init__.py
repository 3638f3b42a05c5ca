"""The composition root: the `kenning` command builds the engine and starts the front doors.

It sits beside the doors (mcp_server, web_ui, feed_worker), not inside the engine: `kenning/`
imports no door and no bench, and this package is the one place that wires them together.
"""
