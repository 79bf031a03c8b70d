#!/bin/sh
# The cgroup v2 tests, run by busybox sh inside the guest (tests/vm/run-vm.sh): the
# limits of tests/integration/cgroups.bats on a pure cgroup2 host, plus what only v2
# has: the eBPF device filter, cgroup.kill (kill --all) and cgroup.freeze (pause).
# Prints TAP lines prefixed "VMTAP " (no plan: the host adds it). Each test runs in a
# subshell with `set -e`; afterwards every container is deleted and no cgroup may be
# left under /sys/fs/cgroup/msp-vm.
MSP=/usr/bin/msp
ROOT=/run/msp-vm
CG=/sys/fs/cgroup
PFX=msp-vm
BASE=/vm/bundle                 # config.json and rootfs/ (with /bin/msp-helper)
W=/tmp/w
n=0
# MSP_VM_VERBOSE=1 on the host puts msp_vm_verbose=1 on the kernel command line: the
# output of passing tests is shown too.
verbose=0
grep -qw msp_vm_verbose=1 /proc/cmdline && verbose=1
# MSP_VM_ONLY=WORD on the host puts msp_vm_only=WORD there: only the tests whose function
# name contains WORD run (the others are reported as skipped).
only=$(sed -n 's/.*msp_vm_only=\([^ ]*\).*/\1/p' /proc/cmdline)

say() {
        echo "VMTAP $*"
}

msp() {
        "$MSP" --root "$ROOT" "$@"
}

# new_bundle ID JQ_FILTER: a fresh bundle at $W/ID, its config edited by the filter.
new_bundle() {
        mkdir -p "$W/$1"
        cp -a "$BASE/rootfs" "$W/$1/rootfs"
        jq --arg cg "/$PFX/$1" ".linux.cgroupsPath = \$cg | .root.readonly = false | $2" \
                "$BASE/config.json" >"$W/$1/config.json"
}

# run_detached ID: start the bundle's container in the background; its output goes to
# $W/ID.out.
run_detached() {
        msp run -d -b "$W/$1" "$1" >"$W/$1.out" 2>&1 </dev/null
}

status_of() {
        msp state "$1" | jq -r .status
}

# until_true SECONDS CMD...: retry CMD every 0.1 s for at most SECONDS (the guest has no
# pidfd or inotify tool; every wait is bounded).
until_true() {
        tries=$(($1 * 10))
        shift
        while ! "$@"; do
                tries=$((tries - 1))
                [ "$tries" -gt 0 ] || { echo "timed out: $*"; return 1; }
                sleep 0.1
        done
}

is_stopped() {
        [ "$(status_of "$1")" = stopped ]
}

has_line() {
        grep -qx "$2" "$1" 2>/dev/null
}

larger_than() {
        [ "$(stat -c %s "$1")" -gt "$2" ]
}

# Uptime in centiseconds and the cgroup's CPU time in microseconds.
uptime_cs() {
        cut -d' ' -f1 /proc/uptime | tr -d .
}

usage_us() {
        awk '$1 == "usage_usec" { print $2 }' "$CG/$PFX/$1/cpu.stat"
}

t() {
        if [ -n "$only" ] && [ "${2#*"$only"}" = "$2" ]; then
                n=$((n + 1))
                say "ok $n - $1 # SKIP not selected by MSP_VM_ONLY=$only"
                return
        fi
        out=$( (set -e; "$2") 2>&1 )
        rc=$?
        for id in $(ls "$ROOT" 2>/dev/null); do
                msp delete --force "$id" >/dev/null 2>&1
        done
        left=$(find "$CG/$PFX" -mindepth 1 -type d 2>/dev/null)
        n=$((n + 1))
        if [ "$rc" = 0 ] && [ -z "$left" ]; then
                say "ok $n - $1"
                [ "$verbose" = 1 ] && echo "$out" | tail -n 40 | sed 's/^/VMTAP #   /'
        else
                say "not ok $n - $1"
                [ -n "$left" ] && out="$out
cgroups left: $left"
                echo "$out" | tail -n 40 | sed 's/^/VMTAP #   /'
        fi
        find "$CG/$PFX" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
        rm -rf "$W"
        mkdir -p "$W"
}

# ---- tests ----

t_mode() {
        [ "$(awk '$2 == "/sys/fs/cgroup" { print $3 }' /proc/mounts)" = cgroup2 ]
        [ "$(awk '$3 == "cgroup"' /proc/mounts | wc -l)" -eq 0 ]
        cat "$CG/cgroup.controllers"
        for c in cpu memory pids; do grep -qw "$c" "$CG/cgroup.controllers"; done
}

t_oom() {
        new_bundle oom '.linux.resources.memory = {"limit": 33554432}
                | .process.args = ["/bin/msp-helper", "oom"]'
        rc=0
        msp run --keep -b "$W/oom" oom || rc=$?
        echo "exit status $rc"
        [ "$rc" -eq 137 ]
        [ "$(cat "$CG/$PFX/oom/memory.max")" = 33554432 ]
        kills=$(awk '$1 == "oom_kill" { print $2 }' "$CG/$PFX/oom/memory.events")
        echo "oom_kill $kills"
        [ "$kills" -ge 1 ]
        [ "$(status_of oom)" = stopped ]
        msp delete oom
        [ ! -e "$CG/$PFX/oom" ]
}

t_pids() {
        new_bundle fb '.linux.resources.pids = {"limit": 20}
                | .process.args = ["/bin/msp-helper", "forkbomb", "1000"]'
        rc=0
        msp run --keep -b "$W/fb" fb >"$W/fb.out" || rc=$?
        cat "$W/fb.out"
        [ "$rc" -eq 1 ]
        grep -qx 'fork=EAGAIN' "$W/fb.out"
        forks=$(sed -n 's/^forks=//p' "$W/fb.out")
        [ "$forks" -ge 10 ]
        [ "$forks" -lt 20 ]
        [ "$(cat "$CG/$PFX/fb/pids.max")" = 20 ]
        [ "$(awk '$1 == "max" { print $2 }' "$CG/$PFX/fb/pids.events")" -ge 1 ]
        msp delete fb
}

t_cpu() {
        new_bundle cpu '.linux.resources.cpu = {"quota": 20000, "period": 100000}
                | .process.args = ["/bin/msp-helper", "spin", "120"]'
        run_detached cpu
        [ "$(cat "$CG/$PFX/cpu/cpu.max")" = "20000 100000" ]
        u0=$(usage_us cpu)
        c0=$(uptime_cs)
        sleep 1
        u1=$(usage_us cpu)
        c1=$(uptime_cs)
        pct=$(( (u1 - u0) / (c1 - c0) / 100 ))
        echo "cpu share over $(( (c1 - c0) * 10 )) ms: $pct%"
        [ "$pct" -lt 40 ]
        [ "$pct" -ge 5 ]
        msp delete --force cpu
}

