"""The client the official conformance suite tests: mcplite's public `Client`, one function per scenario.

The suite runs it as ``conformance client --command "python3 tests/conformance/client.py" --scenario NAME``:
the URL of the scenario's mock server is the last argument, the scenario's name is in
``MCP_CONFORMANCE_SCENARIO``, and scenarios that need credentials get them as JSON in
``MCP_CONFORMANCE_CONTEXT``. The mock server judges what we send; we exit 0 when the scenario ran through,
1 when something failed (with the reason on stderr), 2 for a scenario this client does not know.

Authorization scenarios (``auth/...``): the mock's MCP server answers 401 until the client has signed in
at the mock's authorization server. The sign-in is `mcplite.oauth` as a user would run it, except that the
browser step is headless: the authorization URL is fetched and its 302 ``Location`` read, never followed.
Credentials, where a scenario has them, come from ``MCP_CONFORMANCE_CONTEXT``.

The revision: the suite says which one it judges in ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the 2025-11-25 set:
the handshake; the 2026-07-28 set: per-request ``_meta``, no handshake; suite 0.1.16 names none and judges
the handshake era). Every scenario pins the client to it, as a user who knows the server would; the probe the
default ``protocol_version="auto"`` makes is tested in tests/test_client_era.py and
tests/test_http_client_envelope.py. (At 2026-07-28 several mocks do not answer
``server/discover`` at all, which the spec allows: discover is optional there.)
"""

import json
import logging
import os
import sys
from typing import Any, Callable, Dict

# Run as a script from anywhere: the checkout's package comes first.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from mcplite import Client, MCPError  # noqa: E402
from mcplite.errors import AuthError, SkillVerificationError  # noqa: E402
from mcplite.protocol.versions import LATEST_HANDSHAKE_VERSION  # noqa: E402
from mcplite.oauth import ClientCredentials, CrossAppAccess, HTTPRequest, JWTBearer, OAuth  # noqa: E402
from mcplite.oauth.advanced import send_with_http_client  # noqa: E402

#: Seconds per request: below the suite's own 30 s limit, so a hang ends with our message, not a kill.
TIMEOUT = 20.0
#: The revision the suite judges this run at (0.2 always sets the variable; 0.1.16, which predates the
#: 2026-07-28 revision, and a run by hand do not: the handshake era).
VERSION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or LATEST_HANDSHAKE_VERSION

Scenario = Callable[[str, Dict[str, Any]], None]
SCENARIOS: Dict[str, Scenario] = {}


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    """Register the function that runs scenario ``name`` against a URL (with the suite's context)."""
    def register(run: Scenario) -> Scenario:
        SCENARIOS[name] = run
        return run
    return register


@scenario("initialize")
def initialize(url: str, context: Dict[str, Any]) -> None:
    """The handshake is the test: protocol version, clientInfo, then the initialized notification.

    The mock declares no capabilities, answers notifications with a JSON body and GET with 400."""
    with Client(url, timeout=TIMEOUT, protocol_version=VERSION) as client:
        client.ping()


@scenario("tools_call")
def tools_call(url: str, context: Dict[str, Any]) -> None:
    """Call the mock's add_numbers tool (it answers over SSE)."""
    with Client(url, timeout=TIMEOUT, protocol_version=VERSION) as client:
        client.call_tool("add_numbers", {"a": 5, "b": 3}, raise_on_error=True)


@scenario("elicitation-sep1034-client-defaults")
def elicitation_defaults(url: str, context: Dict[str, Any]) -> None:
    """Accept the mock's form, filling every field from its schema default (SEP-1034)."""
    with Client(url, timeout=TIMEOUT, protocol_version=VERSION, elicitation=accept_with_defaults) as client:
        client.call_tool("test_client_elicitation_defaults", raise_on_error=True)


