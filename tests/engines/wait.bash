# Bounded polls shared by the podman and docker suites: both engines answer `inspect -f`
# and `logs` alike. $ENGINE_CLI names the suite's function that runs the engine (pm, dk).

# wait_status NAME STATUS [SECONDS]: poll until .State.Status is STATUS.
wait_status() {
        local name=$1 want=$2 max=${3:-10} s=
        for _ in $(seq $((max * 10))); do
                s=$("$ENGINE_CLI" inspect -f '{{.State.Status}}' "$name" 2>/dev/null) || s=
                [ "$s" = "$want" ] && return 0
                sleep 0.1
        done
        echo "container $name: status '$s' after ${max}s, wanted '$want'"
        return 1
}

# wait_log NAME TEXT [SECONDS]: poll the engine's logs until a line contains TEXT.
wait_log() {
        local name=$1 text=$2 max=${3:-10}
        for _ in $(seq $((max * 10))); do
                # not grep -q: it would stop reading early and the engine would die of SIGPIPE
                "$ENGINE_CLI" logs "$name" 2>&1 | grep -F -- "$text" >/dev/null && return 0
                sleep 0.1
        done
        echo "container $name: no '$text' in its log after ${max}s:"
        "$ENGINE_CLI" logs "$name" 2>&1 || true
        return 1
}

# wait_clean LISTER: poll (bounded) until `LISTER` prints nothing, i.e. nothing of the
# suite's containers is left; engines clean up asynchronously after a container exits
# (podman: `podman container cleanup`, conmon's exit command).
wait_clean() {
        local lister=$1 left
        for _ in $(seq 100); do
                left=$("$lister")
                [ -z "$left" ] && return 0
                sleep 0.1
        done
        echo "left behind:"
        echo "$left"
        return 1
}
