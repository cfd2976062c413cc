// The host page of the browser test: a minimal MCP Apps host built on the official SDKs, as a
// chat client would be — the TypeScript SDK client talks to the real `moon` server over
// Streamable HTTP, and ext-apps' AppBridge talks to the view, which runs in the sandbox proxy
// (sandbox.js, another origin) as the extension requires of web hosts. moon-browser.mjs
// bundles this file with esbuild and reads `window.host` to check each step.

import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const UI_EXTENSION = 'io.modelcontextprotocol/ui';
const params = new URLSearchParams(location.search);
const endpoint = new URL(params.get('mcp'));
const sandboxUrl = new URL(params.get('sandbox'));
const era = params.get('era');
const date = params.get('date');

/** What the driver reads: every step's outcome, and what the host saw. */
const host = (window.host = { steps: [], appCalls: [], refusedAppCalls: [], done: false, error: null });
const step = (name, detail) => host.steps.push(detail === undefined ? name : { name, detail });

async function run() {
  const client = new Client(
    { name: 'mcp-tool-apps-host', version: '0.0.0' },
    {
      // The host renders views: it says so as the extension has clients say it.
      capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
      versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(endpoint));
  host.protocolVersion = client.protocolVersion ?? era;
  const capabilities = client.getServerCapabilities();
  host.serverExtensions = capabilities?.extensions ?? null;
  step('connected');

  // The server lists the app-only tool to this host, which keeps it from the model.
  const { tools } = await client.listTools();
  host.listed = tools.map((t) => ({ name: t.name, ui: t._meta?.ui ?? null }));
  host.forModel = tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const show = byName.get('show_moon');
  const uri = getToolUiResourceUri(show);
  host.viewUri = uri;

  // The model calls `show_moon`; the host reads the view it links to meanwhile.
  const input = { date };
  const result = client.callTool({ name: 'show_moon', arguments: input });
  const listedView = (await client.listResources()).resources.find((r) => r.uri === uri);
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`the view is ${content.mimeType}`);
  const ui = content._meta?.ui ?? listedView?._meta?.ui ?? {};
  host.viewMeta = { listing: listedView?._meta?.ui ?? null, contents: content._meta?.ui ?? null };
  host.viewBytes = content.text.length;
  step('view read');

  // The sandbox proxy: another origin, CSP from the view's `_meta.ui.csp` (sent as a header).
  const frame = document.createElement('iframe');
  frame.id = 'view';
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  frame.title = 'moon view';
  if (ui.prefersBorder) frame.classList.add('bordered');
  sandboxUrl.searchParams.set('csp', JSON.stringify(ui.csp ?? {}));
  const proxyReady = new Promise((resolve) => {
    const listener = ({ source, data }) => {
      if (source === frame.contentWindow && data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', listener);
        resolve();
      }
    };
    window.addEventListener('message', listener);
  });
  frame.src = sandboxUrl.href;
  document.getElementById('stage').append(frame);
  await proxyReady;
  step('sandbox ready');

  const bridge = new AppBridge(
    client,
    { name: 'mcp-tool-apps-host', version: '0.0.0' },
    { openLinks: {}, serverTools: capabilities.tools, serverResources: capabilities.resources, logging: {} },
    { hostContext: { theme: 'light', displayMode: 'inline', platform: 'web', locale: 'en-US' } },
  );
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${height}px`;
  };
  bridge.onloggingmessage = (p) => step('view log', p);
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  // The host's side of visibility: a view may call only tools whose visibility has `app`
  // (AppBridge forwards every call to the server as it is).
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (call, extra) => {
    const tool = byName.get(call.name);
    const visibility = tool?._meta?.ui?.visibility ?? ['model', 'app'];
    if (!tool || !visibility.includes('app')) {
      host.refusedAppCalls.push(call.name);
      throw new Error(`the view may not call \`${call.name}\``);
    }
    host.appCalls.push({ name: call.name, arguments: call.arguments });
    const answer = await forward(call, extra);
    host.appCalls.at(-1).structuredContent = answer.structuredContent ?? null;
    return answer;
  };

  await bridge.sendSandboxResourceReady({ html: content.text, csp: ui.csp, permissions: ui.permissions });
  await initialized;
  host.app = bridge.getAppVersion() ?? null;
  host.appCapabilities = bridge.getAppCapabilities() ?? null;
  step('view initialized');
  await bridge.sendToolInput({ arguments: input });
  const outcome = await result;
  host.toolResult = outcome.structuredContent ?? null;
  await bridge.sendToolResult(outcome);
  step('tool result sent');
  host.done = true;
}

run().catch((e) => {
  host.error = e instanceof Error ? `${e.message}\n${e.stack}` : String(e);
  host.done = true;
});