t_update() {
        new_bundle up '.linux.resources.memory = {"limit": 33554432}
                | .linux.resources.pids = {"limit": 40} | .process.args = ["/bin/sleep", "1000"]'
        run_detached up
        d=$CG/$PFX/up
        msp update --memory 64m --pids-limit 50 --cpu-quota 50000 --cpu-period 100000 \
                --cpu-shares 1024 up
        [ "$(cat "$d/memory.max")" = 67108864 ]
        [ "$(cat "$d/pids.max")" = 50 ]
        [ "$(cat "$d/cpu.max")" = "50000 100000" ]
        [ "$(cat "$d/cpu.weight")" = 39 ]
        # A zero leaves the value as it is, -1 lifts the limit (runc's update rules).
        echo '{"memory": {"limit": -1}, "pids": {"limit": 0}}' | msp update -r - up
        [ "$(cat "$d/memory.max")" = max ]
        [ "$(cat "$d/pids.max")" = 50 ]
        echo '{"pids": {"limit": -1}}' | msp update -r - up
        [ "$(cat "$d/pids.max")" = max ]
        msp kill up KILL
        until_true 10 is_stopped up
        rc=0
        msp update --memory 1m up 2>"$W/err" || rc=$?
        cat "$W/err"
        [ "$rc" -ne 0 ]
        grep -q "cannot update container 'up': it is stopped" "$W/err"
        msp delete up
}

t_freeze() {
        mkdir "$W/out"
        : >"$W/out/count"
        new_bundle fr '.mounts += [{"destination": "/out", "type": "bind", "source": "'"$W/out"'",
                "options": ["rbind", "rw"]}]
                | .process.args = ["/bin/sh", "-c",
                  "i=0; while :; do i=$((i + 1)); echo $i >>/out/count; sleep 0.02; done"]'
        run_detached fr
        f=$W/out/count
        until_true 10 larger_than "$f" 0
        msp pause fr
        [ "$(status_of fr)" = paused ]
        [ "$(cat "$CG/$PFX/fr/cgroup.freeze")" = 1 ]
        grep -qx 'frozen 1' "$CG/$PFX/fr/cgroup.events"
        size=$(stat -c %s "$f")
        u0=$(usage_us fr)
        sleep 0.5
        [ "$(stat -c %s "$f")" -eq "$size" ]
        [ "$(usage_us fr)" -eq "$u0" ]
        msp resume fr
        [ "$(status_of fr)" = running ]
        grep -qx 'frozen 0' "$CG/$PFX/fr/cgroup.events"
        until_true 10 larger_than "$f" "$size"
        # delete --force of a paused container
        msp pause fr
        msp delete --force fr
        [ ! -e "$CG/$PFX/fr" ]
}

t_devices() {
        new_bundle dev '.linux.resources.devices = [{"allow": false, "access": "rwm"},
                {"allow": true, "type": "c", "major": 42, "minor": 1, "access": "r"}]
                | .process.capabilities.bounding += ["CAP_MKNOD"]
                | .process.capabilities.effective += ["CAP_MKNOD"]
                | .process.capabilities.permitted += ["CAP_MKNOD"]
                | .process.args = ["/bin/msp-helper", "mknod", "/dev/d0", "c", "42", "0", "--",
                  "mknod", "/dev/d1", "c", "42", "1", "--", "read", "/dev/d0", "--",
                  "read", "/dev/d1", "--", "write", "/dev/d1", "--", "read", "/dev/zero", "--",
                  "write", "/dev/null"]'
        msp run -b "$W/dev" dev >"$W/dev.out" || true
        cat "$W/dev.out"
        # v2 has no devices controller: this is the eBPF program at work.
        [ ! -e "$CG/devices.list" ]
        [ "$(sed -n 1p "$W/dev.out")" = mknod=ok ]
        [ "$(sed -n 2p "$W/dev.out")" = mknod=ok ]
        [ "$(sed -n 3p "$W/dev.out")" = read=EPERM ]
        [ "$(sed -n 4p "$W/dev.out")" = read=ENXIO ]
        [ "$(sed -n 5p "$W/dev.out")" = write=EPERM ]
        [ "$(sed -n 6p "$W/dev.out")" = read=ok ]
        [ "$(sed -n 8p "$W/dev.out")" = write=ok ]
}

t_kill_all() {
        new_bundle ka '.linux.namespaces |= map(select(.type != "pid"))
                | .process.args = ["/bin/sh", "-c",
                  "sleep 1000 & sleep 1000 & echo ready; exec sleep 1000"]'
        run_detached ka
        until_true 10 has_line "$W/ka.out" ready
        [ "$(msp ps --format json ka | jq length)" -eq 3 ]
        # Without a pid namespace the children outlive the init...
        msp kill ka KILL
        until_true 10 is_stopped ka
        [ "$(msp ps --format json ka | jq length)" -eq 2 ]
        # ...until kill --all: each pid once for TERM,
        msp kill --all ka TERM
        until_true 10 grep -qx 'populated 0' "$CG/$PFX/ka/cgroup.events"
        msp delete ka

        # and cgroup.kill for KILL, here on a paused container.
        new_bundle kb '.linux.namespaces |= map(select(.type != "pid"))
                | .process.args = ["/bin/sh", "-c",
                  "sleep 1000 & sleep 1000 & echo ready; exec sleep 1000"]'
        run_detached kb
        until_true 10 has_line "$W/kb.out" ready
        msp pause kb
        msp kill --all kb KILL
        until_true 10 grep -qx 'populated 0' "$CG/$PFX/kb/cgroup.events"
        [ -z "$(cat "$CG/$PFX/kb/cgroup.procs")" ]
        until_true 10 is_stopped kb
        msp delete kb
}

