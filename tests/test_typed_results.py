"""Results a strict type checker reads without casts: `content.text_of`, `blob_of`, `structured_of`, and the
required keys of `protocol.types` (a user script type-checked by ``mypy --strict`` and by pyright)."""

import base64
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from typing import Any, Dict

import pytest

from mcplite import Client, Server
from mcplite.content import audio, blob_of, image, message, resource, resource_link, structured_of, text, text_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# ---- the helpers, by table --------------------------------------------------------------------------------
TEXT_CASES = [
    ("a tool's text blocks, joined", {"content": [text("one"), text("two")]}, "one\ntwo"),
    ("images, audio and links left out", {"content": [text("a"), image(b"\x89PNG"), audio(b"RIFF"),
                                                      resource_link("file:///x"), text("b")]}, "a\nb"),
    ("an embedded text resource counts", {"content": [resource("file:///a.txt", "body")]}, "body"),
    ("an embedded blob does not", {"content": [resource("file:///a.bin", b"\x00")]}, ""),
    ("no content at all", {"content": []}, ""),
    ("a failed call's text", {"content": [text("boom")], "isError": True}, "boom"),
    ("a resource's text contents", {"contents": [{"uri": "file:///a", "text": "A"},
                                                 {"uri": "file:///b", "blob": b64(b"B")},
                                                 {"uri": "file:///c", "text": "C", "mimeType": "text/plain"}]},
     "A\nC"),
    ("a prompt's messages", {"messages": [message("hi"), message(text("there"), "assistant")]}, "hi\nthere"),
    ("a prompt message's content as a list (2025-11-25 sampling)",
     {"messages": [{"role": "user", "content": [text("x"), text("y")]}]}, "x\ny"),
    ("a sampling result's one block", {"role": "assistant", "model": "m", "content": text("ok")}, "ok"),
    ("a single content block", text("alone"), "alone"),
]


@pytest.mark.parametrize("result, expected", [case[1:] for case in TEXT_CASES], ids=[c[0] for c in TEXT_CASES])
def test_text_of(result: Dict[str, Any], expected: str) -> None:
    assert text_of(result) == expected


def test_text_of_joins_with_the_separator_asked_for() -> None:
    assert text_of({"content": [text("a"), text("b")]}, sep="") == "ab"


BLOB_CASES = [
    ("a resource's one blob", {"contents": [{"uri": "file:///b", "blob": b64(b"\x00\x01")}]}, b"\x00\x01"),
    ("text contents beside it ignored", {"contents": [{"uri": "file:///a", "text": "A"},
                                                      {"uri": "file:///b", "blob": b64(b"B")}]}, b"B"),
    ("a tool's image", {"content": [text("here"), image(b"\x89PNG")]}, b"\x89PNG"),
    ("a tool's audio", {"content": [audio(b"RIFF")]}, b"RIFF"),
    ("an embedded blob", {"content": [resource("file:///a.bin", b"\xff")]}, b"\xff"),
    ("a prompt's image", {"messages": [message(image(b"img"))]}, b"img"),
]


@pytest.mark.parametrize("result, expected", [case[1:] for case in BLOB_CASES], ids=[c[0] for c in BLOB_CASES])
def test_blob_of(result: Dict[str, Any], expected: bytes) -> None:
    assert blob_of(result) == expected


BLOB_ERRORS = [
    ("text only", {"content": [text("just words")]}, "no binary items.*just words"),
    ("nothing", {"contents": []}, "no binary items"),
    ("two images", {"content": [image(b"1"), image(b"2")]}, "2 binary items"),
]


