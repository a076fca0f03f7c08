// The benchmark's tool served by the official TypeScript SDK (npm @modelcontextprotocol/sdk 1.x), loaded
// from $INTEROP_TS_PEER (default .peers/ts), where tests/interop/run.py installs it.
//
//     node tests/bench/ts_server.mjs                              (stdio)
//     node tests/bench/ts_server.mjs http PORT stateless|default  (Streamable HTTP on node:http, /mcp)
//
// stateless: the SDK's stateless JSON mode (sessionIdGenerator undefined, enableJsonResponse), which takes a
// new server and transport per request, as the SDK's own example does; default: a session per initialize,
// each with its own server and transport, answering with SSE streams.

import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS_PEER ?? resolve(here, '../../.peers/ts');
const require = createRequire(join(peer, 'package.json'));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { z } = require('zod');

function addServer() {
    const server = new McpServer({ name: 'bench-typescript-sdk', version: '1.0.0' });
    server.registerTool('add', {
        description: 'Add two integers.',
        inputSchema: { a: z.number().int(), b: z.number().int() },
        outputSchema: { result: z.number().int() },
    }, ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { result: a + b } }));
    return server;
}

function stateless() {
    return async (req, res) => {
        const server = addServer();
        const transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: undefined,
            enableJsonResponse: true,
        });
        res.on('close', () => {
            transport.close();
            server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res);
    };
}

function sessions() {
    const open = new Map();
    return async (req, res) => {
        let transport = open.get(req.headers['mcp-session-id']);
        if (transport === undefined) {
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: randomUUID,
                onsessioninitialized: id => open.set(id, transport),
            });
            transport.onclose = () => open.delete(transport.sessionId);
            await addServer().connect(transport);
        }
        await transport.handleRequest(req, res);
    };
}

const [transport = 'stdio', port, mode] = process.argv.slice(2);
if (transport === 'stdio') {
    await addServer().connect(new StdioServerTransport());
} else {
    const handle = mode === 'stateless' ? stateless() : sessions();
    createHttpServer((req, res) => {
        if (new URL(req.url, 'http://localhost').pathname !== '/mcp') return res.writeHead(404).end();
        handle(req, res).catch(error => {
            console.error(error);
            if (!res.headersSent) res.writeHead(500).end(String(error));
        });
    }).listen(Number(port), '127.0.0.1');
}
