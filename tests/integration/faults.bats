#!/usr/bin/env bats
# Fault injection: `create`, `start`, `exec`, `delete` and `run -d` killed with SIGKILL
# at random points (msp-killafter). Whatever a killed command left, `delete --force`
# must succeed and leave nothing behind: no state dir, no cgroup in any hierarchy (each
# v1 one and the cgroup2 one), no mount, no process; and a create killed before it wrote
# state.json must not keep the next create of its id from succeeding.
#
# The delays are random, the invariant must hold for every one of them. The seed is
# printed (FAULTS_SEED=N replays the same delays); FAULTS_ROUNDS sets the rounds a test.

load helpers

: "${MSP_KILLAFTER:=$BATS_TEST_DIRNAME/../../build/tests/helper/msp-killafter}"

setup() {
        [ -x "$MSP_KILLAFTER" ] || skip "msp-killafter is not built ($MSP_KILLAFTER)"
        setup_bundle
        set_args sleep 1000
        # The sanitizer build is several times slower: fewer rounds there.
        if ldd "$MSP" 2>/dev/null | grep -q libasan; then ROUNDS=${FAULTS_ROUNDS:-25}; else ROUNDS=${FAULTS_ROUNDS:-70}; fi
        SEED=${FAULTS_SEED:-$(( $(date +%s%N) % 32768 ))}
        RANDOM=$SEED
        echo "# $BATS_TEST_DESCRIPTION: seed $SEED (FAULTS_SEED=$SEED replays it)" >&3
        # Marks every process msp starts here, and only those: the init keeps the
        # runtime's environment until its execve, into the config's.
        TAG="msp-faults-$$-$BATS_SUITE_TEST_NUMBER"
}

teardown() {
        teardown_containers
}

# msp_tagged ARGS...: msp with the marker in its environment.
msp_tagged() {
        MSP_FAULTS_TAG=$TAG "$MSP" --root "$STATE_ROOT" "$@" 3>&-
}

# kill_after USEC ARGS...: msp ARGS killed with SIGKILL after USEC microseconds.
kill_after() {
        local usec=$1
        shift
        MSP_FAULTS_TAG=$TAG "$MSP_KILLAFTER" "$usec" "$MSP" --root "$STATE_ROOT" "$@" \
                </dev/null >>"$BATS_TEST_TMPDIR/killed.out" 2>&1 3>&-
}

# duration_us ARGS...: how long one msp ARGS takes (microseconds, at least 1000).
duration_us() {
        local t0 t1
        t0=$(date +%s%N)
        msp_tagged "$@" </dev/null >/dev/null 2>&1
        t1=$(date +%s%N)
        local us=$(( (t1 - t0) / 1000 ))
        echo $(( us < 1000 ? 1000 : us ))
}

# A delay uniform in [0, 1.5 * max): past the end too, so that "not killed" is a case.
delay_in() {
        echo $(( (RANDOM * 32768 + RANDOM) % ($1 * 3 / 2) ))
}

# Processes carrying this test's marker (the init of a killed create, before its exec).
tagged_pids() {
        grep -lsz "^MSP_FAULTS_TAG=$TAG\$" /proc/[0-9]*/environ 2>/dev/null |
                sed 's|/proc/\([0-9]*\)/environ|\1|' || true
}

# check_clean ROUND DELAY: delete --force succeeds, then nothing is left. Checked with
# shell tests where it can (a few hundred rounds: a fork per hierarchy would dominate).
check_clean() {
        local what="round $1, killed after $2 us" out h line pids i
        out=$(msp delete --force "$CID" 2>&1) ||
                { echo "$what: delete --force failed: $out"; ls -la "$STATE_ROOT/$CID"; return 1; }
        [ ! -e "$STATE_ROOT/$CID" ] || { echo "$what: state dir left"; ls -la "$STATE_ROOT/$CID"; return 1; }
        for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
                [ ! -e "$h$CGROUP_PREFIX/$CID" ] || { echo "$what: cgroup left: $h$CGROUP_PREFIX/$CID"; return 1; }
        done
        while read -r line; do
                [[ "$line" != *"$BATS_TEST_TMPDIR"* ]] || { echo "$what: mount left: $line"; return 1; }
        done </proc/self/mountinfo
        # A dying init may still be in the kernel's hands for a moment: bounded wait.
        for i in {1..100}; do
                pids=$(tagged_pids)
                [ -z "$pids" ] && return 0
                sleep 0.02
        done
        echo "$what: processes left: $pids"
        ps -o pid,ppid,stat,cmd -p "$(echo $pids | tr ' ' ,)" || true
        return 1
}

@test "faults: create killed at random points: delete --force cleans up, the id is reusable" {
        local full d i
        full=$(duration_us create -b "$BUNDLE" "$CID")
        msp delete --force "$CID"
        for i in $(seq "$ROUNDS"); do
                d=$(delay_in "$full")
                kill_after "$d" create -b "$BUNDLE" "$CID"
                # A create killed before state.json existed left no container: the next
                # create of the id must succeed.
                if [ -d "$STATE_ROOT/$CID" ] && [ ! -e "$STATE_ROOT/$CID/state.json" ]; then
                        msp_tagged create -b "$BUNDLE" "$CID" </dev/null >"$BATS_TEST_TMPDIR/again.out" 2>&1 ||
                                { echo "round $i, killed after $d us: create over the leftover:"; cat "$BATS_TEST_TMPDIR/again.out"; return 1; }
                fi
                check_clean "$i" "$d"
        done
}

@test "faults: start killed at random points: delete --force cleans up" {
        local full d i
        create_bg "$CID"
        full=$(duration_us start "$CID")
        msp delete --force "$CID"
        for i in $(seq "$ROUNDS"); do
                create_bg "$CID"
                d=$(delay_in "$full")
                kill_after "$d" start "$CID"
                check_clean "$i" "$d"
        done
}

@test "faults: exec killed at random points: delete --force cleans up" {
        local full d i
        create_bg "$CID"
        msp start "$CID"
        full=$(duration_us exec -d "$CID" sleep 1000)
        msp delete --force "$CID"
        # Fewer rounds (run -d too): the exec'd process is orphaned to the host's pid 1,
        # and the init of a pid namespace dies only once that one has reaped it, which a
        # pid 1 that reaps lazily (this VM's: ~2 s) makes each delete wait for.
        for i in $(seq $(( ROUNDS / 4 ))); do
                create_bg "$CID"
                msp start "$CID"
                d=$(delay_in "$full")
                kill_after "$d" exec -d "$CID" sleep 1000
                check_clean "$i" "$d"
        done
}

@test "faults: delete killed at random points: delete --force cleans up" {
        local full d i
        create_bg "$CID"
        msp start "$CID"
        full=$(duration_us delete --force "$CID")
        for i in $(seq "$ROUNDS"); do
                create_bg "$CID"
                msp start "$CID"
                d=$(delay_in "$full")
                kill_after "$d" delete --force "$CID"
                check_clean "$i" "$d"
        done
}

@test "faults: run -d killed at random points: delete --force cleans up" {
        local full d i
        full=$(duration_us run -d -b "$BUNDLE" "$CID")
        msp delete --force "$CID"
        for i in $(seq $(( ROUNDS / 4 ))); do
                d=$(delay_in "$full")
                kill_after "$d" run -d -b "$BUNDLE" "$CID"
                check_clean "$i" "$d"
        done
}
