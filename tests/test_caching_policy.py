"""server/caching: which ttlMs and cacheScope each request of revision 2026-07-28 gets (`CachePolicy`).

Pure: policies are built and asked, servers are built and their policy read; no session, no threads. The rules:
the spec's server/utilities/caching.mdx (SEP-2549) and ../shared/spec/CONFORMANCE-2026.md §4.2 (both keys on the
results of server/discover, the four lists and resources/read; ttlMs a non-negative integer; cacheScope
"public" or "private"; the official SDKs answer 0 and "private").
"""

from typing import Dict, Optional, Tuple

import pytest

from mcplite import Server
from mcplite.server.caching import CACHEABLE_METHODS, LIST_METHODS, CachePolicy

LISTS = ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]
CACHEABLE = ["server/discover", *LISTS, "resources/read"]
#: The skills extension's (ext-skills specification/stable/skills.mdx: ListSkillsResult and GetSkillResult
#: extend CacheableResult); skills/list takes the lists' hints.
SKILLS = ["skills/list", "skills/get"]
NOT_CACHEABLE = ["initialize", "ping", "tools/call", "prompts/get", "completion/complete", "logging/setLevel",
                 "resources/subscribe", "subscriptions/listen", "notifications/initialized", "unknown/method", ""]


def test_the_cacheable_methods_are_the_spec_s_six_and_the_skills_extension_s_two():
    assert set(LIST_METHODS) == set(LISTS)
    assert CACHEABLE_METHODS == frozenset(CACHEABLE + SKILLS)


def test_skills_list_takes_the_lists_hints_and_skills_get_the_defaults():
    policy = CachePolicy(5, "private", list_ttl_ms=60_000, list_scope="public")
    assert policy.hints("skills/list") == (60_000, "public")
    assert policy.hints("skills/get") == (5, "private")


@pytest.mark.parametrize("method", CACHEABLE + SKILLS)
def test_defaults_are_zero_and_private_on_every_cacheable_method(method):
    assert CachePolicy().hints(method, "file:///a.txt") == (0, "private")
    assert CachePolicy().hints(method) == (0, "private")


@pytest.mark.parametrize("method", NOT_CACHEABLE)
def test_a_method_that_is_not_cacheable_gets_none(method):
    assert CachePolicy(60_000, "public", list_ttl_ms=5, list_scope="private").hints(method) is None
    assert CachePolicy(resource_hints=lambda uri: (1, "public")).hints(method, "file:///a.txt") is None


def test_server_defaults_apply_everywhere():
    policy = CachePolicy(30_000, "public")
    assert [policy.hints(method, "file:///a") for method in CACHEABLE] == [(30_000, "public")] * len(CACHEABLE)


@pytest.mark.parametrize("list_ttl_ms, list_scope, expected_lists", [
    (5_000, "public", (5_000, "public")),
    (5_000, None, (5_000, "private")),  # each half falls back on its own
    (None, "public", (60_000, "public")),
    (0, None, (0, "private")),  # 0 is an override, not "unset"
])
def test_list_overrides_touch_the_four_lists_only(list_ttl_ms, list_scope, expected_lists):
    policy = CachePolicy(60_000, "private", list_ttl_ms=list_ttl_ms, list_scope=list_scope)
    for method in LISTS:
        assert policy.hints(method) == expected_lists
    assert policy.hints("server/discover") == (60_000, "private")
    assert policy.hints("resources/read", "file:///a") == (60_000, "private")


def test_per_resource_overrides_come_from_the_lookup_and_fall_back_half_by_half():
    overrides: Dict[str, Tuple[Optional[int], Optional[str]]] = {
        "file:///both": (1_000, "public"), "file:///ttl": (2_000, None), "file:///scope": (None, "public")}
    asked = []

    def lookup(uri: str) -> Optional[Tuple[Optional[int], Optional[str]]]:
        asked.append(uri)
        return overrides.get(uri)

    policy = CachePolicy(60_000, "private", list_ttl_ms=5, list_scope="public", resource_hints=lookup)
    assert policy.hints("resources/read", "file:///both") == (1_000, "public")
    assert policy.hints("resources/read", "file:///ttl") == (2_000, "private")
    assert policy.hints("resources/read", "file:///scope") == (60_000, "public")
    assert policy.hints("resources/read", "file:///other") == (60_000, "private")
    assert policy.hints("resources/read") == (60_000, "private")  # no URI: nothing to look up
    assert policy.hints("resources/list") == (5, "public")  # a resource's hints are for reading it only
    assert asked == ["file:///both", "file:///ttl", "file:///scope", "file:///other"]


BAD_TTLS = [-1, 1.5, 1.0, "10", True, None]
BAD_SCOPES = ["Public", "shared", "", None, 1]


@pytest.mark.parametrize("ttl", BAD_TTLS)
def test_an_invalid_ttl_is_refused_at_configuration(ttl):
    if ttl is not None:  # None means "unset" for the overrides, but the default must be a number
        with pytest.raises(ValueError, match="list_ttl_ms must be an integer number of milliseconds >= 0"):
            CachePolicy(list_ttl_ms=ttl)
    with pytest.raises(ValueError, match="cache_ttl_ms must be an integer"):
        CachePolicy(ttl)
    with pytest.raises(ValueError, match="cache_ttl_ms"):
        Server("bad", cache_ttl_ms=ttl)


