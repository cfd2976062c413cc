// The sandbox proxy of the browser test's host, as the MCP Apps extension has web hosts use
// one: a page on another origin than the host that loads the view's HTML into an inner iframe
// (under the CSP the host serves this page with, built from the view's `_meta.ui.csp`) and
// relays JSON-RPC between host and view, keeping the `ui/notifications/sandbox-*` messages.

const hostOrigin = new URL(document.referrer).origin;
const inner = document.createElement('iframe');
inner.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
inner.style.cssText = 'width:100%;height:100%;border:none;display:block';
document.body.append(inner);

window.addEventListener('message', (event) => {
  if (event.source === window.parent) {
    if (event.origin !== hostOrigin) return;
    const message = event.data;
    if (message?.method === 'ui/notifications/sandbox-resource-ready') {
      const { html, sandbox } = message.params ?? {};
      if (typeof sandbox === 'string') inner.setAttribute('sandbox', sandbox);
      const doc = inner.contentDocument;
      doc.open();
      doc.write(html);
      doc.close();
    } else if (!String(message?.method ?? '').startsWith('ui/notifications/sandbox-')) {
      inner.contentWindow?.postMessage(message, '*');
    }
  } else if (event.source === inner.contentWindow) {
    if (event.origin !== location.origin) return;
    window.parent.postMessage(event.data, hostOrigin);
  }
});

window.parent.postMessage(
  { jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} },
  hostOrigin,
);
