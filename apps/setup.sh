#!/usr/bin/env bash
# Installs what the MCP Apps browser test (tests/tests/apps_browser.rs) and the view build
# (apps/build-views.mjs) need:
#   - npm: the official ext-apps SDK (App, AppBridge), the official TypeScript SDK client,
#     esbuild and playwright-core, from package-lock.json (npm ci) into apps/node_modules;
#     skipped while the lock file is unchanged (a stamp records its hash);
#   - Debian: `chromium`, the headless browser playwright-core drives, when none is installed
#     (apt-get, as root or through sudo).
set -euo pipefail
cd "$(dirname "$0")"

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "apps/setup.sh: \`$1\` is required (${2})" >&2
        exit 1
    }
}

hash_of() { sha256sum "$1" | cut -d' ' -f1; }

need node "Node.js >= 20"
need npm "Node.js's package manager"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || {
    echo "apps/setup.sh: Node.js >= 20 is required, found $(node --version)" >&2
    exit 1
}
stamp=node_modules/.apps-lock.sha256
if [[ "$(cat "$stamp" 2>/dev/null)" != "$(hash_of package-lock.json)" ]]; then
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    hash_of package-lock.json >"$stamp"
fi

if ! command -v chromium >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq chromium >/dev/null
fi