@scenario("sse-retry")
def sse_retry(url: str, context: Dict[str, Any]) -> None:
    """The mock closes the call's SSE stream after a priming event with ``retry: 500``; the transport
    must wait that long, then resume with GET and ``Last-Event-ID`` to receive the result."""
    with Client(url, timeout=TIMEOUT, protocol_version=VERSION) as client:
        client.call_tool("test_reconnection", raise_on_error=True)


# ---- revision 2026-07-28 ----------------------------------------------------------------------------

def capable_client(url: str, **options: Any) -> Client:
    """A client that declares roots, sampling and elicitation (each answered by a plain callback), as an
    application with a model and a user would."""
    return Client(url, timeout=TIMEOUT, protocol_version=VERSION, roots=[{"uri": "file:///workspace", "name": "ws"}],
                  sampling=answer_sampling, elicitation=options.pop("elicitation", accept_with_defaults), **options)


@scenario("request-metadata")
def request_metadata(url: str, context: Dict[str, Any]) -> None:
    """Every request carries the envelope in ``_meta`` and the version header. The mock refuses the first
    request with -32022 whatever it says: the client sends it again at a version the refusal lists, then
    goes on (the checks are read from every request)."""
    with capable_client(url) as client:
        client.list_tools()
        client.ping()  # server/discover on this revision
        client.call_tool("anything")


@scenario("sep-2322-client-request-state")
def client_request_state(url: str, context: Dict[str, Any]) -> None:
    """Call every listed tool; those that answer ``input_required`` are answered by the elicitation callback
    and called again with ``inputResponses`` and the ``requestState`` as received (if any), under a new id."""
    with capable_client(url, elicitation=confirm) as client:
        for tool in client.list_tools():
            client.call_tool(tool["name"], raise_on_error=True)


@scenario("http-standard-headers")
def standard_headers(url: str, context: Dict[str, Any]) -> None:
    """Use one of everything, so every ``Mcp-Method`` and ``Mcp-Name`` gets checked."""
    with capable_client(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool["name"], arguments_for(tool))
        for resource in client.list_resources():
            client.read_resource(resource["uri"])
        for prompt in client.list_prompts():
            client.get_prompt(prompt["name"])


@scenario("http-custom-headers")
def custom_headers(url: str, context: Dict[str, Any]) -> None:
    """List the tools (their ``x-mcp-header`` annotations name the headers), then make the context's calls:
    the annotated arguments travel as ``Mcp-Param-*`` headers too."""
    with capable_client(url) as client:
        client.list_tools()
        for call in context.get("toolCalls", []):
            client.call_tool(call["name"], call.get("arguments") or {})


@scenario("http-invalid-tool-headers")
def invalid_tool_headers(url: str, context: Dict[str, Any]) -> None:
    """Tools with invalid ``x-mcp-header`` annotations are left out of the list; call every one left."""
    with capable_client(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool["name"], arguments_for(tool))


@scenario("json-schema-ref-no-deref")
def ref_no_deref(url: str, context: Dict[str, Any]) -> None:
    """A tool schema with a ``$ref`` to a network URL: listed (and kept as sent), never fetched."""
    with capable_client(url) as client:
        client.list_tools()


@scenario("json-schema-2020-12-preservation")
def schema_preservation(url: str, context: Dict[str, Any]) -> None:
    """Echo a 2020-12 tool schema back exactly as listed: the client keeps schemas as raw JSON."""
    with capable_client(url) as client:
        tools = {tool["name"]: tool for tool in client.list_tools()}
        schema = tools["json_schema_2020_12_tool"]["inputSchema"]
        client.call_tool("json_schema_echo", {"schema": schema}, raise_on_error=True)


# ---- skills (the extension io.modelcontextprotocol/skills, SEP-2640) ----------------------------------

@scenario("sep-2640-client-no-prefetch")
def skills_listed(url: str, context: Dict[str, Any]) -> None:
    """A host building its skill registry: the listing alone, no file read (none is loaded yet)."""
    with Client(url, timeout=TIMEOUT, protocol_version=VERSION) as client:
        for entry in client.list_skills():
            print(f"listed {entry['frontmatter']['name']}: {entry['uri']}", file=sys.stderr)