# A container that writes its own cgroup tree (a cgroup namespace, the cgroup2 mount
# read-write): a process in ".x" and one 17 levels deep are listed by ps and reached by
# kill --all TERM; delete --force removes them with a 200-deep chain (TCG makes a
# PATH_MAX-deep one slow here: t_unit's rt-cgroup-ctl "tree" test makes one).
t_cgroup_tree() {
        new_bundle ct '.linux.namespaces += [{"type": "cgroup"}]
                | .mounts |= map(if .type == "cgroup" then .options = (.options - ["ro"] + ["rw"]) else . end)
                | .process.args = ["/bin/sh", "/cg-writer.sh", ".d:200"]'
        run_detached ct
        rc=0
        until_true 20 has_line "$W/ct.out" parked || rc=$?
        cat "$W/ct.out"
        [ "$rc" = 0 ]
        if grep -E '^cg(park|nest)=E' "$W/ct.out"; then false; fi
        dot=$(cat "$CG/$PFX/ct/.x/cgroup.procs")
        [ -n "$dot" ]
        msp ps --format json ct >"$W/ps.json"
        cat "$W/ps.json"
        [ "$(jq length "$W/ps.json")" -eq 3 ]
        jq -e --argjson p "$dot" 'index($p) != null' "$W/ps.json"
        msp kill --all ct TERM
        until_true 10 grep -qx 'populated 0' "$CG/$PFX/ct/.x/cgroup.events"
        msp delete --force ct
        [ ! -e "$CG/$PFX/ct" ]
}

t_ps_events() {
        new_bundle ev '.linux.resources.pids = {"limit": 30}
                | .linux.resources.memory = {"limit": 67108864}
                | .process.args = ["/bin/sh", "-c", "sleep 1000 & echo ready; wait"]'
        run_detached ev
        until_true 10 has_line "$W/ev.out" ready
        msp ps --format json ev >"$W/ps.json"
        cat "$W/ps.json"
        [ "$(jq length "$W/ps.json")" -eq 2 ]
        [ "$(jq -c sort "$W/ps.json")" = "$(sort -n "$CG/$PFX/ev/cgroup.procs" | jq -sc .)" ]
        msp ps ev
        msp events --stats ev >"$W/ev.json"
        cat "$W/ev.json"
        jq -e '.type == "stats" and .id == "ev"' "$W/ev.json"
        jq -e '.data.memory.usage.usage > 0 and .data.memory.usage.limit == 67108864' "$W/ev.json"
        jq -e '.data.pids.current == 2 and .data.pids.limit == 30' "$W/ev.json"
        jq -e '.data.cpu.usage.total > 0' "$W/ev.json"
        msp delete --force ev
}

# Landlock on a kernel older than the host's: Debian 12's 6.1 has ABI 2 (no truncate,
# ABI 3; no network rights, ABI 4; no scoping, ABI 6). Strict mode must refuse what the
# kernel lacks, naming the right; best effort must run, enforce the rest and say what it
# dropped.
t_landlock_old_abi() {
        abi=$(msp features | jq -r .linux.landlock.abi)
        echo "guest Landlock ABI $abi, kernel $(uname -r)"
        [ "$abi" -ge 1 ] && [ "$abi" -lt 3 ]
        new_bundle ll '.process.landlock = {
                "handledAccess": {"handledAccessFS": ["execute", "write_file", "read_file",
                        "read_dir", "make_reg", "truncate"]},
                "scoped": ["signal"],
                "rules": {"pathBeneath": [
                        {"allowedAccess": ["execute", "read_file", "read_dir"], "paths": ["/"]},
                        {"allowedAccess": ["execute", "write_file", "read_file", "read_dir",
                                "make_reg", "truncate"], "paths": ["/tmp"]}]},
                "enableBestEffort": false}
                | .process.args = ["/bin/msp-helper", "write", "/etc/msp-x", "--",
                        "write", "/tmp/f"]'
        # Control: without the right the kernel lacks, strict mode runs and enforces.
        jq '.process.landlock.handledAccess.handledAccessFS -= ["truncate"] |
            .process.landlock.rules.pathBeneath[1].allowedAccess -= ["truncate"] |
            del(.process.landlock.scoped)' "$W/ll/config.json" >"$W/ctl.json"
        cp "$W/ll/config.json" "$W/ll.json"
        cp "$W/ctl.json" "$W/ll/config.json"
        msp run -b "$W/ll" ll >"$W/ll.out" 2>&1 </dev/null || true
        cat "$W/ll.out"
        [ "$(sed -n 1p "$W/ll.out")" = write=EACCES ]
        [ "$(sed -n 2p "$W/ll.out")" = write=ok ]
        # Strict: create fails, naming the first right the kernel lacks.
        cp "$W/ll.json" "$W/ll/config.json"
        if msp create -b "$W/ll" ll >"$W/ll.out" 2>&1 </dev/null; then
                echo "strict create succeeded"
                false
        fi
        cat "$W/ll.out"
        grep -q "landlock: the kernel (ABI $abi) lacks 'truncate' requested by" "$W/ll.out"
        [ ! -e "$ROOT/ll" ]
        # Best effort: runs, enforces the rest, and --debug names what was dropped.
        jq '.process.landlock.enableBestEffort = true' "$W/ll.json" >"$W/ll/config.json"
        msp --debug run -b "$W/ll" ll >"$W/ll.out" 2>&1 </dev/null || true
        cat "$W/ll.out"
        grep -q "landlock: best effort, not enforced: truncate, signal (kernel ABI $abi)" "$W/ll.out"
        grep -qx write=EACCES "$W/ll.out"
        grep -qx write=ok "$W/ll.out"
}

# AppArmor is the guest kernel's default LSM (this host runs none): the exec label goes
# through msp's private procfs handle to attr/apparmor/exec and takes effect at execve.
t_apparmor() {
        [ "$(cat /sys/module/apparmor/parameters/enabled)" = Y ]
        new_bundle aa '.process.apparmorProfile = "unconfined"
                | .process.args = ["/bin/msp-helper", "read", "/proc/self/attr/current"]'
        msp run -b "$W/aa" aa >"$W/aa.out" 2>&1 </dev/null
        cat "$W/aa.out"
        has_line "$W/aa.out" content=unconfined
        # A profile the kernel does not have: AppArmor itself refuses the write, and
        # create fails naming the field and the value.
        new_bundle ab '.process.apparmorProfile = "msp-no-such-profile"'
        if msp create -b "$W/ab" ab >"$W/ab.out" 2>&1 </dev/null; then
                echo "create succeeded"
                false
        fi
        cat "$W/ab.out"
        grep -q "process.apparmorProfile 'msp-no-such-profile': write '/proc/thread-self/attr/apparmor/exec'" "$W/ab.out"
        [ ! -e "$ROOT/ab" ]
}

