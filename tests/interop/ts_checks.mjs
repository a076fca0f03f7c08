// The interop checks in JavaScript, shared by the two official TypeScript SDK clients: ts_client.mjs (npm
// @modelcontextprotocol/sdk, 1.x) and ts2_client.mjs (npm @modelcontextprotocol/client, 2.x).
//
// Each client script builds its SDK's client, registers the stand-in model, user and roots below as its sampling,
// elicitation and roots handlers, connects, and hands over to `runChecks`: the same checks, in the same order, as
// checks.py (which the Python clients use), against the values in contract.json. Output, read by run.py:
//
//     NEGOTIATED <protocol version>         once, after connecting (which revision the client ended up on)
//     PASS <check>   or   FAIL <check>: <why>   one line per check
//
// On a 2026-07-28 connection (the modern era) the same checks run with what that revision changes: no
// `logging/setLevel` (removed; a request asks for its logs in `_meta` instead), and the server asks for sampling,
// elicitation and roots through input-required results, which the SDK fulfils with the same handlers and retries.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));

export const CONTRACT = JSON.parse(readFileSync(join(here, 'contract.json'), 'utf8'));
export const WAIT_MS = 15000;
/** The `_meta` key by which a 2026-07-28 request asks for the log messages it causes (logging.mdx). */
const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';

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

/** A connection that never came up: the first check fails with why, and the script exits 1. */
export function connectFailed(error) {
    console.error(error);
    console.log(`FAIL initialize: ${error?.message ?? error}`);
    return 1;
}

/**
 * The command line: `[--mode MODE] [--expect VERSION] TRANSPORT TARGET...`, TARGET being `-- COMMAND [ARG...]`
 * for stdio and a URL otherwise. `--mode` is the SDK's version negotiation (legacy, auto, or a version to pin;
 * the 1.x SDK has none); `--expect` is the protocol version the connection must end on (default: the contract's
 * handshake version in legacy mode, and either era's version otherwise).
 */
export function parseArgs(argv) {
    const options = { mode: 'legacy', expect: undefined };
    while (argv[0]?.startsWith('--') && argv[0] !== '--') {
        const [flag, value] = argv.splice(0, 2);
        if (flag === '--mode') options.mode = value;
        else if (flag === '--expect') options.expect = value;
        else throw new Error(`unknown option ${flag}`);
    }
    const [kind, ...rest] = argv;
    const expected = options.expect ? [options.expect]
        : options.mode === 'legacy' ? [CONTRACT.protocolVersion]
            : [CONTRACT.protocolVersion, CONTRACT.modernProtocolVersion];
    return { ...options, kind, target: rest.filter(arg => arg !== '--'), expected };
}

/** Collects log notifications; `waitFor(count)` resolves once that many have come, or when time is up. */
export class LogCollector {
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

/** The client's stand-in model, user and roots: they answer as the contract says and remember what they were
 * asked. */
export function standIns() {
    const sampled = [];
    const elicited = [];
    const rootsAsked = [];
    return {
        sampled,
        elicited,
        rootsAsked,
        logs: new LogCollector(),
        sample(params) {
            sampled.push(params);
            return {
                role: 'assistant', content: { type: 'text', text: CONTRACT.sampling.reply },
                model: CONTRACT.sampling.model, stopReason: 'endTurn',
            };
        },
        elicit(params) {
            elicited.push(params);
            return { action: 'accept', content: CONTRACT.elicitation.answer };
        },
        listRoots(params) {
            rootsAsked.push(params ?? {});
            return { roots: CONTRACT.roots.declared.map(root => ({ ...root })) };
        },
    };
}

/** Every message from the server as it arrives, before the SDK dispatches it (see the progress check). */
export function recordInbound(transport) {
    const received = [];
    const dispatch = transport.onmessage;
    transport.onmessage = (message, extra) => {
        received.push(message);
        dispatch(message, extra);
    };
    return received;
}

/**
 * Run every check on a connected client; resolves to the exit status.
 *
 * `peer`: { client, negotiated (the protocol version agreed), expected (the versions accepted), received
 * (from `recordInbound`), standIns, callTool(params, options) (the SDK's tools/call, which differs between 1.x
 * and 2.x) }.
 */
export async function runChecks({ client, negotiated, expected, received, standIns: user, callTool }) {
    const { logs, sampled, elicited, rootsAsked } = user;
    const modern = negotiated === CONTRACT.modernProtocolVersion;
    console.log(`NEGOTIATED ${negotiated}`);
    const options = { timeout: WAIT_MS };
    const call = (name, args, extra = {}, meta = undefined) =>
        callTool({ name, arguments: args, ...(meta && { _meta: meta }) }, { ...options, ...extra });

    await check('initialize', async () => {
        expect(expected.includes(negotiated),
            `negotiated protocol version: expected ${expected.join(' or ')}, got ${JSON.stringify(negotiated)}`);
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
            const result = await call(tool, CONTRACT[tool].arguments);
            const expectedContent = CONTRACT[tool].structured;
            expect(!result.isError, `${tool} failed: ${JSON.stringify(result)}`);
            expectEqual(result.structuredContent, expectedContent, `${tool} structuredContent`);
            // A scalar wrapped as {"result": value} may be serialised as text either wrapped or bare.
            const accepted = Object.keys(expectedContent).join() === 'result'
                ? [expectedContent, expectedContent.result] : [expectedContent];
            const text = JSON.parse(textOf(result));
            expect(accepted.some(value => isDeepStrictEqual(value, text)),
                `${tool} text content (as JSON): got ${JSON.stringify(text)}`);
        });
    }

