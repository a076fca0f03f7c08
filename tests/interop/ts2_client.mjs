// Run the interop checks with the official TypeScript SDK's 2.x client (npm @modelcontextprotocol/client).
//
//     node tests/interop/ts2_client.mjs [--mode legacy|auto|VERSION] [--expect VERSION] stdio -- COMMAND [ARG...]
//     node tests/interop/ts2_client.mjs [--mode ...] [--expect VERSION] streamable-http|sse URL
//
// --mode is the client's `versionNegotiation.mode`: `legacy` (its default: the `initialize` handshake, as the
// 1.x client), `auto` (probe `server/discover`, adopt 2026-07-28 if the server offers it, else fall back to the
// handshake) or a version to pin (`{ pin: VERSION }`: that revision or a failed connect). --expect: the
// protocol version the connection must end on (see ts_checks.mjs, which holds the checks). The SDK is loaded
// from $INTEROP_TS2_PEER (default .peers/ts2), where run.py installs it.
//
// On 2026-07-28 the server cannot send requests: it answers tools/call with an `input_required` result, and
// this client (inputRequired.autoFulfill, on by default) hands each embedded request to the handler registered
// for its method (the same sampling, elicitation and roots handlers as on the handshake), then retries the call with
// the answers and the server's requestState; callTool() resolves with the final result.

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WAIT_MS, connectFailed, parseArgs, recordInbound, runChecks, standIns } from './ts_checks.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS2_PEER ?? resolve(here, '../../.peers/ts2');
const require = createRequire(join(peer, 'package.json'));
const { Client, SSEClientTransport, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

function transportFor(kind, target) {
    if (kind === 'stdio') {
        return new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
    }
    if (kind === 'sse') return new SSEClientTransport(new URL(target[0]));
    return new StreamableHTTPClientTransport(new URL(target[0]));
}

function negotiationMode(mode) {
    return mode === 'legacy' || mode === 'auto' ? mode : { pin: mode };
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    const user = standIns();
    const client = new Client({ name: 'interop-ts2-client', version: '1.0.0' }, {
        capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
        versionNegotiation: { mode: negotiationMode(args.mode) },
    });
    client.setRequestHandler('sampling/createMessage', request => user.sample(request.params));
    client.setRequestHandler('elicitation/create', request => user.elicit(request.params));
    client.setRequestHandler('roots/list', request => user.listRoots(request.params));
    client.setNotificationHandler('notifications/message', notification => user.logs.add(notification.params));

    const transport = transportFor(args.kind, args.target);
    try {
        await client.connect(transport, { timeout: WAIT_MS });
    } catch (error) {
        return connectFailed(error);
    }
    try {
        return await runChecks({
            client, negotiated: client.getNegotiatedProtocolVersion(), expected: args.expected,
            received: recordInbound(transport), standIns: user,
            callTool: (params, options) => client.callTool(params, options),
        });
    } finally {
        await client.close();
    }
}

process.exitCode = await main();