def load_every_skill(url: str, context: Dict[str, Any]) -> None:
    """A host whose model loads each listed skill and then reads all its files. Each mock serves a SKILL.md
    that does not match its entry (digest, size or frontmatter): the load must refuse it, and then nothing
    more of that skill is read. A refusal is the expected outcome (reported on stderr, exit 0)."""
    with Client(url, timeout=TIMEOUT, protocol_version=VERSION) as client:
        for entry in client.list_skills():
            try:
                skill = client.load_skill(entry)
            except SkillVerificationError as refused:
                print(f"refused {entry['uri']} ({refused.reason}): {refused}", file=sys.stderr)
                continue
            for uri in skill.files[1:]:
                skill.read(uri)


for _name in ("sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter"):
    scenario(_name)(load_every_skill)


# ---- authorization ----------------------------------------------------------------------------------

#: The mocks' authorization servers accept this Client ID Metadata Document URL as a client id.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
#: Registered with the mocks, never contacted: `read_redirect` reads the redirect instead.
REDIRECT_URI = "http://localhost:3000/callback"
#: Scenarios where a user signs in (authorization code + PKCE); the mocks vary discovery, registration,
#: token endpoint authentication and scopes, and the client must cope with each variation on its own.
USER_SIGN_IN_SCENARIOS = (
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
    "auth/basic-cimd", "auth/pre-registration",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
    # 2026-07-28's rules: RFC 9207 ``iss``, the metadata's issuer, registrations kept per issuer.
    "auth/iss-supported", "auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer",
    "auth/iss-unexpected", "auth/iss-normalized", "auth/metadata-issuer-mismatch",
    "auth/authorization-server-migration",
    # DPoP (SEP-1932): the AS offers ES256 proofs, so the sign-in binds the token to a key of its own and every
    # request carries a fresh proof; the -nonce variant makes both servers ask for a nonce first.
    "auth/dpop", "auth/dpop-nonce",
)
#: The same for a server of 2025-03-26 (no protected resource metadata), signed in to by a client that
#: speaks that revision, which selects its rules (no ``resource`` parameter on the fallback).
LEGACY_SIGN_IN_SCENARIOS = ("auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback")


def read_redirect(authorization_url: str) -> str:
    """The user's step, headless: the mock consents at once, so fetch the authorization URL and return
    the ``Location`` of its redirect without following it."""
    response = send_with_http_client(HTTPRequest("GET", authorization_url, {}), timeout=TIMEOUT)
    location = response.headers.get("location")
    if response.status not in (302, 303) or not location:
        raise AuthError(f"the authorization endpoint answered HTTP {response.status} without a redirect")
    return location


def use_protected_server(url: str, auth: Any, protocol_version: str = VERSION) -> None:
    """What the mocks' MCP servers expect once the client is authorized: list the tools, call one (two
    authorized requests: auth/authorization-server-migration moves the server to another authorization
    server after the first)."""
    with Client(url, timeout=TIMEOUT, auth=auth, protocol_version=protocol_version) as client:
        client.list_tools()
        client.call_tool("test-tool", raise_on_error=True)


def sign_in_as_user(protocol_version: str) -> Scenario:
    """A user's sign-in speaking ``protocol_version``: as a pre-registered client when the context has
    one, otherwise with the Client ID Metadata Document where the authorization server supports it,
    else with dynamic registration."""
    def run(url: str, context: Dict[str, Any]) -> None:
        auth = OAuth(
            client_id=context.get("client_id"), client_secret=context.get("client_secret"),
            client_metadata_url=CLIENT_METADATA_URL, redirect_uri=REDIRECT_URI, authorize=read_redirect,
            protocol_version=protocol_version,
        )
        use_protected_server(url, auth, protocol_version)
    return run


for _name in USER_SIGN_IN_SCENARIOS:
    scenario(_name)(sign_in_as_user(VERSION))