# msp exec with AppArmor active: `features` says so; the exec'd process gets the
# config's profile, or --apparmor's, written (like the init's) through the runtime's
# verified procfs before seccomp, the capability drop and no_new_privs; a profile the
# kernel lacks fails exec naming field and value, and leaves no process.
t_apparmor_exec() {
        msp features | jq -c '.linux | {apparmor, selinux}'
        msp features | jq -e '.linux.apparmor.enabled == true' >/dev/null
        new_bundle ea '.process.apparmorProfile = "unconfined" | .process.args = ["/bin/sleep", "100000"]'
        run_detached ea
        msp exec ea /bin/msp-helper read /proc/self/attr/current >"$W/ea1.out" 2>&1 </dev/null
        cat "$W/ea1.out"
        has_line "$W/ea1.out" content=unconfined
        if msp exec --apparmor msp-no-such-profile ea /bin/sleep 4242 >"$W/ea2.out" 2>&1 </dev/null; then
                echo "exec succeeded"
                false
        fi
        cat "$W/ea2.out"
        grep -q "process.apparmorProfile 'msp-no-such-profile': write '/proc/thread-self/attr/apparmor/exec'" "$W/ea2.out"
        msp ps --format json ea >"$W/ea.ps"
        cat "$W/ea.ps"
        [ "$(jq length "$W/ea.ps")" -eq 1 ]
        [ "$(status_of ea)" = running ]
        msp delete --force ea
}

# A real profile: loaded with apparmor_parser, named in process.apparmorProfile, and
# enforced on the container's process from its execve on (a control run without it reads
# the file the profile denies).
t_apparmor_profile() {
        grep -qw securityfs /proc/mounts || mount -t securityfs none /sys/kernel/security
        printf '%s\n' 'profile msp-test flags=(attach_disconnected) {' '  file,' \
                '  capability,' '  network,' '  signal,' '  ptrace,' '  unix,' \
                '  deny /etc/msp-secret r,' '}' >"$W/msp-test.profile"
        apparmor_parser -r "$W/msp-test.profile"
        grep -q '^msp-test (enforce)' /sys/kernel/security/apparmor/profiles
        new_bundle ap '.process.args = ["/bin/msp-helper", "read", "/proc/self/attr/current",
                "--", "read", "/etc/msp-secret", "--", "read", "/etc/passwd"]'
        echo secret >"$W/ap/rootfs/etc/msp-secret"
        msp run -b "$W/ap" ap >"$W/ap.out" 2>&1 </dev/null || true
        cat "$W/ap.out"
        has_line "$W/ap.out" content=unconfined
        has_line "$W/ap.out" content=secret
        jq '.process.apparmorProfile = "msp-test"' "$W/ap/config.json" >"$W/ap.json"
        mv "$W/ap.json" "$W/ap/config.json"
        msp run -b "$W/ap" ap >"$W/ap.out" 2>&1 </dev/null || true
        cat "$W/ap.out"
        has_line "$W/ap.out" "content=msp-test (enforce)"
        has_line "$W/ap.out" read=EACCES
        if has_line "$W/ap.out" content=secret; then false; fi
        grep -q '^content=root:' "$W/ap.out"
        # exec: the config's profile confines the exec'd process too (checked inside,
        # /proc/self/attr/current); --apparmor overrides it (the control: unconfined
        # reads the file).
        jq '.process.args = ["/bin/sleep", "100000"]' "$W/ap/config.json" >"$W/ap.json"
        mv "$W/ap.json" "$W/ap/config.json"
        run_detached ap
        msp exec ap /bin/msp-helper read /proc/self/attr/current -- read /etc/msp-secret \
                >"$W/ex1.out" 2>&1 </dev/null || true
        cat "$W/ex1.out"
        has_line "$W/ex1.out" "content=msp-test (enforce)"
        has_line "$W/ex1.out" read=EACCES
        if has_line "$W/ex1.out" content=secret; then false; fi
        msp exec --apparmor unconfined ap /bin/msp-helper read /proc/self/attr/current -- \
                read /etc/msp-secret >"$W/ex2.out" 2>&1 </dev/null
        cat "$W/ex2.out"
        has_line "$W/ex2.out" content=unconfined
        has_line "$W/ex2.out" content=secret
        # --process FILE (as podman writes it) with the profile, into an unconfined
        # container
        new_bundle aq '.process.args = ["/bin/sleep", "100000"]'
        echo secret >"$W/aq/rootfs/etc/msp-secret"
        run_detached aq
        jq -c '.process | .apparmorProfile = "msp-test" | .args = ["/bin/msp-helper", "read",
                "/proc/self/attr/current", "--", "read", "/etc/msp-secret"]' \
                "$W/aq/config.json" >"$W/aq-process.json"
        msp exec --process "$W/aq-process.json" aq >"$W/ex3.out" 2>&1 </dev/null || true
        cat "$W/ex3.out"
        has_line "$W/ex3.out" "content=msp-test (enforce)"
        has_line "$W/ex3.out" read=EACCES
        msp delete --force ap
        msp delete --force aq
        apparmor_parser -R "$W/msp-test.profile"
}

# Rootless with a delegated subtree, as systemd gives user@UID.service one: the directory
# and its cgroup.procs, cgroup.subtree_control and cgroup.threads chowned to the user, the
# user's processes in a scope below it. msp run by the user (setpriv, no capability) with
# `spec --rootless` and no linux.cgroupsPath makes the container's cgroup beside that
# scope (runc's placement) and applies the limits; pause works there; delete removes it.
RL_UID=1000
RL_D=$CG/$PFX/user@$RL_UID.service

# as_user CMD...: CMD as the user, from the delegated subtree's app.scope.
as_user() {
        (
                echo 0 >"$RL_D/app.scope/cgroup.procs"
                exec env XDG_RUNTIME_DIR="$W/xdg" /usr/bin/setpriv --reuid=$RL_UID \
                        --regid=$RL_UID --clear-groups --inh-caps=-all "$@"
        )
}

rl_stopped() {
        [ "$("$MSP" --root "$W/xdg/msp" state "$1" | jq -r .status)" = stopped ]
}

