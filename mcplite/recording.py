"""`mcplite.recording`: record every message of a connection as JSON lines, and read a recording back.

    with Client.stdio(["python3", "server.py"], record="session.jsonl") as client:
        client.call_tool("add", {"a": 1, "b": 2})
    for line in read_recording("session.jsonl"):
        print(line["t"], line["peer"], line["dir"], line.get("message"))

``record=`` (a path, or a `Recorder` to share one file between connections) is an option of `Client`,
`Client.stdio`, `Server.run` (stdio and HTTP), `HTTPServerThread` and `Server.wsgi_app`. The format, the
redaction of secrets and `RecordingTransport` (to record any transport of yours) are described in
docs/recording.md and in `mcplite.transports.recording`, where the code lives.
"""

from .errors import RecordingError
from .transports.recording import Recorder, RecordingTransport, read_recording, redact

__all__ = ["Recorder", "RecordingTransport", "read_recording", "redact", "RecordingError"]
