#!/usr/bin/env bash
# Egress proxy benchmark: what an allowlist run's proxy costs against "full" network.
#
#   tests/bench/egress.sh [--gets N] [--size MIB] [--no-install]
#
# As root. Installs what is missing (contrib/install-deps.sh build test), builds a release
# msp and msp-mcp in build-bench-egress/ (BUILD_DIR overrides), makes an "internet" network
# namespace behind a veth pair with a python HTTP server holding a small file and a --size
# (128) MiB one, and starts msp-mcp with --allow-network, --network-allow for that server
# and a --resolve pin. Two run_code calls then measure inside the sandbox with curl:
#
#   full       {"network": "full"} (slirp4netns), curl straight to the address
#   allowlist  {"network": {"allow": [...]}}, curl through the egress proxy
#
# each: --gets (50) sequential GETs of the small file (median and p95 of curl's
# time_total) and one download of the large file (curl's speed_download), and the same
# from the host itself for reference. Goal (issue 17): the allowlist's median GET and its
# throughput within 10% of full's. A missed goal is reported, not failed.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench-egress}
gets=50
size=128
install=1
while [ $# -gt 0 ]; do
        case $1 in
        --gets) gets=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --no-install) install=0; shift ;;
        -h|--help) bench_usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
        esac
done
bench_need_root "network namespaces, msp-mcp as root"
[ $install = 1 ] && bench_install build test
bench_require "contrib/install-deps.sh build test" meson ninja curl python3 ip slirp4netns
bench_build "$build" mcp-adapter/msp-mcp runtime/msp mcp-adapter/msp-sandbox-init

tmp=$(mktemp -d /tmp/msp-bench-egress.XXXXXX)
chmod 0755 "$tmp"     # the state dir below must be traversable by the sandboxes
ns=msp-bench-egress-$$
veth=mspbe$(($$ % 100000))
srv=
cleanup() {
        [ -n "$srv" ] && kill "$srv" 2>/dev/null
        ip link del "$veth" 2>/dev/null || :
        ip netns del "$ns" 2>/dev/null || :
        rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip link add "$veth" type veth peer name eth0 netns "$ns"
ip addr add 198.19.77.1/30 dev "$veth"
ip link set "$veth" up
ip -n "$ns" addr add 198.19.77.2/30 dev eth0
ip -n "$ns" link set eth0 up
ip -n "$ns" link set lo up
mkdir "$tmp/www"
echo hello > "$tmp/www/small"
head -c "$((size * 1024 * 1024))" /dev/zero > "$tmp/www/large"
port=18$(($$ % 900 + 100))
ip netns exec "$ns" python3 -m http.server --bind 198.19.77.2 --directory "$tmp/www" "$port" \
        >/dev/null 2>&1 &
srv=$!
for _ in $(seq 100); do
        curl -sf --max-time 1 "http://198.19.77.2:$port/small" >/dev/null && break
        sleep 0.1       # bounded wait for the server to listen
done

# What curl measures, inside a sandbox or here: "gets" time_total values, then the speed.
measure='for i in $(seq '"$gets"'); do curl -s -o /dev/null -w "%{time_total}\n" "$1/small"; done
curl -s -o /dev/null -w "speed %{speed_download}\n" "$1/large"'
host_out=$(sh -c "$measure" sh "http://198.19.77.2:$port")

python3 - "$build/mcp-adapter/msp-mcp" "$build/runtime/msp" "$port" "$tmp" "$measure" \
        "$host_out" <<'PY'
import json, os, statistics, subprocess, sys
msp_mcp, msp, port, tmp, measure, host_out = sys.argv[1:7]
state = os.path.join(tmp, "state")
os.mkdir(state)
p = subprocess.Popen([msp_mcp, "--state-dir", state, "--runtime", msp, "--allow-network",
                      "--network-allow", f"internet.test:{port}",
                      "--resolve", "internet.test=198.19.77.2", "--max-timeout", "10m"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def rpc(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m
rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "bench", "version": "1"}})
p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
def stats(out):
    t = [float(x) * 1000 for x in out.split("\n") if x and not x.startswith("speed")]
    speed = float(out.split("speed ")[1]) / (1 << 20)
    t.sort()
    return statistics.median(t), t[int(len(t) * 0.95) - 1], speed
rows = {"host": stats(host_out)}
for i, (name, net, url) in enumerate([
        ("full", "full", f"http://198.19.77.2:{port}"),
        ("allowlist", {"allow": [f"internet.test:{port}"]}, f"http://internet.test:{port}")]):
    r = rpc(10 + i, "tools/call", {"name": "run_code", "arguments": {
        "language": "sh", "code": measure, "args": [url], "network": net,
        "timeout_ms": 600000}})
    sc = r["result"].get("structuredContent", {})
    if r["result"].get("isError") or sc.get("exit_code") != 0:
        sys.exit(f"bench: the {name} run failed: {json.dumps(r)[:2000]}")
    rows[name] = stats(sc["stdout"])
p.stdin.close()
p.wait()
print(f"{'':10} {'GET p50 ms':>11} {'GET p95 ms':>11} {'MiB/s':>9}")
for name, (p50, p95, speed) in rows.items():
    print(f"{name:10} {p50:11.2f} {p95:11.2f} {speed:9.1f}")
f, a = rows["full"], rows["allowlist"]
lat = a[0] <= f[0] * 1.10
thr = a[2] >= f[2] * 0.90
print(f"goal: allowlist GET p50 within 10% of full's: {'met' if lat else 'missed'} "
      f"({a[0]:.2f} vs {f[0]:.2f} ms)")
print(f"goal: allowlist throughput within 10% of full's: {'met' if thr else 'missed'} "
      f"({a[2]:.1f} vs {f[2]:.1f} MiB/s)")
PY