t_rootless_delegated() {
        [ -x /usr/bin/setpriv ]
        mkdir -p "$CG/$PFX"
        echo "+cpu +memory +pids" >"$CG/cgroup.subtree_control"
        echo "+cpu +memory +pids" >"$CG/$PFX/cgroup.subtree_control"
        mkdir "$RL_D" "$RL_D/app.scope"
        chown -R $RL_UID:$RL_UID "$RL_D/app.scope"
        mkdir -p "$W/rl" "$W/xdg"
        cp -a "$BASE/rootfs" "$W/rl/rootfs"
        chown -R $RL_UID:$RL_UID "$W/rl" "$W/xdg"
        chmod 0700 "$W/xdg"
        as_user sh -c "cd $W/rl && $MSP spec --rootless"
        jq '.process.terminal = false | .root.readonly = false
                | .linux.resources = {"memory": {"limit": 33554432}, "pids": {"limit": 50}}
                | .process.args = ["/bin/msp-helper", "oom"]' "$W/rl/config.json" >"$W/rl/c.json"
        mv "$W/rl/c.json" "$W/rl/config.json"
        chown $RL_UID:$RL_UID "$W/rl/config.json"
        # not delegated yet (the parent is root's): the limit is refused, saying why
        rc=0
        as_user "$MSP" run -b "$W/rl" rl0 </dev/null >"$W/rl0.out" 2>&1 || rc=$?
        cat "$W/rl0.out"
        [ "$rc" -ne 0 ]
        grep -q "linux.resources.memory: rootless, the limit needs a cgroup and msp may make none: cgroup '$RL_D' is not delegated to uid $RL_UID" "$W/rl0.out"
        [ -z "$(ls "$W/xdg/msp")" ]
        chown $RL_UID:$RL_UID "$RL_D" "$RL_D/cgroup.procs" "$RL_D/cgroup.subtree_control" \
                "$RL_D/cgroup.threads"
        rc=0
        as_user "$MSP" run --keep -b "$W/rl" rl1 </dev/null || rc=$?
        echo "exit status $rc"
        [ "$rc" -eq 137 ]
        ls -ld "$RL_D/rl1"
        [ "$(cat "$RL_D/rl1/memory.max")" = 33554432 ]
        [ "$(cat "$RL_D/rl1/pids.max")" = 50 ]
        [ "$(stat -c %u "$RL_D/rl1")" = $RL_UID ]
        awk '$1 == "oom_kill" { print; exit !($2 >= 1) }' "$RL_D/rl1/memory.events"
        as_user "$MSP" delete rl1
        [ ! -e "$RL_D/rl1" ]
        # a live one: its init in the cgroup, pause and resume, ps, delete
        jq '.process.args = ["/bin/sleep", "1000"]' "$W/rl/config.json" >"$W/rl/c.json"
        mv "$W/rl/c.json" "$W/rl/config.json"
        chown $RL_UID:$RL_UID "$W/rl/config.json"
        as_user "$MSP" run -d -b "$W/rl" rl2 </dev/null >"$W/rl2.out" 2>&1 || { cat "$W/rl2.out"; false; }
        pid=$(as_user "$MSP" state rl2 | jq -r .pid)
        grep -qx "$pid" "$RL_D/rl2/cgroup.procs"
        as_user "$MSP" pause rl2
        [ "$(as_user "$MSP" state rl2 | jq -r .status)" = paused ]
        grep -qx 'frozen 1' "$RL_D/rl2/cgroup.events"
        as_user "$MSP" resume rl2
        [ "$(as_user "$MSP" state rl2 | jq -r .status)" = running ]
        [ "$(as_user "$MSP" ps --format json rl2)" = "[$pid]" ]
        as_user "$MSP" kill rl2 KILL
        until_true 10 rl_stopped rl2
        as_user "$MSP" delete rl2
        [ ! -e "$RL_D/rl2" ]
        [ -z "$(ls "$W/xdg/msp")" ]
        # --systemd-cgroup: the cgroup would be the user's systemd manager's, and none
        # runs in the guest (no bus at $XDG_RUNTIME_DIR/bus): refused, nothing made
        jq '.linux.cgroupsPath = "user.slice:libpod:rl3"' "$W/rl/config.json" >"$W/rl/c.json"
        mv "$W/rl/c.json" "$W/rl/config.json"
        chown $RL_UID:$RL_UID "$W/rl/config.json"
        rc=0
        as_user "$MSP" --systemd-cgroup run -d -b "$W/rl" rl3 </dev/null >"$W/rl3.out" 2>&1 || rc=$?
        cat "$W/rl3.out"
        [ "$rc" -ne 0 ]
        grep -q "none is reachable: start unit libpod-rl3.scope: connect '$W/xdg/bus'" "$W/rl3.out"
        [ ! -e "$RL_D/user.slice" ]
        [ -z "$(ls "$W/xdg/msp")" ]
        rmdir "$RL_D/app.scope" "$RL_D"
}

# A rootless container that writes its own cgroup tree in the delegated subtree (a cgroup
# namespace, its cgroup2 mount read-write): ps and kill --all as the user reach '.x' and
# 17 deep, and delete --force as the user removes the tree.
t_rootless_tree() {
        [ -x /usr/bin/setpriv ]
        delegate_user_subtree app.scope
        mkdir -p "$W/rt" "$W/xdg"
        cp -a "$BASE/rootfs" "$W/rt/rootfs"
        chown -R $RL_UID:$RL_UID "$W/rt" "$W/xdg"
        chmod 0700 "$W/xdg"
        as_user sh -c "cd $W/rt && $MSP spec --rootless"
        jq '.process.terminal = false | .root.readonly = false
                | .linux.namespaces += [{"type": "cgroup"}]
                | .mounts |= map(if .type == "cgroup" then .options = (.options - ["ro"] + ["rw"]) else . end)
                | .process.args = ["/bin/sh", "/cg-writer.sh", ".d:50"]' "$W/rt/config.json" >"$W/rt/c.json"
        mv "$W/rt/c.json" "$W/rt/config.json"
        chown $RL_UID:$RL_UID "$W/rt/config.json"
        as_user "$MSP" run -d -b "$W/rt" rt1 </dev/null >"$W/rt1.out" 2>&1 || { cat "$W/rt1.out"; false; }
        rc=0
        until_true 20 has_line "$W/rt1.out" parked || rc=$?
        cat "$W/rt1.out"
        [ "$rc" = 0 ]
        if grep -E '^cg(park|nest)=E' "$W/rt1.out"; then false; fi
        dot=$(cat "$RL_D/rt1/.x/cgroup.procs")
        [ -n "$dot" ]
        as_user "$MSP" ps --format json rt1 >"$W/ps.json"
        cat "$W/ps.json"
        [ "$(jq length "$W/ps.json")" -eq 3 ]
        jq -e --argjson p "$dot" 'index($p) != null' "$W/ps.json"
        as_user "$MSP" kill --all rt1 TERM
        until_true 10 grep -qx 'populated 0' "$RL_D/rt1/.x/cgroup.events"
        as_user "$MSP" delete --force rt1
        [ ! -e "$RL_D/rt1" ]
        [ -z "$(ls "$W/xdg/msp")" ]
        rmdir "$RL_D/app.scope" "$RL_D"
}

# msp-mcp run by the user, started alone in the delegated app.scope (as a user service or
# `systemd-run --user --scope` would start it): it moves itself into a leaf there and gives
# each sandbox a cgroup with real limits. Driven over stdio with JSON lines through a FIFO
# (stdin stays open until every answer is in).
mcp_send() {
        printf '%s\n' "$1" >&3
}

