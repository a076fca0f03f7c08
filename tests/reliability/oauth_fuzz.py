"""Scenario oauth-fuzz: hostile OAuth responses against our client's sign-in.

A local server plays a protected MCP resource and its authorization server, all on one port. Flow ``n``
lives under ``/f{n}/``: its MCP endpoint answers 401 with a ``WWW-Authenticate`` challenge until it gets the
token ``tok-{n}``, and it serves the protected resource metadata, the authorization server metadata, dynamic
client registration and the token endpoint. Each flow picks (seeded by ``n``) a grant (client credentials,
or the authorization code grant with dynamic registration and an ``authorize`` callback that consents at
once, no browser) and none, one or two of those five documents to spoil (`MUTATIONS`: truncated or garbage
JSON, wrong types, lone surrogates, NaN and huge numbers, deep nesting, oversized bodies, wrong content
types and statuses, bad URLs, missing fields, slow, stalled or closed connections, a hostile challenge).

Passing means: every flow's ``tools/call`` returns its answer or raises an `MCPError` (never another
exception, nor an exception on another thread), within `FLOW_BOUND` seconds; every flow with nothing
spoiled succeeds. The figures count the outcomes by kind (``ok``, or the `MCPError` subclass raised).
"""

import json
import random
import re
import socket
import socketserver
import threading
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Tuple, cast
from urllib.parse import parse_qsl, urlencode, urlsplit

from mcplite import Client
from mcplite.errors import MCPError
from mcplite.oauth import ClientCredentials, OAuth

from .frames import call_rng, choose, encode, random_value
from .harness import Result, Run, percentile, scenario
from .rawhttp import incoming_requests, response

#: The longest a flow may take, start to end, whatever it was served.
FLOW_BOUND = 10.0
#: The client's timeout for each exchange: a stalled answer must end the flow well within `FLOW_BOUND`.
CLIENT_TIMEOUT = 2.0
WORKERS = 8
DOCUMENTS = ("challenge", "resource", "server", "register", "token")
#: How many documents a flow spoils: none (a control flow that must succeed), one or two.
SPOILED_COUNTS = [(0, 12), (1, 60), (2, 28)]
MUTATIONS = [("truncated", 8), ("garbage", 6), ("wrong_type", 12), ("surrogate", 7), ("numbers", 8), ("deep", 4),
             ("oversized", 3), ("content_type", 6), ("bad_url", 10), ("missing", 10), ("status", 8), ("slow", 4),
             ("stall", 1), ("closed", 5), ("extra", 4)]
BAD_URLS = ["", "not a url", "javascript:alert(1)", "ftp://127.0.0.1/x", "http://[::1", "http://127.0.0.1:0/x",
            "http://\u00e9xample/x", "https://evil.example/as", "http:///nohost", "http://127.0.0.1:99999/",
            "//127.0.0.1/x", "http://127.0.0.1/\ud800", "http://127.0.0.1/x#frag", "file:///etc/passwd", 5, None,
            ["http://127.0.0.1/"], "http://user:pw@127.0.0.1/x", "http://127.0.0.1/" + "a" * 70_000]
NUMBERS = [float("nan"), float("inf"), float("-inf"), 1e308, -1, 0, 2 ** 64, 10 ** 30, 0.5, True]
_FLOW_PATH = re.compile(r"/f(\d+)/")


def flow_plan(seed: int, n: int) -> Tuple[str, Dict[str, str]]:
    """Flow ``n``'s grant and its spoiled documents (document -> mutation); client and server draw the same."""
    rng = call_rng(seed, n)
    grant = rng.choice(["client_credentials", "authorization_code"])
    count = int(choose(rng, [(str(k), w) for k, w in SPOILED_COUNTS]))
    spoiled = {document: choose(rng, MUTATIONS) for document in rng.sample(DOCUMENTS, count)}
    return grant, spoiled


