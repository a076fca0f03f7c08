// The gateway legs' checks (gateway_plan.json) made by the TypeScript SDK 2.x's client through mcplite's gateway.
//
//     node tests/interop/gw_ts_client.mjs [--mode legacy|auto] stdio -- GATEWAY COMMAND...
//
// The same checks, in the same order and with the same output, as gw_py_client.py (which says what they are):
// `NEGOTIATED version`, then `PASS name` or `FAIL name: why` per check. The SDK is loaded from
// $INTEROP_TS2_PEER (default .peers/ts2), where run.py installs it.

import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS2_PEER ?? resolve(here, '../../.peers/ts2');
const require = createRequire(join(peer, 'package.json'));
const { Client } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

const PLAN = JSON.parse(readFileSync(join(here, 'gateway_plan.json'), 'utf-8'));
const WAIT_MS = 15000;
// What a kill step reports, each after its name in parentheses (gateway_legs.KILL_CHECKS).
const KILLED = ['the next call is an error naming it', 'the others keep working', 'it comes back'];
// What the filled form answers, by the field's name (else by its type).
const ANSWERS = { name: 'Ada', username: 'ada', email: 'ada@example.com', age: 36 };

let failed = 0;
function outcome(name, error) {
    if (!error) {
        console.log(`PASS ${name}`);
        return;
    }
    failed += 1;
    console.log(`FAIL ${name}: ${String(error.message ?? error).split(/\s+/).join(' ').slice(0, 500)}`);
    if (!(error instanceof CheckFailed)) console.error(error);
}

