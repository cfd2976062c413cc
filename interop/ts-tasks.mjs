// Drives MCP tasks (2025-11-25) with the official TypeScript SDK client's task API
// (`client.experimental.tasks` of @modelcontextprotocol/sdk) against the `reports` example.
//
// Usage: node ts-tasks.mjs stdio <command> [args...]
//        node ts-tasks.mjs http <url>
//
// Checks:
//   - initialize negotiates 2025-11-25 and the server declares tasks {list, cancel,
//     requests.tools.call}; tools/list gives sales_report taskSupport "optional" and
//     purge_reports "required" (so the SDK's plain callTool refuses purge_reports);
//   - sales_report {year: 2024} through callToolStream with task {ttl}: a created task with every
//     field, polled with tasks/get until `completed`, its result fetched with tasks/result (and
//     validated by the SDK against the outputSchema): 12 months, the totals are the sums; 12
//     progress notifications; tasks/get and tasks/result again by id agree;
//   - tasks/list (every page) holds the task, completed;
//   - sales_report {pace_ms: 1000} as a task, cancelled with tasks/cancel as soon as it is
//     created: the answer, the next tasks/get and the stream all say `cancelled`;
//   - purge_reports through callToolStream (the SDK adds `task` itself, the tool requiring it):
//     the server's elicitation reaches the client's elicitation handler tagged with the task
//     (`_meta["io.modelcontextprotocol/related-task"]`), tasks/get says `input_required` while
//     the handler holds it, the handler accepts {confirm: true}, the task completes with
//     "purged 1 reports";
//   - notifications/tasks/status reach the client's notification handler: completed for the
//     report, cancelled for the slow one, input_required then completed for the purge (waited
//     for at most 10 s after the rest).
// Prints one JSON line summarizing what it saw; exits 1 if any check failed, 2 on bad usage,
// 3 when it ran out of time.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const sdkVersion = JSON.parse(
  readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;

const summary = { client: 'typescript-sdk', api: 'client.experimental.tasks', sdkVersion, ok: false, failures: [] };

// Never hang: the whole run gets 90 s.
const watchdog = setTimeout(() => {
  summary.failures.push('timed out after 90 s');
  console.log(JSON.stringify(summary));
  process.exit(3);
}, 90_000);
watchdog.unref();

const [mode, target, ...rest] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !target) {
  console.error('usage: node ts-tasks.mjs stdio <command> [args...] | node ts-tasks.mjs http <url>');
  process.exit(2);
}
summary.transport = mode;

const check = (name, ok, detail) => {
  if (!ok) summary.failures.push(detail === undefined ? name : `${name}: ${JSON.stringify(detail)}`);
  return ok;
};
const text = (result) => (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const TASK_FIELDS = ['taskId', 'status', 'createdAt', 'lastUpdatedAt', 'ttl', 'pollInterval'];
const hasTaskFields = (task) =>
  typeof task?.taskId === 'string' &&
  typeof task.status === 'string' &&
  !Number.isNaN(Date.parse(task.createdAt)) &&
  !Number.isNaN(Date.parse(task.lastUpdatedAt)) &&
  (typeof task.ttl === 'number' || task.ttl === null) &&
  typeof task.pollInterval === 'number';
const pick = (task) => Object.fromEntries(TASK_FIELDS.filter((k) => k in (task ?? {})).map((k) => [k, task[k]]));

/// Runs one callToolStream to its end; `onCreated` runs when the task is created.
async function stream(params, options, onCreated) {
  const seen = { created: null, statuses: [], result: null, error: null };
  for await (const message of client.experimental.tasks.callToolStream(params, CallToolResultSchema, options)) {
    switch (message.type) {
      case 'taskCreated':
        seen.created = pick(message.task);
        if (onCreated) await onCreated(message.task);
        break;
      case 'taskStatus':
        seen.statuses.push(message.task.status);
        break;
      case 'result':
        seen.result = message.result;
        break;
      case 'error':
        seen.error = `${message.error?.code ?? ''} ${message.error?.message ?? message.error}`;
        break;
    }
  }
  return seen;
}

// Over HTTP the server speaks first (status notifications, progress, the task's question) on
// the GET stream, and drops what it has no stream for: the tasks start once the server has
// answered the client's GET (the SDK opens it after `initialized`), seen through its fetch.
let getStreamOpened;
const getStreamOpen = new Promise((resolve) => {
  getStreamOpened = resolve;
});
const watchingFetch = async (url, init) => {
  const response = await fetch(url, init);
  if ((init?.method ?? 'GET') === 'GET' && response.ok) getStreamOpened();
  return response;
};
const transport =
  mode === 'stdio'
    ? new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target), { fetch: watchingFetch });

// Sniff the initialize result for the negotiated protocol version (both transports).
const start = transport.start.bind(transport);
transport.start = async () => {
  const handler = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message?.result?.protocolVersion && !summary.protocolVersion) {
      summary.protocolVersion = message.result.protocolVersion;
    }
    handler?.(message, extra);
  };
  return start();
};