# ---- the documents, right and spoiled ---------------------------------------------------------------------
def _documents(base: str, n: int, request_body: bytes) -> Dict[str, Dict[str, Any]]:
    issuer = f"{base}/f{n}/as"
    try:
        registration = json.loads(request_body or b"{}")
    except ValueError:
        registration = {}
    return {
        "resource": {"resource": f"{base}/f{n}/mcp", "authorization_servers": [issuer], "scopes_supported": ["mcp"]},
        "server": {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize",
                   "token_endpoint": f"{issuer}/token", "registration_endpoint": f"{issuer}/register",
                   "response_types_supported": ["code"],
                   "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                   "code_challenge_methods_supported": ["S256"], "scopes_supported": ["mcp"],
                   "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"]},
        "register": {**(registration if isinstance(registration, dict) else {}), "client_id": f"dyn-{n}",
                     "client_secret": "s", "token_endpoint_auth_method": "client_secret_basic"},
        "token": {"access_token": f"tok-{n}", "token_type": "Bearer", "expires_in": 3600, "scope": "mcp"},
    }


class Answer:
    """What the server sends for one request: a status, headers and a body; or a way of misbehaving."""

    def __init__(self, status: int, headers: List[Tuple[str, str]], body: bytes, *, how: str = "whole") -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.how = how  # whole, slow (trickled), stall (nothing until the client gives up), closed


def _json_answer(status: int, value: Any) -> Answer:
    return Answer(status, [("Content-Type", "application/json")], encode(value))


def _spoil_value(rng: random.Random, document: Dict[str, Any], mutation: str) -> Any:
    """``document`` with a value spoiled per ``mutation`` (a JSON value, maybe no longer an object)."""
    spoiled = dict(document)
    key = rng.choice(sorted(spoiled))
    if mutation == "wrong_type":
        if rng.random() < 0.2:
            return rng.choice([[], [spoiled], "text", 5, None, True, 1.5])
        spoiled[key] = random_value(rng)
    elif mutation == "surrogate":
        spoiled[key] = rng.choice(["\ud800", "a\udfff", "\udc00\ud800", ["\ud83d"], {"\ud800": 1}])
    elif mutation == "numbers":
        spoiled[rng.choice([key, "expires_in"])] = rng.choice(NUMBERS)
    elif mutation == "bad_url":
        urls = [name for name in spoiled
                if "endpoint" in name or name in ("resource", "issuer", "authorization_servers")]
        name = rng.choice(urls or [key])
        bad = rng.choice(BAD_URLS)
        spoiled[name] = [bad] if name == "authorization_servers" and rng.random() < 0.7 else bad
    elif mutation == "missing":
        for name in rng.sample(sorted(spoiled), rng.randint(1, len(spoiled))):
            del spoiled[name]
    elif mutation == "extra":
        spoiled.update({"unknown": random_value(rng), "x-" + key: {"nested": [1, 2, 3]}})
    return spoiled


def spoil(rng: random.Random, mutation: str, right: Answer) -> Answer:
    """``right`` (a JSON document's answer) spoiled per ``mutation``."""
    body = right.body
    headers = right.headers
    if mutation == "truncated":
        return Answer(right.status, headers, body[:rng.randrange(len(body))])
    if mutation == "garbage":
        return Answer(right.status, headers, rng.choice([
            bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))), b"<html>sign in</html>", b"null",
            b"\xef\xbb\xbf" + body, body + b"garbage", b"\x00" * 10, body.replace(b'"', b"'"), b"{}" * 3]))
    if mutation == "deep":
        depth = rng.choice([100, 1000, 100_000])
        nested = b"[" * depth + b"]" * depth if rng.random() < 0.5 else b'{"a":' * depth + b"1" + b"}" * depth
        return Answer(right.status, headers, body[:-1] + b',"deep":' + nested + b"}")
    if mutation == "oversized":
        size = rng.choice([900_000, 1_100_000, 3_000_000])
        return Answer(right.status, headers, body[:-1] + b',"pad":"' + b"x" * size + b'"}')
    if mutation == "content_type":
        kind = rng.choice(["text/html", "", "application/xml", "text/plain", "application/json; charset=utf-16",
                           "application/jwt", "multipart/form-data"])
        return Answer(right.status, [("Content-Type", kind)] if kind else [], body)
    if mutation == "status":
        status = rng.choice([200, 201, 204, 302, 400, 401, 403, 404, 500, 503])
        error = rng.choice([b"", b'{"error":"invalid_client"}', b'{"error":5,"error_description":["x"]}',
                            b'{"error":"server_error","error_description":"\\ud800"}', body])
        return Answer(status, [("Content-Type", "application/json"), ("Location", "http://127.0.0.1:1/")], error)
    if mutation == "slow":
        return Answer(right.status, headers, body, how="slow")
    if mutation == "stall":
        return Answer(right.status, headers, body, how="stall")
    if mutation == "closed":
        return Answer(right.status, headers, body, how="closed")
    try:
        document = json.loads(body)
    except ValueError:  # a non-JSON answer (none today): leave it
        return right
    spoiled = _spoil_value(rng, document, mutation)
    return Answer(right.status, headers, json.dumps(spoiled, separators=(",", ":")).encode())


