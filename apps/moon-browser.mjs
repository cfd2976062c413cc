// The MCP Apps browser test: the `moon` example's view, rendered by a real host in headless
// Chromium (Debian's `chromium`, driven by playwright-core).
//
// Usage: node moon-browser.mjs --mcp <endpoint URL> [--out <dir>]
//        node moon-browser.mjs --server <moon binary> [--out <dir>]   (starts `moon --http`)
//
// The host page (host/host.js) is built on the official SDKs: the TypeScript SDK client
// (@modelcontextprotocol/client) declares the MCP Apps extension and calls `show_moon` over
// Streamable HTTP, and ext-apps' AppBridge renders the view it links to in a sandbox proxy on
// another origin (host/sandbox.js), under the CSP built from the view's `_meta.ui.csp`. Once
// in each protocol version (2025-11-25 session, 2026-07-28 stateless), it checks that:
//   - the committed view is what its sources build to (apps/build-views.mjs --check);
//   - the server declares `io.modelcontextprotocol/ui`, lists the app-only `moon_refresh`
//     with `_meta.ui.visibility: ["app"]` to this host (which keeps it from the model), and
//     serves the view with its `_meta.ui` (empty CSP domain lists, prefersBorder);
//   - the view (the ext-apps App class) initializes, gets the tool input and result, and draws
//     the phase: its name, the illumination and age as text, the lit part as an SVG path;
//   - a click on "Day after" in the view calls `moon_refresh` through the host, whose answer
//     the view draws; a fetch from the view is blocked by the CSP; the page makes no request
//     but to the host, the sandbox and the MCP endpoint; nothing throws in any frame;
//   - a screenshot is saved: <out>/moon-<era>.png.
// Prints one JSON line summarizing what it saw; exits 1 if any check failed, 2 on a crash.

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { buildView, viewNames } from './build-views.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const version = (name) =>
  JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version;

const summary = {
  client: 'ext-apps-host',
  extApps: version('@modelcontextprotocol/ext-apps'),
  sdk: version('@modelcontextprotocol/client'),
  playwright: version('playwright-core'),
  chromium: null,
  ok: false,
  failures: [],
  runs: [],
};
const check = (name, ok, detail) => {
  if (!ok) summary.failures.push(detail === undefined ? name : `${name}: ${JSON.stringify(detail)}`);
  return ok;
};
const finish = (code) => {
  summary.ok = code === 0 && summary.failures.length === 0;
  console.log(JSON.stringify(summary));
  process.exit(summary.ok ? 0 : code || 1);
};

// Never hang: the whole run gets 100 s.
const watchdog = setTimeout(() => {
  summary.failures.push('timed out after 100 s');
  finish(3);
}, 100_000);
watchdog.unref();

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const out = resolve(option('--out') ?? join(here, '../target/apps-test'));
mkdirSync(out, { recursive: true });