const client = new Client(
  { name: 'mcp-tool-interop-ts-tasks', version: '0.1.0' },
  { capabilities: { elicitation: { form: {} } } },
);

// notifications/tasks/status, as the client's notification handler sees them.
const statusNotes = [];
let noteArrived = () => {};
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
  statusNotes.push({ taskId: n.params.taskId, status: n.params.status });
  noteArrived();
});

// The elicitation handler: notes the question and its task, asks tasks/get meanwhile, accepts.
summary.elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const relatedTaskId = request.params._meta?.[RELATED_TASK_META_KEY]?.taskId ?? null;
  const asked = { message: request.params.message, relatedTaskId, requestedSchema: request.params.requestedSchema };
  if (relatedTaskId) {
    // The server waits for this answer: the task says so.
    asked.statusWhileAsking = (await client.experimental.tasks.getTask(relatedTaskId)).status;
  }
  summary.elicitations.push(asked);
  return { action: 'accept', content: { confirm: true } };
});

try {
  await client.connect(transport);
  summary.server = client.getServerVersion();
  if (mode === 'http') {
    summary.getStream = await Promise.race([
      getStreamOpen.then(() => 'open'),
      new Promise((resolve) => setTimeout(() => resolve('not open after 10 s'), 10_000)),
    ]);
    check('the GET stream is open', summary.getStream === 'open', summary.getStream);
  }
  check('server name', summary.server?.name === 'reports', summary.server);
  check('protocol version', summary.protocolVersion === '2025-11-25', summary.protocolVersion);
  const tasksCapability = client.getServerCapabilities()?.tasks;
  summary.tasksCapability = tasksCapability ?? null;
  check(
    'server declares tasks {list, cancel, requests.tools.call}',
    !!tasksCapability?.list && !!tasksCapability?.cancel && !!tasksCapability?.requests?.tools?.call,
    tasksCapability,
  );

  // tools/list: the SDK caches each tool's taskSupport (and output schema).
  const { tools } = await client.listTools();
  summary.taskSupport = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
  check('sales_report taskSupport optional', summary.taskSupport.sales_report === 'optional', summary.taskSupport);
  check('purge_reports taskSupport required', summary.taskSupport.purge_reports === 'required', summary.taskSupport);
  try {
    await client.callTool({ name: 'purge_reports', arguments: {} });
    summary.plainCallOfRequired = 'called';
  } catch (e) {
    summary.plainCallOfRequired = /requires task-based execution/.test(e?.message ?? '') ? 'refused by the SDK' : `${e?.message}`;
  }
  check('the SDK refuses a plain call of purge_reports', summary.plainCallOfRequired === 'refused by the SDK', summary.plainCallOfRequired);

  // 1. A report as a task: created, polled (tasks/get) to completion, its result (tasks/result).
  const progress = [];
  const report = await stream(
    { name: 'sales_report', arguments: { year: 2024, pace_ms: 100 } },
    { task: { ttl: 60_000 }, onprogress: (p) => progress.push(p), timeout: 30_000 },
  );
  const taskId = report.created?.taskId;
  summary.report = { created: report.created, polled: report.statuses, error: report.error };
  check('report task created with every field', hasTaskFields(report.created), report.created);
  check('report task created working', report.created?.status === 'working', report.created);
  check('report task ttl as asked', report.created?.ttl === 60_000, report.created);
  check('report polled until completed', report.statuses.at(-1) === 'completed', report.statuses);
  check('report stream has no error', report.error === null, report.error);
  const sc = report.result?.structuredContent;
  const months = sc?.months ?? [];
  summary.report.result = sc
    ? {
        year: sc.year,
        months: months.length,
        totalOrders: sc.totalOrders,
        totalRevenueCents: sc.totalRevenueCents,
        ordersSum: months.reduce((a, m) => a + m.orders, 0),
        revenueSum: months.reduce((a, m) => a + m.revenue_cents, 0),
        monthsInOrder: months.every((m, i) => m.month === i + 1),
        isError: report.result.isError === true,
      }
    : null;
  const r = summary.report.result;
  check('report is not an error', r && !r.isError, report.result);
  check('report of 2024', r?.year === 2024, r);
  check('report has 12 months, in order', r?.months === 12 && r.monthsInOrder, r);
  check('total orders is the sum', r && r.totalOrders === r.ordersSum, r);
  check('total revenue is the sum', r && r.totalRevenueCents === r.revenueSum, r);
  summary.report.progress = progress.map((p) => [p.progress, p.total]);
  check(
    '12 progress notifications, 1..12 of 12',
    progress.length === 12 && progress.every((p, i) => p.progress === i + 1 && p.total === 12),
    summary.report.progress,
  );
  if (taskId) {
    const again = await client.experimental.tasks.getTask(taskId);
    summary.report.getTask = pick(again);
    check('tasks/get by id: completed', again.status === 'completed' && again.taskId === taskId, again);
    const payload = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    summary.report.resultAgain = {
      same: JSON.stringify(payload.structuredContent) === JSON.stringify(sc),
      relatedTask: payload._meta?.[RELATED_TASK_META_KEY]?.taskId ?? null,
    };
    check('tasks/result by id: the same report', summary.report.resultAgain.same, payload);
    check('tasks/result names its task', summary.report.resultAgain.relatedTask === taskId, payload._meta);
  }

  // 2. tasks/list holds it (every page, at most 20).
  const listed = [];
  let cursor;
  for (let page = 0; page < 20; page++) {
    const { tasks, nextCursor } = await client.experimental.tasks.listTasks(cursor);
    listed.push(...tasks);
    if (!nextCursor) break;
    cursor = nextCursor;
  }
  const mine = listed.find((t) => t.taskId === taskId);
  summary.listed = { count: listed.length, report: mine ? pick(mine) : null };
  check('tasks/list holds the report task, completed', mine?.status === 'completed', listed);
  check('tasks/list entries have every field', listed.every(hasTaskFields), listed);

  // 3. A slow report, cancelled as soon as it is created.
  let cancelAnswer = null;
  const slow = await stream(
    { name: 'sales_report', arguments: { year: 2023, pace_ms: 1000 } },
    { task: { ttl: 60_000 }, timeout: 30_000 },
    async (task) => {
      cancelAnswer = pick(await client.experimental.tasks.cancelTask(task.taskId));
    },
  );
  const slowId = slow.created?.taskId;
  summary.cancelled = { created: slow.created, cancelAnswer, polled: slow.statuses, streamError: slow.error };
  check('slow task created working', slow.created?.status === 'working', slow.created);
  check('tasks/cancel answers cancelled', cancelAnswer?.status === 'cancelled' && cancelAnswer?.taskId === slowId, cancelAnswer);
  check('the stream polls it cancelled', slow.statuses.at(-1) === 'cancelled' && slow.result === null, slow);
  check('the stream ends with "was cancelled"', /was cancelled/.test(slow.error ?? ''), slow.error);
  if (slowId) {
    const after = await client.experimental.tasks.getTask(slowId);
    summary.cancelled.getTask = after.status;
    check('tasks/get after cancel: cancelled', after.status === 'cancelled', after);
  }

  // 4. purge_reports (task required): the SDK adds `task` itself; the question comes back
  //    through the elicitation handler while the task shows input_required.
  const purge = await stream({ name: 'purge_reports', arguments: {} }, { timeout: 30_000 });
  const purgeId = purge.created?.taskId;
  summary.purge = {
    created: purge.created,
    polled: purge.statuses,
    result: purge.result ? { isError: purge.result.isError === true, text: text(purge.result) } : null,
    error: purge.error,
  };
  check('purge task created', hasTaskFields(purge.created), purge.created);
  check('purge stream has no error', purge.error === null, purge.error);
  check('purge completes: purged 1 reports', summary.purge.result?.text === 'purged 1 reports' && !summary.purge.result.isError, summary.purge.result);
  const asked = summary.elicitations;
  check('one elicitation', asked.length === 1, asked);
  check('the elicitation asks to purge 1 report', asked[0]?.message === 'Purge 1 reports?', asked[0]);
  check('the elicitation is tagged with the purge task', asked[0]?.relatedTaskId === purgeId, asked[0]);
  check('the task is input_required while asking', asked[0]?.statusWhileAsking === 'input_required', asked[0]);
  check(
    'the elicitation asks for {confirm: boolean}',
    asked[0]?.requestedSchema?.properties?.confirm?.type === 'boolean',
    asked[0]?.requestedSchema,
  );
  if (purgeId) {
    const done = await client.experimental.tasks.getTask(purgeId);
    summary.purge.getTask = done.status;
    check('tasks/get after the purge: completed', done.status === 'completed', done);
  }

  // 5. Status notifications, waited for at most 10 s.
  const expected = [
    [taskId, 'completed'],
    [slowId, 'cancelled'],
    [purgeId, 'input_required'],
    [purgeId, 'completed'],
  ];
  const heard = () => expected.every(([id, s]) => statusNotes.some((n) => n.taskId === id && n.status === s));
  const deadline = Date.now() + 10_000;
  while (!heard() && Date.now() < deadline) {
    await new Promise((resolve) => {
      noteArrived = resolve;
      setTimeout(resolve, 250);
    });
  }
  const named = { [taskId]: 'report', [slowId]: 'cancelled', [purgeId]: 'purge' };
  summary.statusNotifications = statusNotes.map((n) => `${named[n.taskId] ?? n.taskId}:${n.status}`);
  for (const [id, s] of expected) {
    check(
      `notifications/tasks/status ${named[id]} ${s}`,
      statusNotes.some((n) => n.taskId === id && n.status === s),
      summary.statusNotifications,
    );
  }

  if (mode === 'http') {
    await transport.terminateSession();
    summary.sessionTerminated = transport.sessionId === undefined;
    check('session terminated', summary.sessionTerminated, transport.sessionId);
  }
  await client.close();
} catch (e) {
  summary.failures.push(`exception: ${e?.code ?? ''} ${e?.message ?? e}`);
  try {
    await client.close();
  } catch {
    // already broken
  }
}

summary.ok = summary.failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
