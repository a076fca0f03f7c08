"""The scale-out table's hosts: ``BENCH_HOSTS`` gunicorn masters standing for as many hosts, behind nginx
round-robin without affinity, sharing one redis-server (``MCPLITE_REDIS_URL``) and ``MCPLITE_STATE_KEYS``.

    python3 tests/bench/mc_hosts.py                         (stdio: mc_server.py, for the bench's warm-up)
    BENCH_HOSTS=N python3 tests/bench/mc_hosts.py http PORT stateless

Each master (no ``--preload``: nothing shared but Redis and the keys) runs mc_hosts_wsgi.py with one gthread
worker of `THREADS` threads; nginx listens on PORT, keeps connections to the masters alive, and answers
``GET /hosts`` with the masters' endpoints, one a line (how handoff_client.py reaches each host directly).
Everything it starts is in its process group; SIGTERM stops them all. Needs gunicorn and redis-py on this
Python, and redis-server and nginx on the machine.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
THREADS = 8
KEYS = "16" * 32  # one requestState key ring for every host, by configuration
START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def binary(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None:
        sys.exit(f"mc_hosts.py: {name} is not installed")
    return found


def wait_for_port(process: "subprocess.Popen[bytes]", port: int) -> None:
    """Return once ``port`` accepts connections; exit if ``process`` dies or time runs out."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"mc_hosts.py: {process.args[0]} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)  # a starting server tells nothing of when it listens
    sys.exit(f"mc_hosts.py: nothing listened on {port}")


def nginx_config(folder: str, port: int, hosts: List[int]) -> str:
    temp = "\n".join(f"    {directive} {folder}/{directive};" for directive in (
        "client_body_temp_path", "proxy_temp_path", "fastcgi_temp_path", "uwsgi_temp_path", "scgi_temp_path"))
    servers = "\n".join(f"        server 127.0.0.1:{host};" for host in hosts)
    listing = "".join(f"http://127.0.0.1:{host}/mcp\\n" for host in hosts)
    return f"""worker_processes 1;
events {{ worker_connections 1024; }}
http {{
{temp}
    access_log off;
    upstream hosts {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_buffering off;
        proxy_request_buffering off;
        proxy_next_upstream off;
        location /mcp {{ proxy_pass http://hosts; }}
        location = /hosts {{ default_type text/plain; return 200 "{listing}"; }}
    }}
}}
"""


def main() -> None:
    if len(sys.argv) == 1:
        os.execv(sys.executable, [sys.executable, os.path.join(HERE, "mc_server.py")])
    if sys.argv[1:2] != ["http"] or sys.argv[3:4] != ["stateless"]:
        sys.exit("usage: BENCH_HOSTS=N mc_hosts.py http PORT stateless")
    port, count = int(sys.argv[2]), int(os.environ.get("BENCH_HOSTS", "2"))
    folder = tempfile.mkdtemp(prefix="mc-hosts-")
    started: List["subprocess.Popen[bytes]"] = []

    def stop(*_: object) -> None:
        for process in reversed(started):
            if process.poll() is None:
                process.terminate()
        for process in reversed(started):
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(folder, ignore_errors=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    log = open(os.path.join(folder, "log"), "wb")
    redis_port = free_port()
    started.append(subprocess.Popen([binary("redis-server"), "--port", str(redis_port), "--bind", "127.0.0.1",
                                     "--save", "", "--appendonly", "no", "--dir", folder], stdout=log, stderr=log))
    wait_for_port(started[-1], redis_port)
    from gunicorn.config import KNOWN_SETTINGS

    control = ["--no-control-socket"] if any(s.name == "control_socket_disable" for s in KNOWN_SETTINGS) else []
    env = dict(os.environ, MCPLITE_REDIS_URL=f"redis://127.0.0.1:{redis_port}/0", MCPLITE_STATE_KEYS=KEYS,
               STATELESS="1", PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    hosts = [free_port() for _ in range(count)]
    masters = [subprocess.Popen([sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{host}", "--workers", "1",
                                 "--threads", str(THREADS), "--chdir", HERE, "--log-level", "warning",
                                 "--graceful-timeout", "1", *control, "mc_hosts_wsgi:app"],
                                env=env, stdout=sys.stderr, stderr=sys.stderr) for host in hosts]
    started += masters
    for master, host in zip(masters, hosts):
        wait_for_port(master, host)
    conf = os.path.join(folder, "nginx.conf")
    with open(conf, "w") as out:
        out.write(nginx_config(folder, port, hosts))
    started.append(subprocess.Popen([binary("nginx"), "-p", folder, "-c", conf, "-g",
                                     f"daemon off; pid {folder}/nginx.pid; error_log stderr warn;"],
                                    stdout=sys.stderr, stderr=sys.stderr))
    signal.pause()  # until SIGTERM


if __name__ == "__main__":
    main()
