// The benchmark's workloads run by the official TypeScript SDK's client (its defaults); the command line and
// the figures are those of workload.py, which this mirrors. Loads the SDK from $INTEROP_TS_PEER.

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS_PEER ?? resolve(here, '../../.peers/ts');
const require = createRequire(join(peer, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const WINDOW = 8;
const WARMUP = 50;
const WARMUP_BASE = 1_000_000;

function fail(message) {
    console.error(`bench client: ${message}`);
    process.exit(1);
}

function operands(i) {
    return [i, i + 1];
}

function caller(client) {
    return async i => {
        const [a, b] = operands(i);
        const result = await client.callTool({ name: 'add', arguments: { a, b } });
        const expected = a + b;
        if (result.isError) fail(`add(${a}, ${b}) returned an error result: ${JSON.stringify(result)}`);
        if (result.structuredContent !== undefined) {
            const got = result.structuredContent;
            if (Object.keys(got).length !== 1 || got.result !== expected) {
                fail(`add(${a}, ${b}) returned structuredContent ${JSON.stringify(got)}, expected ${expected}`);
            }
        } else if (result.content?.[0]?.text !== String(expected)) {
            fail(`add(${a}, ${b}) returned ${JSON.stringify(result.content)}, expected ${expected}`);
        }
    };
}

function figures(latencies, elapsedMs) {
    const ordered = [...latencies].sort((x, y) => x - y);
    const at = q => ordered[Math.min(ordered.length - 1, Math.floor(q * ordered.length))];
    const calls = ordered.length;
    return { calls, calls_per_s: calls / (elapsedMs / 1000), p50_ms: at(0.5), p99_ms: at(0.99) };
}

async function sequential(call, count) {
    for (let i = 0; i < Math.min(WARMUP, count); i++) await call(WARMUP_BASE + i);
    const latencies = [];
    const started = performance.now();
    for (let i = 0; i < count; i++) {
        const before = performance.now();
        await call(i);
        latencies.push(performance.now() - before);
    }
    return figures(latencies, performance.now() - started);
}

async function concurrent(calls, perCaller) {
    const latencies = [];
    const started = performance.now();
    await Promise.all(calls.map(async (call, k) => {
        for (let i = k * perCaller; i < (k + 1) * perCaller; i++) {
            const before = performance.now();
            await call(i);
            latencies.push(performance.now() - before);
        }
    }));
    return figures(latencies, performance.now() - started);
}

async function connectHttp(url) {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name: 'bench-typescript-sdk', version: '1.0.0' });
    await client.connect(transport);
    return { client, version: transport.protocolVersion };
}

function emit(fields) {
    process.stdout.write(JSON.stringify(fields) + '\n');
}

async function main() {
    const [mode, ...rest] = process.argv.slice(2);
    if (mode === 'http') {
        const [url, seq, clients, perClient] = [rest[0], ...rest.slice(1).map(Number)];
        const { client, version } = await connectHttp(url);
        const seqFigures = await sequential(caller(client), seq);
        await client.close();
        const many = await Promise.all(Array.from({ length: clients }, () => connectHttp(url)));
        for (const each of many) await caller(each.client)(WARMUP_BASE);
        const spread = await concurrent(many.map(each => caller(each.client)), perClient);
        await Promise.all(many.map(each => each.client.close()));
        emit({ version, sequential: seqFigures, concurrent: spread });
        return;
    }
    const separator = rest.indexOf('--');
    if (!['stdio', 'cold', 'hold'].includes(mode) || separator < 0) fail('usage: see workload.py');
    const [command, ...args] = rest.slice(separator + 1);
    const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
    let version;
    transport.setProtocolVersion = negotiated => { version = negotiated; };  // the client tells its transport
    const client = new Client({ name: 'bench-typescript-sdk', version: '1.0.0' });
    await client.connect(transport);
    const call = caller(client);
    if (mode === 'cold') {
        await call(0);
    } else if (mode === 'hold') {
        await call(0);
        emit({ version });
        process.stdin.resume();
        await new Promise(resolve => process.stdin.on('end', resolve));
    } else {
        const [seq, inFlight] = rest.slice(0, separator).map(Number);
        const seqFigures = await sequential(call, seq);
        const spread = await concurrent(Array(WINDOW).fill(call), Math.floor(inFlight / WINDOW));
        emit({ version, sequential: seqFigures, in_flight: spread });
    }
    await client.close();
}

await main();
