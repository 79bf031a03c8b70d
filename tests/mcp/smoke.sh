#!/usr/bin/env bash
# A no-install smoke test of msp-mcp: raw JSON lines in, every output line must be one
# JSON object (jq -e). TAP output.
#
#   MSP_MCP=build/mcp-adapter/msp-mcp tests/mcp/smoke.sh
#
# Covers: initialize, tools/list, run_code (bash echo hi), a parse error, a batch, ping,
# the version fallback (2099-01-01 -> 2025-11-25) and exit status 0 on EOF. The server
# runs with a private --state-dir that is removed at the end.
set -uo pipefail

mcp=${MSP_MCP:-$(dirname "$0")/../../build/mcp-adapter/msp-mcp}
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && echo "# $2"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }

if ! command -v jq >/dev/null 2>&1; then
        echo "1..0 # SKIP jq is not installed"
        exit 0
fi
if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP msp-mcp runs sandboxes as root (cgroups, mounts)"
        exit 0
fi
if [ ! -x "$mcp" ]; then
        echo "1..0 # SKIP $mcp is not built"
        exit 0
fi

state=$(mktemp -d "${TMPDIR:-/tmp}/msp-mcp-smoke.XXXXXX")
out=$state/out
# The sandbox user (an unprivileged id) must traverse the state dir to its rootfs view.
chmod 0755 "$state"
trap 'rm -rf "$state"' EXIT

# One server, driven through a coprocess so that stdin stays open until the answers are in
# (EOF makes msp-mcp stop every run).
coproc MCP { exec "$mcp" --state-dir "$state/state" 2>"$state/stderr"; }
send() { printf '%s\n' "$1" >&"${MCP[1]}"; }
# Reads lines into $out until one has the given id (jq expression), 60 s at most.
await() {
        local want=$1 line deadline=$((SECONDS + 60))
        while [ $SECONDS -lt $deadline ]; do
                IFS= read -r -t 60 line <&"${MCP[0]}" || return 1
                printf '%s\n' "$line" >>"$out"
                if printf '%s\n' "$line" | jq -e "$want" >/dev/null 2>&1; then
                        return 0
                fi
        done
        return 1
}

send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"0"}}}'
check "initialize answered" 'await ".id == 1"'
check "initialize: protocolVersion 2025-11-25 and serverInfo msp-mcp" \
        'tail -n1 "$out" | jq -e ".result.protocolVersion == \"2025-11-25\" and .result.serverInfo.name == \"msp-mcp\"" >/dev/null'
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
check "tools/list answered" 'await ".id == 2"'
check "tools/list: run_code with additionalProperties false and items on every array" \
        'tail -n1 "$out" | jq -e "[.result.tools[] | select(.name == \"run_code\")] | length == 1" >/dev/null &&
         tail -n1 "$out" | jq -e "all(.result.tools[]; .inputSchema.additionalProperties == false) and
                ([.. | objects | select(.type? == \"array\") | has(\"items\")] | all)" >/dev/null'
send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"bash","code":"echo hi"}}}'
check "run_code answered" 'await ".id == 3"'
check "run_code: bash echo hi prints hi, exit code 0" \
        'tail -n1 "$out" | jq -e ".result.structuredContent.stdout == \"hi\n\" and .result.structuredContent.exit_code == 0 and (.result.isError // false) == false" >/dev/null' \
        "$(tail -n1 "$out" | cut -c1-300)"
send '{"jsonrpc":"2.0","id":4,"method":"ping"'
check "a truncated line gets -32700 with id null" 'await ".error.code == -32700 and .id == null"'
send '[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]'
check "a batch gets one -32600 with id null" 'await ".error.code == -32600 and .id == null"'
send '{"jsonrpc":"2.0","id":7,"method":"ping"}'
check "ping after the errors" 'await ".id == 7 and .result == {}"'
send '{"jsonrpc":"2.0","id":8,"method":"no/such/method"}'
check "unknown method: -32601" 'await ".id == 8 and .error.code == -32601"'

exec {MCP[1]}>&-
status=0
wait "$MCP_PID" || status=$?
check "exit status 0 on EOF" '[ "$status" = 0 ]' "status $status; stderr: $(tail -n3 "$state/stderr")"
check "no answers to the batch's members" '! jq -e "select(.id == 5 or .id == 6)" "$out" >/dev/null 2>&1'
check "every output line is one JSON object" \
        'while IFS= read -r l; do printf "%s\n" "$l" | jq -e "type == \"object\"" >/dev/null || exit 1; done <"$out"'

# Version fallback: an unknown version gets the latest.
fallback=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"smoke","version":"0"}}}' |
        timeout 60 "$mcp" --state-dir "$state/state" 2>>"$state/stderr")
check "version 2099-01-01 falls back to 2025-11-25" \
        'printf "%s\n" "$fallback" | jq -e ".id == 1 and .result.protocolVersion == \"2025-11-25\"" >/dev/null' \
        "got: $fallback"
old=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"smoke","version":"0"}}}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
        timeout 60 "$mcp" --state-dir "$state/state" 2>>"$state/stderr")
check "2024-11-05 is echoed; its tools have no title, outputSchema or annotations" \
        'printf "%s\n" "$old" | jq -se ".[0].result.protocolVersion == \"2024-11-05\" and
                all(.[1].result.tools[]; has(\"title\") == false and has(\"outputSchema\") == false and has(\"annotations\") == false)" >/dev/null'

# A line over --max-message-bytes: one -32600 with the line's own id, skipped; the next
# line is answered.
long=$(head -c 10000 /dev/zero | tr '\0' 'a')
over=$(printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"$long\"}}" \
        '{"jsonrpc":"2.0","id":2,"method":"ping"}' |
        timeout 60 "$mcp" --state-dir "$state/state" --max-message-bytes 4096 2>>"$state/stderr")
check "a line over --max-message-bytes gets -32600 with its id and the next line is answered" \
        'printf "%s\n" "$over" | jq -se "length == 2 and .[0].error.code == -32600 and .[0].id == 1 and .[1].id == 2" >/dev/null' \
        "got: $(printf "%s" "$over" | cut -c1-300)"

echo "1..$n"
[ "$failed" = 0 ]
