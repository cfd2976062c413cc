// Drives an MCP server with the MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli),
// one CLI process per request, as a person would from a shell.
//
// Usage: node inspector.mjs stdio <command> [args...]
//        node inspector.mjs http <url>
//
// Checks, against the `users` example server:
//   - tools/list names the five tools, create_user with an outputSchema;
//   - tools/call create_user returns the user as structuredContent (and a text copy);
//   - tools/call create_user with email "x" prints an isError result naming the email field.
// Prints one JSON line summarizing what it saw; exits 1 if any check failed.
//
// Inspector CLI 1.0.3 quirk: callMethod() tests `fs.existsSync("../package.json")` against the
// current directory but imports it relative to its own file, so it must run from a directory
// whose parent has a package.json; otherwise it fails with `Cannot find module
// …/node_modules/@modelcontextprotocol/package.json`. It runs here from node_modules/, whose
// parent is this package.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';

const cliDir = new URL('./node_modules/@modelcontextprotocol/inspector-cli/', import.meta.url);
const cli = fileURLToPath(new URL('./build/cli.js', cliDir));
const inspectorVersion = JSON.parse(readFileSync(new URL('./package.json', cliDir), 'utf8')).version;

const [mode, given, ...rest] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !given) {
  console.error('usage: node inspector.mjs stdio <command> [args...] | node inspector.mjs http <url>');
  process.exit(2);
}
// The CLI runs in another directory: a relative command path must not change meaning.
const target = mode === 'stdio' && given.includes('/') ? resolvePath(given) : given;

const summary = { client: 'inspector-cli', inspectorVersion, transport: mode, ok: false, failures: [] };
const check = (name, ok, detail) => {
  if (!ok) summary.failures.push(detail === undefined ? name : `${name}: ${JSON.stringify(detail)}`);
  return ok;
};
const text = (result) => (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// Runs the CLI once (20 s at most) and parses the JSON it prints on stdout.
function inspector(...methodArgs) {
  const server = mode === 'stdio' ? [target, ...rest] : [target, '--transport', 'http'];
  const args = [cli, '--cli', ...server, ...methodArgs];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: fileURLToPath(new URL('./node_modules/', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let json;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      if (code !== 0 || json === undefined) {
        // The deprecation banner goes to stderr; keep the rest for the report.
        const err = stderr.split('\n').filter((l) => l.trim() && !/deprecated|Upgrade:|security fixes/.test(l));
        summary.failures.push(
          `inspector ${methodArgs.join(' ')}: exit ${code ?? signal}: ${err.join(' | ').slice(0, 500)} ${stdout.slice(0, 200)}`,
        );
      }
      resolve(json);
    });
  });
}

const list = await inspector('--method', 'tools/list');
summary.tools = (list?.tools ?? []).map((t) => t.name).sort();
for (const name of ['create_user', 'delete_user', 'get_user', 'seed_users', 'send_email']) {
  check(`tool ${name} listed`, summary.tools.includes(name), summary.tools);
}
const createTool = list?.tools?.find((t) => t.name === 'create_user');
check('create_user has an outputSchema', createTool?.outputSchema?.type === 'object', createTool?.outputSchema);

// --tool-arg last: it is variadic. Values are parsed as JSON when they can be.
const created = await inspector(
  '--method', 'tools/call', '--tool-name', 'create_user',
  '--tool-arg', 'email=jane.doe@example.com', 'name=Jane Doe', 'role=moderator',
);
summary.created = created?.structuredContent;
check('create_user is not an error', created !== undefined && created.isError !== true, created);
check(
  'create_user structuredContent',
  summary.created?.email === 'jane.doe@example.com' && summary.created?.role === 'moderator' && /^usr_/.test(summary.created?.id ?? ''),
  summary.created,
);
check('create_user text copy', text(created).includes('jane.doe@example.com'), created?.content);

const bad = await inspector('--method', 'tools/call', '--tool-name', 'create_user', '--tool-arg', 'email=x', 'name=Jane Doe');
summary.badCall = { isError: bad?.isError === true, text: text(bad) };
check('bad email is an isError result', bad?.isError === true, bad);
check('bad email error names the field', /email/.test(text(bad)), text(bad));

summary.ok = summary.failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
