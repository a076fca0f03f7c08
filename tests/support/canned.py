"""A scripted network for the OAuth client's tests: `Canned` answers each request an auth flow sends from a
table of routes, without sockets (the flow only builds and reads `HTTPRequest` / `HTTPResponse`)."""

import json
from typing import Any, Callable, Dict, List, Optional, Tuple, Union
from urllib.parse import urlsplit, urlunsplit

from mcplite.transports.http_messages import HTTPRequest, HTTPResponse

#: What a route answers: a response, or a function of the request that makes one.
Route = Union[HTTPResponse, Callable[[HTTPRequest], HTTPResponse]]


def json_response(status: int, value: Any, headers: Optional[Dict[str, str]] = None) -> HTTPResponse:
    return HTTPResponse(status, {"content-type": "application/json", **(headers or {})}, json.dumps(value).encode())


def without_query(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class Canned:
    """A scripted network: a response per (method, URL without query), 404 for anything else; every request
    is kept in ``requests``."""

    def __init__(self, routes: Dict[Tuple[str, str], Route]) -> None:
        self.routes = routes
        self.requests: List[HTTPRequest] = []

    def __call__(self, request: HTTPRequest) -> HTTPResponse:
        self.requests.append(request)
        route = self.routes.get((request.method, without_query(request.url)))
        if route is None:
            return HTTPResponse(404, {}, b"")
        return route(request) if callable(route) else route

    def calls(self) -> List[str]:
        """Every request so far as ``"METHOD URL"`` (without its query)."""
        return [f"{r.method} {without_query(r.url)}" for r in self.requests]