    await check('progress', async () => {
        const reports = [];
        // Handshake: the session's level, set once (the spec forbids setLevel without the logging capability).
        // 2026-07-28: no setLevel; the request itself asks for its logs.
        if (!modern && client.getServerCapabilities()?.logging) {
            await client.setLoggingLevel('info', options);
        }
        const meta = modern ? { [LOG_LEVEL_META_KEY]: CONTRACT.modernLogLevel } : undefined;
        const start = received.length;
        const result = await call('countdown', CONTRACT.countdown.arguments,
            { onprogress: report => reports.push(report) }, meta);
        expectEqual(textOf(result), CONTRACT.countdown.text, 'countdown result');
        const steps = CONTRACT.countdown.arguments.steps;
        const expectedReports = Array.from({ length: steps }, (_, i) => [i + 1, steps]);
        // What the server sent: every report, in order, before the result.
        const answer = received.findIndex((m, i) => i >= start && m.id !== undefined && 'result' in m);
        const sent = received.slice(start, answer).filter(m => m.method === 'notifications/progress');
        expectEqual(sent.map(m => [m.params.progress, m.params.total]), expectedReports,
            'progress sent [progress, total]');
        // What the SDK delivered: 1.x dispatches notifications a microtask later than responses, so reports
        // that arrive in the same read as the result are dropped ("unknown token"; typescript-sdk#2580),
        // and how many do depends on timing. What it delivers must be the first ones, in order.
        if (reports.length < steps) {
            console.error(`note: the SDK delivered ${reports.length} of ${steps} progress reports`);
        }
        expectEqual(reports.map(r => [r.progress, r.total]), expectedReports.slice(0, reports.length),
            'progress delivered [progress, total]');
    });

    await check('logging', async () => {
        const messages = await logs.waitFor(CONTRACT.countdown.logs.length);
        expectEqual(messages.map(m => m.data), CONTRACT.countdown.logs, 'log messages');
        expect(messages.every(m => m.level === 'info'), `log levels are not all info: ${JSON.stringify(messages)}`);
    });

    await check('sampling', async () => {
        const result = await call('ask_model', CONTRACT.sampling.arguments);
        expectEqual(textOf(result), CONTRACT.sampling.text, 'ask_model result');
        expectEqual(sampled.length, 1, 'sampling requests received');
        const message = sampled[0].messages?.[0] ?? {};
        expectEqual(message.role, 'user', 'sampled message role');
        expectEqual(message.content, { type: 'text', text: CONTRACT.sampling.arguments.prompt },
            'sampled message content');
        expect(Number.isInteger(sampled[0].maxTokens), 'sampling request has no integer maxTokens');
    });

    await check('elicitation', async () => {
        const result = await call('ask_user', {});
        expectEqual(textOf(result), CONTRACT.elicitation.text, 'ask_user result');
        expectEqual(elicited.length, 1, 'elicitation requests received');
        expectEqual(elicited[0].message, CONTRACT.elicitation.message, 'elicitation message');
        expect((elicited[0].mode ?? 'form') === 'form', `elicitation mode is not form: ${elicited[0].mode}`);
        const schema = elicited[0].requestedSchema ?? {};
        expectEqual(schema.type, 'object', 'requestedSchema type');
        expectEqual(Object.keys(schema.properties ?? {}).sort(), [...CONTRACT.elicitation.fields].sort(),
            'requestedSchema properties');
    });

    await check('roots', async () => {
        const result = await call('list_roots', {});
        expect(!result.isError, `list_roots failed: ${JSON.stringify(result)}`);
        const text = textOf(result);
        let uris;
        try {
            uris = JSON.parse(text);
        } catch {
            throw new CheckFailed(`list_roots text is not JSON: ${JSON.stringify(text)}`);
        }
        expectEqual(uris, CONTRACT.roots.text, 'list_roots result (root URIs)');
        expect(rootsAsked.length >= 1, 'the client was never asked for its roots');
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
    return failed ? 1 : 0;
}