# (grep, not jq -e: this jq exits 0 on an empty file)
mcp_answered() {
        grep -q "^{\"jsonrpc\":\"2.0\",\"id\":$1," "$W/mcp.out" 2>/dev/null
}

mcp_call() {
        mcp_send '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"run_code","arguments":'"$2"'}}'
        until_true 120 mcp_answered "$1" >&2 || { tail -n 5 "$W/mcp.err" >&2; return 1; }
        jq -c --argjson id "$1" 'select(.id == $id) | .result.structuredContent' "$W/mcp.out"
}

no_run_cgroups() {
        [ -z "$(find "$1" -mindepth 1 -maxdepth 1 -type d -name 'r-*')" ]
}

# delegate_user_subtree SCOPE: $RL_D made as systemd delegates user@UID.service (the
# subtree the user's, cpu, memory and pids enabled down to it), with the user's SCOPE in it.
delegate_user_subtree() {
        mkdir -p "$CG/$PFX"
        echo "+cpu +memory +pids" >"$CG/cgroup.subtree_control"
        echo "+cpu +memory +pids" >"$CG/$PFX/cgroup.subtree_control"
        mkdir "$RL_D" "$RL_D/$1"
        chown $RL_UID:$RL_UID "$RL_D" "$RL_D/cgroup.procs" "$RL_D/cgroup.subtree_control" \
                "$RL_D/cgroup.threads"
        chown -R $RL_UID:$RL_UID "$RL_D/$1"
}

t_rootless_mcp() {
        [ -x /usr/bin/msp-mcp ] || { echo "msp-mcp not in the guest"; false; }
        delegate_user_subtree app.scope
        # its controllers for the units
        echo "+cpu +memory +pids" >"$RL_D/cgroup.subtree_control"
        echo "user:200000:65536" >/etc/subuid
        echo "user:200000:65536" >/etc/subgid
        mkdir -p "$W/xdg"
        chown $RL_UID:$RL_UID "$W/xdg"
        chmod 0700 "$W/xdg"
        C=$RL_D/app.scope
        set -- --runtime "$MSP" --allow-weak-policy --require-cgroups
        # --check: the cgroup, and which mechanism holds each limit
        as_user /usr/bin/msp-mcp "$@" --check >"$W/check.out" 2>&1 || true
        cat "$W/check.out"
        grep -q "^ok *cgroup *$C: delegated, controllers \"cpu memory pids\": each sandbox gets a cgroup" "$W/check.out"
        grep -q "^limit *memory *cgroup memory.max" "$W/check.out"
        grep -q "^limit *pids *cgroup pids.max" "$W/check.out"
        grep -q "^limit *cpu *cgroup cpu.max" "$W/check.out"
        [ -z "$(find "$C" -mindepth 1 -type d)" ]
        # the server, with --require-cgroups
        mkfifo "$W/mcp.in"
        as_user /usr/bin/msp-mcp "$@" <"$W/mcp.in" >"$W/mcp.out" 2>"$W/mcp.err" &
        srv=$!
        exec 3>"$W/mcp.in"
        mcp_send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"vm","version":"1"}}}'
        until_true 60 mcp_answered 1 || { cat "$W/mcp.err"; false; }
        mcp_send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
        # msp-mcp left its cgroup for a leaf; the sandboxes' parent gives them controllers
        inst=$(find "$C" -mindepth 1 -maxdepth 1 -type d -name 'inst-*')
        echo "instance cgroup: $inst"
        [ -n "$inst" ] || { cat "$W/mcp.err"; false; }
        [ -n "$(cat "$inst/server/cgroup.procs")" ]
        [ -z "$(cat "$C/cgroup.procs")" ]
        [ "$(cat "$inst/cgroup.subtree_control")" = "cpu memory pids" ]
        r=$(mcp_call 2 '{"language":"sh","code":"exec /usr/bin/msp-helper oom","memory_mb":32,"timeout_ms":60000}')
        echo "memory hog: $r"
        echo "$r" | jq -e '.oom_killed == true'
        r=$(mcp_call 3 '{"language":"sh","code":"exec /usr/bin/msp-helper forkbomb 1000","pids":20,"timeout_ms":60000}')
        echo "fork bomb: $r"
        echo "$r" | jq -e '.stdout | test("fork=EAGAIN")'
        forks=$(echo "$r" | jq -r '.stdout' | sed -n 's/^forks=//p')
        [ "$forks" -ge 10 ] && [ "$forks" -lt 20 ]
        r=$(mcp_call 4 '{"language":"sh","code":"echo alive","timeout_ms":60000}')
        echo "a plain run: $r"
        echo "$r" | jq -e '.stdout == "alive\n"'
        # each run's cgroup goes with its run (the runtime's delete follows the answer)
        until_true 30 no_run_cgroups "$inst"
        exec 3>&-
        wait "$srv" || { cat "$W/mcp.err"; false; }
        cat "$W/mcp.err"
        # nothing left: msp-mcp moved back and gave the controllers back before it ended
        [ -z "$(find "$C" -mindepth 1 -type d)" ] || { echo "C: $(cat "$C/cgroup.subtree_control") procs $(cat "$C/cgroup.procs")"; for d in $(find "$C" -mindepth 1 -type d); do echo "$d: $(cat "$d/cgroup.subtree_control") procs $(cat "$d/cgroup.procs")"; done; false; }
        [ -z "$(cat "$C/cgroup.subtree_control")" ]
        rmdir "$C" "$RL_D"
}

# Rootless --systemd-cgroup under a live systemd user manager: `systemd --user` started
# for the test user in a subtree chowned as systemd delegates user@UID.service, with the
# D-Bus session bus it socket-activates (dbus.socket, dbus-daemon). The user's commands run
# from term.scope, a cgroup of that subtree (a terminal's); create goes through
# `systemd-run --user --scope`, as from a desktop session. runc runs the same bundle.
SD_XDG=/run/user/$RL_UID
SD_ENV="PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/user USER=user XDG_RUNTIME_DIR=$SD_XDG"

sd_as_user() {
        (
                echo 0 >"$RL_D/term.scope/cgroup.procs"
                exec env -i $SD_ENV /usr/bin/setpriv --reuid=$RL_UID --regid=$RL_UID \
                        --clear-groups --inh-caps=-all "$@"
        )
}

sd_scope() {
        sd_as_user timeout 60 /usr/bin/systemd-run --user --scope --quiet -- "$@"
}

sd_running() {
        s=$(sd_as_user timeout 5 /bin/systemctl --user is-system-running 2>/dev/null) || true
        [ "$s" = running ] || [ "$s" = degraded ]
}

