# Shared setup for tests/podman-rootless: Debian's podman, run as the unprivileged test
# user (tests/helper/test-user.sh), driving the built msp, and runc on the same input.
#
# The suite runs as root only to make the user and its directory; every podman command
# runs as the user, with podman's whole state private to this run, in one directory
# $PR_DIR (/tmp/msp-podman-rootless.XXXXXX, owned by the user, mode 0700):
#   home/                              HOME for podman; the user's real home is never
#                                      read nor written. HOME, not XDG_CONFIG_HOME: podman
#                                      hands conmon HOME, and conmon's exit command
#                                      (`podman container cleanup`) must find the same
#                                      containers.conf, or it knows no runtime "msp"
#   home/.config/containers/containers.conf
#                                      the user-level containers.conf a rootless user
#                                      writes (docs/PODMAN.md): contrib/podman/50-msp.conf.in
#                                      with the built msp, plus the lines that keep
#                                      podman's files in $PR_DIR
#   bin/msp                            a copy of the built msp, which podman runs
#   root/, runroot/                    --root/--runroot, native overlay in the user
#                                      namespace (kernel >= 5.13; no fuse-overlayfs needed)
#   tmp/                               tmp_dir: podman's pause process pid file
# The image is busybox from busybox-static, imported with `podman import`.

load ../lib/bats-helpers
TEST_USER="$REPO/tests/helper/test-user.sh"
PR_IMAGE=localhost/msp-busybox:rootless

# as_user CMD...: CMD as the test user, with a login's environment and the private HOME,
# in $PR_DIR (the caller's directory may be one the user cannot enter).
as_user() {
        "$TEST_USER" run env -C "$PR_DIR" HOME="$PR_DIR/home" "$@" 3>&-
}

# pm [PODMAN OPTIONS]: podman as the test user on the private state, runtime $PR_RT
# (default msp). $PR_DIR/pm is the same as a program, for pty_run.
pm() {
        "$PR_DIR/pm" "$@" 3>&-
}
ENGINE_CLI=pm

# for_runtimes BODY-FUNCTION: run the function with PR_RT=runc, then PR_RT=msp (runc is
# the control: a scenario that fails with runc is the test's fault, not msp's).
# PR_RUNTIMES narrows the list by hand (e.g. PR_RUNTIMES=runc to check the suite alone).
for_runtimes() {
        local rt
        for rt in ${PR_RUNTIMES:-runc msp}; do
                # (no `||` here: it would turn off errexit inside the body)
                echo "# --- $rt"
                PR_RT=$rt "$@"
        done
}

pr_setup_file() {
        [ "$(id -u)" = 0 ] || { echo "tests/podman-rootless runs as root (it makes the test user)" >&2; return 1; }
        local need=()
        command -v podman >/dev/null 2>&1 && command -v conmon >/dev/null 2>&1 || need+=(podman)
        command -v newuidmap >/dev/null 2>&1 && command -v slirp4netns >/dev/null 2>&1 || need+=(rootless)
        if [ "${#need[@]}" -gt 0 ]; then
                bash "$REPO/contrib/install-deps.sh" "${need[@]}" >&2 || true
        fi
        # Loud, never a skip: CI installs these through contrib/install-deps.sh.
        local c
        for c in podman conmon newuidmap newgidmap slirp4netns runc; do
                command -v "$c" >/dev/null 2>&1 ||
                        { echo "$c is missing (contrib/install-deps.sh podman rootless)" >&2; return 1; }
        done
        [ -x "$MSP" ] || { echo "MSP=$MSP is not an executable" >&2; return 1; }
        [ -x /bin/busybox ] || { echo "/bin/busybox missing (busybox-static)" >&2; return 1; }
        eval "$("$TEST_USER" ensure)"
        export MSP_TEST_USER MSP_TEST_UID MSP_TEST_GID MSP_TEST_HOME MSP_TEST_XDG \
                MSP_TEST_SUBID_START MSP_TEST_SUBID_COUNT

        PR_DIR=$(mktemp -d /tmp/msp-podman-rootless.XXXXXX)
        # A copy of the built msp: the build tree may sit where the user cannot reach
        # (a clone under /root in CI).
        PR_MSP=$PR_DIR/bin/msp
        export PR_DIR PR_MSP
        install -D -m 0755 "$MSP" "$PR_MSP"
        mkdir -p "$PR_DIR/home/.config/containers" "$PR_DIR/tmp" "$PR_DIR/vol"
        # The user-level containers.conf a rootless user writes (docs/PODMAN.md), plus
        # what keeps podman's files in $PR_DIR.
        sed "s|@MSP_PATH@|$PR_MSP|; s|@DROPIN_DIR@|~/.config/containers|" \
                "$REPO/contrib/podman/50-msp.conf.in" |
                awk -v d="$PR_DIR" '{ print } $0 == "[engine]" {
                        print "events_logger = \"file\""
                        print "events_logfile_path = \"" d "/events.log\""
                        print "tmp_dir = \"" d "/tmp\""
                        print "volume_path = \"" d "/volumes\""
                }' >"$PR_DIR/home/.config/containers/containers.conf"

        cat >"$PR_DIR/pm" <<EOF
