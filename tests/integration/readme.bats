#!/usr/bin/env bats
# The README as a newcomer follows it: its step-by-step block run exactly as written (the
# lines between the walkthrough markers, from a directory whose build/runtime/msp is the
# binary under test and whose bundles/ is the repository's), and contrib/quickstart.sh run
# by an ordinary user in a copy of the tree, with no sudo on the machine's PATH.

load helpers

setup() {
        WALK="$BATS_TEST_TMPDIR/walk"
        mkdir -p "$WALK/build/runtime"
        ln -s "$MSP" "$WALK/build/runtime/msp"
        ln -s "$REPO/bundles" "$WALK/bundles"
        [ -x "$REPO/bundles/busybox/rootfs/bin/busybox" ] ||
                bash "$REPO/bundles/busybox/prepare.sh" >/dev/null
}

teardown() {
        [ -n "${WALKED:-}" ] && "$MSP" delete --force demo >/dev/null 2>&1
        [ -n "${QS_DIR:-}" ] && rm -rf "$QS_DIR"
        return 0
}

# the README's block between the walkthrough markers, without its fences
readme_walkthrough() {
        sed -n '/^<!-- walkthrough:/,/^<!-- end walkthrough -->/p' "$REPO/README.md" |
                sed '1,2d;$d' | sed '$d'
}

@test "README: the lifecycle walkthrough runs as written and leaves nothing" {
        "$MSP" state demo >/dev/null 2>&1 &&
                skip "a container named demo exists on this host (the walkthrough's ID)"
        readme_walkthrough >"$BATS_TEST_TMPDIR/walk.sh"
        grep -q '^build/runtime/msp create --bundle bundles/busybox-service demo' "$BATS_TEST_TMPDIR/walk.sh"
        WALKED=1
        run bash -c "cd '$WALK' && set -e && . '$BATS_TEST_TMPDIR/walk.sh'" </dev/null 3>&-
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *'"status": "created"'* ]]
        [[ "$output" == *"another process in demo"* ]]
        [[ "$output" == *"service up in msp-service"* ]]
        [[ "$output" == *'"pids":{"current":'* ]]
        [[ "$output" == *"stopping"* ]]
        # the ps(1) columns asked for, and the service's shell among the rows
        grep -Eq '^ *PID +USER +COMMAND' <<<"$output"
        [[ "$output" == *"trap 'echo stopping; exit 0' TERM"* ]]
        run "$MSP" state demo
        [ "$status" -ne 0 ]
        [ ! -e /run/msp/demo ]
        [ -z "$(find /sys/fs/cgroup -maxdepth 3 -type d -name demo 2>/dev/null)" ]
}

@test "README: contrib/quickstart.sh run by an ordinary user builds msp and runs the demo in a user namespace" {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        eval "$("$REPO/tests/helper/test-user.sh" ensure)"
        QS_DIR=$(mktemp -d /tmp/msp-quickstart.XXXXXX)
        # the tree as a clone has it: what git tracks, no build or prepared rootfs
        git -C "$REPO" ls-files -z --cached --others --exclude-standard |
                (cd "$REPO" && xargs -0 cp --parents -t "$QS_DIR" 2>/dev/null) || true
        [ -x "$QS_DIR/contrib/quickstart.sh" ]
        chown -R "$MSP_TEST_UID:$MSP_TEST_GID" "$QS_DIR"
        chmod 0755 "$QS_DIR"
        local xdg="$QS_DIR/.xdg"
        mkdir -m 0700 "$xdg"
        chown "$MSP_TEST_UID:$MSP_TEST_GID" "$xdg"
        # a login's environment, and a PATH without sudo
        run env -i HOME="$MSP_TEST_HOME" USER="$MSP_TEST_USER" LOGNAME="$MSP_TEST_USER" \
                PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$xdg" \
                setpriv --reuid="$MSP_TEST_UID" --regid="$MSP_TEST_GID" --clear-groups \
                --inh-caps=-all bash "$QS_DIR/contrib/quickstart.sh" </dev/null 3>&-
        echo "$output" | tail -20
        [ "$status" -eq 0 ]
        [[ "$output" == *"hello from msp: this is msp-demo, a busybox container"* ]]
        [[ "$output" == *"uid=0(root) gid=0(root)"* ]]
        [[ "$output" != *"sudo"* ]]
        [ -z "$(ls -A "$xdg/msp" 2>/dev/null)" ]
        # then the README's install without root, into a prefix under the user's home
        local home="$QS_DIR/home"
        mkdir "$home"
        chown "$MSP_TEST_UID:$MSP_TEST_GID" "$home"
        run env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin \
                setpriv --reuid="$MSP_TEST_UID" --regid="$MSP_TEST_GID" --clear-groups \
                --inh-caps=-all bash -c "cd '$QS_DIR' && meson setup --reconfigure build --prefix '$home/.local' >/dev/null &&
                        ninja -C build >/dev/null && meson install -C build" </dev/null 3>&-
        echo "$output" | tail -5
        [ "$status" -eq 0 ]
        [[ "$output" != *"Traceback"* ]]
        [ -x "$home/.local/bin/msp" ] && [ -x "$home/.local/bin/msp-mcp" ]
        [ -f "$home/.local/share/man/man8/msp.8" ]
        grep -q "^msp = \[\"$home/.local/bin/msp\"\]" "$home/.local/share/msp/podman/50-msp.conf"
}
