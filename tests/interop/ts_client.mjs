// Run the interop checks with the official TypeScript SDK's 1.x client (npm @modelcontextprotocol/sdk).
//
//     node tests/interop/ts_client.mjs stdio -- COMMAND [ARG...]
//     node tests/interop/ts_client.mjs streamable-http|sse URL
//
// The checks are in ts_checks.mjs (shared with ts2_client.mjs, the 2.x client). The SDK is loaded from
// $INTEROP_TS_PEER (default .peers/ts), where run.py installs it. The 1.x SDK speaks the handshake revisions
// only (no version negotiation, so no --mode).

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WAIT_MS, connectFailed, parseArgs, recordInbound, runChecks, standIns } from './ts_checks.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS_PEER ?? resolve(here, '../../.peers/ts');
const require = createRequire(join(peer, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { SSEClientTransport } = require('@modelcontextprotocol/sdk/client/sse.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const {
    CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema,
} = require('@modelcontextprotocol/sdk/types.js');

function transportFor(kind, target) {
    if (kind === 'stdio') {
        return new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
    }
    if (kind === 'sse') return new SSEClientTransport(new URL(target[0]));
    return new StreamableHTTPClientTransport(new URL(target[0]));
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    if (args.mode !== 'legacy') throw new Error(`the 1.x SDK has no version negotiation (--mode ${args.mode})`);
    const user = standIns();
    const client = new Client({ name: 'interop-ts-client', version: '1.0.0' },
        { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, request => user.sample(request.params));
    client.setRequestHandler(ElicitRequestSchema, request => user.elicit(request.params));
    client.setRequestHandler(ListRootsRequestSchema, request => user.listRoots(request.params));
    client.setNotificationHandler(LoggingMessageNotificationSchema, notification => {
        user.logs.add(notification.params);
    });

    // The client hands the negotiated version only to transports that want it (HTTP, for its header):
    // make every transport want it, to see which version was agreed.
    const transport = transportFor(args.kind, args.target);
    let negotiated;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = version => {
        negotiated = version;
        setProtocolVersion?.(version);
    };
    try {
        await client.connect(transport, { timeout: WAIT_MS });
    } catch (error) {
        return connectFailed(error);
    }
    try {
        return await runChecks({
            client, negotiated, expected: args.expected, received: recordInbound(transport), standIns: user,
            callTool: (params, options) => client.callTool(params, undefined, options),
        });
    } finally {
        await client.close();
    }
}

process.exitCode = await main();