for _name in LEGACY_SIGN_IN_SCENARIOS:
    scenario(_name)(sign_in_as_user("2025-03-26"))


@scenario("auth/client-credentials-basic")
def client_credentials_basic(url: str, context: Dict[str, Any]) -> None:
    """A machine with a client secret (extension oauth-client-credentials)."""
    use_protected_server(url, ClientCredentials(client_id=context["client_id"],
                                                client_secret=context["client_secret"]))


@scenario("auth/client-credentials-jwt")
def client_credentials_jwt(url: str, context: Dict[str, Any]) -> None:
    """A machine with an ES256 key: a ``private_key_jwt`` assertion signed by `mcplite.jose`."""
    use_protected_server(url, ClientCredentials(client_id=context["client_id"],
                                                private_key=context["private_key_pem"]))


@scenario("auth/enterprise-managed-authorization")  # FORMER_NAMES has its 0.1.16 name
def cross_app_access(url: str, context: Dict[str, Any]) -> None:
    """Enterprise-managed authorization: the user's ID token exchanged at the IdP for an ID-JAG, then the
    JWT bearer grant at the MCP server's authorization server."""
    use_protected_server(url, CrossAppAccess(
        client_id=context["client_id"], client_secret=context["client_secret"], id_token=context["idp_id_token"],
        idp_token_endpoint=context["idp_token_endpoint"], idp_client_id=context["idp_client_id"],
    ))


@scenario("auth/wif-jwt-bearer")
def workload_identity(url: str, context: Dict[str, Any]) -> None:
    """Workload identity federation: the platform's JWT presented with the RFC 7523 JWT bearer grant, with
    no registration (the mock's AS has no registration endpoint) and no fallback to another grant."""
    use_protected_server(url, JWTBearer(assertion=context["valid_jwt"]))


#: Scenarios the suite renamed in 0.2: the name in 0.1.16 -> the name in 0.2.0-alpha.12. The fixture answers to
#: both, so either version of the suite can drive it (tests/conformance/run.sh runs both).
FORMER_NAMES = {"auth/cross-app-access-complete-flow": "auth/enterprise-managed-authorization"}
for _former, _current in FORMER_NAMES.items():
    SCENARIOS[_former] = SCENARIOS[_current]


# ---- helpers ------------------------------------------------------------------------------------------

def accept_with_defaults(params: Dict[str, Any]) -> Dict[str, Any]:
    """An elicitation answer as a person who changes nothing would give: every default, accepted."""
    properties = params.get("requestedSchema", {}).get("properties", {})
    content = {name: field["default"] for name, field in properties.items() if "default" in field}
    return {"action": "accept", "content": content}


def confirm(params: Dict[str, Any]) -> Dict[str, Any]:
    """Accept an elicitation, answering every boolean field yes and the rest from their defaults."""
    answer = accept_with_defaults(params)
    for name, field in params.get("requestedSchema", {}).get("properties", {}).items():
        if field.get("type") == "boolean":
            answer["content"][name] = True
    return answer


def answer_sampling(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "conformance-model"}


def arguments_for(tool: Dict[str, Any]) -> Dict[str, Any]:
    """Plausible values for a tool's required arguments, by type (the mocks check headers, not values)."""
    schema = tool.get("inputSchema") or {}
    samples = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True, "object": {}, "array": []}
    arguments = {}
    for name in schema.get("required", []):
        kind = (schema.get("properties", {}).get(name) or {}).get("type", "string")
        arguments[name] = samples.get(kind if isinstance(kind, str) else "string", "x")
    return arguments


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(sys.argv) < 2 or name not in SCENARIOS:
        print(f"usage: MCP_CONFORMANCE_SCENARIO=NAME {sys.argv[0]} URL "
              f"(scenario {name!r}; known: {', '.join(sorted(SCENARIOS))})", file=sys.stderr)
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        SCENARIOS[name](sys.argv[-1], context)
    except MCPError as exc:
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
