#!/usr/bin/env bats
# contrib/kubernetes: every manifest parsed (python3-yaml) and checked against what
# docs/MCP.md "Deployment on Kubernetes" promises and against a live msp-mcp (the probe
# paths answer, the HPA's metrics are gauges of its /metrics, the header the ingress sticks
# on is the one it sends); then, with podman, the image built by build-image.sh from
# `meson install` of this build, run with exactly what the Deployment grants (its
# securityContext, volumes and args), /healthz and a real run_code over HTTP, SIGTERM,
# and everything removed. podman's state is private (/tmp/msp-k8s.*, vfs storage).

load ../lib/bats-helpers
K8S=$REPO/contrib/kubernetes
: "${MSP_MCP:=$REPO/build/mcp-adapter/msp-mcp}"
: "${MSP_BUILD_ROOT:=$REPO/build}"
TOKEN=k8s-test-0123456789abcdef0123456789

get() {         # get EXPR: a value from the manifests (tests/kubernetes/manifests.py)
        python3 "$BATS_TEST_DIRNAME/manifests.py" "$K8S" get "$1"
}

# http PORT PATH [CURL ARGS...]: status line and body of a request to 127.0.0.1:PORT.
http() {
        local port=$1 path=$2
        shift 2
        curl -sS --max-time 60 -o "$K_DIR/body" -w '%{http_code}' "$@" "http://127.0.0.1:$port$path"
}

# wait_listening LOGFILE: the port msp-mcp logged ("listening on http://H:P/mcp"), within 30 s.
wait_listening() {
        local i p
        for i in $(seq 300); do
                p=$(sed -n 's|.*listening on http://[^ ]*:\([0-9]*\)/mcp.*|\1|p' "$1" | head -1)
                [ -n "$p" ] && { echo "$p"; return 0; }
                sleep 0.1
        done
        echo "msp-mcp did not start: $(cat "$1")" >&2
        return 1
}

# mcp_call PORT SESSION BODY: POST /mcp with the token (and the session when not empty).
mcp_call() {
        local port=$1 sid=$2 body=$3 h=()
        [ -n "$sid" ] && h=(-H "Mcp-Session-Id: $sid")
        http "$port" /mcp -D "$K_DIR/headers" -H "Authorization: Bearer $TOKEN" \
                -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
                "${h[@]}" -d "$body"
}

# The session id of the last response (header names are case-insensitive; HAProxy sends
# them in lower case).
session_id() {
        awk -F': *' 'tolower($1) == "mcp-session-id" { sub(/\r$/, "", $2); print $2 }' "$K_DIR/headers"
}

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"k8s-test","version":"0"}}}'
RUN='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"print(6*7)"}}}'

setup_file() {
        command -v python3 >/dev/null && python3 -c 'import yaml' ||
                { echo "python3-yaml is missing (contrib/install-deps.sh test)" >&2; return 1; }
        K_DIR=$(mktemp -d /tmp/msp-k8s.XXXXXX)
        export K_DIR
        # The sandboxes' uid must reach the state dirs' rootfs below it (mktemp makes 0700).
        chmod 0755 "$K_DIR"
        mkdir -p "$K_DIR/tokens" "$K_DIR/state"
        echo "$TOKEN k8s" >"$K_DIR/tokens/tokens"
        chmod 0600 "$K_DIR/tokens/tokens"
        # A live msp-mcp on loopback, as the Deployment configures it but for the address.
        "$MSP_MCP" --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --auth-tokens "$K_DIR/tokens/tokens" \
                --state-dir "$K_DIR/state" 2>"$K_DIR/server.log" 3>&- &
        echo $! >"$K_DIR/server.pid"
        wait_listening "$K_DIR/server.log" >"$K_DIR/port"
        # Logged before "listening on".
        sed -n 's|.*probes on http://[^ ]*:\([0-9]*\) .*|\1|p' "$K_DIR/server.log" >"$K_DIR/probe-port"
}

