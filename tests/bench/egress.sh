#!/usr/bin/env bash
# Egress proxy benchmark: what an allowlist run's proxy costs against "full" network.
#
#   tests/bench/egress.sh [--rounds R] [--gets N] [--size MIB] [--no-install]
#
# As root. Installs what is missing (contrib/install-deps.sh build test), builds a release
# msp and msp-mcp in build-bench-egress/ (BUILD_DIR overrides), makes an "internet" network
# namespace behind a veth pair with a python HTTP server holding a small file and a --size
# (128) MiB one, and starts msp-mcp with --allow-network, --network-allow for that server
# and a --resolve pin. run_code calls then measure inside the sandbox with curl:
#
#   full       {"network": "full"} (slirp4netns), curl straight to the address
#   allowlist  {"network": {"allow": [...]}}, curl through the egress proxy
#
# each: --gets (30) sequential GETs of the small file (curl's time_total) and one download
# of the large file (curl's speed_download). The two alternate for --rounds (5) rounds, so
# that a change in the machine's load hits both alike; the table has the median and p95 of
# all GETs and the median speed per mode, the same from the host itself for reference, and
# the load average before and after. Two more rows time what the proxy does before it
# connects: "refused" (a host off the run's list: no name resolution) and "resolved" (an
# allowed name that the system resolver maps to loopback through /etc/hosts, refused
# after resolution), GETs that end in the proxy's 403. Goal (issue 17): the allowlist's
# median GET and its throughput within 10% of full's. A missed goal is reported, not failed.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench-egress}
rounds=5
gets=30
size=128
install=1
while [ $# -gt 0 ]; do
        case $1 in
        --rounds) rounds=$2; shift 2 ;;
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

# What curl measures, inside a sandbox or here: "gets" time_total values, then the speed
# (none with a second argument: the GETs end in the proxy's refusal). --noproxy "": the
# proxy variables alone decide, also for localhost (in the sandbox's NO_PROXY).
measure='for i in $(seq '"$gets"'); do curl -s --noproxy "" -o /dev/null -w "%{time_total}\n" "$1/small"; done
[ -n "${2:-}" ] || curl -s --noproxy "" -o /dev/null -w "speed %{speed_download}\n" "$1/large"'
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
host_out=$(for _ in $(seq "$rounds"); do sh -c "$measure" sh "http://198.19.77.2:$port"; done)

python3 - "$build/mcp-adapter/msp-mcp" "$build/runtime/msp" "$port" "$tmp" "$measure" \
        "$host_out" "$rounds" <<'PY'
import json, os, statistics, subprocess, sys
msp_mcp, msp, port, tmp, measure, host_out, rounds = sys.argv[1:8]
state = os.path.join(tmp, "state")
os.mkdir(state)
p = subprocess.Popen([msp_mcp, "--state-dir", state, "--runtime", msp, "--allow-network",
                      "--network-allow", f"internet.test:{port}", "--network-allow", f"*.test:{port}",
                      "--network-allow", f"localhost:{port}",
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
def parse(out):
    t = [float(x) * 1000 for x in out.split("\n") if x and not x.startswith("speed")]
    speeds = [float(x.split()[1]) / (1 << 20) for x in out.split("\n") if x.startswith("speed")]
    return t, speeds
def stats(t, speeds):
    t = sorted(t)
    return (statistics.median(t), t[max(int(len(t) * 0.95) - 1, 0)],
            statistics.median(speeds) if speeds else None)
allow = {"allow": [f"internet.test:{port}", f"localhost:{port}"]}
modes = [("full", "full", [f"http://198.19.77.2:{port}"]),
         ("allowlist", allow, [f"http://internet.test:{port}"]),
         ("refused", allow, [f"http://other.test:{port}", "none"]),
         ("resolved", allow, [f"http://localhost:{port}", "none"])]
samples = {name: ([], []) for name, _, _ in modes}
n = 10
for r in range(int(rounds)):
    for name, net, args in modes:
        n += 1
        res = rpc(n, "tools/call", {"name": "run_code", "arguments": {
            "language": "sh", "code": measure, "args": args, "network": net,
            "timeout_ms": 600000}})
        sc = res["result"].get("structuredContent", {})
        if res["result"].get("isError") or sc.get("exit_code") != 0:
            sys.exit(f"bench: the {name} run failed: {json.dumps(res)[:2000]}")
        t, s = parse(sc["stdout"])
        samples[name][0].extend(t)
        samples[name][1].extend(s)
p.stdin.close()
p.wait()
rows = {"host": stats(*parse(host_out))}
rows.update({name: stats(*v) for name, v in samples.items()})
print(f"{'':10} {'GET p50 ms':>11} {'GET p95 ms':>11} {'MiB/s':>9}")
for name, (p50, p95, speed) in rows.items():
    sp = f"{speed:9.1f}" if speed is not None else f"{'-':>9}"
    print(f"{name:10} {p50:11.2f} {p95:11.2f} {sp}")
f, a = rows["full"], rows["allowlist"]
lat = a[0] <= f[0] * 1.10
thr = a[2] >= f[2] * 0.90
print(f"goal: allowlist GET p50 within 10% of full's: {'met' if lat else 'missed'} "
      f"({a[0]:.2f} vs {f[0]:.2f} ms, ratio {a[0] / f[0]:.2f})")
print(f"goal: allowlist throughput within 10% of full's: {'met' if thr else 'missed'} "
      f"({a[2]:.1f} vs {f[2]:.1f} MiB/s, ratio {a[2] / f[2]:.2f})")
print(f"name resolution (resolved - refused, p50): {rows['resolved'][0] - rows['refused'][0]:.2f} ms")
PY
echo "load average (1, 5, 15 min): $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
