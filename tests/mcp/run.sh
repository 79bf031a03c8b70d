#!/usr/bin/env bash
# The mcp suite: msp-mcp driven by the official MCP TypeScript SDK under node --test.
#
#   MSP_MCP=build/mcp-adapter/msp-mcp MSP=build/runtime/msp tests/mcp/run.sh [FILE.test.mjs...]
#
# meson runs it (tests/meson.build, suite 'mcp', TAP). It installs the pinned SDK with
# `npm ci` when node_modules is missing or older than package-lock.json, then runs every
# *.test.mjs (or the given files) one file at a time with the TAP reporter. Without node or
# npm, or when `npm ci` fails, it prints a TAP plan that skips with the reason.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)

skip() {
        echo "1..0 # SKIP $*"
        exit 0
}

command -v node >/dev/null 2>&1 || skip "node not found (contrib/install-deps.sh mcp installs it)"
command -v npm >/dev/null 2>&1 || skip "npm not found (contrib/install-deps.sh mcp installs it)"
[ -n "${MSP_MCP:-}" ] && [ -x "$MSP_MCP" ] || skip "MSP_MCP is not set to the built msp-mcp"

# npm writes node_modules/.package-lock.json on every install: older than the lockfile
# (or absent) means stale. A symlinked node_modules (a worktree sharing another checkout's
# SDK) is used as it is when it has the SDK: `npm ci` would empty the directory it points to,
# under the checkout that owns it, and a fresh checkout's lockfile is always newer.
stamp=$here/node_modules/.package-lock.json
sdk=$here/node_modules/@modelcontextprotocol/sdk
if [ -L "$here/node_modules" ] && [ -d "$sdk" ]; then
        :
elif [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ] || [ ! -d "$sdk" ]; then
        # npm's output goes to stderr: stdout is the TAP stream.
        npm ci --prefix "$here" --no-audit --no-fund >&2 ||
                skip "npm ci in tests/mcp failed (no access to the npm registry?)"
fi

if [ $# -gt 0 ]; then
        files=("$@")
else
        shopt -s nullglob
        files=("$here"/*.test.mjs)
        [ ${#files[@]} -gt 0 ] || skip "no *.test.mjs in tests/mcp"
fi
# One file at a time: every file starts its own servers, and the machine has few cores.
exec node --test --test-reporter=tap --test-concurrency=1 "${files[@]}"
