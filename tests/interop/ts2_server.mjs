// The interop contract (see examples/interop_server.py) served by the official TypeScript SDK's 2.x server
// (npm @modelcontextprotocol/server), loaded from $INTEROP_TS2_PEER (default .peers/ts2), where run.py installs
// it next to the 2.x client.
//
//     node tests/interop/ts2_server.mjs                       (stdio)
//     node tests/interop/ts2_server.mjs streamable-http PORT  (on 127.0.0.1, endpoint /mcp)
//
// One definition serves both eras. On 2026-07-28 a tool that needs sampling, elicitation or roots returns
// `inputRequired(...)`: the client answers the embedded requests and calls again with `inputResponses`, which
// the handler reads back. On a handshake connection the SDK's "legacy shim" turns the same return into real
// server-to-client requests and re-enters the handler with the answers, so the tool code is written once.
//
// stdio: `serveStdio` picks the era from the opening message (`server/discover` or `initialize`).
// Streamable HTTP: 2026-07-28 requests (they carry the per-request `_meta` envelope) go to `createMcpHandler`,
// which builds a server per request; handshake requests go to a sessionful transport per `initialize`, as
// ts_server.mjs does for the 1.x SDK: the SDK's own stateless fallback for them could not carry the
// server-to-client requests of sampling, elicitation and roots, whose answers arrive on later POSTs. The 2.x server
// has no HTTP+SSE transport (run.py skips that leg).

import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS2_PEER ?? resolve(here, '../../.peers/ts2');
// The resources' URI scheme: the contract's, or another where this server shares a gateway with other contract
// servers (gateway_legs.py), which cannot serve one URI from two servers.
const scheme = process.env.INTEROP_RESOURCE_SCHEME ?? 'interop';
const require = createRequire(join(peer, 'package.json'));
const {
    McpServer, ResourceTemplate, WebStandardStreamableHTTPServerTransport, createMcpHandler, inputRequired,
    inputResponse, isLegacyRequest,
} = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { z } = require('zod');

function text(value) {
    return { content: [{ type: 'text', text: value }] };
}

function structured(value) {
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** A server with the whole contract: the factory both serving entries call (per connection or per request). */
function contractServer() {
    const server = new McpServer({ name: 'interop-typescript-sdk-v2', version: '1.0.0' },
        { capabilities: { logging: {} } });

    server.registerTool('add', {
        description: 'Add two integers.',
        inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
        outputSchema: z.object({ result: z.number().int() }),
    }, ({ a, b }) => structured({ result: a + b }));

    server.registerTool('echo', {
        description: 'Echo the text back with its length.',
        inputSchema: z.object({ text: z.string() }),
        outputSchema: z.object({ text: z.string(), length: z.number().int() }),
    }, ({ text: value }) => structured({ text: value, length: value.length }));

    server.registerTool('countdown', {
        description: 'Report progress and log once per step.',
        inputSchema: z.object({ steps: z.number().int() }),
    }, async ({ steps }, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        for (let step = 1; step <= steps; step++) {
            if (progressToken !== undefined) {
                await ctx.mcpReq.notify({
                    method: 'notifications/progress',
                    params: { progressToken, progress: step, total: steps, message: `step ${step}` },
                });
            }
            // The SDK filters by the level asked: the session's (logging/setLevel) on the handshake, this
            // request's `_meta` on 2026-07-28 (nothing at all for a request that asked for no logs).
            await ctx.mcpReq.log('info', `step ${step} of ${steps}`, 'countdown');
        }
        return text(`counted ${steps}`);
    });

    server.registerTool('ask_model', {
        description: "Ask the client's model (sampling) and return what it said.",
        inputSchema: z.object({ prompt: z.string() }),
    }, ({ prompt }, ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'reply');
        if (answer.kind !== 'sampling') {
            return inputRequired({
                inputRequests: {
                    reply: inputRequired.createMessage({
                        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
                        maxTokens: 50,
                        systemPrompt: 'Answer briefly.',
                    }),
                },
            });
        }
        return text(`${answer.result.model}: ${answer.result.content.text}`);
    });

    server.registerTool('ask_user', {
        description: "Ask the client's user who they are (form elicitation) and return the answer.",
        inputSchema: z.object({}),
    }, (_args, ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'contact');
        if (answer.kind !== 'elicit') {
            return inputRequired({
                inputRequests: {
                    contact: inputRequired.elicit({
                        message: 'Who are you?',
                        requestedSchema: {
                            type: 'object',
                            properties: { name: { type: 'string' }, age: { type: 'integer' } },
                            required: ['name', 'age'],
                        },
                    }),
                },
            });
        }
        if (answer.action !== 'accept') return text(answer.action);
        return text(`accept: ${answer.content.name}, ${answer.content.age}`);
    });

    server.registerTool('list_roots', {
        description: 'Ask the client for its roots and return their URIs (a JSON array, as text).',
        inputSchema: z.object({}),
    }, (_args, ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'roots');
        if (answer.kind !== 'roots') {
            return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
        }
        return text(JSON.stringify(answer.roots.map(root => root.uri)));
    });

    server.registerResource('static_resource', `${scheme}://static`,
        { description: 'A fixed text resource.', mimeType: 'text/plain' },
        uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'static text' }] }));

    server.registerResource('greeting', new ResourceTemplate(`${scheme}://greeting/{name}`, { list: undefined }),
        { description: 'A greeting for anyone (a resource template).', mimeType: 'text/plain' },
        (uri, { name }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Hello, ${name}!` }] }));

    server.registerPrompt('greet', {
        description: 'A prompt asking to greet someone.',
        argsSchema: z.object({ name: z.string() }),
    }, ({ name }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name} warmly.` } }],
    }));
    return server;
}

