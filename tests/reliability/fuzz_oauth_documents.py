"""A seeded mutation fuzzer over what the OAuth client reads from servers, without sockets: fast enough for pytest.

Where `oauth_fuzz` (the scenario) spoils documents on a real server and watches whole sign-ins over sockets,
this drives the I/O-free flow (`BaseOAuth.auth_flow`) over a scripted network of the same documents
(`oauth_fuzz._documents`, spoiled by `oauth_fuzz.spoil`, plus byte-level edits from `frames.mutate` and URLs
naming hosts the client must never go to), hundreds of cases a second. Each case is a deployment at one origin
(a loopback one, or a public https one) with a grant (client credentials, authorization code with dynamic
registration, workload identity) and none, one or two of its documents spoiled.

Every case must end with the caller's response or an `AuthError`, never another exception (KeyError, TypeError,
RecursionError, UnicodeError...); a case with nothing spoiled must succeed; and no request may leave the
deployment's origin but to a public https host (or, from a loopback deployment, to loopback): a spoiled document
may name any URL, and the client goes to none of the forbidden ones (`FORBIDDEN_URLS`, plain http elsewhere).

``run(seed, cases)`` raises AssertionError with a line that reproduces the first failure;
``python3 -m tests.reliability.fuzz_oauth_documents [--seed N] [--cases N] [--case N]`` runs it by hand.
"""

import argparse
import base64
import json
import random
import re
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qsl, urlencode, urlsplit

from mcplite.errors import AuthError
from mcplite.oauth import ClientCredentials, JWTBearer, OAuth, drive
from mcplite.oauth.flow import BaseOAuth
from mcplite.transports.http_messages import HTTPRequest, HTTPResponse

from .frames import choose, encode, mutate
from .oauth_fuzz import MUTATIONS, Answer, _documents, spoil, spoil_challenge

#: `oauth_fuzz.MUTATIONS` less the ones about the connection (slow, stalled, closed: nothing to parse) and
#: oversized bodies (the transport's bound, not the parsers'), plus byte-level edits and forbidden URLs.
DOCUMENT_MUTATIONS = [(name, weight) for name, weight in MUTATIONS
                      if name not in ("slow", "stall", "closed", "oversized")] + [("bytes", 12), ("forbidden_url", 10)]
DOCUMENTS = ("challenge", "resource", "server", "register", "token")
SPOILED_COUNTS = [("0", 10), ("1", 60), ("2", 30)]
ORIGINS = ["http://127.0.0.1:8123", "https://mcp.example.com"]
VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
#: Where a hostile document may point the client, and it must never go.
FORBIDDEN_URLS = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/", "http://metadata.google.internal/x",
    "https://metadata.google.internal./x", "http://2852039166/x", "http://0xa9.0xfe.0xa9.0xfe/x",
    "http://[fe80::1]/x", "http://[::ffff:169.254.169.254]/x", "https://[fd00:ec2::254]/x", "http://10.0.0.5/token",
    "https://192.168.1.1/token", "https://100.100.100.200/x", "http://0.0.0.0:8123/x", "http://evil.example/token",
    "https://[fc00::1]/x", "http://127.1:8123/x",
]
#: Their hosts, less the two refused only for how they are named (a loopback one from a public deployment, a
#: public name over plain http).
FORBIDDEN_HOSTS = {(urlsplit(url).hostname or "").rstrip(".") for url in FORBIDDEN_URLS} - {"127.1", "evil.example"}


def _jwt(claims: Dict[str, Any]) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'ES256', 'typ': 'JWT'})}.{part(claims)}.c2ln"


def _response(answer: Answer) -> HTTPResponse:
    headers: Dict[str, str] = {}
    for name, value in answer.headers:
        headers[name.lower()] = value
    return HTTPResponse(answer.status, headers, answer.body)


