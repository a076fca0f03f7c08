"""A tool that asks the client's model for help, offering it a tool of its own (sampling with tools, 2025-11-25).

Server and client run in one process here; the "model" is a stand-in that first asks for the weather, then
answers with what the tool said. Run from the repository root:   python3 -m examples.sampling_tools
"""

from typing import Any, Dict, List

from mcplite import Client, Context, Server

server = Server("trip-planner")

WEATHER = {"name": "weather", "description": "Today's weather in a city",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def weather(city: str) -> str:
    return {"Oslo": "snow, -3 °C"}.get(city, "sunny")


@server.tool
def plan_day(city: str, ctx: Context) -> str:
    """Plan a day in ``city``, letting the client's model look up the weather."""
    messages: List[Dict[str, Any]] = [
        {"role": "user", "content": {"type": "text", "text": f"Plan a day in {city}."}}]
    for _ in range(3):  # the model may call the tool, see its result, and then answer
        reply = ctx.sample(messages, max_tokens=200, tools=[WEATHER], tool_choice="auto")
        calls = [block for block in _blocks(reply["content"]) if block.get("type") == "tool_use"]
        if not calls:
            return " ".join(block.get("text", "") for block in _blocks(reply["content"]))
        messages.append({"role": "assistant", "content": calls})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "toolUseId": call["id"],
             "content": [{"type": "text", "text": weather(**call["input"])}]} for call in calls]})
    return "the model kept calling tools"


def _blocks(content: Any) -> List[Dict[str, Any]]:
    return content if isinstance(content, list) else [content]


def stand_in_model(params: Dict[str, Any]) -> Dict[str, Any]:
    """What a host's LLM would do: ask for the weather first, then answer using the tool's result."""
    last = params["messages"][-1]["content"]
    results = [block for block in _blocks(last) if block.get("type") == "tool_result"]
    if not results:
        return {"role": "assistant", "model": "stand-in", "stopReason": "toolUse",
                "content": [{"type": "tool_use", "id": "call-1", "name": "weather", "input": {"city": "Oslo"}}]}
    forecast = results[0]["content"][0]["text"]
    return {"role": "assistant", "model": "stand-in", "stopReason": "endTurn",
            "content": {"type": "text", "text": f"It will be {forecast}: visit the museums, then a sauna."}}


def main() -> None:
    # sampling_features=("tools",) declares sampling.tools: without it the server may not send tools.
    with Client(server, sampling=stand_in_model, sampling_features=("tools",)) as client:
        print(client.call_tool("plan_day", {"city": "Oslo"})["content"][0]["text"])


if __name__ == "__main__":
    main()