sd_gone() {
        grep -qx 'populated 0' "$RL_D/cgroup.events"
}

sd_status() {
        [ "$(sd_as_user "$1" state "$2" | jq -r .status)" = "$3" ]
}

sd_unit_gone() {
        ! sd_as_user timeout 5 /bin/systemctl --user is-active --quiet "$1"
}

# sd_limits DIR MEMORY PIDS: the container's cgroup holds those limits.
sd_limits() {
        echo "$1: memory.max $(cat "$1/memory.max") pids.max $(cat "$1/pids.max")"
        [ "$(cat "$1/memory.max")" = "$2" ] && [ "$(cat "$1/pids.max")" = "$3" ]
}

# sd_lifecycle RUNTIME ID: exec, pause and resume, update, kill and delete of a running
# container, as the user; its cgroup (CG_OF) is gone after delete.
sd_lifecycle() {
        rc=0
        sd_as_user "$1" exec "$2" sh -c 'exit 3' || rc=$?
        echo "$1 exec: exit $rc"
        [ "$rc" -eq 3 ]
        # no cgroup namespace in `spec --rootless`: the exec'd process sees its cgroup
        [ "$(sd_as_user "$1" exec "$2" cat /proc/self/cgroup)" = "0::${CG_OF#"$CG"}" ]
        sd_as_user "$1" pause "$2"
        sd_status "$1" "$2" paused
        grep -qx 'frozen 1' "$CG_OF/cgroup.events"
        sd_as_user "$1" resume "$2"
        sd_status "$1" "$2" running
        grep -qx 'frozen 0' "$CG_OF/cgroup.events"
        sd_as_user "$1" update --memory 67108864 --pids-limit 40 "$2"
        sd_limits "$CG_OF" 67108864 40
        sd_as_user "$1" kill "$2" KILL
        until_true 10 sd_status "$1" "$2" stopped
        sd_as_user "$1" delete "$2"
}

sd_teardown() {
        for i in sd1 sd2 sd3; do sd_as_user "$MSP" delete --force $i >/dev/null 2>&1; done
        sd_as_user /usr/sbin/runc delete --force sr1 >/dev/null 2>&1
        [ -f "$W/sd.pid" ] && kill -TERM "$(cat "$W/sd.pid")" 2>/dev/null
        until_true 30 sd_gone || { echo 1 >"$RL_D/cgroup.kill"; until_true 10 sd_gone; }
        find "$RL_D" -depth -type d -exec rmdir {} \; 2>/dev/null
        rm -rf "$SD_XDG" /run/systemd
}

sd_body() {
        delegate_user_subtree term.scope
        mkdir -p "$SD_XDG"
        chown $RL_UID:$RL_UID "$SD_XDG"
        chmod 0700 "$SD_XDG"
        # systemd --user refuses to start unless the system was booted with systemd
        # (sd_booted(3): /run/systemd/system exists); the guest's PID 1 is busybox init
        mkdir -p /run/systemd/system
        [ -s /etc/machine-id ] || tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id
        (
                echo 0 >"$RL_D/cgroup.procs"
                exec env -i $SD_ENV SYSTEMD_LOG_TARGET=console /usr/bin/setpriv \
                        --reuid=$RL_UID --regid=$RL_UID --clear-groups --inh-caps=-all \
                        /lib/systemd/systemd --user
        ) </dev/null >"$W/sd.log" 2>&1 &
        echo $! >"$W/sd.pid"
        until_true 60 test -S "$SD_XDG/systemd/private" || { cat "$W/sd.log"; false; }
        until_true 60 sd_running || { cat "$W/sd.log"; false; }
        until_true 30 test -S "$SD_XDG/bus"
        # the bundle: `spec --rootless`, memory, pids and cpu limits, a long sleep
        mkdir -p "$W/sd"
        cp -a "$BASE/rootfs" "$W/sd/rootfs"
        chown -R $RL_UID:$RL_UID "$W/sd"
        sd_as_user sh -c "cd $W/sd && $MSP spec --rootless"
        jq '.process.terminal = false | .root.readonly = false
                | .linux.resources = {"memory": {"limit": 33554432}, "pids": {"limit": 50},
                                      "cpu": {"quota": 50000, "period": 100000}}
                | .process.args = ["/bin/sleep", "1000"]' "$W/sd/config.json" >"$W/sd/c.json"
        mv "$W/sd/c.json" "$W/sd/config.json"
        chown $RL_UID:$RL_UID "$W/sd/config.json"

        # msp: the manager makes a transient scope, user.slice/msp-ID.scope (StartTransientUnit
        # over the session bus, Delegate=yes); the container runs in a leaf below it with the
        # limits, which the manager never rewrites: all three survive daemon-reload
        sd_scope "$MSP" --systemd-cgroup run -d -b "$W/sd" sd1 </dev/null >"$W/sd1.out" 2>&1 ||
                { cat "$W/sd1.out"; false; }
        cat "$W/sd1.out"
        ! grep -q warning "$W/sd1.out"
        pid=$(sd_as_user "$MSP" state sd1 | jq -r .pid)
        cat "/proc/$pid/cgroup"
        grep -qx "0::/$PFX/user@$RL_UID.service/user.slice/msp-sd1.scope/container" "/proc/$pid/cgroup"
        sd_as_user timeout 5 /bin/systemctl --user is-active msp-sd1.scope
        CG_OF=$RL_D/user.slice/msp-sd1.scope/container
        sd_limits "$CG_OF" 33554432 50
        [ "$(cat "$CG_OF/cpu.max")" = "50000 100000" ]
        sd_as_user timeout 30 /bin/systemctl --user daemon-reload
        sd_limits "$CG_OF" 33554432 50
        [ "$(cat "$CG_OF/cpu.max")" = "50000 100000" ]
        sd_lifecycle "$MSP" sd1
        until_true 10 sd_unit_gone msp-sd1.scope
        until_true 10 test ! -e "$RL_D/user.slice/msp-sd1.scope"
        [ -z "$(ls "$SD_XDG/msp")" ]
        # a second container, deleted while it runs: delete stops its unit
        sd_scope "$MSP" --systemd-cgroup run -d -b "$W/sd" sd2 </dev/null >"$W/sd2.out" 2>&1 ||
                { cat "$W/sd2.out"; false; }
        sd_as_user timeout 5 /bin/systemctl --user is-active msp-sd2.scope
        sd_as_user "$MSP" delete --force sd2
        sd_unit_gone msp-sd2.scope
        until_true 10 test ! -e "$RL_D/user.slice/msp-sd2.scope"
        # a unit that exists already: the error names it and the manager's D-Bus error
        sd_scope "$MSP" --systemd-cgroup run -d -b "$W/sd" sd3 </dev/null >"$W/sd3.out" 2>&1 ||
                { cat "$W/sd3.out"; false; }
        rc=0
        sd_as_user "$MSP" --root "$SD_XDG/msp2" --systemd-cgroup run -d -b "$W/sd" sd3 </dev/null \
                >"$W/sd3b.out" 2>&1 || rc=$?
        cat "$W/sd3b.out"
        [ "$rc" -ne 0 ]
        grep -q "start unit msp-sd3.scope: org.freedesktop.systemd1.UnitExists" "$W/sd3b.out"
        [ -z "$(ls "$SD_XDG/msp2" 2>/dev/null)" ]
        sd_as_user "$MSP" delete --force sd3
        until_true 10 sd_unit_gone msp-sd3.scope

        # runc 1.1.5 on the same bundle: the manager makes a transient scope unit
        # user.slice/runc-ID.scope (StartTransientUnit over the session bus)
        [ -x /usr/sbin/runc ] || { echo "no runc in the guest to compare with"; return 0; }
        sd_scope /usr/sbin/runc --systemd-cgroup run -d -b "$W/sd" sr1 </dev/null \
                >"$W/sr1.out" 2>&1 || { cat "$W/sr1.out"; false; }
        pid=$(sd_as_user /usr/sbin/runc state sr1 | jq -r .pid)
        cat "/proc/$pid/cgroup"
        grep -qx "0::/$PFX/user@$RL_UID.service/user.slice/runc-sr1.scope" "/proc/$pid/cgroup"
        sd_as_user timeout 5 /bin/systemctl --user is-active runc-sr1.scope
        CG_OF=$RL_D/user.slice/runc-sr1.scope
        sd_limits "$CG_OF" 33554432 50
        # a unit with a CPU quota: the manager keeps cpu enabled for it
        sd_as_user timeout 30 /bin/systemctl --user daemon-reload
        sd_limits "$CG_OF" 33554432 50
        [ "$(cat "$CG_OF/cpu.max")" = "50000 100000" ]
        sd_lifecycle /usr/sbin/runc sr1
        until_true 10 sd_unit_gone runc-sr1.scope
        until_true 10 test ! -e "$CG_OF"
        [ -z "$(ls "$SD_XDG/runc")" ]
}

