// Imports what ts_client.mjs (argument "client") or ts_server.mjs ("server") imports, and nothing else:
// its run time, from outside, is the TypeScript SDK's import time.

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(process.env.INTEROP_TS_PEER ?? resolve(here, '../../.peers/ts'), 'package.json'));
const modules = {
    client: ['client/index.js', 'client/stdio.js', 'client/streamableHttp.js'],
    server: ['server/mcp.js', 'server/stdio.js', 'server/streamableHttp.js'],
}[process.argv[2]];
for (const name of modules) require(`@modelcontextprotocol/sdk/${name}`);
if (process.argv[2] === 'server') require('zod');