def spoil_challenge(rng: random.Random, mutation: str, metadata_url: str) -> Answer:
    """The 401 of the MCP endpoint with its ``WWW-Authenticate`` spoiled (or the answer itself)."""
    if mutation in ("slow", "stall", "closed"):
        return Answer(401, [("WWW-Authenticate", f'Bearer resource_metadata="{metadata_url}"')], b"", how=mutation)
    if mutation == "status":
        return Answer(rng.choice([400, 403, 404, 500, 200]), [("Content-Type", "application/json")], b"{}")
    header = rng.choice([
        "", "Bearer", "Basic realm=\"x\"", "Bearer resource_metadata=", 'Bearer resource_metadata="',
        f'Bearer resource_metadata="{rng.choice([url for url in BAD_URLS if isinstance(url, str)])}"',
        f'Bearer resource_metadata="{metadata_url}", scope="\x01\x7f"', 'Bearer scope="' + "s " * 20_000 + '"',
        f'Bearer resource_metadata={metadata_url}, error="invalid_token", error="x"', "Bearer ,,,,=,=\"\\",
        'Bearer resource_metadata="http://127.0.0.1/\xed\xa0\x80"', "Bearer " + "a=b, " * 3000,
        f'DPoP algs="ES256", Bearer resource_metadata="{metadata_url}"', "\xff\xfe",
    ])
    return Answer(401, [("WWW-Authenticate", header)] if header else [], b'{"error":"invalid_token"}')


# ---- the server --------------------------------------------------------------------------------------------
class OAuthFuzzServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, seed: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seed = seed
        self.base = f"http://127.0.0.1:{self.server_address[1]}"
        self.lock = threading.Lock()  # guards served and errors
        self.served: Counter[str] = Counter()  # "document:mutation" -> times served
        self.errors: List[str] = []  # the server's own failures (a bug of the scenario, not of the client)
        self.stopping = threading.Event()

    def handle_error(self, request: Any, client_address: Any) -> None:
        import traceback
        with self.lock:
            self.errors.append(traceback.format_exc()[-500:])


