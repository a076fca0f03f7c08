// The interop contract (see examples/interop_server.py) served by the official TypeScript SDK
// (npm @modelcontextprotocol/sdk, 1.x), loaded from $INTEROP_TS_PEER (default .peers/ts).
//
//     node tests/interop/ts_server.mjs                        (stdio)
//     node tests/interop/ts_server.mjs streamable-http|sse PORT     (on 127.0.0.1, endpoint /mcp or /sse)

import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS_PEER ?? resolve(here, '../../.peers/ts');
const require = createRequire(join(peer, 'package.json'));
const { McpServer, ResourceTemplate } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { SSEServerTransport } = require('@modelcontextprotocol/sdk/server/sse.js');
const { z } = require('zod');

function text(value) {
    return { content: [{ type: 'text', text: value }] };
}

function structured(value) {
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** A server with the whole contract; one per connection, as an McpServer serves one transport. */
function contractServer() {
    const server = new McpServer({ name: 'interop-typescript-sdk', version: '1.0.0' },
        { capabilities: { logging: {} } });

    server.registerTool('add', {
        description: 'Add two integers.',
        inputSchema: { a: z.number().int(), b: z.number().int() },
        outputSchema: { result: z.number().int() },
    }, ({ a, b }) => structured({ result: a + b }));

    server.registerTool('echo', {
        description: 'Echo the text back with its length.',
        inputSchema: { text: z.string() },
        outputSchema: { text: z.string(), length: z.number().int() },
    }, ({ text: value }) => structured({ text: value, length: value.length }));

    server.registerTool('countdown', {
        description: 'Report progress and log once per step.',
        inputSchema: { steps: z.number().int() },
    }, async ({ steps }, extra) => {
        const progressToken = extra._meta?.progressToken;
        for (let step = 1; step <= steps; step++) {
            if (progressToken !== undefined) {
                await extra.sendNotification({
                    method: 'notifications/progress',
                    params: { progressToken, progress: step, total: steps, message: `step ${step}` },
                });
            }
            await extra.sendNotification({
                method: 'notifications/message',
                params: { level: 'info', logger: 'countdown', data: `step ${step} of ${steps}` },
            });
        }
        return text(`counted ${steps}`);
    });

    server.registerTool('ask_model', {
        description: "Ask the client's model (sampling) and return what it said.",
        inputSchema: { prompt: z.string() },
    }, async ({ prompt }, extra) => {
        const reply = await server.server.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
            maxTokens: 50,
            systemPrompt: 'Answer briefly.',
        }, { relatedRequestId: extra.requestId });
        return text(`${reply.model}: ${reply.content.text}`);
    });

    server.registerTool('ask_user', {
        description: "Ask the client's user who they are (form elicitation) and return the answer.",
        inputSchema: {},
    }, async (_args, extra) => {
        const answer = await server.server.elicitInput({
            message: 'Who are you?',
            requestedSchema: {
                type: 'object',
                properties: { name: { type: 'string' }, age: { type: 'integer' } },
                required: ['name', 'age'],
            },
        }, { relatedRequestId: extra.requestId });
        if (answer.action !== 'accept') return text(answer.action);
        return text(`accept: ${answer.content.name}, ${answer.content.age}`);
    });

    server.registerTool('list_roots', {
        description: 'Ask the client for its roots and return their URIs (a JSON array, as text).',
        inputSchema: {},
    }, async (_args, extra) => {
        const { roots } = await server.server.listRoots(undefined, { relatedRequestId: extra.requestId });
        return text(JSON.stringify(roots.map(root => root.uri)));
    });

    server.registerResource('static_resource', 'interop://static',
        { description: 'A fixed text resource.', mimeType: 'text/plain' },
        uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'static text' }] }));

    server.registerResource('greeting', new ResourceTemplate('interop://greeting/{name}', { list: undefined }),
        { description: 'A greeting for anyone (a resource template).', mimeType: 'text/plain' },
        (uri, { name }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Hello, ${name}!` }] }));

    server.registerPrompt('greet', {
        description: 'A prompt asking to greet someone.',
        argsSchema: { name: z.string() },
    }, ({ name }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name} warmly.` } }],
    }));
    return server;
}

/** Streamable HTTP on /mcp: a session per `initialize`, each with its own server, found by its id. */
function streamableHttp() {
    const sessions = new Map();
    return async (req, res) => {
        if (new URL(req.url, 'http://localhost').pathname !== '/mcp') return res.writeHead(404).end();
        let transport = sessions.get(req.headers['mcp-session-id']);
        if (transport === undefined) {
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: randomUUID,
                onsessioninitialized: id => sessions.set(id, transport),
            });
            transport.onclose = () => sessions.delete(transport.sessionId);
            await contractServer().connect(transport);
        }
        await transport.handleRequest(req, res);
    };
}

/** The 2024-11-05 HTTP+SSE transport: GET /sse opens a session's stream, POST /messages?sessionId= feeds it. */
function legacySse() {
    const sessions = new Map();
    return async (req, res) => {
        const url = new URL(req.url, 'http://localhost');
        if (req.method === 'GET' && url.pathname === '/sse') {
            const transport = new SSEServerTransport('/messages', res);
            sessions.set(transport.sessionId, transport);
            res.on('close', () => sessions.delete(transport.sessionId));
            await contractServer().connect(transport);
        } else if (req.method === 'POST' && url.pathname === '/messages') {
            const transport = sessions.get(url.searchParams.get('sessionId'));
            if (transport === undefined) return res.writeHead(404).end('unknown session');
            await transport.handlePostMessage(req, res);
        } else {
            res.writeHead(404).end();
        }
    };
}

const [transport = 'stdio', port] = process.argv.slice(2);
if (transport === 'stdio') {
    await contractServer().connect(new StdioServerTransport());
} else {
    const handle = transport === 'sse' ? legacySse() : streamableHttp();
    createHttpServer((req, res) => handle(req, res).catch(error => {
        console.error(error);
        if (!res.headersSent) res.writeHead(500).end(String(error));
    })).listen(Number(port), '127.0.0.1');
}