@pytest.mark.parametrize("scope", BAD_SCOPES)
def test_an_invalid_scope_is_refused_at_configuration(scope):
    if scope is not None:
        with pytest.raises(ValueError, match='list_scope must be "public" or "private"'):
            CachePolicy(list_scope=scope)
        with pytest.raises(ValueError, match="list_scope"):
            Server("bad", list_scope=scope)
    with pytest.raises(ValueError, match='cache_scope must be "public" or "private"'):
        CachePolicy(scope=scope)


def test_large_and_zero_ttls_are_valid():
    assert CachePolicy(0).hints("server/discover") == (0, "private")
    assert CachePolicy(2 ** 40, "public").hints("tools/list") == (2 ** 40, "public")


# -- the server's knobs --------------------------------------------------------------------------------------

def test_the_server_keeps_its_policy_with_the_contract_s_defaults():
    server = Server("cached")
    assert isinstance(server.cache, CachePolicy)
    assert [server.cache.hints(method, "x://y") for method in CACHEABLE] == [(0, "private")] * len(CACHEABLE)
    assert server.cache.hints("tools/call") is None
    tuned = Server("cached", cache_ttl_ms=10_000, cache_scope="public", list_ttl_ms=300_000, list_scope="private")
    assert tuned.cache.hints("server/discover") == (10_000, "public")
    assert tuned.cache.hints("tools/list") == (300_000, "private")
    assert tuned.cache.hints("resources/read", "x://y") == (10_000, "public")


def make_server() -> Server:
    server = Server("resources", cache_ttl_ms=1_000, cache_scope="private")

    @server.resource("file:///plain.txt")
    def plain() -> str:
        return "plain"

    @server.resource("file:///static.txt", ttl_ms=60_000, cache_scope="public")
    def static() -> str:
        return "static"

    @server.resource("file:///ttl-only.txt", ttl_ms=0)
    def ttl_only() -> str:
        return "ttl only"

    @server.resource("notes://{name}", cache_scope="public")
    def note(name: str) -> str:
        return name

    @server.resource("notes://pinned/{name}", ttl_ms=5)  # ({name} stops at "/": notes://{name} does not match)
    def pinned(name: str) -> str:
        return name

    return server


def test_resources_and_templates_override_the_server_s_defaults_for_reads():
    server = make_server()
    read = server.cache.hints
    assert read("resources/read", "file:///plain.txt") == (1_000, "private")
    assert read("resources/read", "file:///static.txt") == (60_000, "public")
    assert read("resources/read", "file:///ttl-only.txt") == (0, "private")
    assert read("resources/read", "notes://today") == (1_000, "public")  # through the template
    assert read("resources/read", "notes://pinned/today") == (5, "private")
    assert read("resources/read", "file:///unknown.txt") == (1_000, "private")  # (an error, but no crash)
    assert read("resources/list") == (1_000, "private")
    assert server._resources["file:///static.txt"].cache_hints == (60_000, "public")
    assert server._resources["file:///plain.txt"].cache_hints is None
    assert server._templates["notes://{name}"].cache_hints == (None, "public")


def test_a_fixed_resource_wins_over_a_template_as_it_does_when_read():
    server = make_server()

    @server.resource("notes://index")
    def index() -> str:
        return "index"

    # resources/read serves notes://index from the fixed resource: its hints (the defaults), not the template's.
    assert server.cache.hints("resources/read", "notes://index") == (1_000, "private")
    assert server.cache.hints("resources/read", "notes://other") == (1_000, "public")


def test_removing_resources_removes_their_hints():
    server = make_server()
    server.remove_resource("file:///static.txt")
    assert server.cache.hints("resources/read", "file:///static.txt") == (1_000, "private")
    for uri in ("file:///ttl-only.txt", "notes://{name}", "notes://pinned/{name}"):
        server.remove_resource(uri)
    assert server._cache_overrides is False  # no resource sets hints any more: reads skip the lookup
    assert server.cache.hints("resources/read", "notes://today") == (1_000, "private")


@pytest.mark.parametrize("options, message", [
    ({"ttl_ms": -5}, "ttl_ms must be an integer"),
    ({"ttl_ms": 2.5}, "ttl_ms must be an integer"),
    ({"cache_scope": "everyone"}, 'cache_scope must be "public" or "private"'),
    ({"ttl_ms": 10, "cache_scope": "PUBLIC"}, "cache_scope"),
])
def test_a_resource_with_invalid_hints_is_refused_and_not_registered(options, message):
    server = Server("bad")
    with pytest.raises(ValueError, match=message):
        server.resource("file:///a.txt", **options)(lambda: "a")
    with pytest.raises(ValueError, match=message):
        server.add_resource(lambda name: name, "notes://{name}", **options)
    assert server._resources == {} and server._templates == {}