class _Handler(socketserver.BaseRequestHandler):
    @property
    def fuzz(self) -> OAuthFuzzServer:
        return cast(OAuthFuzzServer, self.server)

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        try:
            for method, target, headers, body in incoming_requests(sock):
                if not self.send(sock, self.route(method, target, headers, body)):
                    return
        except (ConnectionError, socket.timeout):
            return  # the client gave up on a stalled or slow answer

    def send(self, sock: socket.socket, answer: Answer) -> bool:
        """Send ``answer`` the way it says; False when the connection must end."""
        data = response(answer.status, answer.headers, answer.body)
        if answer.how == "closed":
            sock.sendall(data[:random.Random(len(data)).randrange(len(data))])
            return False
        if answer.how == "stall":
            self.fuzz.stopping.wait(CLIENT_TIMEOUT + 1)
            return False
        if answer.how == "slow":
            pieces = max(1, len(data) // 40)
            for at in range(0, len(data), pieces):
                sock.sendall(data[at:at + pieces])
                if self.fuzz.stopping.wait(0.01):
                    return False
            return True
        sock.sendall(data)
        return True

    def route(self, method: str, target: str, headers: Dict[str, str], body: bytes) -> Answer:
        match = _FLOW_PATH.search(target)
        if match is None:
            return Answer(404, [], b"")
        n = int(match.group(1))
        _, spoiled = flow_plan(self.fuzz.seed, n)
        path = urlsplit(target).path
        base = self.fuzz.base
        documents = _documents(base, n, body)
        if path == f"/f{n}/mcp":
            metadata_url = f"{base}/.well-known/oauth-protected-resource/f{n}/mcp"
            if headers.get("authorization") != f"Bearer tok-{n}":
                document = "challenge"
                right = Answer(401, [("WWW-Authenticate", f'Bearer error="invalid_token", '
                                                           f'resource_metadata="{metadata_url}"')], b"")
            else:
                return self.mcp(method, headers, body)
        elif path == f"/.well-known/oauth-protected-resource/f{n}/mcp" and method == "GET":
            document, right = "resource", _json_answer(200, documents["resource"])
        elif path == f"/.well-known/oauth-authorization-server/f{n}/as" and method == "GET":
            document, right = "server", _json_answer(200, documents["server"])
        elif path == f"/f{n}/as/register" and method == "POST":
            document, right = "register", _json_answer(201, documents["register"])
        elif path == f"/f{n}/as/token" and method == "POST":
            form = dict(parse_qsl(body.decode("utf-8", "replace")))
            known = form.get("grant_type") in ("client_credentials", "refresh_token") or (
                form.get("grant_type") == "authorization_code" and form.get("code") == f"code-{n}")
            if not known:
                return _json_answer(400, {"error": "invalid_grant"})
            document, right = "token", _json_answer(200, documents["token"])
        else:
            return Answer(404, [], b"")
        mutation = spoiled.get(document)
        with self.fuzz.lock:
            self.fuzz.served[f"{document}:{mutation or 'right'}"] += 1
        if mutation is None:
            return right
        rng = random.Random(f"{self.fuzz.seed}:{n}:{document}")
        if document == "challenge":
            return spoil_challenge(rng, mutation, metadata_url)
        return spoil(rng, mutation, right)

    def mcp(self, method: str, headers: Dict[str, str], body: bytes) -> Answer:
        """The MCP endpoint, once signed in: initialize, notifications and ``tools/call`` of ``echo``."""
        if method == "DELETE":
            return Answer(200, [], b"")
        if method != "POST":
            return Answer(405, [], b"")
        message = json.loads(body)
        if "id" not in message:
            return Answer(202, [], b"")
        if message.get("method") == "initialize":
            result: Any = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "oauth-fuzz", "version": "1"}}
        elif message.get("method") == "tools/call":
            n = (message.get("params") or {}).get("arguments", {}).get("n")
            result = {"content": [{"type": "text", "text": str(n)}]}
        else:
            result = {}
        answer = _json_answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})
        answer.headers.append(("Mcp-Session-Id", "0123456789abcdef"))
        return answer


# ---- the client side ---------------------------------------------------------------------------------------
def _consent(n: int) -> Callable[[str], str]:
    """An ``authorize`` callback that consents at once: the redirect the authorization server would send."""
    def authorize(url: str) -> str:
        query = dict(parse_qsl(urlsplit(url).query))
        return f"{query.get('redirect_uri', '')}?{urlencode({'code': f'code-{n}', 'state': query.get('state', '')})}"
    return authorize


