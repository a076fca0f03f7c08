"""A stdio MCP server that answers a client with seeded hostile output: ``python hostile_peer.py SEED``.

It completes the 2025-11-25 handshake and lists one tool, ``echo``. Each ``tools/call`` of ``echo(n)`` is
answered after 0 to 3 hostile frames (`frames.fuzz_frame`: garbage, mutated messages, requests and
responses the client never asked for, a duplicate of an earlier answer), in one of these ways, chosen by
the seed and n (`frames.call_rng`): the right answer (most calls); a mutated answer; an error; a result of
the wrong shape; no answer at all. For each call it writes ``verdict <id> <kind>`` on stderr, so the
scenario can check that every right answer reached the caller whatever came before it.
"""

import json
import random
import sys
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests folder, from any cwd

from reliability.frames import call_rng, choose, encode, fuzz_frame, mutate  # noqa: E402

#: The ways a call is answered, with their weights.
VERDICTS = [("right", 80), ("mutated", 6), ("error", 5), ("wrong_shape", 6), ("silent", 3)]
TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]}
INITIALIZED = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
               "serverInfo": {"name": "hostile-peer", "version": "1"}}


def right(id: Any, n: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": str(n)}]}}


def main() -> None:
    seed = int(sys.argv[1])
    rng = random.Random(seed)  # for what is not a call's
    out = sys.stdout.buffer
    answered: List[bytes] = []
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue  # notifications, and the client's answers to our junk requests
        id, method = message["id"], message["method"]
        frames: List[bytes] = []
        if method == "initialize":
            frames.append(encode({"jsonrpc": "2.0", "id": id, "result": INITIALIZED}))
        elif method == "tools/list":
            frames.append(encode({"jsonrpc": "2.0", "id": id, "result": TOOLS}))
        elif method == "ping":
            frames.append(encode({"jsonrpc": "2.0", "id": id, "result": {}}))
        elif method == "tools/call":
            n = (message.get("params") or {}).get("arguments", {}).get("n")
            rng = call_rng(seed, n)
            verdict = choose(rng, VERDICTS)  # first: the client draws the same to know what to expect
            frames.extend(fuzz_frame(rng, allow_large=False) for _ in range(rng.randint(0, 3)))
            if answered and rng.random() < 0.05:
                frames.append(answered[rng.randrange(len(answered))])  # an answer again, to a request long settled
            sys.stderr.write(f"verdict {id} {verdict}\n")
            sys.stderr.flush()
            if verdict == "right":
                frames.append(encode(right(id, n)))
                answered.append(frames[-1])
            elif verdict == "mutated":
                frames.append(mutate(rng, encode(right(id, n))))
            elif verdict == "error":
                frames.append(encode({"jsonrpc": "2.0", "id": id, "error": {
                    "code": rng.choice([-32603, -32000, 7, 2 ** 40]), "message": rng.choice(["no", "", "\u0000" * 3]),
                    "data": rng.choice([None, [1], {"a": "b"}])}}))
            elif verdict == "wrong_shape":
                frames.append(encode({"jsonrpc": "2.0", "id": id, "result": rng.choice([
                    None, [], "text", 5, {"content": "x"}, {"content": [{"type": "image"}]}, {"content": None},
                    {"content": [{"type": "text", "text": 5}]}, {"isError": "yes"}])}))
        else:
            frames.append(encode({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}))
        out.write(b"".join(frame + b"\n" for frame in frames))
        out.flush()


if __name__ == "__main__":
    main()
