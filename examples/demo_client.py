"""Start the demo server over stdio, use every feature it has, and print what comes back.

Run from the repository root, no install needed:   python3 -m examples.demo_client
"""

import json
import sys

from mcplite import Client


def show(label: str, value: object) -> None:
    print(f"{label}: {json.dumps(value, ensure_ascii=False)}")


def main() -> None:
    with Client.stdio([sys.executable, "-m", "examples.demo_server"], on_log=lambda p: show("  log", p["data"])) as client:
        show("server", client.server_info)
        show("protocol", client.protocol_version)
        show("tools", [tool["name"] for tool in client.list_tools()])
        show("add(2, 3)", client.call_tool("add", {"a": 2, "b": 3})["structuredContent"])
        result = client.call_tool("count_to", {"n": 3},
                                  progress=lambda done, total, message: show("  progress", [done, total, message]))
        show("count_to(3)", result["content"][0]["text"])
        show("resources", [r["uri"] for r in client.list_resources()])
        show("python version", client.read_resource("demo://python-version")["contents"][0]["text"])
        show("greeting://Ada", client.read_resource("greeting://Ada")["contents"][0]["text"])
        prompt = client.get_prompt("review", {"code": "print('hi')"})
        show("review prompt", prompt["messages"][0]["content"]["text"])


if __name__ == "__main__":
    main()