class Deployment:
    """The scripted network of one case: an MCP endpoint, its metadata and its authorization server at ``base``,
    with the documents of ``spoiled`` spoiled; every request is kept."""

    def __init__(self, seed: int, case: int, base: str, spoiled: Dict[str, str]) -> None:
        self.seed, self.case, self.base, self.spoiled = seed, case, base, spoiled
        self.requests: List[HTTPRequest] = []
        self.n = case
        self.mcp_url = f"{base}/f{case}/mcp"
        self.metadata_url = f"{base}/.well-known/oauth-protected-resource/f{case}/mcp"

    def __call__(self, request: HTTPRequest) -> HTTPResponse:
        self.requests.append(request)
        n, base = self.n, self.base
        path = urlsplit(request.url).path
        if not request.url.startswith(base + "/"):
            return HTTPResponse(404, {}, b"")
        documents = _documents(base, n, request.body or b"")
        headers = {k.lower(): v for k, v in request.headers.items()}
        if path == f"/f{n}/mcp":
            if headers.get("authorization") == f"Bearer tok-{n}":
                return HTTPResponse(200, {"content-type": "application/json"}, b'{"ok":true}')
            document = "challenge"
            right = Answer(401, [("WWW-Authenticate", f'Bearer error="invalid_token", '
                                                       f'resource_metadata="{self.metadata_url}"')], b"")
        elif path == f"/.well-known/oauth-protected-resource/f{n}/mcp" and request.method == "GET":
            document, right = "resource", Answer(200, [("Content-Type", "application/json")],
                                                 encode(documents["resource"]))
        elif path == f"/.well-known/oauth-authorization-server/f{n}/as" and request.method == "GET":
            document, right = "server", Answer(200, [("Content-Type", "application/json")], encode(documents["server"]))
        elif path == f"/f{n}/as/register" and request.method == "POST":
            document, right = "register", Answer(201, [("Content-Type", "application/json")],
                                                 encode(documents["register"]))
        elif path == f"/f{n}/as/token" and request.method == "POST":
            form = dict(parse_qsl((request.body or b"").decode("utf-8", "replace")))
            if form.get("grant_type") == "authorization_code" and form.get("code") != f"code-{n}":
                return HTTPResponse(400, {"content-type": "application/json"}, b'{"error":"invalid_grant"}')
            document, right = "token", Answer(200, [("Content-Type", "application/json")], encode(documents["token"]))
        else:
            return HTTPResponse(404, {}, b"")
        mutation = self.spoiled.get(document)
        if mutation is None:
            return _response(right)
        rng = random.Random(f"{self.seed}:{self.case}:{document}")
        return _response(self._spoil(rng, document, mutation, right))

    def _spoil(self, rng: random.Random, document: str, mutation: str, right: Answer) -> Answer:
        if document == "challenge":
            if mutation == "forbidden_url":
                url = rng.choice(FORBIDDEN_URLS)
                return Answer(401, [("WWW-Authenticate", f'Bearer resource_metadata="{url}"')], b"")
            return spoil_challenge(rng, mutation, self.metadata_url)
        if mutation == "bytes":
            return Answer(right.status, right.headers, mutate(rng, right.body))
        if mutation == "forbidden_url":
            value = json.loads(right.body)
            names = [name for name in value if name.endswith("_endpoint") or name in ("authorization_servers",
                                                                                      "jwks_uri")]
            if not names:  # the registration and token responses name no URL the client follows
                return right
            name = rng.choice(names)
            url = rng.choice(FORBIDDEN_URLS)
            value[name] = [url] if name == "authorization_servers" else url
            return Answer(right.status, right.headers, encode(value))
        return spoil(rng, mutation, right)


def _consent(n: int) -> Callable[[str], str]:
    def authorize(url: str) -> str:
        query = dict(parse_qsl(urlsplit(url).query))
        return f"{query.get('redirect_uri', '')}?{urlencode({'code': f'code-{n}', 'state': query.get('state', '')})}"
    return authorize