/** The handshake era over Streamable HTTP: a session per `initialize`, each with its own server. */
function handshakeSessions() {
    const sessions = new Map();
    return async request => {
        let transport = sessions.get(request.headers.get('mcp-session-id') ?? '');
        if (transport === undefined) {
            transport = new WebStandardStreamableHTTPServerTransport({
                sessionIdGenerator: randomUUID,
                onsessioninitialized: id => sessions.set(id, transport),
            });
            transport.onclose = () => sessions.delete(transport.sessionId);
            await contractServer().connect(transport);
        }
        return transport.handleRequest(request);
    };
}

/** Streamable HTTP on /mcp, both eras: the SDK's own classification routes each request. */
function streamableHttp() {
    const modern = createMcpHandler(contractServer, { legacy: 'reject', onerror: error => console.error(error) });
    const handshake = handshakeSessions();
    return async request => {
        if (new URL(request.url).pathname !== '/mcp') return new Response(null, { status: 404 });
        return (await isLegacyRequest(request)) ? handshake(request) : modern.fetch(request);
    };
}

/** node:http in front of a fetch-shaped handler: the request as a web `Request`, the `Response` streamed back
 * (an SSE body is written as it comes; the client hanging up aborts the request and stops the stream). */
function serveFetch(handle, port) {
    createHttpServer(async (req, res) => {
        const aborted = new AbortController();
        res.on('close', () => aborted.abort());
        try {
            const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
            const request = new Request(new URL(req.url, `http://${req.headers.host ?? '127.0.0.1'}`), {
                method: req.method,
                headers: Object.entries(req.headers).flatMap(([name, value]) =>
                    Array.isArray(value) ? value.map(v => [name, v]) : [[name, value]]),
                body: hasBody ? Readable.toWeb(req) : undefined,
                duplex: hasBody ? 'half' : undefined,
                signal: aborted.signal,
            });
            const response = await handle(request);
            res.writeHead(response.status, Object.fromEntries(response.headers));
            if (response.body === null) return res.end();
            const reader = response.body.getReader();
            aborted.signal.addEventListener('abort', () => reader.cancel().catch(() => {}));
            for (;;) {
                const { done, value } = await reader.read();
                if (done) break;
                res.write(value);
            }
            res.end();
        } catch (error) {
            if (aborted.signal.aborted) return;
            console.error(error);
            if (!res.headersSent) res.writeHead(500).end(String(error));
            else res.end();
        }
    }).listen(port, '127.0.0.1');
}

const [transport = 'stdio', port] = process.argv.slice(2);
if (transport === 'stdio') {
    serveStdio(contractServer, { onerror: error => console.error(error) });
} else if (transport === 'streamable-http') {
    serveFetch(streamableHttp(), Number(port));
} else {
    console.error(`ts2_server.mjs: no ${transport} transport in the 2.x server SDK (stdio, streamable-http)`);
    process.exit(2);
}
