#!/usr/bin/env bash
# Installs the real MCP clients that tests/tests/interop.rs drives against our servers:
#   - npm: the official TypeScript SDK and the Inspector CLI, from package-lock.json (npm ci),
#     into interop/node_modules; and the official `server-everything`, which
#     tests/tests/client_interop.rs drives our client against (as it does interop/py-server.py);
#     and `oidc-provider`, the authorization server of tests/tests/oauth.rs (oidc-provider.mjs);
#     and Prism (`@stoplight/prism-cli`), the mock server of tests/tests/openapi_mount.rs;
#   - PyPI: the official Python SDK (`mcp`), from requirements.txt, into the venv interop/.venv;
#     openapi-spec-validator and schemathesis, for tests/tests/rest_interop.rs;
#     and, for tests/tests/otel.rs, Rotel (`rotel`), an OpenTelemetry collector; and FastAPI
#     (`fastapi`), the real HTTP service of tests/tests/openapi_mount.rs (fastapi-app.py).
# Quiet, and quick when nothing changed: each install is skipped while the lock file it came
# from is unchanged (a stamp in the installed tree records the lock's hash).
set -euo pipefail
cd "$(dirname "$0")"

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "interop/setup.sh: \`$1\` is required (${2})" >&2
        exit 1
    }
}

hash_of() { sha256sum "$1" | cut -d' ' -f1; }

# --- npm -------------------------------------------------------------------------------------
need node "Node.js >= 20"
need npm "Node.js's package manager"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || {
    echo "interop/setup.sh: Node.js >= 20 is required, found $(node --version)" >&2
    exit 1
}
npm_stamp=node_modules/.interop-lock.sha256
if [[ "$(cat "$npm_stamp" 2>/dev/null)" != "$(hash_of package-lock.json)" ]]; then
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    hash_of package-lock.json >"$npm_stamp"
fi

# --- Python ----------------------------------------------------------------------------------
need python3 "Python >= 3.10 with the venv module"
py_stamp=.venv/.interop-requirements.sha256
if [[ ! -x .venv/bin/python || "$(cat "$py_stamp" 2>/dev/null)" != "$(hash_of requirements.txt)" ]]; then
    [[ -x .venv/bin/python ]] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
    hash_of requirements.txt >"$py_stamp"
fi
