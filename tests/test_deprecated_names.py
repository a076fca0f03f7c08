"""The spellings the smaller public surface replaced still work until mcplite 0.2, each with a
`DeprecationWarning` that names what to use instead; the advanced names stay importable without one."""

import warnings

import pytest

import mcplite.http_server
import mcplite.oauth
import mcplite.oauth.advanced
import mcplite.wsgi
from mcplite import Client, Server
from mcplite.client.tasks import Task


def make_server() -> Server:
    server = Server("deprecated")

    @server.tool(task="optional")
    def add(a: int, b: int) -> int:
        return a + b

    return server


@pytest.mark.parametrize("name", mcplite.oauth.advanced.__all__)
def test_an_advanced_oauth_name_from_mcplite_oauth_warns_and_is_the_same_object(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"mcplite\.oauth\.{name} is deprecated: import it from "
                                                r"mcplite\.oauth\.advanced \(the old path goes in mcplite 0\.2\)"):
        value = getattr(mcplite.oauth, name)
    assert value is getattr(mcplite.oauth.advanced, name)
    assert name not in mcplite.oauth.__all__


def test_from_mcplite_oauth_import_an_advanced_name_still_works() -> None:
    with pytest.warns(DeprecationWarning, match="check_metadata_issuer"):
        from mcplite.oauth import check_metadata_issuer
    assert check_metadata_issuer is mcplite.oauth.advanced.check_metadata_issuer


def test_the_user_facing_oauth_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in mcplite.oauth.__all__:
            getattr(mcplite.oauth, name)
        for name in mcplite.oauth.advanced.__all__:
            getattr(mcplite.oauth.advanced, name)


def test_an_unknown_oauth_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        mcplite.oauth.Nope  # noqa: B018


def test_start_http_server_warns_and_still_serves() -> None:
    with pytest.warns(DeprecationWarning, match=r"mcplite\.http_server\.start_http_server is deprecated: use "
                                                r"HTTPServerThread.*mcplite 0\.2"):
        start_http_server = mcplite.http_server.start_http_server
    http = start_http_server(make_server(), "127.0.0.1:0")
    try:
        with Client(http.url, timeout=10) as client:
            assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
    finally:
        http.shutdown()


def test_serve_warns_and_is_what_server_run_calls() -> None:
    from mcplite.transports.http_server import stdlib

    with pytest.warns(DeprecationWarning, match=r"mcplite\.http_server\.serve is deprecated: use "
                                                r"Server\.run\(http=address, \.\.\.\).*mcplite 0\.2"):
        assert mcplite.http_server.serve is stdlib.serve


def test_module_level_wsgi_app_warns_and_still_builds_the_app() -> None:
    with pytest.warns(DeprecationWarning, match=r"mcplite\.wsgi\.wsgi_app is deprecated: use "
                                                r"server\.wsgi_app\(\.\.\.\).*mcplite 0\.2"):
        wsgi_app = mcplite.wsgi.wsgi_app
    assert isinstance(wsgi_app(make_server(), allowed_hosts=["*"]), mcplite.wsgi.WSGIApp)


def test_the_advanced_http_names_are_importable_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in mcplite.http_server.ADVANCED:
            getattr(mcplite.http_server, name)
        from mcplite.wsgi import WSGIApp  # noqa: F401
        from mcplite.http_server import HTTPApp, Responder  # noqa: F401


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_start_task_warns_and_is_start_tool_call_with_task(version: str) -> None:
    with Client(make_server(), protocol_version=version, timeout=10) as client:
        with pytest.warns(DeprecationWarning, match=r"Client\.start_task is deprecated: use "
                                                    r"client\.start_tool_call\(name, arguments, task=True\).*0\.2"):
            task = client.start_task("add", {"a": 2, "b": 3})
        assert isinstance(task, Task)
        assert task.result()["structuredContent"] == {"result": 5}


def test_start_tool_call_takes_the_task_form_as_an_argument() -> None:
    with Client(make_server(), timeout=10) as client:
        pending = client.start_tool_call("add", {"a": 1, "b": 1})
        assert client.finish_tool_call("add", pending)["structuredContent"] == {"result": 2}
        task = client.start_tool_call("add", {"a": 2, "b": 2}, task=True)
        assert isinstance(task, Task) and task.result()["structuredContent"] == {"result": 4}
        with pytest.raises(ValueError, match="ttl_ms"):
            client.start_tool_call("add", {"a": 1, "b": 1}, ttl_ms=1000)
