// Drives an MCP server with the official TypeScript SDK client (@modelcontextprotocol/sdk).
//
// Usage: node ts-client.mjs stdio <command> [args...]
//        node ts-client.mjs http <url>
//
// Checks, against the `users` example server:
//   - tools/list names the five tools, and create_user declares an outputSchema;
//   - create_user succeeds, and the client itself validates structuredContent against the
//     outputSchema it cached from tools/list (callTool throws when they disagree);
//   - get_user returns the created user (also validated); an unknown id is an isError result;
//   - create_user with email "x" is an isError result naming the email field;
//   - seed_users {count: 5} with onprogress delivers all 5 progress notifications, in order;
//   - over HTTP, the SDK's terminateSession() ends the session with a DELETE the server answers
//     with a 2xx (the SDK itself also takes a 405, "termination not supported", as success),
//     and a request with the ended session's id then gets 404.
// Prints one JSON line summarizing what it saw; exits 1 if any check failed, 2 on a crash.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

// (The SDK's export map hides its package.json: read the installed file.)
const sdkVersion = JSON.parse(
  readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;

// Never hang: the whole run gets 60 s.
const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ client: 'typescript-sdk', ok: false, failures: ['timed out after 60 s'] }));
  process.exit(3);
}, 60_000);
watchdog.unref();

const [mode, target, ...rest] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !target) {
  console.error('usage: node ts-client.mjs stdio <command> [args...] | node ts-client.mjs http <url>');
  process.exit(2);
}

const summary = { client: 'typescript-sdk', sdkVersion, transport: mode, ok: false, failures: [] };
const check = (name, ok, detail) => {
  if (!ok) summary.failures.push(detail === undefined ? name : `${name}: ${JSON.stringify(detail)}`);
  return ok;
};
const text = (result) => (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// The statuses of the DELETE requests the HTTP transport sends (through its `fetch` option).
const deletes = [];
const recordingFetch = async (url, init) => {
  const response = await fetch(url, init);
  if ((init?.method ?? 'GET').toUpperCase() === 'DELETE') deletes.push(response.status);
  return response;
};

const transport =
  mode === 'stdio'
    ? new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target), { fetch: recordingFetch });

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

const client = new Client({ name: 'mcp-tool-interop-ts', version: '0.1.0' }, { capabilities: {} });

try {
  await client.connect(transport);
  summary.server = client.getServerVersion();
  check('server name', summary.server?.name === 'users', summary.server);
  check('protocol version', summary.protocolVersion === '2025-11-25', summary.protocolVersion);
  if (mode === 'http') check('session id', typeof transport.sessionId === 'string', transport.sessionId);

  // tools/list: also caches the output-schema validators callTool uses.
  const { tools } = await client.listTools();
  summary.tools = tools.map((t) => t.name).sort();
  for (const name of ['create_user', 'delete_user', 'get_user', 'seed_users', 'send_email']) {
    check(`tool ${name} listed`, summary.tools.includes(name), summary.tools);
  }
  const createTool = tools.find((t) => t.name === 'create_user');
  check('create_user has an outputSchema', createTool?.outputSchema?.type === 'object', createTool?.outputSchema);
  const validator = client.getToolOutputValidator?.('create_user');
  summary.outputValidatorCached = typeof validator === 'function';
  check('client cached the create_user output validator', summary.outputValidatorCached);
  if (summary.outputValidatorCached) {
    // The schema has teeth: the client's validator refuses a user whose id is a number.
    const tampered = validator({ id: 7, email: 'a@b.co', name: 'A B', role: 'user', createdAt: 'x' });
    summary.validatorRejectsTampered = tampered.valid === false;
    check('output validator rejects a wrong type', summary.validatorRejectsTampered, tampered);
  }

  // A good call: callTool validates structuredContent against the cached outputSchema.
  const created = await client.callTool({
    name: 'create_user',
    arguments: { email: 'jane.doe@example.com', name: 'Jane Doe', role: 'admin' },
  });
  const user = created.structuredContent;
  summary.created = user;
  check('create_user is not an error', created.isError !== true, created);
  check('create_user structuredContent', user?.email === 'jane.doe@example.com' && user?.name === 'Jane Doe' && user?.role === 'admin' && /^usr_/.test(user?.id ?? ''), user);
  check('create_user text copy', text(created).includes('jane.doe@example.com'), created.content);

  const fetched = await client.callTool({ name: 'get_user', arguments: { userId: user?.id } });
  check('get_user returns the created user', fetched.structuredContent?.id === user?.id && fetched.isError !== true, fetched);
  const missing = await client.callTool({ name: 'get_user', arguments: { userId: 'usr_nope' } });
  summary.missingUser = { isError: missing.isError === true, text: text(missing) };
  check('get_user of an unknown id is an isError result', missing.isError === true && /NOT_FOUND|no user/.test(text(missing)), missing);

  // A bad call: validation failure is a result with isError, not a thrown error.
  const bad = await client.callTool({ name: 'create_user', arguments: { email: 'x', name: 'Jane Doe' } });
  summary.badCall = { isError: bad.isError === true, text: text(bad) };
  check('bad email is an isError result', bad.isError === true, bad);
  check('bad email error names the field', /email/.test(text(bad)), text(bad));

  // Progress: every notification reaches onprogress before the result settles.
  const progress = [];
  const seeded = await client.callTool(
    { name: 'seed_users', arguments: { count: 5 } },
    CallToolResultSchema,
    { onprogress: (p) => progress.push(p), timeout: 30_000 },
  );
  summary.progress = progress;
  summary.seedResult = text(seeded);
  check('seed_users is not an error', seeded.isError !== true, seeded);
  check('5 progress notifications', progress.length === 5, progress);
  check(
    'progress 1..5 of 5',
    progress.every((p, i) => p.progress === i + 1 && p.total === 5),
    progress,
  );

  if (mode === 'http') {
    const sessionId = transport.sessionId;
    await transport.terminateSession(); // DELETE /mcp
    // The SDK forgets the session on a 405 too: require a real 2xx.
    summary.deleteStatuses = deletes;
    summary.sessionTerminated =
      transport.sessionId === undefined && deletes.length === 1 && deletes[0] >= 200 && deletes[0] < 300;
    check('session terminated by a DELETE answered 2xx', summary.sessionTerminated, {
      sessionId: transport.sessionId,
      deletes,
    });
    // The ended session is gone: a request naming it gets 404.
    const after = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': summary.protocolVersion,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} }),
    });
    await after.body?.cancel();
    summary.statusAfterDelete = after.status;
    check('a request in the ended session gets 404', after.status === 404, after.status);
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