#!/bin/sh
exec "$TEST_USER" run env -C "$PR_DIR" HOME="$PR_DIR/home" \\
        podman --runtime "\${PR_RT:-msp}" --root "$PR_DIR/root" --runroot "$PR_DIR/runroot" \\
        --storage-driver overlay "\$@"
EOF
        chmod 0755 "$PR_DIR/pm"

        busybox_rootfs "$PR_DIR/rootfs"
        chown -R "$MSP_TEST_UID:$MSP_TEST_GID" "$PR_DIR"
        chmod 0700 "$PR_DIR"
        as_user tar -C "$PR_DIR/rootfs" -c . |
                pm import --change 'CMD ["/bin/sh"]' - "$PR_IMAGE" >/dev/null
}

# The pid of podman's pause process (it holds the user and mount namespaces), or nothing.
pr_pause_pid() {
        local p
        p=$(cat "$PR_DIR/tmp/pause.pid" 2>/dev/null) || return 0
        [ -n "$p" ] && [ "$(stat -c %u "/proc/$p" 2>/dev/null)" = "$MSP_TEST_UID" ] && echo "$p"
        return 0
}

pr_teardown_file() {
        [ -n "${PR_DIR:-}" ] && [ -d "$PR_DIR" ] || return 0
        local rt p
        for rt in msp runc; do
                PR_RT=$rt pm rm -af -t 0 >/dev/null 2>&1 || true
        done
        pm rmi -af >/dev/null 2>&1 || true
        # The pause process this run's podman started: its namespaces (and the overlay
        # mounts in them) go with it.
        p=$(pr_pause_pid)
        if [ -n "$p" ]; then
                kill -KILL "$p" 2>/dev/null || true
                for _ in $(seq 50); do
                        [ -d "/proc/$p" ] || break
                        sleep 0.1
                done
        fi
        rm -rf "$PR_DIR"
}

# teardown: containers a failed test left behind (a passing one removed its own).
pr_teardown() {
        local rt
        for rt in msp runc; do
                PR_RT=$rt pm rm -af -t 0 >/dev/null 2>&1 || true
        done
}

# Container IDs this podman ever created (from its event log).
pr_ids() {
        grep -o '"ID":"[0-9a-f]\{64\}","Image"' "$PR_DIR/events.log" 2>/dev/null |
                cut -d'"' -f4 | sort -u
}

# What is left of our containers, one line each; empty when all is clean: podman's
# containers, the runtimes' state under $XDG_RUNTIME_DIR, conmon and container
# processes, mounts in the user's namespace (the pause process's) and on the host.
pr_leftovers() {
        local id p
        pm ps -a --format '{{.ID}} {{.Names}} {{.Status}}' | sed 's/^/container: /'
        p=$(pr_pause_pid)
        for id in $(pr_ids); do
                for rt in msp runc; do
                        [ -e "$MSP_TEST_XDG/$rt/$id" ] && echo "$rt state: $MSP_TEST_XDG/$rt/$id"
                done
                pgrep -u "$MSP_TEST_UID" -f "$id" | sed 's/^/process of '"${id:0:12}"': /'
                [ -n "$p" ] && grep -F "$id" "/proc/$p/mountinfo" | awk '{print "mount (userns): " $5}'
        done
        grep -F " $PR_DIR/" /proc/self/mountinfo | awk '{print "mount: " $5}'
        return 0
}

# assert_clean: nothing of this test's containers is left (wait_clean polls).
assert_clean() {
        wait_clean pr_leftovers
}