@pytest.mark.parametrize("result, match", [case[1:] for case in BLOB_ERRORS], ids=[c[0] for c in BLOB_ERRORS])
def test_blob_of_refuses_anything_but_one_binary_item(result: Dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        blob_of(result)


STRUCTURED_CASES = [
    ("an object", {"content": [], "structuredContent": {"sum": 3}}, {"sum": 3}),
    ("any JSON value (2026-07-28)", {"content": [], "structuredContent": [1, 2]}, [1, 2]),
    ("a falsy value is still a value", {"content": [], "structuredContent": 0}, 0),
    ("null", {"content": [], "structuredContent": None}, None),
]


@pytest.mark.parametrize("result, expected", [case[1:] for case in STRUCTURED_CASES],
                         ids=[c[0] for c in STRUCTURED_CASES])
def test_structured_of(result: Dict[str, Any], expected: Any) -> None:
    assert structured_of(result) == expected


STRUCTURED_ERRORS = [
    ("absent", {"content": []}, r"no structuredContent$"),
    ("absent, with text", {"content": [text("3")]}, r"no structuredContent; its text: '3'"),
    ("a failed call", {"content": [text("bad input")], "isError": True},
     r"no structuredContent \(the call failed: isError\); its text: 'bad input'"),
    ("long text cut short", {"content": [text("x" * 500)]}, r"'x{200}\.\.\.'$"),
]


@pytest.mark.parametrize("result, match", [case[1:] for case in STRUCTURED_ERRORS],
                         ids=[c[0] for c in STRUCTURED_ERRORS])
def test_structured_of_says_why_there_is_none(result: Dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        structured_of(result)


# ---- the helpers on real results ---------------------------------------------------------------------------
def demo_server() -> Server:
    server = Server("typed")

    @server.tool
    def add(a: int, b: int) -> Dict[str, int]:
        "Add two numbers."
        return {"sum": a + b}

    @server.tool
    def shout(words: str) -> str:
        "Upper-case the words."
        return words.upper()

    @server.resource("file:///notes.txt")
    def notes() -> str:
        return "remember the milk"

    @server.resource("file:///pixel.png", mime_type="image/png")
    def pixel() -> bytes:
        return b"\x89PNG\r\n"

    @server.prompt
    def greet(name: str) -> str:
        "Greet someone."
        return f"Hello, {name}!"

    return server


def test_the_helpers_read_what_a_client_gets() -> None:
    with Client(demo_server()) as client:
        added = client.call_tool("add", {"a": 1, "b": 2})
        assert structured_of(added) == {"sum": 3}
        assert json.loads(text_of(added)) == {"sum": 3}
        shouted = client.call_tool("shout", {"words": "hi"})
        assert text_of(shouted) == "HI"
        with pytest.raises(ValueError, match="no structuredContent; its text: 'HI'"):
            structured_of(shouted)
        assert text_of(client.read_resource("file:///notes.txt")) == "remember the milk"
        assert blob_of(client.read_resource("file:///pixel.png")) == b"\x89PNG\r\n"
        assert text_of(client.get_prompt("greet", {"name": "Ada"})) == "Hello, Ada!"


# ---- what a strict type checker makes of a user's script ---------------------------------------------------
USER_SCRIPT = textwrap.dedent('''\
    """A user's script: natural indexing and the helpers, no casts."""
    from typing import Any, Dict, List

    from mcplite import Client
    from mcplite.content import blob_of, structured_of, text_of


    def main(url: str) -> None:
        with Client(url) as client:
            tools = client.list_tools()
            names: List[str] = [tool["name"] for tool in tools]
            schema: Dict[str, Any] = tools[0]["inputSchema"]
            print(names, schema)

            result = client.call_tool("add", {"a": 1, "b": 2})
            for block in result["content"]:
                kind: str = block["type"]
                if block["type"] == "text":
                    line: str = block["text"]
                    print(kind, line)
            total: int = structured_of(result)["sum"]
            summary: str = text_of(result)
            failed: bool = result.get("isError", False)
            print(total, summary, failed)

            read = client.read_resource("file:///notes.txt")
            uri: str = read["contents"][0]["uri"]
            body: str = text_of(read)
            pixels: bytes = blob_of(client.read_resource("file:///pixel.png"))
            print(uri, body, pixels)

            for resource in client.list_resources():
                print(resource["uri"], resource["name"])

            prompt = client.get_prompt("greet", {"name": "Ada"})
            role: str = prompt["messages"][0]["role"]
            said: str = text_of(prompt)
            print(role, said)
            for listed in client.list_prompts():
                print(listed["name"])
    ''')


def write_user_script(directory: str) -> str:
    path = os.path.join(directory, "user_script.py")
    with open(path, "w", encoding="utf-8") as file:
        file.write(USER_SCRIPT)
    return path


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (CI installs mypy 2.4.1; it is no test dependency)")
def test_a_users_script_passes_mypy_strict(tmp_path: Any) -> None:
    script = write_user_script(str(tmp_path))
    env = dict(os.environ, MYPYPATH=ROOT)
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "mypy-cache"), script],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.skipif(shutil.which("pyright") is None,
                    reason="pyright is not on PATH (CI installs pyright 1.1.414; it is no test dependency)")
def test_a_users_script_passes_pyright_strict(tmp_path: Any) -> None:
    write_user_script(str(tmp_path))
    with open(tmp_path / "pyrightconfig.json", "w", encoding="utf-8") as file:
        json.dump({"include": ["user_script.py"], "extraPaths": [ROOT], "typeCheckingMode": "strict",
                   "pythonVersion": "3.9"}, file)
    completed = subprocess.run([str(shutil.which("pyright")), "--outputjson"], cwd=str(tmp_path),
                               capture_output=True, text=True, timeout=300)
    report = json.loads(completed.stdout)
    problems = [f"{d['range']['start']['line'] + 1}: {d['message']}" for d in report["generalDiagnostics"]]
    assert report["summary"]["errorCount"] == 0, "\n".join(problems)