def case_plan(seed: int, case: int) -> Tuple[str, str, str, Dict[str, str]]:
    """Case ``case``'s (origin, revision, grant, spoiled documents), drawn from the seed alone."""
    rng = random.Random(f"oauth-documents:{seed}:{case}")
    base = rng.choice(ORIGINS)
    version = rng.choice(VERSIONS)
    grant = rng.choice(["client_credentials", "authorization_code", "jwt_bearer"])
    count = int(choose(rng, SPOILED_COUNTS))
    spoiled = {document: choose(rng, DOCUMENT_MUTATIONS) for document in rng.sample(DOCUMENTS, count)}
    return base, version, grant, spoiled


def _auth(grant: str, version: str, n: int, issuer: str) -> BaseOAuth:
    if grant == "client_credentials":
        return ClientCredentials(client_id=f"svc-{n}", client_secret="s", dpop=False, protocol_version=version)
    if grant == "jwt_bearer":
        return JWTBearer(assertion=_jwt({"iss": "https://workload.example", "sub": "w", "aud": issuer}),
                         dpop=False, protocol_version=version)
    return OAuth(authorize=_consent(n), redirect_uri="http://127.0.0.1:8976/callback", dpop=False,
                 protocol_version=version)


def _may_go(url: str, base: str) -> bool:
    """Where a request may go, said independently of `mcplite.oauth.destinations`: the deployment's origin; a host
    name (not an address, nor a metadata name) over https; from a loopback deployment, loopback too."""
    if url.startswith(base + "/"):
        return True
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    if host in FORBIDDEN_HOSTS:
        return False
    loopback = host == "localhost" or re.fullmatch(r"127(\.[0-9]{1,3}){3}|127\.1", host) is not None
    name = re.search(r"[g-wyz]", host) is not None and not loopback  # no hex digit, no "x" of "0x"
    return (parts.scheme == "https" and name) or (loopback and base.startswith("http://127.0.0.1:"))


def run_case(seed: int, case: int) -> Optional[str]:
    """Run one case; None when it held, else what went wrong (with a traceback when it raised)."""
    base, version, grant, spoiled = case_plan(seed, case)
    network = Deployment(seed, case, base, spoiled)
    auth = _auth(grant, version, case, f"{base}/f{case}/as")
    request = HTTPRequest("POST", network.mcp_url, {"Content-Type": "application/json"}, b"{}")
    label = f"case {case} ({grant}, {version}, {base}, {spoiled or 'nothing spoiled'})"
    outcome = "ok"
    try:
        response = drive(auth.auth_flow(request), network)
        if response.status != 200:
            outcome = f"HTTP {response.status}"
    except AuthError as exc:
        outcome = f"AuthError: {exc}"
    except Exception:  # noqa: BLE001  (what this fuzzer looks for)
        return f"{label}: {traceback.format_exc()[-1500:]}"
    strays = [r.url for r in network.requests if not _may_go(r.url, base)]
    if strays:
        return f"{label}: requests went where no server may send the client: {strays[:3]} (outcome {outcome[:200]})"
    if not spoiled and outcome != "ok":
        return f"{label}: nothing was spoiled, and the flow ended with {outcome[:300]}"
    return None


def run(seed: int, cases: int) -> None:
    """Run ``cases`` cases of ``seed``.

    Raises:
        AssertionError: the first case that failed, with the line that reproduces it.
    """
    for case in range(cases):
        problem = run_case(seed, case)
        if problem is not None:
            raise AssertionError(f"{problem}\nreproduce: python3 -m tests.reliability.fuzz_oauth_documents "
                                 f"--seed {seed} --case {case}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--case", type=int, help="run this one case only")
    args = parser.parse_args()
    if args.case is not None:
        print(run_case(args.seed, args.case) or f"case {args.case} of seed {args.seed} held")
        return
    run(args.seed, args.cases)
    print(f"{args.cases} cases of seed {args.seed} held")


if __name__ == "__main__":
    main()
