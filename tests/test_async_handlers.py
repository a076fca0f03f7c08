"""``async def`` handlers (issue 32): each call runs to completion on its worker thread's own event loop.

Tools, resources, templates, prompts and completers written ``async def`` answer as plain ones do, over memory
and over a real stdio subprocess; `Context` works from inside them; a client's cancel reaches the coroutine as
CancelledError at its next await; each worker thread makes one loop and keeps it.
"""

import asyncio
import queue
import sys
import textwrap
import threading
import time
from typing import Any, Dict, List

import pytest

from mcplite import Client, Context, Server
from mcplite.protocol.versions import LATEST_HANDSHAKE_VERSION
from tests.support import ROOT
from tests.support.wait import WAIT, wait_until

ERAS = [LATEST_HANDSHAKE_VERSION, "2026-07-28"]


def async_server() -> Server:
    server = Server("async")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add, after a yield to the loop."""
        await asyncio.sleep(0)
        return a + b

    @server.resource("notes://today", mime_type="text/plain")
    async def today() -> str:
        await asyncio.sleep(0)
        return "buy milk"

    @server.resource("notes://{name}")
    async def note(name: str) -> str:
        await asyncio.sleep(0)
        return f"note {name}"

    @server.prompt
    async def greet(who: str) -> str:
        await asyncio.sleep(0)
        return f"Hello, {who}!"

    @server.completion(prompt="greet", argument="who")
    async def complete_who(value: str, chosen: Dict[str, Any]) -> List[str]:
        await asyncio.sleep(0)
        return [name for name in ("ada", "alan", "grace") if name.startswith(value)]

    return server


def check_answers(client: Client) -> None:
    assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
    assert client.read_resource("notes://today")["contents"][0]["text"] == "buy milk"
    assert client.read_resource("notes://shopping")["contents"][0]["text"] == "note shopping"
    assert client.get_prompt("greet", {"who": "Ada"})["messages"][0]["content"]["text"] == "Hello, Ada!"
    assert client.complete({"type": "ref/prompt", "name": "greet"}, "who", "a")["values"] == ["ada", "alan"]


@pytest.mark.parametrize("version", ERAS)
def test_async_tools_resources_prompts_and_completions_answer_in_memory(version: str) -> None:
    with Client(async_server(), timeout=WAIT, protocol_version=version) as client:
        check_answers(client)


STDIO_SERVER = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[1])
    import tests.test_async_handlers as here

    here.async_server().run()
''')


@pytest.mark.parametrize("version", ERAS)
def test_async_handlers_answer_over_a_real_stdio_subprocess(tmp_path: Any, version: str) -> None:
    script = tmp_path / "async_server.py"
    script.write_text(STDIO_SERVER)
    with Client.stdio([sys.executable, str(script), ROOT], timeout=WAIT, protocol_version=version) as client:
        check_answers(client)


def test_context_methods_work_from_an_async_tool() -> None:
    server = Server("context")

    @server.tool
    async def work(ctx: Context) -> Dict[str, Any]:
        ctx.info("starting", logger="work")
        for step in (1, 2):
            await asyncio.sleep(0)
            ctx.progress(step, 2)
        answer = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        sampled = ctx.sample("Say hi", max_tokens=5)
        return {"name": answer["content"]["name"], "said": sampled["content"]["text"]}

    logs: "queue.Queue[Any]" = queue.Queue()
    progress: List[Any] = []
    with Client(server, timeout=WAIT, protocol_version=LATEST_HANDSHAKE_VERSION, on_log=logs.put,
                elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}},
                sampling=lambda params: {"role": "assistant", "content": {"type": "text", "text": "hi"},
                                         "model": "m"}) as client:
        result = client.call_tool("work", progress=lambda *report: progress.append(report))
        assert result["structuredContent"] == {"name": "Ada", "said": "hi"}
        assert logs.get(timeout=WAIT) == {"level": "info", "data": "starting", "logger": "work"}
    assert [report[:2] for report in progress] == [(1, 2), (2, 2)]


def test_an_async_tool_that_raises_is_an_error_result() -> None:
    server = Server("fails")

    @server.tool
    async def broken() -> str:
        await asyncio.sleep(0)
        raise KeyError("user_id")

    with Client(server, timeout=WAIT) as client:
        result = client.call_tool("broken")
    assert result["isError"] is True
    assert result["content"][0]["text"] == "KeyError: 'user_id'"


@pytest.mark.parametrize("version", ERAS)
def test_a_cancelled_async_tool_gets_cancelled_error_at_its_await_and_leaves_nothing_behind(version: str) -> None:
    server = Server("cancel")
    started = threading.Event()
    seen: "queue.Queue[Any]" = queue.Queue()
    loops: List[asyncio.AbstractEventLoop] = []

    @server.tool
    async def sleepy(ctx: Context) -> str:
        loops.append(asyncio.get_running_loop())
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.put(("cancelled", time.monotonic(), ctx.is_cancelled))
            raise
        return "woke up"

    @server.tool
    async def quick() -> str:
        return "still serving"

    threads_before = threading.active_count()
    with Client(server, timeout=WAIT, protocol_version=version) as client:
        pending = client.start_tool_call("sleepy")
        assert started.wait(WAIT)
        cancelled_at = time.monotonic()
        pending.cancel("changed my mind")
        what, when, ctx_saw = seen.get(timeout=WAIT)
        assert (what, ctx_saw) == ("cancelled", True)
        assert when - cancelled_at < 2.0
        # The loop is idle again, with nothing of the cancelled call left on it, and the server serves on.
        wait_until(lambda: not loops[0].is_running())
        assert not asyncio.all_tasks(loops[0])
        assert client.call_tool("quick")["content"][0]["text"] == "still serving"
    wait_until(lambda: threading.active_count() <= threads_before)  # no thread of ours stays behind


def test_a_cancel_before_the_coroutine_starts_cancels_it_at_once() -> None:
    class Holder:
        def __init__(self) -> None:
            from mcplite._sync import LazyEvent

            self.cancelled = LazyEvent()

    from mcplite.server import coroutines

    holder = Holder()
    holder.cancelled.set()
    ran: List[str] = []

    async def never() -> None:
        ran.append("ran")

    with pytest.raises(LookupError):
        coroutines.run(never(), holder, lambda: LookupError("cancelled"))
    assert ran == []


def test_each_worker_thread_makes_one_loop_and_reuses_it(monkeypatch: Any) -> None:
    made: List[Any] = []
    new_event_loop = asyncio.new_event_loop

    def counted() -> asyncio.AbstractEventLoop:
        loop = new_event_loop()
        made.append(loop)
        return loop

    monkeypatch.setattr(asyncio, "new_event_loop", counted)
    workers = 4
    server = Server("loops", max_workers=workers)
    seen: "queue.Queue[Any]" = queue.Queue()

    @server.tool
    async def where(n: int) -> int:
        seen.put((threading.get_ident(), id(asyncio.get_running_loop())))
        await asyncio.sleep(0.001)
        return n

    with Client(server, timeout=WAIT) as client:
        for round_ in range(10):
            calls = [client.start_tool_call("where", {"n": n}) for n in range(workers * 2)]
            assert [call.result(WAIT)["structuredContent"]["result"] for call in calls] == list(range(workers * 2))
    pairs = [seen.get_nowait() for _ in range(seen.qsize())]
    assert len(pairs) == 10 * workers * 2
    loops_of: Dict[int, set] = {}
    for thread, loop in pairs:
        loops_of.setdefault(thread, set()).add(loop)
    assert all(len(loops) == 1 for loops in loops_of.values())  # one loop per thread, kept
    assert len(made) <= workers and len(made) == len(loops_of)


def test_a_cancelled_async_task_ends_cancelled() -> None:
    server = Server("tasks")
    started = threading.Event()
    seen: "queue.Queue[str]" = queue.Queue()

    @server.tool(task="optional")
    async def crunch() -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.put("cancelled")
            raise
        return "done"

    for version in ERAS:
        started.clear()
        with Client(server, timeout=WAIT, protocol_version=version) as client:
            task = client.start_tool_call("crunch", task=True)
            assert started.wait(WAIT)
            task.cancel()
            assert seen.get(timeout=2.0) == "cancelled"
            assert task.status() == "cancelled"
    server.close_tasks()