class _Outcomes:
    """What the flows came to (guarded by `lock`: flows run on several threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.kinds: Counter[str] = Counter()
        self.durations: List[float] = []
        self.slow: List[str] = []
        self.foreign: List[str] = []
        self.control_failures: List[str] = []
        self.done = 0

    def flow(self, base: str, seed: int, n: int) -> None:
        grant, spoiled = flow_plan(seed, n)
        auth: Any
        if grant == "client_credentials":
            auth = ClientCredentials(client_id=f"svc-{n}", client_secret="s", dpop=False)
        else:
            auth = OAuth(authorize=_consent(n), redirect_uri="http://127.0.0.1:8976/callback", dpop=False)
        started = time.monotonic()
        kind, detail = "ok", ""
        try:
            with Client(f"{base}/f{n}/mcp", auth=auth, protocol_version="2025-11-25", timeout=CLIENT_TIMEOUT) as client:
                answer = client.call_tool("echo", {"n": n})
            content = answer.get("content") if isinstance(answer, dict) else None
            first = content[0] if isinstance(content, list) and content else None
            if not (isinstance(first, dict) and first.get("text") == str(n)):
                kind = "wrong_result"
        except MCPError as exc:
            kind = type(exc).__name__
            detail = f"{kind}: {exc}"[:300]
        except Exception as exc:  # noqa: BLE001  (what this scenario looks for)
            kind = "foreign"
            detail = f"{type(exc).__name__}: {exc}"[:300]
        elapsed = time.monotonic() - started
        label = f"flow {n} ({grant}, {spoiled or 'nothing spoiled'})"
        with self.lock:
            self.kinds[kind] += 1
            self.durations.append(elapsed)
            self.done += 1
            if kind == "foreign":
                self.foreign.append(f"{label}: {detail}")
            if elapsed > FLOW_BOUND:
                self.slow.append(f"{label}: {elapsed:.1f}s")
            if not spoiled and kind != "ok":
                self.control_failures.append(f"{label}: {detail if kind != 'wrong_result' else kind}")

    def run(self, base: str, seed: int, flows: int) -> List[str]:
        """Run the flows from `WORKERS` threads; returns the names of workers that did not finish."""
        def work(numbers: List[int]) -> None:
            for n in numbers:
                self.flow(base, seed, n)
        threads = [threading.Thread(target=work, args=(list(range(worker, flows, WORKERS)),), daemon=True,
                                    name=f"oauth-fuzz-{worker}") for worker in range(WORKERS)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + FLOW_BOUND * (flows // WORKERS + 2)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return [thread.name for thread in threads if thread.is_alive()]


@scenario("oauth-fuzz", quick_timeout=120, long_timeout=1200)
def oauth_fuzz(run: Run) -> Result:
    flows = run.size(300, 5_000)
    result = Result()
    server = OAuthFuzzServer(run.seed)
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    outcomes = _Outcomes()
    stray: List[str] = []
    previous_hook = threading.excepthook

    def on_thread_exception(args: "threading.ExceptHookArgs") -> None:  # a traceback on some client thread
        stray.append(f"{args.exc_type.__name__} on thread {args.thread.name if args.thread else '?'}: "
                     f"{args.exc_value}"[:300])

    threading.excepthook = on_thread_exception
    try:
        unfinished = outcomes.run(server.base, run.seed, flows)
    finally:
        threading.excepthook = previous_hook
        server.stopping.set()
        server.shutdown()
        server.server_close()
    spoiled_flows = sum(1 for n in range(flows) if flow_plan(run.seed, n)[1])
    result.figures.update(
        flows=outcomes.done, spoiled=spoiled_flows, foreign=len(outcomes.foreign), stray_exceptions=len(stray),
        p50=f"{percentile(outcomes.durations, 0.5):.2f}s", max=f"{max(outcomes.durations, default=0.0):.2f}s",
        **{f"outcome_{kind}": count for kind, count in sorted(outcomes.kinds.items())})
    result.check(not unfinished, f"flows hung: workers {unfinished} did not finish")
    result.check(outcomes.done == flows, f"{outcomes.done} of {flows} flows finished")
    result.check(not outcomes.foreign, f"{len(outcomes.foreign)} exceptions outside MCPError: {outcomes.foreign[:3]}")
    result.check(not stray, f"{len(stray)} exceptions on other threads: {stray[:3]}")
    result.check(not outcomes.slow,
                 f"{len(outcomes.slow)} flows took longer than {FLOW_BOUND:g} s: {outcomes.slow[:3]}")
    result.check(not outcomes.control_failures,
                 f"{len(outcomes.control_failures)} flows with nothing spoiled failed: {outcomes.control_failures[:3]}")
    result.check("wrong_result" not in outcomes.kinds,
                 f"{outcomes.kinds['wrong_result']} flows returned a wrong result")
    with server.lock:
        result.check(not server.errors, f"the fuzzing server itself failed {len(server.errors)} times: "
                                        f"{server.errors[:2]}")
    return result
