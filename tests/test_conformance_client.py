"""tests/conformance/client.py, the client the official suite drives: it knows every client scenario of both
requirement sets it is run with (suite 0.2.0-alpha.12) and of suite 0.1.16, under the names each version uses,
and refuses one it does not know (exit 2) rather than pass it vacuously. The suites themselves run in
tests/conformance/run.sh."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from support import WAIT

SCRIPT = Path(__file__).parent / "conformance" / "client.py"

#: `conformance list --requirements 2025-11-25` and `--requirements 2026-07-28` (0.2.0-alpha.12), client side,
#: scored or not, extensions included, plus the backcompat suite.
SCENARIOS = {
    "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "request-metadata",
    "sep-2322-client-request-state", "http-standard-headers", "http-custom-headers", "http-invalid-tool-headers",
    "json-schema-ref-no-deref", "json-schema-2020-12-preservation",
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration", "auth/resource-mismatch", "auth/offline-access-scope",
    "auth/offline-access-not-supported", "auth/authorization-server-migration", "auth/iss-supported",
    "auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected",
    "auth/iss-normalized", "auth/metadata-issuer-mismatch",
    "auth/client-credentials-basic", "auth/client-credentials-jwt", "auth/enterprise-managed-authorization",
    "auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer",
    "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
}

#: `conformance list` of suite 0.1.16 (installed from npm by tests/conformance/run.sh from
#: tests/conformance/v0.1.16/package-lock.json), "Client scenarios", all 26 in its order: the names differ
#: from 0.2's where 0.2 renamed a scenario (auth/cross-app-access-complete-flow is now
#: auth/enterprise-managed-authorization).
SCENARIOS_0_1_16 = (
    "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
    "auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/cross-app-access-complete-flow",
)


def load_client():
    spec = importlib.util.spec_from_file_location("conformance_client", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_scenario_of_both_requirement_sets_has_a_runner():
    assert SCENARIOS <= set(load_client().SCENARIOS)


def test_every_client_scenario_of_suite_0_1_16_has_a_runner():
    assert len(SCENARIOS_0_1_16) == 26
    assert set(SCENARIOS_0_1_16) - set(load_client().SCENARIOS) == set()


def test_a_renamed_scenario_runs_the_same_flow_under_both_names():
    client = load_client()
    assert client.SCENARIOS["auth/cross-app-access-complete-flow"] is client.SCENARIOS[
        "auth/enterprise-managed-authorization"]


def test_an_unknown_scenario_exits_2_without_running_anything():
    env = {**os.environ, "MCP_CONFORMANCE_SCENARIO": "no-such-scenario"}
    completed = subprocess.run([sys.executable, str(SCRIPT), "http://127.0.0.1:9/mcp"], env=env,
                               capture_output=True, text=True, timeout=WAIT)
    assert completed.returncode == 2
    assert "no-such-scenario" in completed.stderr and "request-metadata" in completed.stderr


def test_the_revision_comes_from_the_suite(monkeypatch):
    monkeypatch.setenv("MCP_CONFORMANCE_PROTOCOL_VERSION", "2026-07-28")
    assert load_client().VERSION == "2026-07-28"
    monkeypatch.delenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
    assert load_client().VERSION == "2025-11-25"
