"""MCP method names, logging levels and the reserved ``_meta`` keys: the protocol's string constants, importable without `typing`.

`types` re-exports every name here, so ``from mcplite import types as t; t.TOOLS_CALL`` keeps working; the
sessions, `Server` and `Client` import this module instead, so that start-up never loads the TypedDicts.
"""

__all__ = [
    "INITIALIZE", "INITIALIZED", "PING", "CANCELLED", "PROGRESS", "TOOLS_LIST", "TOOLS_CALL",
    "RESOURCES_LIST", "RESOURCES_TEMPLATES_LIST", "RESOURCES_READ", "RESOURCES_SUBSCRIBE",
    "RESOURCES_UNSUBSCRIBE", "PROMPTS_LIST", "PROMPTS_GET", "COMPLETE", "LOGGING_SET_LEVEL", "LOG_MESSAGE",
    "SAMPLING_CREATE", "ELICIT", "ROOTS_LIST", "ROOTS_LIST_CHANGED", "TOOLS_LIST_CHANGED",
    "RESOURCES_LIST_CHANGED", "PROMPTS_LIST_CHANGED", "RESOURCE_UPDATED", "ELICITATION_COMPLETE",
    "SERVER_DISCOVER", "SUBSCRIPTIONS_LISTEN", "SUBSCRIPTIONS_ACKNOWLEDGED",
    "META_PREFIX", "PROTOCOL_VERSION_KEY", "CLIENT_INFO_KEY", "CLIENT_CAPABILITIES_KEY", "LOG_LEVEL_KEY",
    "SUBSCRIPTION_ID_KEY", "SERVER_INFO_KEY", "PROGRESS_TOKEN_KEY",
    "LOGGING_LEVELS",
]

INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
PING = "ping"
CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"
TOOLS_LIST = "tools/list"
TOOLS_CALL = "tools/call"
TOOLS_LIST_CHANGED = "notifications/tools/list_changed"
RESOURCES_LIST = "resources/list"
RESOURCES_TEMPLATES_LIST = "resources/templates/list"
RESOURCES_READ = "resources/read"
RESOURCES_SUBSCRIBE = "resources/subscribe"
RESOURCES_UNSUBSCRIBE = "resources/unsubscribe"
RESOURCES_LIST_CHANGED = "notifications/resources/list_changed"
RESOURCE_UPDATED = "notifications/resources/updated"
PROMPTS_LIST = "prompts/list"
PROMPTS_GET = "prompts/get"
PROMPTS_LIST_CHANGED = "notifications/prompts/list_changed"
COMPLETE = "completion/complete"
LOGGING_SET_LEVEL = "logging/setLevel"
LOG_MESSAGE = "notifications/message"
SAMPLING_CREATE = "sampling/createMessage"
ELICIT = "elicitation/create"
ELICITATION_COMPLETE = "notifications/elicitation/complete"  # 2025-11-25, URL mode
ROOTS_LIST = "roots/list"
ROOTS_LIST_CHANGED = "notifications/roots/list_changed"
# 2026-07-28
SERVER_DISCOVER = "server/discover"
SUBSCRIPTIONS_LISTEN = "subscriptions/listen"
# The skills extension (io.modelcontextprotocol/skills, SEP-2640; its rules are protocol/skills.py).
SKILLS_LIST = "skills/list"
SKILLS_GET = "skills/get"
SUBSCRIPTIONS_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

#: RFC 5424 severities, least severe first: a level's index is its rank.
LOGGING_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# ---- the reserved _meta keys of 2026-07-28 (per-request metadata) ------------------------------------------
#: The prefix MCP reserves for its own ``_meta`` keys (and official extensions').
META_PREFIX = "io.modelcontextprotocol/"
#: Required on every request: the revision the request speaks (``"2026-07-28"``).
PROTOCOL_VERSION_KEY = META_PREFIX + "protocolVersion"
#: Optional (clients SHOULD send it): the client's ``Implementation`` (name, version, ...). Display only.
CLIENT_INFO_KEY = META_PREFIX + "clientInfo"
#: Required on every request: the ``ClientCapabilities`` relevant to this request (``{}`` is valid).
CLIENT_CAPABILITIES_KEY = META_PREFIX + "clientCapabilities"
#: Optional: the least severe log level the server may emit for this request; absent means no logging.
LOG_LEVEL_KEY = META_PREFIX + "logLevel"
#: On notifications of a ``subscriptions/listen`` stream: the listen request's id.
SUBSCRIPTION_ID_KEY = META_PREFIX + "subscriptionId"
#: In a result's ``_meta`` (servers SHOULD send it): the server's ``Implementation``.
SERVER_INFO_KEY = META_PREFIX + "serverInfo"
#: Unprefixed, as in every revision: opts the request into progress notifications.
PROGRESS_TOKEN_KEY = "progressToken"