class CheckFailed extends Error {}
function expect(condition, message) {
    if (!condition) throw new CheckFailed(message);
}
function expectEqual(actual, expected, what) {
    expect(JSON.stringify(actual) === JSON.stringify(expected),
        `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function fillForm(params) {
    const content = {};
    for (const [field, schema] of Object.entries(params.requestedSchema?.properties ?? {})) {
        const kind = schema.type;
        const fallback = kind === 'integer' || kind === 'number' ? 36 : kind === 'boolean' ? true : 'Ada';
        content[field] = ANSWERS[field] ?? fallback;
    }
    return { action: 'accept', content };
}

function textOf(result) {
    return (result.content ?? []).filter(block => block.type === 'text').map(block => block.text).join('');
}

function verifyCall(step, result, progress) {
    const text = textOf(result);
    if (step.isError) {
        expect(result.isError === true, `expected an error result, got ${JSON.stringify(result)}`);
        return;
    }
    expect(!result.isError, `an error result: ${JSON.stringify(text)}`);
    if ('structured' in step) expectEqual(result.structuredContent, step.structured, 'structuredContent');
    if ('text' in step) expectEqual(text, step.text, 'text');
    if ('textStartsWith' in step) {
        expect(text.startsWith(step.textStartsWith), `text ${JSON.stringify(text)} does not start with ${step.textStartsWith}`);
    }
    if ('textContains' in step) {
        expect(text.includes(step.textContains), `text ${JSON.stringify(text)} does not contain ${step.textContains}`);
    }
    if ('progress' in step) {
        expect(progress.length >= step.progress,
            `${progress.length} progress notifications, expected ${step.progress}: ${JSON.stringify(progress)}`);
    }
}

// The processes started (directly or not) by this one whose command line contains `marker`.
function processesWith(marker) {
    const parentOf = new Map();
    for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
            const stat = readFileSync(`/proc/${entry}/stat`, 'utf-8');
            parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
        } catch {
            // it ended while we looked
        }
    }
    const found = [];
    let generation = [process.pid];
    while (generation.length) {
        generation = [...parentOf].filter(([, parent]) => generation.includes(parent)).map(([child]) => child);
        found.push(...generation);
    }
    return found.filter(pid => {
        try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf-8').split('\0').join(' ').includes(marker);
        } catch {
            return false;
        }
    });
}

async function main() {
    let argv = process.argv.slice(2);
    let mode = 'auto';
    if (argv[0] === '--mode') {
        mode = argv[1];
        argv = argv.slice(2);
    }
    if (argv[0] !== 'stdio') {
        console.error('usage: gw_ts_client.mjs [--mode legacy|auto] stdio -- GATEWAY COMMAND...');
        return 2;
    }
    const target = argv.slice(1).filter(arg => arg !== '--');
    const client = new Client({ name: 'gateway-interop-ts2-client', version: '1.0.0' }, {
        capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
        versionNegotiation: { mode },
    });
    client.setRequestHandler('elicitation/create', request => fillForm(request.params));
    client.setRequestHandler('sampling/createMessage', () => (
        { role: 'assistant', content: { type: 'text', text: '4' }, model: 'gateway-interop' }));
    client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///interop/root' }] }));
    const transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
    try {
        await client.connect(transport, { timeout: WAIT_MS });
    } catch (error) {
        outcome('initialize', error);
        return 1;
    }
    console.log(`NEGOTIATED ${client.getNegotiatedProtocolVersion()}`);
    outcome('initialize', null);
    const options = { timeout: WAIT_MS };

    // The TS SDK runs notification handlers in a microtask (Protocol._onnotification) but settles a response at
    // once, deleting its progress handler: a progress notification read in the same chunk as the response (a
    // tool that reports its last step and returns at once) reaches `_onprogress` after that, and is reported
    // through `onerror` as "a progress notification for an unknown token" instead of `onprogress`. Those
    // count too: the client did receive them, in order, before the response on the wire.
    let late = [];
    client.onerror = error => {
        const found = /unknown token: (.*)$/s.exec(String(error?.message ?? ''));
        if (!found) return;
        try {
            const { progressToken, ...report } = JSON.parse(found[1]).params;
            late.push(report);
        } catch { /* not a notification: nothing to count */ }
    };
    const call = async (tool, args, progress) => {
        late = [];
        const result = await client.callTool({ name: tool, arguments: args },
            { ...options, onprogress: report => progress.push(report) });
        await new Promise(resolve => setImmediate(resolve));  // the microtasks of the same read run first
        progress.push(...late);
        return result;
    };

    async function step(check) {
        if (['list_tools', 'list_prompts', 'list_resources'].includes(check.op)) {
            const listed = check.op === 'list_tools' ? (await client.listTools(undefined, options)).tools
                : check.op === 'list_prompts' ? (await client.listPrompts(undefined, options)).prompts
                    : (await client.listResources(undefined, options)).resources;
            const names = new Set(listed.map(item => item.uri ?? item.name));
            const missing = check.includes.filter(name => !names.has(name));
            expect(!missing.length, `not listed: ${JSON.stringify(missing)} (listed: ${JSON.stringify([...names].sort())})`);
        } else if (check.op === 'call') {
            const progress = [];
            verifyCall(check, await call(check.tool, check.arguments, progress), progress);
        } else if (check.op === 'read') {
            const { contents } = await client.readResource({ uri: check.uri }, options);
            expectEqual(contents.map(c => [c.uri, c.text]), [[check.uri, check.text]], 'contents');
        } else if (check.op === 'get_prompt') {
            const result = await client.getPrompt({ name: check.prompt, arguments: check.arguments }, options);
            const texts = result.messages.map(m => m.content.text ?? '').join(' ');
            expect(texts.includes(check.textContains), `messages ${JSON.stringify(texts)} do not contain ${check.textContains}`);
        }
    }

    async function kill(check) {
        try {
            const pids = processesWith(check.marker);
            expect(pids.length === 1, `expected one process with ${check.marker}, found ${JSON.stringify(pids)}`);
            process.kill(pids[0], 'SIGKILL');
            const result = await call(check.tool, {}, []);
            expect(result.isError === true, `the call after the kill was not an error: ${JSON.stringify(result)}`);
            expect(textOf(result).includes(`'${check.upstream}'`),
                `the error does not name '${check.upstream}': ${JSON.stringify(textOf(result))}`);
            outcome(`${check.name} (${KILLED[0]})`, null);
        } catch (error) {
            outcome(`${check.name} (${KILLED[0]})`, error);
        }
        try {
            for (const other of check.others) {
                const result = await call(other.tool, other.arguments, []);
                expect(!result.isError, `${other.tool}: ${JSON.stringify(textOf(result))}`);
            }
            outcome(`${check.name} (${KILLED[1]})`, null);
        } catch (error) {
            outcome(`${check.name} (${KILLED[1]})`, error);
        }
        const deadline = Date.now() + check.comeBackSeconds * 1000;
        let last;
        while (Date.now() < deadline) {
            try {
                const result = await call(check.tool, {}, []);
                if (!result.isError) {
                    outcome(`${check.name} (${KILLED[2]})`, null);
                    return;
                }
                last = textOf(result);
            } catch (error) { // the tool is withdrawn while it is down: unknown until it is back
                last = String(error.message ?? error);
            }
            await new Promise(done => setTimeout(done, 250)); // it restarts by itself after 0.5 s, then 1 s...
        }
        outcome(`${check.name} (${KILLED[2]})`,
            new CheckFailed(`${check.tool} did not answer within ${check.comeBackSeconds} s; last: ${last}`));
    }

    try {
        for (const check of PLAN.checks) {
            if (check.op === 'kill') {
                await kill(check);
                continue;
            }
            try {
                await step(check);
                outcome(check.name, null);
            } catch (error) {
                outcome(check.name, error);
            }
        }
    } finally {
        await client.close();
    }
    return failed ? 1 : 0;
}

process.exitCode = await main();
