#!/usr/bin/env bats
# Race attacks through a second container (docs/SECURITY_MODEL.md, "Known container
# escapes"): a racer container shares a volume with the container being created and swaps
# names in it with renameat2(RENAME_EXCHANGE) while msp sets the victim up. Each test first
# shows, from inside the victim, that the race really changes what a name resolves to (a
# write or a mount by that name would land on the attacker's target), then runs the victim
# many times under the race and asserts that msp never followed it: the runtime's writes
# and mounts land where they should, and nothing outside the rootfs changed.

load helpers

setup_file() {
        # The racer: a static binary inside the racer container (busybox has no
        # renameat2). Compiled here so that the attack lives in this file.
        RACER_BIN="$BATS_FILE_TMPDIR/racer"
        export RACER_BIN
        command -v cc >/dev/null || return 0
        cat >"$BATS_FILE_TMPDIR/racer.c" <<'EOF'
/* racer FIFO SECS LINKTARGET A B: exchange A and B (RENAME_EXCHANGE) for at most SECS
 * seconds; when one of them is missing (the victim's runtime removed it), put back a
 * symlink to LINKTARGET under that name so that the attack goes on. Writes "ready" to
 * FIFO after the first exchange. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
        if (argc != 6)
                return 2;
        time_t end = time(NULL) + atoi(argv[2]);
        int ready = 0;
        for (unsigned long n = 0;; n++) {
                if (renameat2(AT_FDCWD, argv[4], AT_FDCWD, argv[5], RENAME_EXCHANGE) < 0 &&
                    errno == ENOENT) {
                        symlink(argv[3], argv[4]);
                        symlink(argv[3], argv[5]);
                }
                if (!ready) {
                        int fd = open(argv[1], O_WRONLY | O_CLOEXEC);
                        if (fd >= 0) {
                                (void) !write(fd, "ready\n", 6);
                                close(fd);
                        }
                        ready = 1;
                }
                if (n % 4096 == 0 && time(NULL) >= end)
                        return 0;
        }
}
EOF
        cc -static -O2 -o "$RACER_BIN" "$BATS_FILE_TMPDIR/racer.c" 2>"$BATS_FILE_TMPDIR/racer.cc" ||
                rm -f "$RACER_BIN"
}

setup() {
        [ -x "$RACER_BIN" ] || skip "no static C compiler for the racer (cc -static failed)"
        setup_bundle
        OUTSIDE="$BATS_TEST_TMPDIR/outside"
        mkdir -p "$OUTSIDE"
        echo host-secret >"$OUTSIDE/secret"
        VOL="$BATS_TEST_TMPDIR/vol"
        mkdir -p "$VOL"
        cp "$RACER_BIN" "$BUNDLE/rootfs/bin/racer"
        RACER_ID="$CID-racer"
}

teardown() {
        teardown_containers
}

# outside_snapshot: the outside dir (names, types, sizes, contents) and any host mount
# that mentions it or the volume.
outside_snapshot() {
        (cd "$OUTSIDE" && find . -printf '%p %y %m %s\n' | sort &&
                find . -type f -exec sha256sum {} + | sort)
        grep -F -e "$OUTSIDE" -e "$VOL" /proc/self/mountinfo || true
}

# start_racer LINKTARGET A B: the racer container, with the volume at /vol (rw), swapping
# /vol/A and /vol/B; returns once it has made its first exchange.
start_racer() {
        local rb="$BATS_TEST_TMPDIR/racer-bundle"
        mkdir -p "$rb"
        rm -f "$VOL/.ready"
        mkfifo "$VOL/.ready"
        jq --arg root "$BUNDLE/rootfs" --arg vol "$VOL" --arg cg "/$CGROUP_PREFIX/$RACER_ID" \
                --arg t "$1" --arg a "/vol/$2" --arg b "/vol/$3" \
                '.root = {path: $root, readonly: true} | .linux.cgroupsPath = $cg |
                 .mounts += [{destination: "/vol", type: "bind", source: $vol,
                              options: ["rbind", "rw"]}] |
                 .process.args = ["/bin/racer", "/vol/.ready", "120", $t, $a, $b]' \
                "$REPO/bundles/busybox/config.json" >"$rb/config.json"
        msp create -b "$rb" "$RACER_ID" >"$BATS_TEST_TMPDIR/racer.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/racer.out"; return 1; }
        msp start "$RACER_ID"
        timeout 10 cat "$VOL/.ready"
}

# (the racer stops by itself after 120 s: on a slow machine it may be gone already)
stop_racer() {
        msp kill "$RACER_ID" KILL 2>/dev/null || true
        msp delete --force "$RACER_ID"
}

# ---- CVE-2025-52881: runtime writes under /proc ----

# The victim mounts the shared volume over /proc/sys/kernel (a volume the attacker
# controls, as in the advisory) and sets the sysctl kernel.domainname. In the volume the
# racer swaps the file "domainname" (a decoy) with a symlink to /canary/secret, where the
# victim has a host directory mounted. A runtime that wrote the sysctl by the name
# /proc/sys/kernel/domainname (runc < 1.2.8 did, after pivot_root) would write into the
# decoy or, through the symlink, into the host file; msp writes through its private procfs
# instance, where neither the volume nor the symlink exists.
@test "CVE-2025-52881: a racing container's volume over /proc/sys cannot redirect msp's sysctl write" {
        echo decoy >"$VOL/domainname"
        update_config ".mounts += [{destination: \"/proc/sys/kernel\", type: \"bind\",
                        source: \"$VOL\", options: [\"rbind\", \"rw\"]},
                {destination: \"/canary\", type: \"bind\", source: \"$OUTSIDE\",
                        options: [\"rbind\", \"rw\"]}]
                | .linux.readonlyPaths -= [\"/proc/sys\"]"
        start_racer /canary/secret domainname domainname-link
        # Control: what a write by that name achieves under the race. The victim's own
        # process plays the naive runtime (same mount namespace, same moment: after the
        # mounts, before anything else); within a bounded number of runs the write lands
        # in the host file.
        set_args /bin/msp-helper write /proc/sys/kernel/domainname
        landed=0
        for i in $(seq 300); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                if grep -q msp-helper "$OUTSIDE/secret"; then
                        landed=$i
                        break
                fi
        done
        echo "a write by name reached the host file in run $landed"
        [ "$landed" -gt 0 ]
        # Reset what the control wrote, with the racer stopped (a write by name now would
        # race it too), then race again.
        stop_racer
        echo host-secret >"$OUTSIDE/secret"
        for f in domainname domainname-link; do
                [ -L "$VOL/$f" ] || echo decoy >"$VOL/$f"
        done
        start_racer /canary/secret domainname domainname-link
        snap=$(outside_snapshot)
        # The attack: msp sets the sysctl under the same race.
        update_config '.linux.sysctl = {"kernel.domainname": "msp-race"}'
        set_args /bin/msp-helper domainname
        ok=0
        for i in $(seq 40); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                [ "$status" -eq 0 ] || { echo "run $i: $status $output"; false; }
                # the real sysctl took effect ...
                [ "$(value domainname)" = msp-race ] || { echo "run $i: $output"; false; }
                ok=$((ok + 1))
        done
        stop_racer
        # ... and nothing else was written: not the host file, not the decoy.
        [ "$(outside_snapshot)" = "$snap" ]
        for f in domainname domainname-link; do
                [ -L "$VOL/$f" ] || [ "$(cat "$VOL/$f")" = decoy ]
        done
        echo "$ok of 40 runs set the real sysctl"
        assert_nothing_left "$CID"
        assert_nothing_left "$RACER_ID"
}

# ---- CVE-2025-52565: the console ----

# The victim's /dev is the shared volume (a bind mount instead of a tmpfs). The racer
# swaps /dev/console (an image file) with a symlink to /canary/secret, a host file the
# victim has mounted. A runtime that bound the pty onto the name /dev/console (or
# re-opened /dev/pts/N by name) would, in the runs that see the symlink, mount the pty
# over /canary/secret. msp removes whatever is at /dev/console, creates a new file with
# O_EXCL|O_NOFOLLOW and binds the TIOCGPTPEER peer onto the fd of that file.
@test "CVE-2025-52565: a racing container swapping /dev/console for a symlink: the pty is bound only onto msp's own file" {
        mkdir -p "$VOL/pts" "$VOL/shm" "$VOL/mqueue"
        mknod -m 666 "$VOL/null" c 1 3
        echo decoy >"$VOL/console"
        update_config ".mounts |= map(if .destination == \"/dev\" then
                        {destination: \"/dev\", type: \"bind\", source: \"$VOL\",
                         options: [\"rbind\", \"rw\"]} else . end)
                | .mounts += [{destination: \"/canary\", type: \"bind\",
                        source: \"$OUTSIDE\", options: [\"rbind\", \"rw\"]}]"
        start_racer /canary/secret console console-link
        # Control: the name /dev/console seen from the victim flips between the decoy and
        # the symlink to the host file within a bounded number of runs.
        set_args /bin/msp-helper stat /dev/console
        seen_link=0 seen_file=0
        for i in $(seq 300); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                case "$(value stat.mode)" in
                120*) seen_link=1 ;;
                100*) seen_file=1 ;;
                esac
                [ $((seen_link + seen_file)) -lt 2 ] || break
        done
        echo "the victim saw the symlink: $seen_link, a file: $seen_file (after $i runs)"
        [ "$seen_link" = 1 ] && [ "$seen_file" = 1 ]
        snap=$(outside_snapshot)
        # The attack: the console is set up under the race.
        update_config '.process.terminal = true'
        set_args /bin/msp-helper tty -- stat /canary/secret
        ok=0
        for i in $(seq 40); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                output=$(printf '%s\n' "$output" | tr -d '\r')
                if [[ "$output" == *tty.0=1* ]]; then
                        ok=$((ok + 1))
                        # stdin is the pty and the host file is still the host file
                        [[ "$(value stat.mode)" == 100* ]] || { echo "run $i: $output"; false; }
                else
                        # refused (the race hit between the remove and the create)
                        echo "run $i: $status ${output:0:160}"
                        [ "$status" -ne 0 ]
                fi
                [ "$(cat "$OUTSIDE/secret")" = host-secret ]
        done
        stop_racer
        echo "$ok of 40 runs got a console"
        [ "$ok" -gt 0 ]
        [ "$(outside_snapshot)" = "$snap" ]
        assert_nothing_left "$CID"
        assert_nothing_left "$RACER_ID"
}

# ---- CVE-2025-52881 / CVE-2021-30465: a mount target in a shared volume ----

# The victim mounts the shared volume at /mnt/v and then a bind mount at /mnt/v/target,
# a destination inside the volume. The racer exchanges "target" (a directory) with a
# symlink to the outside directory. A runtime that mounted onto the path string (runc
# before 1.0.0-rc95) would, in the runs that see the symlink, mount over the outside
# directory; /shared, an rbind of the outside directory made after it, would then show
# that mount. msp resolves the destination once beneath the root fd and mounts onto that
# fd, so an absolute symlink stays inside the rootfs.
@test "CVE-2021-30465: a racing container swapping a mount target in a shared volume cannot move the mount outside" {
        mkdir -p "$VOL/target" "$BATS_TEST_TMPDIR/src"
        echo from-src >"$BATS_TEST_TMPDIR/src/file"
        update_config ".mounts += [
                {destination: \"/mnt/v\", type: \"bind\", source: \"$VOL\", options: [\"rbind\", \"rw\"]},
                {destination: \"/mnt/v/target\", type: \"bind\", source: \"$BATS_TEST_TMPDIR/src\",
                 options: [\"rbind\"]},
                {destination: \"/shared\", type: \"bind\", source: \"$OUTSIDE\",
                 options: [\"rbind\", \"ro\"]}]"
        start_racer "$OUTSIDE" target target-link
        # Control: the victim sees the name flip between the directory and the symlink.
        # (without the racing mount, so that the name itself is seen)
        update_config '.mounts |= map(select(.destination != "/mnt/v/target"))'
        set_args /bin/msp-helper stat /mnt/v/target-link
        seen_link=0 seen_dir=0
        for i in $(seq 300); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                case "$(value stat.mode)" in
                120*) seen_link=1 ;;
                040*) seen_dir=1 ;;
                esac
                [ $((seen_link + seen_dir)) -lt 2 ] || break
        done
        echo "the victim saw the symlink: $seen_link, the directory: $seen_dir (after $i runs)"
        [ "$seen_link" = 1 ] && [ "$seen_dir" = 1 ]
        update_config ".mounts |= (.[0:-1] + [{destination: \"/mnt/v/target\", type: \"bind\",
                source: \"$BATS_TEST_TMPDIR/src\", options: [\"rbind\"]}] + .[-1:])"
        [ "$(jq -r '.mounts[-2].destination' "$BUNDLE/config.json")" = /mnt/v/target ]
        snap=$(outside_snapshot)
        # The attack.
        set_args /bin/msp-helper stat /shared/file -- read /mnt/v/target/file
        ok=0
        for i in $(seq 40); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                echo "run $i: $status ${output:0:120}" | tr '\n' ' '
                echo
                # nothing shows through the outside directory's rbind
                [[ "$output" != *stat.mode* ]] || { echo "run $i escaped: $output"; false; }
                [[ "$output" == *read=* ]] && ok=$((ok + 1))
                [ "$(outside_snapshot)" = "$snap" ]
        done
        stop_racer
        echo "$ok of 40 runs started"
        [ "$ok" -gt 0 ]
        [ "$(outside_snapshot)" = "$snap" ]
        assert_nothing_left "$CID"
        assert_nothing_left "$RACER_ID"
}
