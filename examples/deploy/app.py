"""An MCP server set up for deployment, configured by environment variables; docs/http.md, "Deployment".

One process with threads (sessions, every revision)::

    gunicorn --threads 8 examples.deploy.app:app

Several processes: stateless, or revision 2026-07-28 (which needs no session), with the requestState key
shared by ``--preload`` (or by ``MCPLITE_STATE_KEYS`` on every host)::

    STATELESS=1 gunicorn -w 4 --preload examples.deploy.app:app

Several processes with sessions, behind nginx (``nginx-sessions.conf``), each naming its sessions::

    python3 -m examples.deploy.two_processes        # SESSION_ID_PREFIX=a- on :8001, b- on :8002

The variables: ``STATELESS=1``; ``ACCESS_LOG=1`` (one line per request on stderr); ``SESSION_ID_PREFIX``
(which process owns a session, for the proxy); ``REDIS_URL`` (list changes and resource updates reach the
clients of every process: `redis_bus`); ``EVENT_DB`` (a SQLite file where the processes of one host keep
resumable stream events); ``MAX_STREAMS`` (how many streams may hold a thread: fewer than the server's
threads); ``ALLOWED_HOSTS`` (the ``Host`` names clients use, comma-separated, ``*`` for any: DNS rebinding
protection); ``MCPLITE_REDIS_URL`` (several hosts: the event bus, the tasks and the resumable stream events
all in that Redis, `redis_store`, so a balancer may send any request to any host; give every host the same
``MCPLITE_STATE_KEYS`` too; ``TASK_LEASE``: the seconds after which the task of a lost host is failed, 30 by
default). The WSGI app accepts the loopback names without it (gunicorn and waitress bind 127.0.0.1 by
default): a server bound to another address needs it, ``ALLOWED_HOSTS=mcp.example.com`` (or ``*`` behind a
proxy that checks ``Host``). ``GET /healthz`` answers 200, for a readiness check. Run it with the built-in
server: ``python3 -m examples.deploy.app --port 8001`` (``--host 0.0.0.0`` refuses to start without
``ALLOWED_HOSTS``).
"""

import argparse
import os
from typing import Any, Dict, List, Optional, Tuple

from mcplite import Context, Server
from mcplite.http_server import LOOPBACK_HOSTS

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


#: Redis for everything shared between hosts (the bus, the tasks, the stream events), or None.
SHARED_REDIS = os.environ.get("MCPLITE_REDIS_URL") or None


def _redis_store() -> Any:
    try:
        from . import redis_store
    except ImportError:  # run from this folder, as a top-level module
        import redis_store  # type: ignore[no-redef]
    return redis_store


def _event_bus() -> Any:
    url = SHARED_REDIS or os.environ.get("REDIS_URL")
    if not url:
        return None  # this process only
    return _redis_store().RedisEventBus(url)


def _task_store() -> Any:
    if SHARED_REDIS:
        lease = os.environ.get("TASK_LEASE")
        return _redis_store().RedisTaskStore(SHARED_REDIS, **({"lease": float(lease)} if lease else {}))
    return None  # this process's memory


server = Server("deploy-demo", version="1.0", event_bus=_event_bus(), task_store=_task_store())

#: The notes; a real deployment keeps them in shared storage, here only their change notifications are shared.
NOTES: Dict[str, str] = {}


@server.tool
def whoami() -> int:
    """The process id of the worker that answered."""
    return os.getpid()


@server.tool
def confirm_and_summarize(topic: str, ctx: Context) -> Dict[str, Any]:
    """Ask the user to confirm, then ask the client's model for a summary; says which process ran each step.

    On 2026-07-28 each question is an input-required round, and a round may reach another worker: the handler
    runs again there, and `ctx.remember` carries what an earlier round saw in the (sealed) requestState.
    """
    asked_by = ctx.remember("asked_by", os.getpid)
    answer = ctx.elicit(f"Summarize {topic}?", CONFIRM, key="confirm")
    if answer["action"] != "accept" or not answer["content"]["ok"]:
        return {"summary": None, "asked_by": asked_by, "answered_by": os.getpid()}
    sampled_by = ctx.remember("sampled_by", os.getpid)
    reply = ctx.sample(f"Summarize {topic} in one line.", max_tokens=50, key="summary")
    content = reply.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return {"summary": text, "asked_by": asked_by, "sampled_by": sampled_by, "answered_by": os.getpid()}