/** Starts `moon --http 127.0.0.1:0` and resolves with its endpoint (from its stderr). */
function startServer(bin) {
  const child = spawn(bin, ['--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  process.on('exit', () => child.kill());
  return new Promise((resolveUrl, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${bin} exited (${code}) before listening`)));
    createInterface({ input: child.stderr }).on('line', (line) => {
      const found = line.split('MCP endpoint ')[1];
      if (found) resolveUrl(found.trim());
    });
  });
}

/** The policy a host builds from `_meta.ui.csp`, as the extension gives it. */
function cspHeader(csp) {
  const list = (domains, fallback) => (domains?.length ? domains.join(' ') : fallback);
  const resources = list(csp.resourceDomains, '');
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src ${list(csp.connectDomains, "'none'")}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${list(csp.frameDomains, "'none'")}`,
    "object-src 'none'",
    `base-uri ${list(csp.baseUriDomains, "'self'")}`,
  ]
    .map((d) => d.trim())
    .join('; ');
}

async function bundle(file) {
  const result = await build({
    entryPoints: [join(here, 'host', file)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1');
}

const page = (title, style, script) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
  `<style>${style}</style></head><body>${title === 'sandbox' ? '' : `<h1>${title}</h1><div id="stage"></div>`}` +
  `<script>${script}</script></body></html>`;

const HOST_STYLE =
  'body{font-family:system-ui,sans-serif;margin:16px;background:#eef0f4;color:#222}' +
  'h1{font-size:15px;font-weight:600;margin:0 0 12px}#stage{width:380px}' +
  'iframe{display:block;width:100%;height:360px;border:0;border-radius:12px;background:#fff}' +
  'iframe.bordered{border:1px solid #c4c8d0;box-shadow:0 1px 3px rgba(0,0,0,.08)}';
const SANDBOX_STYLE = 'html,body{margin:0;height:100%;overflow:hidden}';

/** One run of the host in `era`, in a fresh browser context. */
async function runEra(browser, endpoint, era, hostScript, sandboxScript) {
  const run = { era, failures: [] };
  const fail = (name, ok, detail) => {
    if (!ok) run.failures.push(detail === undefined ? name : `${name}: ${JSON.stringify(detail)}`);
    return ok;
  };
  const mcp = new URL(endpoint);
  const hostUrl = new URL('/__apps/host.html', mcp.origin);
  // Another origin than the host's (localhost, not 127.0.0.1), as the extension requires.
  const sandboxUrl = new URL(`http://localhost:${mcp.port}/__apps/sandbox.html`);
  hostUrl.search = new URLSearchParams({ mcp: endpoint, sandbox: sandboxUrl.href, era, date: '2024-04-15' });

  const context = await browser.newContext({ viewport: { width: 420, height: 480 }, deviceScaleFactor: 2 });
  const tab = await context.newPage();
  const requests = [];
  const errors = [];
  tab.on('request', (r) => requests.push(`${r.method()} ${r.url().split('?')[0]}`));
  tab.on('pageerror', (e) => errors.push(e.message));
  tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await tab.route(`${hostUrl.origin}/__apps/host.html*`, (route) =>
    route.fulfill({ contentType: 'text/html', body: page('moon — an MCP Apps host on ext-apps AppBridge', HOST_STYLE, hostScript) }),
  );
  let policy = null;
  await tab.route(`${sandboxUrl.origin}/__apps/sandbox.html*`, (route) => {
    const csp = JSON.parse(new URL(route.request().url()).searchParams.get('csp') ?? '{}');
    policy = cspHeader(csp);
    return route.fulfill({
      contentType: 'text/html',
      headers: { 'Content-Security-Policy': policy },
      body: page('sandbox', SANDBOX_STYLE, sandboxScript),
    });
  });

  await tab.goto(hostUrl.href);
  await tab.waitForFunction(() => window.host?.done === true, null, { timeout: 30_000 });
  const host = await tab.evaluate(() => window.host);
  run.protocolVersion = host.protocolVersion;
  run.steps = host.steps.map((s) => (typeof s === 'string' ? s : s.name));
  if (!fail('host', host.error === null, host.error)) return finish_(run, context);

  // What the server told this host.
  run.serverExtensions = host.serverExtensions;
  fail('the server declares MCP Apps', host.serverExtensions?.['io.modelcontextprotocol/ui'] !== undefined, host.serverExtensions);
  run.listed = host.listed.map((t) => t.name);
  const refresh = host.listed.find((t) => t.name === 'moon_refresh');
  fail('moon_refresh is listed to a host with the extension', refresh !== undefined, run.listed);
  fail('with its visibility', JSON.stringify(refresh?.ui?.visibility) === '["app"]', refresh);
  run.forModel = host.forModel;
  fail('the host keeps it from the model', !host.forModel.includes('moon_refresh') && host.forModel.includes('show_moon'), host.forModel);
  run.viewMeta = host.viewMeta;
  for (const [where, ui] of Object.entries(host.viewMeta)) {
    fail(`the view's _meta.ui (${where})`, ui?.prefersBorder === true && JSON.stringify(ui?.csp) === '{"connectDomains":[],"resourceDomains":[]}', ui);
  }
  run.csp = policy;
  run.app = host.app;
  fail('the view introduces itself as the App `moon`', host.app?.name === 'moon', host.app);

  // What the view drew.
  const view = tab.frameLocator('#view').frameLocator('iframe');
  await view.locator('body[data-phase]').waitFor({ timeout: 10_000 });
  const drawn = async () => ({
    connected: await view.locator('body').getAttribute('data-connected'),
    phase: (await view.locator('#phase').textContent()).trim(),
    date: (await view.locator('#date').textContent()).trim(),
    illumination: (await view.locator('#illumination').textContent()).trim(),
    age: (await view.locator('#age').textContent()).trim(),
    litPath: await view.locator('#lit').getAttribute('d'),
    label: await view.locator('#disc').getAttribute('aria-label'),
  });
  run.drawn = await drawn();
  const result = host.toolResult;
  fail('the view is connected to the host', run.drawn.connected === 'true', run.drawn);
  fail('show_moon answered', result?.date === '2024-04-15' && result?.phase === 'First Quarter', result);
  fail('the view draws the phase', run.drawn.phase.endsWith('First Quarter') && run.drawn.date === '2024-04-15', run.drawn);
  fail('and its numbers', run.drawn.illumination === `${result.illumination.toFixed(1)} %` && run.drawn.age === `${result.ageDays.toFixed(1)} days`, run.drawn);
  fail('and the lit part of the disc', /^M 60 4 A 56 56 0 0 1 60 116 A [\d.]+ 56 0 0 [01] 60 4 Z$/.test(run.drawn.litPath ?? ''), run.drawn.litPath);

  // A click in the view: `moon_refresh` through the host, its answer drawn.
  await view.locator('#next').click();
  await view.locator('#date', { hasText: '2024-04-16' }).waitFor({ timeout: 10_000 });
  await tab.waitForFunction(() => window.host.appCalls.at(-1)?.structuredContent != null);
  const calls = await tab.evaluate(() => window.host.appCalls);
  run.appCalls = calls.map((c) => `${c.name} ${JSON.stringify(c.arguments)}`);
  fail('the view called moon_refresh through the host', calls.length === 1 && calls[0].name === 'moon_refresh' && calls[0].arguments?.date === '2024-04-16', calls);
  run.afterClick = await drawn();
  const answer = calls[0]?.structuredContent;
  fail('the view draws its answer', run.afterClick.phase.endsWith(answer?.phase) && run.afterClick.illumination === `${answer?.illumination?.toFixed(1)} %`, { answer, drawn: run.afterClick });

  // The CSP holds: the view reaches nothing (its `connectDomains` is empty). The browser
  // reports the blocked fetch on the console; only those two reports may follow.
  const before = errors.length;
  const frame = tab.frames().find((f) => f.parentFrame()?.url().startsWith(sandboxUrl.origin));
  run.blockedFetch = await frame.evaluate(async (target) => {
    const violation = new Promise((res) => document.addEventListener('securitypolicyviolation', (e) => res(e.effectiveDirective), { once: true }));
    try {
      await fetch(target, { method: 'POST', body: '{}' });
      return 'fetched';
    } catch {
      return await Promise.race([violation, new Promise((res) => setTimeout(() => res('no violation'), 2000))]);
    }
  }, endpoint);
  fail('the CSP blocks a fetch from the view', run.blockedFetch === 'connect-src', run.blockedFetch);

  const allowed = [`${hostUrl.origin}/__apps/host.html`, `${sandboxUrl.origin}/__apps/sandbox.html`, endpoint];
  run.requests = [...new Set(requests)];
  fail('no request but to the host, the sandbox and the endpoint', requests.every((r) => allowed.includes(r.split(' ')[1])), run.requests);
  const blockedReports = errors.splice(before);
  fail(
    'the blocked fetch is reported as a CSP violation, and only it',
    blockedReports.length > 0 && blockedReports.every((e) => e.includes(endpoint) && /Content Security Policy/.test(e)),
    blockedReports,
  );
  fail('nothing threw', errors.length === 0, errors);

  const shot = join(out, `moon-${era}.png`);
  await tab.screenshot({ path: shot });
  run.screenshot = shot;
  run.screenshotBytes = statSync(shot).size;
  fail('a screenshot', run.screenshotBytes > 10_000, run.screenshotBytes);
  return finish_(run, context);
}

async function finish_(run, context) {
  await context.close();
  summary.runs.push(run);
  for (const f of run.failures) summary.failures.push(`${run.era}: ${f}`);
  return run;
}

try {
  const stale = [];
  for (const name of viewNames()) {
    const committed = readFileSync(join(here, '../examples/ui', `${name}.html`), 'utf8');
    if (committed !== (await buildView(name))) stale.push(name);
  }
  summary.viewsUpToDate = stale.length === 0;
  check('the committed views are what their sources build to (node apps/build-views.mjs)', stale.length === 0, stale);

  const endpoint = option('--mcp') ?? (await startServer(option('--server')));
  const [hostScript, sandboxScript] = await Promise.all([bundle('host.js'), bundle('sandbox.js')]);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    // Chromium's own process sandbox cannot run as root; the iframe sandboxes are unaffected.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  summary.chromium = browser.version();
  try {
    for (const era of ['2025-11-25', '2026-07-28']) {
      await runEra(browser, endpoint, era, hostScript, sandboxScript);
    }
  } finally {
    await browser.close();
  }
  finish(0);
} catch (e) {
  summary.failures.push(`crashed: ${e instanceof Error ? e.stack : e}`);
  finish(2);
}
