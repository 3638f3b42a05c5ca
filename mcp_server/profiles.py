"""Tool profiles: which tools a connection is shown (docs/mcp-tools.md, "Tool profiles").

The scope says what a token may do; the profile says what it is shown, so an agent mid-task does
not read (and pay for) forty curator's and operator's tool schemas. ``tools/list`` shows the tools
of the connection's profile that its scope may call, and a call of a tool outside the profile is
refused with the name of a profile that has it. A profile never widens a scope: ``ScopeGuard``
checks the scope first, and the profile only takes away.

``MEMBERS`` is the one place that says which tools a profile has (``None``: every tool). The
connection's profile is, first found: the ``X-Kenning-Profile`` header or a ``?profile=`` query
option on the MCP URL; the token's own (``kenning token create --profile``, or an OAuth grant's
``profile:NAME`` scope); the server's default ``KENNING_MCP_PROFILE``. The names are
``kenning.access.tokens.PROFILES``.
"""

from __future__ import annotations

from fastmcp.server.dependencies import get_access_token, get_http_request

from kenning.access.tokens import PROFILES, check_profile
from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from mcp_server.auth import PROFILE_CLAIM

HEADER = "x-kenning-profile"
QUERY = "profile"
CLAIM = PROFILE_CLAIM  # a bearer token's own profile
SCOPE_PREFIX = "profile:"  # an OAuth grant's profile rides in its scopes

# What an agent uses mid-task: store, find, read in full by key, correct, say how work went,
# check the graveyard, the session-start briefing (it carries the project's context) and the
# skills (a skill found is read by its key with recall_detail). Measured (docs/mcp-tools.md):
# recall_index would cost ~400 tokens more for what recall with a small top_k and recall_detail
# already give, get_project_context repeats the briefing's context, get_skill recall_detail.
AGENT = frozenset(
    {
        "remember",
        "recall",
        "recall_detail",
        "update_memory",
        "forget",
        "record_experience",
        "log_abandoned",
        "warn_if_abandoned",
        "briefing",
        "find_skills",
    }
)
# Review work: read and explain, move visibility, settle contradictions and duplicates, suppress,
# compile and approve skills, keep project contexts. Not the operator's backups, reindex,
# project deletion or health.
CURATOR = frozenset(
    {
        "recall",
        "recall_index",
        "recall_detail",
        "briefing",
        "explain_memory",
        "memory_audit",
        "history",
        "audit_log",
        "why_did_you_mention",
        "retag",
        "update_memory",
        "forget",
        "restore_forgotten",
        "deprioritise",
        "archive",
        "reinstate",
        "deprioritise_project",
        "reinstate_project",
        "suppress_topic",
        "unsuppress_topic",
        "list_suppressions",
        "check_contradictions",
        "list_contradictions",
        "resolve_contradiction",
        "verify_memory",
        "find_duplicates",
        "merge_duplicates",
        "get_experience",
        "experience_summary",
        "compile_skill",
        "approve_skill",
        "write_skill",
        "bless",
        "promote_knowledge",
        "find_skills",
        "get_skill",
        "list_projects",
        "get_project_context",
        "set_project_context",
        "update_project_state",
    }
)
MEMBERS: dict[str, frozenset[str] | None] = {"agent": AGENT, "curator": CURATOR, "all": None}


def shows(profile: str, tool: str) -> bool:
    members = MEMBERS[profile]
    return members is None or tool in members


def home(tool: str) -> str:
    """The first profile (in ``PROFILES`` order, smallest first) that shows ``tool``."""
    return next(p for p in PROFILES if shows(p, tool))


def outside(profile: str, tool: str) -> InvalidInput:
    """The refusal of a call of ``tool`` outside ``profile``: where the tool is instead."""
    there = home(tool)
    return InvalidInput(
        f"tool {tool!r} is not in this connection's {profile!r} profile; profile {there!r} has "
        "it; nothing was run",
        hint=(
            f"reconnect with the header X-Kenning-Profile: {there} (or ?profile={there} on the "
            f"URL), or use a token created with --profile {there}"
        ),
    )


def of_connection(settings: Settings) -> str:
    """The profile of the request in progress (see the module), checked: an unknown name is
    InvalidInput listing the valid ones."""
    asked = _asked()
    if asked is not None:
        return _checked(asked, "the X-Kenning-Profile header or ?profile=")
    token = get_access_token()
    if token is not None:
        own = token.claims.get(CLAIM) or next(
            (s.removeprefix(SCOPE_PREFIX) for s in token.scopes if s.startswith(SCOPE_PREFIX)),
            None,
        )
        if own:
            return _checked(str(own), "the token's profile")
    return settings.mcp_profile


def _asked() -> str | None:
    try:
        request = get_http_request()
    except RuntimeError:  # not over HTTP (an in-memory client): nothing was asked
        return None
    return request.headers.get(HEADER) or request.query_params.get(QUERY) or None


def _checked(name: str, where: str) -> str:
    try:
        return check_profile(name.strip().lower())
    except InvalidInput as exc:
        raise InvalidInput(f"{exc.message} in {where}", hint=exc.hint) from None