@server.tool
def count(n: int, ctx: Context) -> int:
    """Count to ``n``, reporting progress at each step: a streamed answer (SSE), events that can be resumed."""
    for step in range(1, n + 1):
        ctx.progress(step, n)
    return n


@server.tool(task="optional")
def slow(seconds: float, ctx: Context) -> Dict[str, Any]:
    """Work for ``seconds`` as a task (or until cancelled); says which process ran it. With
    ``MCPLITE_REDIS_URL``, any host answers its ``tasks/get``, ``tasks/cancel`` and ``tasks/result``."""
    ctx.progress(0, 1, f"started by {os.getpid()}")
    stopped = ctx.cancelled.wait(seconds)
    return {"ran_by": os.getpid(), "cancelled": stopped}


@server.tool(task="optional")
def approve(item: str, ctx: Context) -> Dict[str, Any]:
    """Ask for approval as a task (``input_required``: answered with ``tasks/update`` on any host)."""
    answer = ctx.elicit(f"Approve {item}?", CONFIRM, key="approve")
    approved = answer["action"] == "accept" and bool(answer["content"]["ok"])
    return {"item": item, "approved": approved, "ran_by": os.getpid()}


@server.resource("note://{name}")
def note(name: str) -> str:
    """A note, as this process knows it."""
    return NOTES.get(name, "")


@server.tool
def write_note(name: str, text: str) -> int:
    """Change a note; every client subscribed to ``note://<name>``, in any process on the bus, hears of it."""
    NOTES[name] = text
    server.notify_resource_updated(f"note://{name}")
    return os.getpid()


def healthz(request: Any) -> Tuple[int, List[Tuple[str, str]], bytes]:
    """GET /healthz (below the mount point, answered without ``authenticate``): the process is up."""
    return 200, [("Content-Type", "text/plain")], b"ok\n"


def options() -> Dict[str, Any]:
    """The HTTP options the environment asks for (see the module docstring)."""
    settings: Dict[str, Any] = {"stateless": os.environ.get("STATELESS", "") not in ("", "0"),
                                "session_id_prefix": os.environ.get("SESSION_ID_PREFIX", ""),
                                "access_log": os.environ.get("ACCESS_LOG", "") not in ("", "0"),
                                "routes": {"/healthz": healthz}}
    if os.environ.get("ALLOWED_HOSTS"):
        settings["allowed_hosts"] = [name.strip() for name in os.environ["ALLOWED_HOSTS"].split(",")]
    if os.environ.get("MAX_STREAMS"):
        settings["max_streams"] = int(os.environ["MAX_STREAMS"])
    database: Optional[str] = os.environ.get("EVENT_DB")
    if SHARED_REDIS:
        settings["event_store"] = _redis_store().RedisEventStore(SHARED_REDIS)
    elif database:
        from mcplite.wsgi import SQLiteEventStore

        settings["event_store"] = SQLiteEventStore(database)
    return settings


#: The WSGI application (gunicorn, waitress, mod_wsgi). A WSGI app cannot know the address it is served on, so it
#: must be told the Host names to accept: the loopback names unless ALLOWED_HOSTS says otherwise.
app = server.wsgi_app(**{"allowed_hosts": LOOPBACK_HOSTS, **options()})


def main() -> None:
    parser = argparse.ArgumentParser(description="serve the deployment example with mcplite's built-in server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args()
    server.run(http=f"{args.host}:{args.port}", **options())


if __name__ == "__main__":
    main()
