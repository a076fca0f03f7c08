"""What the gateway needed of `Server`: `Context.on_cancel`, `Context.request_params`, `add_prompt(arguments=)`."""

import threading
from typing import Any, List

from support import WAIT

from mcplite import Client, Context, Server


def test_on_cancel_calls_back_when_the_client_cancels_and_can_be_taken_back() -> None:
    server = Server("hooks")
    started, called = threading.Event(), threading.Event()
    taken_back: List[bool] = []

    @server.tool
    def wait(ctx: Context) -> str:
        forget = ctx.on_cancel(called.set)
        started.set()
        called.wait(WAIT)
        forget()
        return "done"

    @server.tool
    def quick(ctx: Context) -> str:
        forget = ctx.on_cancel(lambda: taken_back.append(True))
        forget()
        return ctx.request_params["arguments"]["raw"]

    with Client(server) as client:
        pending = client.start_tool_call("wait")
        assert started.wait(WAIT)
        pending.cancel()
        assert called.wait(WAIT)
        assert client.call_tool("quick", {"raw": "as sent"})["content"][0]["text"] == "as sent"
    assert taken_back == []


def test_add_prompt_publishes_the_arguments_given() -> None:
    server = Server("hooks")

    def anything(**arguments: Any) -> str:
        return f"got {sorted(arguments.items())}"

    server.add_prompt(anything, name="p", arguments=[{"name": "city", "required": True}])
    with Client(server) as client:
        [prompt] = client.list_prompts()
        assert prompt["arguments"] == [{"name": "city", "required": True}]
        message = client.get_prompt("p", {"city": "Oslo"})["messages"][0]
        assert message["content"]["text"] == "got [('city', 'Oslo')]"  # type: ignore[typeddict-item]


def test_on_cancel_in_a_task_calls_back_when_the_task_is_cancelled() -> None:
    """The gateway cancels its upstream's task from here: `tasks/cancel` must reach a task handler's callback."""
    server = Server("hooks")
    started, called = threading.Event(), threading.Event()

    @server.tool(task="required")
    def wait(ctx: Context) -> str:
        forget = ctx.on_cancel(called.set)
        started.set()
        called.wait(WAIT)
        forget()
        return "done"

    with Client(server, protocol_version="2025-11-25") as client:
        task = client.start_tool_call("wait", task=True)
        assert started.wait(WAIT)
        task.cancel()
        assert called.wait(WAIT)
        assert task.status() == "cancelled"
    server.close_tasks()
