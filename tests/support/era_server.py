"""A stdio MCP server by hand that misbehaves on the era probe, for the client's era-detection tests.

    python3 era_server.py BEHAVIOUR LOG

Speaks JSON lines, standard library only; appends each request's method to LOG (one per line), so a test sees
what the client sent, across the processes of a respawn. The handshake (initialize, then requests) is served
as a 2025-11-25 server does; `server/discover` as BEHAVIOUR says:

    exits        exit(3) on the probe (but only while LOG has no "respawned" mark; then it is a legacy server)
    silent       never answer it
    legacy       -32601 Method not found
    old-only     -32022 listing handshake versions only
    unknown      -32022 listing only a version nobody speaks
    refuse-once  -32022 listing 2026-07-28 on the first probe, then answer it (and every enveloped request)
    pinned       silent on the first probe; then initialize gets -32022 (a slow probe pinned it to 2026-07-28) and
                 a second probe is answered
    envelope     answer it, and every enveloped request; initialize gets -32022
"""

import json
import os
import sys

ENVELOPE_VERSION = "2026-07-28"
DISCOVER = {"supportedVersions": [ENVELOPE_VERSION], "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "era-server", "version": "1"}},
            "resultType": "complete"}
TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}}]


def main() -> None:
    behaviour, log = sys.argv[1], sys.argv[2]
    with open(log, "a", encoding="utf-8"):
        pass
    with open(log, encoding="utf-8") as seen:
        respawned = "respawned" in seen.read().split()
    probes = 0
    pinned = False

    def send(message: dict) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        message = json.loads(line)
        method, id = message.get("method"), message.get("id")
        if method is None or id is None:
            continue
        with open(log, "a", encoding="utf-8") as out:
            out.write(method + "\n")
        enveloped = "io.modelcontextprotocol/protocolVersion" in ((message.get("params") or {}).get("_meta") or {})
        if method == "server/discover":
            probes += 1
            if behaviour == "exits" and not respawned:
                with open(log, "a", encoding="utf-8") as out:
                    out.write("respawned\n")
                os._exit(3)
            if behaviour == "silent" or (behaviour == "pinned" and probes == 1):
                if behaviour == "pinned":
                    pinned = True
                continue
            if behaviour in ("legacy", "exits"):
                send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
            elif behaviour == "old-only":
                send({"jsonrpc": "2.0", "id": id, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                           "data": {"supported": ["2025-11-25", "2025-06-18"]}}})
            elif behaviour == "unknown":
                send({"jsonrpc": "2.0", "id": id, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                           "data": {"supported": ["2099-01-01"]}}})
            elif behaviour == "refuse-once" and probes == 1:
                send({"jsonrpc": "2.0", "id": id, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                           "data": {"supported": [ENVELOPE_VERSION]}}})
            else:
                send({"jsonrpc": "2.0", "id": id, "result": DISCOVER})
        elif method == "initialize":
            if pinned or behaviour == "envelope":
                send({"jsonrpc": "2.0", "id": id, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                           "data": {"supported": [ENVELOPE_VERSION]}}})
                continue
            send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                         "serverInfo": {"name": "era-server", "version": "1"}}})
        elif method == "tools/list":
            result = {"tools": TOOLS}
            if enveloped:
                result["resultType"] = "complete"
            send({"jsonrpc": "2.0", "id": id, "result": result})
        else:
            send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