# Bounded teardown whatever sd_body did: the containers, the manager and its processes
# (SIGTERM, then cgroup.kill), the cgroups, the runtime dir.
t_systemd_user() {
        set +e
        (set -e; sd_body)
        rc=$?
        sd_teardown
        return $rc
}

# The runtime/lib unit tests that are mode-aware (OOM, pids, destroy, eBPF, freeze...),
# and test-rt-lsm with an LSM (AppArmor) active,
# run here against real cgroup v2.
t_unit() {
        ran=0
        for u in /vm/unit/*; do
                [ -x "$u" ] || continue
                ran=1
                rc=0
                "$u" >"$W/unit.out" 2>&1 || rc=$?
                echo "$(basename "$u"): exit $rc, $(grep -c '^ok' "$W/unit.out") ok," \
                        "$(grep -c '^not ok' "$W/unit.out") not ok"
                grep -E '^not ok|^# ' "$W/unit.out" | tail -n 20
                [ "$rc" -eq 0 ]
        done
        [ "$ran" = 1 ]
}

mkdir -p "$W" "$ROOT"
t "cgroup2 is the only cgroup file system" t_mode
t "memory: a hog is OOM-killed at 32 MiB (exit 137, memory.events oom_kill)" t_oom
t "pids: a fork bomb stops at pids.max 20 and the container exits" t_pids
t "cpu: cpu.max 20% holds a busy loop under 40% of a CPU" t_cpu
t "update: memory.max, pids.max, cpu.max, cpu.weight change live" t_update
t "pause/resume: cgroup.freeze stops the counter and thaws it" t_freeze
t "devices: the eBPF filter denies d0, allows d1 for reading, null and zero" t_devices
t "kill --all: every process, without a pid namespace; cgroup.kill when paused" t_kill_all
t "ps and events --stats" t_ps_events
t "cgroup tree: ps and kill --all reach '.x' and 17 deep; delete --force removes them and a 200-deep chain" t_cgroup_tree
t "landlock on an older kernel: strict names the missing right, best effort drops it" t_landlock_old_abi
t "apparmor: the exec label through the private procfs handle" t_apparmor
t "apparmor: features says enabled; msp exec applies the label, refuses an unknown profile" t_apparmor_exec
if [ -x /usr/sbin/apparmor_parser ]; then
        t "apparmor: a loaded profile confines the container's process" t_apparmor_profile
else
        n=$((n + 1))
        say "ok $n - apparmor: a loaded profile confines the container's process # SKIP no apparmor_parser on the host (Debian package apparmor)"
fi
t "rootless: without delegation a limit is refused; with a delegated subtree the container's cgroup beside the user's scope, limits, pause, delete; --systemd-cgroup refused without a user manager" t_rootless_delegated
t "rootless: a container's own cgroup tree in the delegated subtree: ps and kill --all reach '.x' and 17 deep, delete --force removes it" t_rootless_tree
t "rootless msp-mcp in a delegated subtree: --check names the cgroup limits; a memory hog is oom_killed, a fork bomb stops at pids.max 20, the cgroups are gone after" t_rootless_mcp
sd_name="rootless --systemd-cgroup under a live user manager (systemd --user): msp asks it for a transient scope msp-ID.scope (D-Bus StartTransientUnit) and limits a leaf below it; memory, pids and cpu survive daemon-reload; exec, pause, resume, update, kill, delete leave no unit, cgroup or state; an existing unit is an error naming it; runc the same"
if [ -x /lib/systemd/systemd ]; then
        t "$sd_name" t_systemd_user
else
        n=$((n + 1))
        say "ok $n - $sd_name # SKIP no systemd, dbus-daemon and dbus-user-session on the host (contrib/install-deps.sh vm)"
fi
if [ -d /vm/unit ]; then
        t "runtime/lib unit tests in cgroup v2 mode" t_unit
fi
rmdir "$CG/$PFX" 2>/dev/null
n=$((n + 1))
if [ -z "$(find "$CG" -mindepth 1 -maxdepth 1 -type d -name 'msp*')" ]; then
        say "ok $n - no msp cgroup left in the guest"
else
        say "not ok $n - no msp cgroup left in the guest"
        find "$CG" -mindepth 1 -maxdepth 1 -type d -name 'msp*' | sed 's/^/VMTAP #   /'
fi
