// Run the interop checks with the official TypeScript SDK's client (npm @modelcontextprotocol/sdk, 1.x).
//
//     node tests/interop/ts_client.mjs stdio -- COMMAND [ARG...]
//     node tests/interop/ts_client.mjs streamable-http|sse URL
//
// The same checks, in the same order, as checks.py (which the Python clients use), against the values in
// contract.json. Prints one line per check: "PASS name" or "FAIL name: why". The SDK is loaded from
// $INTEROP_TS_PEER (default .peers/ts), where run.py installs it.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS_PEER ?? resolve(here, '../../.peers/ts');
const require = createRequire(join(peer, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { SSEClientTransport } = require('@modelcontextprotocol/sdk/client/sse.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const {
    CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema,
} = require('@modelcontextprotocol/sdk/types.js');

const CONTRACT = JSON.parse(readFileSync(join(here, 'contract.json'), 'utf8'));
const WAIT_MS = 15000;

class CheckFailed extends Error {}

function expect(condition, message) {
    if (!condition) throw new CheckFailed(message);
}

function expectEqual(actual, expected, what) {
    expect(isDeepStrictEqual(actual, expected),
        `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function textOf(result) {
    const content = result.content;
    expect(Array.isArray(content) && content.length === 1 && content[0].type === 'text',
        `expected one text content block, got ${JSON.stringify(content)}`);
    return content[0].text;
}

let failed = 0;

async function check(name, body) {
    try {
        await body();
        console.log(`PASS ${name}`);
    } catch (error) {
        failed += 1;
        if (!(error instanceof CheckFailed)) console.error(error);
        const detail = error instanceof CheckFailed ? error.message : `${error?.name}: ${error?.message ?? error}`;
        console.log(`FAIL ${name}: ${detail.split(/\s+/).join(' ').slice(0, 500)}`);
    }
}

function transportFor(kind, target) {
    if (kind === 'stdio') {
        return new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
    }
    if (kind === 'sse') return new SSEClientTransport(new URL(target[0]));
    return new StreamableHTTPClientTransport(new URL(target[0]));
}

/** Collects log notifications; `waitFor(count)` resolves once that many have come, or when time is up. */
class LogCollector {
    constructor() {
        this.messages = [];
        this.changed = () => {};
    }

    add(params) {
        this.messages.push(params);
        this.changed();
    }

    waitFor(count) {
        return new Promise(done => {
            const timer = setTimeout(() => done(this.messages), WAIT_MS);
            this.changed = () => {
                if (this.messages.length >= count) {
                    clearTimeout(timer);
                    done(this.messages);
                }
            };
            this.changed();
        });
    }
}

async function main() {
    const [kind, ...rest] = process.argv.slice(2);
    const target = rest.filter(arg => arg !== '--');
    const logs = new LogCollector();
    const sampled = [];
    const elicited = [];

    const client = new Client({ name: 'interop-ts-client', version: '1.0.0' },
        { capabilities: { sampling: {}, elicitation: { form: {} } } });
    client.setRequestHandler(CreateMessageRequestSchema, request => {
        sampled.push(request.params);
        return {
            role: 'assistant', content: { type: 'text', text: CONTRACT.sampling.reply },
            model: CONTRACT.sampling.model, stopReason: 'endTurn',
        };
    });
    client.setRequestHandler(ElicitRequestSchema, request => {
        elicited.push(request.params);
        return { action: 'accept', content: CONTRACT.elicitation.answer };
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, notification => {
        logs.add(notification.params);
    });

    const options = { timeout: WAIT_MS };
    const callTool = (name, args, extra = {}) =>
        client.callTool({ name, arguments: args }, undefined, { ...options, ...extra });
    // The client hands the negotiated version only to transports that want it (HTTP, for its header):
    // make every transport want it, to see which version was agreed.
    const transport = transportFor(kind, target);
    let negotiated;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = version => {
        negotiated = version;
        setProtocolVersion?.(version);
    };
    try {
        await client.connect(transport, options);
    } catch (error) {
        console.log(`FAIL initialize: ${error?.message ?? error}`);
        return 1;
    }
    // Every message as it arrives, before the SDK dispatches it (see the progress check).
    const received = [];
    const dispatch = transport.onmessage;
    transport.onmessage = (message, extra) => {
        received.push(message);
        dispatch(message, extra);
    };
    try {
        await check('initialize', async () => {
            expectEqual(negotiated, CONTRACT.protocolVersion, 'negotiated protocol version');
            expect(Boolean(client.getServerVersion()?.name), 'serverInfo has no name');
        });

        await check('tools/list', async () => {
            const { tools } = await client.listTools(undefined, options);
            const byName = Object.fromEntries(tools.map(tool => [tool.name, tool]));
            const missing = CONTRACT.tools.filter(name => !(name in byName));
            expect(missing.length === 0, `tools missing from tools/list: ${missing}`);
            for (const name of CONTRACT.tools) {
                expectEqual(byName[name].inputSchema?.type, 'object', `${name}: inputSchema type`);
            }
            for (const name of CONTRACT.structuredTools) {
                expectEqual(byName[name].outputSchema?.type, 'object', `${name}: outputSchema type`);
            }
        });

        for (const tool of CONTRACT.structuredTools) {
            await check(`tools/call ${tool} (structured)`, async () => {
                const result = await callTool(tool, CONTRACT[tool].arguments);
                const expected = CONTRACT[tool].structured;
                expect(!result.isError, `${tool} failed: ${JSON.stringify(result)}`);
                expectEqual(result.structuredContent, expected, `${tool} structuredContent`);
                // A scalar wrapped as {"result": value} may be serialised as text either wrapped or bare.
                const accepted = Object.keys(expected).join() === 'result' ? [expected, expected.result] : [expected];
                const text = JSON.parse(textOf(result));
                expect(accepted.some(value => isDeepStrictEqual(value, text)),
                    `${tool} text content (as JSON): got ${JSON.stringify(text)}`);
            });
        }

        await check('progress', async () => {
            const reports = [];
            if (client.getServerCapabilities()?.logging) {  // the spec forbids setLevel otherwise
                await client.setLoggingLevel('info', options);
            }
            const start = received.length;
            const result = await callTool('countdown', CONTRACT.countdown.arguments,
                { onprogress: report => reports.push(report) });
            expectEqual(textOf(result), CONTRACT.countdown.text, 'countdown result');
            const steps = CONTRACT.countdown.arguments.steps;
            const expected = Array.from({ length: steps }, (_, i) => [i + 1, steps]);
            // What the server sent: every report, in order, before the result.
            const answer = received.findIndex((m, i) => i >= start && m.id !== undefined && 'result' in m);
            const sent = received.slice(start, answer).filter(m => m.method === 'notifications/progress');
            expectEqual(sent.map(m => [m.params.progress, m.params.total]), expected,
                'progress sent [progress, total]');
            // What the SDK delivered: it dispatches notifications a microtask later than responses, so reports
            // that arrive in the same read as the result are dropped ("unknown token"; typescript-sdk#2580),
            // and how many do depends on timing. What it delivers must be the first ones, in order.
            if (reports.length < steps) {
                console.error(`note: the SDK delivered ${reports.length} of ${steps} progress reports`);
            }
            expectEqual(reports.map(r => [r.progress, r.total]), expected.slice(0, reports.length),
                'progress delivered [progress, total]');
        });

        await check('logging', async () => {
            const messages = await logs.waitFor(CONTRACT.countdown.logs.length);
            expectEqual(messages.map(m => m.data), CONTRACT.countdown.logs, 'log messages');
            expect(messages.every(m => m.level === 'info'), `log levels are not all info: ${JSON.stringify(messages)}`);
        });

        await check('sampling', async () => {
            const result = await callTool('ask_model', CONTRACT.sampling.arguments);
            expectEqual(textOf(result), CONTRACT.sampling.text, 'ask_model result');
            expectEqual(sampled.length, 1, 'sampling requests received');
            const message = sampled[0].messages?.[0] ?? {};
            expectEqual(message.role, 'user', 'sampled message role');
            expectEqual(message.content, { type: 'text', text: CONTRACT.sampling.arguments.prompt },
                'sampled message content');
            expect(Number.isInteger(sampled[0].maxTokens), 'sampling request has no integer maxTokens');
        });

        await check('elicitation', async () => {
            const result = await callTool('ask_user', {});
            expectEqual(textOf(result), CONTRACT.elicitation.text, 'ask_user result');
            expectEqual(elicited.length, 1, 'elicitation requests received');
            expectEqual(elicited[0].message, CONTRACT.elicitation.message, 'elicitation message');
            const schema = elicited[0].requestedSchema ?? {};
            expectEqual(schema.type, 'object', 'requestedSchema type');
            expectEqual(Object.keys(schema.properties ?? {}).sort(), [...CONTRACT.elicitation.fields].sort(),
                'requestedSchema properties');
        });

        const verifyRead = (result, uri, text) => {
            expectEqual(result.contents.length, 1, 'number of contents');
            expectEqual(result.contents[0].uri, uri, 'contents uri');
            expectEqual(result.contents[0].text, text, 'contents text');
        };
        const { resource, template, prompt } = CONTRACT;
        await check('resources/list', async () => {
            const uris = (await client.listResources(undefined, options)).resources.map(r => r.uri);
            expect(uris.includes(resource.uri), `${resource.uri} not in resources/list: ${uris}`);
        });
        await check('resources/read', async () => {
            verifyRead(await client.readResource({ uri: resource.uri }, options), resource.uri, resource.text);
        });
        await check('resources/templates/list', async () => {
            const { resourceTemplates } = await client.listResourceTemplates(undefined, options);
            const found = resourceTemplates.map(t => t.uriTemplate);
            expect(found.includes(template.uriTemplate), `template not in resources/templates/list: ${found}`);
        });
        await check('resources/read (template)', async () => {
            verifyRead(await client.readResource({ uri: template.uri }, options), template.uri, template.text);
        });

        await check('prompts/list', async () => {
            const prompts = (await client.listPrompts(undefined, options)).prompts;
            const found = prompts.find(p => p.name === prompt.name);
            expect(found !== undefined, `prompt ${prompt.name} not in prompts/list`);
            const argument = (found.arguments ?? []).find(a => a.name === 'name');
            expect(argument?.required === true, `${prompt.name}: argument 'name' is not required`);
        });
        await check('prompts/get', async () => {
            const result = await client.getPrompt({ name: prompt.name, arguments: prompt.arguments }, options);
            expectEqual(result.messages.length, 1, 'number of prompt messages');
            expectEqual(result.messages[0].role, 'user', 'prompt message role');
            expectEqual(result.messages[0].content, { type: 'text', text: prompt.text }, 'prompt message content');
        });
    } finally {
        await client.close();
    }
    return failed ? 1 : 0;
}

process.exitCode = await main();
