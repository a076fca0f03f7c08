// Tasks with the official TypeScript SDK's 1.x client (npm @modelcontextprotocol/sdk, its experimental tasks
// API) against mcplite's everything server (examples/everything_server.py), 2025-11-25 core tasks.
//
//     node tests/interop/ts_tasks_client.mjs stdio -- COMMAND [ARG...]
//     node tests/interop/ts_tasks_client.mjs streamable-http|sse URL
//
// run.py (`run_tasks`) reads one `PASS <check>` or `FAIL <check>: <why>` line per check of TASK_CHECKS there:
// the task tools are listed with their task support; `client.experimental.tasks.callToolStream` runs
// slow_compute as a task that goes working -> completed with its result; confirm_delete's task asks a question
// (input_required), which the SDK's elicitation handler answers (the request tied to the task), and the task
// completes with the answer's result; tasks/get and tasks/list then show both tasks completed.

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WAIT_MS, connectFailed, parseArgs } from './ts_checks.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const peer = process.env.INTEROP_TS_PEER ?? resolve(here, '../../.peers/ts');
const require = createRequire(join(peer, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { SSEClientTransport } = require('@modelcontextprotocol/sdk/client/sse.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
let failures = 0;

async function check(name, body) {
    try {
        const detail = await body();
        console.log(`PASS ${name}${detail ? `: ${detail}` : ''}`);
    } catch (error) {
        failures += 1;
        console.log(`FAIL ${name}: ${String(error?.message ?? error).replace(/\s+/g, ' ').slice(0, 400)}`);
    }
}

function expect(condition, why) {
    if (!condition) throw new Error(why);
}

function transportFor(kind, target) {
    if (kind === 'stdio') {
        return new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
    }
    if (kind === 'sse') return new SSEClientTransport(new URL(target[0]));
    return new StreamableHTTPClientTransport(new URL(target[0]));
}

/** Every message of one callToolStream, in order (bounded: the SDK's requests time out after WAIT_MS). */
async function stream(client, name, args) {
    const messages = [];
    for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, undefined,
        { timeout: WAIT_MS })) {
        messages.push(message);
    }
    return messages;
}

function statuses(messages) {
    return messages.flatMap(m => (m.type === 'taskCreated' || m.type === 'taskStatus' ? [m.task.status] : []));
}

function textOf(messages) {
    const last = messages[messages.length - 1];
    if (last?.type === 'error') throw new Error(`the stream ended with an error: ${last.error?.message}`);
    expect(last?.type === 'result', `the stream did not end with a result: ${JSON.stringify(last)}`);
    return last.result.content?.[0]?.text;
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    const elicited = [];
    const client = new Client({ name: 'interop-ts-tasks-client', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async request => {
        // Before answering: the task the question belongs to waits for it (tasks/get, a request of our own).
        const related = request.params._meta?.[RELATED_TASK]?.taskId;
        const waiting = related && (await client.experimental.tasks.getTask(related, { timeout: WAIT_MS })).status;
        elicited.push({ ...request.params, waiting });
        return { action: 'accept', content: { confirm: true } };
    });
    try {
        await client.connect(transportFor(args.kind, args.target), { timeout: WAIT_MS });
    } catch (error) {
        return connectFailed(error);
    }
    const made = [];
    try {
        await check('tasks capability and tools/list taskSupport', async () => {
            const tasks = client.getServerCapabilities()?.tasks;
            expect(tasks?.requests?.tools?.call, `no tasks.requests.tools.call in ${JSON.stringify(tasks)}`);
            const { tools } = await client.listTools(undefined, { timeout: WAIT_MS });  // caches task support
            const support = Object.fromEntries(tools.map(t => [t.name, t.execution?.taskSupport]));
            expect(support.slow_compute === 'optional' && support.confirm_delete === 'optional'
                && support.failing_job === 'required', `taskSupport: ${JSON.stringify(support)}`);
            expect(client.isToolTask('slow_compute'), 'the SDK does not take slow_compute for a task tool');
        });
        await check('callToolStream slow_compute working -> completed with its result', async () => {
            const messages = await stream(client, 'slow_compute', { seconds: 1.2, label: 'interop' });
            const seen = statuses(messages);
            expect(messages[0]?.type === 'taskCreated', `first message: ${JSON.stringify(messages[0])}`);
            made.push(messages[0].task.taskId);
            expect(seen[0] === 'working' && seen.includes('working') && seen[seen.length - 1] === 'completed',
                `statuses ${seen.join(' -> ')}`);
            const text = textOf(messages);
            expect(text === 'Computed interop in 1.2 s', `result ${JSON.stringify(text)}`);
            return `${seen.join(' -> ')}, ${JSON.stringify(text)}`;
        });
        await check('callToolStream confirm_delete input_required -> elicitation answered -> completed',
            async () => {
                const messages = await stream(client, 'confirm_delete', { filename: 'notes.txt' });
                expect(messages[0]?.type === 'taskCreated', `first message: ${JSON.stringify(messages[0])}`);
                const taskId = messages[0].task.taskId;
                made.push(taskId);
                const text = textOf(messages);
                expect(text === 'Deleted notes.txt', `result ${JSON.stringify(text)} (statuses `
                    + `${statuses(messages).join(' -> ')})`);
                expect(elicited.length === 1, `${elicited.length} elicitation requests`);
                expect(elicited[0].message === 'Delete notes.txt?', `asked ${JSON.stringify(elicited[0].message)}`);
                const related = elicited[0]._meta?.[RELATED_TASK]?.taskId;
                expect(related === taskId, `the question is tied to ${related}, not the task ${taskId}`);
                expect(elicited[0].waiting === 'input_required', `while asked, the task was ${elicited[0].waiting}`);
                return `asked while input_required, polled ${statuses(messages).join(' -> ')}, ${JSON.stringify(text)}`;
            });
        await check('tasks/get and tasks/list show both tasks completed', async () => {
            const { tasks } = await client.experimental.tasks.listTasks(undefined, { timeout: WAIT_MS });
            for (const taskId of made) {
                const got = await client.experimental.tasks.getTask(taskId, { timeout: WAIT_MS });
                expect(got.status === 'completed', `tasks/get ${taskId}: ${got.status}`);
                const listed = tasks.find(task => task.taskId === taskId);
                expect(listed?.status === 'completed', `${taskId}: ${JSON.stringify(listed)}`);
            }
            expect(made.length === 2, `${made.length} tasks made`);
        });
    } finally {
        await client.close();
    }
    return failures ? 1 : 0;
}

main().then(code => process.exit(code), error => {
    console.error(error);
    process.exit(2);
});
