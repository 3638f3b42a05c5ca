"""Remote MCP access: the OAuth 2.1 authorization server (docs/remote-access.md)."""