teardown_file() {
        [ -n "${K_DIR:-}" ] && [ -d "$K_DIR" ] || return 0
        local f
        for f in "$K_DIR"/*.pid; do
                [ -f "$f" ] || continue
                kill -TERM "$(cat "$f")" 2>/dev/null || true
                wait "$(cat "$f")" 2>/dev/null || true
        done
        if [ -d "$K_DIR/pm" ]; then
                pm rm -af -t 0 >/dev/null 2>&1 || true
                pm rmi -af >/dev/null 2>&1 || true
                grep -F " $K_DIR/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
                        while read -r m; do umount -l "$m" || true; done
        fi
        rm -rf "$K_DIR"
}

pm() {
        podman --root "$K_DIR/pm/root" --runroot "$K_DIR/pm/runroot" --storage-driver vfs \
                --tmpdir "$K_DIR/pm/tmp" "$@" 3>&-
}

@test "every manifest parses and names apiVersion, kind and metadata.name" {
        run python3 "$BATS_TEST_DIRNAME/manifests.py" "$K8S" check
        echo "$output"
        [ "$status" = 0 ]
        for k in "Deployment msp-mcp" "Service msp-mcp" "HorizontalPodAutoscaler msp-mcp" \
                 "Ingress msp-mcp" "ServiceMonitor msp-mcp" "RuntimeClass msp"; do
                [[ "$output" == *": $k"* ]] || { echo "missing: $k"; return 1; }
        done
}

@test "probes: /healthz and /readyz on the port of --probe-listen, answered bare by msp-mcp" {
        [ "$(get 'c["livenessProbe"]["httpGet"]["path"]')" = /healthz ]
        [ "$(get 'c["readinessProbe"]["httpGet"]["path"]')" = /readyz ]
        [ "$(get 'c["livenessProbe"]["httpGet"]["port"]')" = probe ]
        [ "$(get 'c["readinessProbe"]["httpGet"]["port"]')" = probe ]
        # The named ports are the ones --listen and --probe-listen bind.
        [ "$(get '[p["containerPort"] for p in c["ports"] if p["name"] == "http"][0]')" = \
          "$(get 'c["args"][c["args"].index("--listen") + 1].rsplit(":", 1)[1]')" ]
        [ "$(get 'c["args"][c["args"].index("--listen") + 1].rsplit(":", 1)[0]')" = 0.0.0.0 ]
        [ "$(get '[p["containerPort"] for p in c["ports"] if p["name"] == "probe"][0]')" = \
          "$(get 'c["args"][c["args"].index("--probe-listen") + 1].rsplit(":", 1)[1]')" ]
        # The Service does not expose the probe port.
        [ "$(get '[p["targetPort"] for p in m["Service"]["spec"]["ports"]]')" = '["http"]' ]
        # Without a token, as the kubelet asks; the probe port serves nothing else.
        port=$(cat "$K_DIR/port") probe=$(cat "$K_DIR/probe-port")
        [ -n "$probe" ]
        [ "$(http "$probe" /healthz)" = 200 ]
        [ "$(http "$probe" /readyz)" = 200 ]
        [ "$(http "$probe" /mcp -X POST -d '{}')" = 404 ]
        [ "$(http "$port" /healthz)" = 200 ]
        [ "$(http "$port" /mcp -X POST -d '{}')" = 401 ]
}

@test "Service, HPA and Ingress name the Deployment, its pods and its port" {
        [ "$(get 'm["Service"]["spec"]["selector"] == m["Deployment"]["spec"]["template"]["metadata"]["labels"]')" = true ]
        [ "$(get 'm["Deployment"]["spec"]["selector"]["matchLabels"] == m["Deployment"]["spec"]["template"]["metadata"]["labels"]')" = true ]
        [ "$(get 'm["Service"]["spec"]["ports"][0]["targetPort"]')" = http ]
        [ "$(get 'm["Service"]["spec"].get("sessionAffinity", "None")')" = None ]
        [ "$(get 'm["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["kind"]')" = Deployment ]
        [ "$(get 'm["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["name"]')" = "$(get 'm["Deployment"]["metadata"]["name"]')" ]
        [ "$(get 'm["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["path"]')" = /mcp ]
        [ "$(get 'm["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]')" = \
          "$(get '{"name": m["Service"]["metadata"]["name"], "port": {"name": m["Service"]["spec"]["ports"][0]["name"]}}')" ]
        [ "$(get 'm["ServiceMonitor"]["spec"]["endpoints"][0]["path"]')" = /metrics ]
}

@test "the HPA's metrics are gauges msp-mcp's /metrics serves" {
        port=$(cat "$K_DIR/port")
        [ "$(http "$port" /metrics -H "Authorization: Bearer $TOKEN")" = 200 ]
        names=$(get '[x["pods"]["metric"]["name"] for x in m["HorizontalPodAutoscaler"]["spec"]["metrics"]]')
        echo "$names"
        [ "$(get 'all(x["type"] == "Pods" for x in m["HorizontalPodAutoscaler"]["spec"]["metrics"])')" = true ]
        for n in $(echo "$names" | tr -d '[]",'); do
                grep -qx "# TYPE $n gauge" "$K_DIR/body" || { echo "$n is not a gauge of /metrics"; cat "$K_DIR/body"; return 1; }
                grep -Eq "^$n [0-9]+$" "$K_DIR/body"
        done
}

@test "the ingress sticks on the session header msp-mcp sends, learnt from the response" {
        snippet=$(get 'm["Ingress"]["metadata"]["annotations"]["haproxy.org/backend-config-snippet"]')
        echo "$snippet"
        grep -qx 'stick on req.hdr(Mcp-Session-Id)' <<<"$snippet"
        grep -qx 'stick store-response res.hdr(Mcp-Session-Id)' <<<"$snippet"
        [ "$(get 'm["Ingress"]["spec"]["ingressClassName"]')" = haproxy ]
        port=$(cat "$K_DIR/port")
        [ "$(mcp_call "$port" "" "$INIT")" = 200 ]
        grep -q '^Mcp-Session-Id: [0-9a-f]\{32\}' "$K_DIR/headers"
}

# haproxy_start NAME WITH_SNIPPET: HAProxy on a free loopback port ($port) balancing round
# robin over the two servers, with the Ingress's backend snippet or without it. Not in a
# command substitution: the test's own child, stopped and reaped with haproxy_stop.
haproxy_start() {
        local name=$1 with=$2 snippet=
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        [ "$with" = 1 ] && snippet=$(get 'm["Ingress"]["metadata"]["annotations"]["haproxy.org/backend-config-snippet"]')
        cat >"$K_DIR/$name.cfg" <<CFG
global
  maxconn 256
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
frontend f
  bind 127.0.0.1:$port
  default_backend pods
backend pods
  balance $(get 'm["Ingress"]["metadata"]["annotations"]["haproxy.org/load-balance"]')
$(sed 's/^/  /' <<<"$snippet")
  server a 127.0.0.1:$(cat "$K_DIR/port")
  server b 127.0.0.1:$(cat "$K_DIR/port2")
CFG
        haproxy -c -q -f "$K_DIR/$name.cfg" >&2 || return 1
        haproxy -db -f "$K_DIR/$name.cfg" >"$K_DIR/$name.log" 2>&1 3>&- &
        echo $! >"$K_DIR/$name.pid"
        for _ in $(seq 100); do
                (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
                sleep 0.1
        done
        cat "$K_DIR/$name.log" >&2
        return 1
}

haproxy_stop() {
        kill "$(cat "$K_DIR/$1.pid")" && wait "$(cat "$K_DIR/$1.pid")" || true
        rm -f "$K_DIR/$1.pid"
}

LIST='{"jsonrpc":"2.0","id":3,"method":"tools/list"}'

@test "HAProxy with the Ingress's snippet keeps each session on the server that issued it" {
        command -v haproxy >/dev/null || skip "haproxy is not installed (contrib/install-deps.sh test)"
        "$MSP_MCP" --listen 127.0.0.1:0 --auth-tokens "$K_DIR/tokens/tokens" \
                --state-dir "$K_DIR/state2" 2>"$K_DIR/server2.log" 3>&- &
        echo $! >"$K_DIR/server2.pid"
        wait_listening "$K_DIR/server2.log" >"$K_DIR/port2"
        # The control: round robin alone sends a session's next request to the other
        # server, which does not know it (404). Each curl is a new connection.
        haproxy_start plain 0
        [ "$(mcp_call "$port" "" "$INIT")" = 200 ]
        sid=$(session_id)
        [ -n "$sid" ]
        [ "$(mcp_call "$port" "$sid" "$LIST")" = 404 ]
        haproxy_stop plain
        # With the snippet: six sessions, started round robin on both servers, each
        # answered three times and a run of sh by the server holding it.
        haproxy_start sticky 1
        for i in 1 2 3 4 5 6; do
                [ "$(mcp_call "$port" "" "$INIT")" = 200 ]
                sid=$(session_id)
                for j in 1 2 3; do
                        code=$(mcp_call "$port" "$sid" "$LIST")
                        [ "$code" = 200 ] || { echo "session $i request $j: $code"; return 1; }
                done
                [ "$(mcp_call "$port" "$sid" "$RUN")" = 200 ]
                grep -q '"stdout":"42\\n"' "$K_DIR/body" || { cat "$K_DIR/body"; return 1; }
        done
        # Both servers hold sessions: the stickiness did not just send everything to one.
        for p in "$(cat "$K_DIR/port")" "$(cat "$K_DIR/port2")"; do
                [ "$(http "$p" /metrics -H "Authorization: Bearer $TOKEN")" = 200 ]
                n=$(sed -n 's/^msp_mcp_http_sessions \([0-9]*\)$/\1/p' "$K_DIR/body")
                echo "server on $p: $n sessions"
                [ "$n" -ge 3 ]
        done
        haproxy_stop sticky
}

@test "securityContext: the fields docs/MCP.md lists, tokens from the Secret, state on emptyDir" {
        [ "$(get 'c["securityContext"]["privileged"]')" = true ]
        [ "$(get 'c["securityContext"]["runAsUser"]')" = 0 ]
        [ "$(get 'c["securityContext"]["seccompProfile"]["type"]')" = Unconfined ]
        [ "$(get 'c["securityContext"]["appArmorProfile"]["type"]')" = Unconfined ]
        [ "$(get 'c["securityContext"]["readOnlyRootFilesystem"]')" = true ]
        [ "$(get 'sorted(c["securityContext"]["capabilities"]["add"])')" = \
          '["CHOWN", "KILL", "SETGID", "SETUID", "SYS_ADMIN", "SYS_CHROOT", "SYS_PTRACE"]' ]
        # Every capability and setting the Deployment names is explained in docs/MCP.md.
        for w in SYS_ADMIN SYS_CHROOT SYS_PTRACE CHOWN SETUID SETGID KILL privileged \
                 seccompProfile appArmorProfile readOnlyRootFilesystem; do
                grep -q "$w" "$REPO/docs/MCP.md" || { echo "docs/MCP.md does not mention $w"; return 1; }
        done
        # --auth-tokens is the Secret's item where the Secret is mounted.
        [ "$(get 'c["args"][c["args"].index("--auth-tokens") + 1]')" = \
          "$(get '[vm["mountPath"] for vm in c["volumeMounts"] if vm["name"] == "tokens"][0] + "/" + [v for v in m["Deployment"]["spec"]["template"]["spec"]["volumes"] if v["name"] == "tokens"][0]["secret"]["items"][0]["path"]')" ]
        [ "$(get '[v for v in m["Deployment"]["spec"]["template"]["spec"]["volumes"] if v["name"] == "tokens"][0]["secret"]["secretName"]')" = msp-mcp-tokens ]
        [ "$(get '[v for v in m["Deployment"]["spec"]["template"]["spec"]["volumes"] if v["name"] == "state"][0]["emptyDir"]["medium"]')" = Memory ]
        [ "$(get '[vm["mountPath"] for vm in c["volumeMounts"] if vm["name"] == "state"][0]')" = /run/msp-mcp ]
        # The kubelet waits longer than the drain.
        [ "$(get 'm["Deployment"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > int(c["args"][c["args"].index("--drain-timeout") + 1].rstrip("s"))')" = true ]
}

@test "podman: the image builds offline and runs run_code over HTTP with the Deployment's grants" {
        command -v podman >/dev/null || skip "podman is not installed (contrib/install-deps.sh podman)"
        mkdir -p "$K_DIR/pm/tmp"
        meson install -C "$MSP_BUILD_ROOT" --no-rebuild --quiet --destdir "$K_DIR/dest" >/dev/null
        image=$(get 'c["image"]')
        run "$K8S/build-image.sh" --destdir "$K_DIR/dest" --tag "$image" -- \
                --root "$K_DIR/pm/root" --runroot "$K_DIR/pm/runroot" --storage-driver vfs
        echo "$output" | tail -5
        [ "$status" = 0 ]
        # A free port on loopback: the test shares the host's network (no CNI needed).
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        probe=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        mapfile -t args < <(TOKENS_DIR="$K_DIR/tokens" python3 "$BATS_TEST_DIRNAME/manifests.py" "$K8S" podman-args "$port" "$probe")
        # Below this host's hard limits (podman's defaults exceed them), as tests/podman.
        pm run -d --name msp-mcp-k8s --network host --runtime "$(command -v runc || echo crun)" \
                --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "${args[@]}" >/dev/null
        for _ in $(seq 300); do
                [ "$(http "$probe" /healthz 2>/dev/null)" = 200 ] && break
                sleep 0.1
        done
        pm logs msp-mcp-k8s
        [ "$(http "$probe" /healthz)" = 200 ]
        [ "$(http "$probe" /readyz)" = 200 ]
        [ "$(mcp_call "$port" "" "$INIT")" = 200 ]
        sid=$(session_id)
        [ "$(mcp_call "$port" "$sid" "$RUN")" = 200 ]
        cat "$K_DIR/body"
        python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert not r.get("isError") and r["structuredContent"]["stdout"] == "42\n", r' "$K_DIR/body"
        # SIGTERM drains and exits 0, as the kubelet stops a pod.
        pm stop -t 40 msp-mcp-k8s >/dev/null
        [ "$(pm inspect -f '{{.State.ExitCode}}' msp-mcp-k8s)" = 0 ]
        pm rm msp-mcp-k8s >/dev/null
        pm rmi -a -f >/dev/null
        [ -z "$(pm ps -aq)" ]
        [ -z "$(pm images -q)" ]
}
