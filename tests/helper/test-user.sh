#!/usr/bin/env bash
# The unprivileged user the rootless suites run as (msp, rootless podman, msp-mcp).
#
#   tests/helper/test-user.sh ensure      create it when missing (as root); print its env
#   tests/helper/test-user.sh env         print its env (KEY=VALUE lines, for eval)
#   tests/helper/test-user.sh run CMD...  run CMD as the user, with a login's environment
#
# What `ensure` makes, idempotently (a second call changes nothing):
#   - the user $MSP_TEST_USER (default msp-rootless) with its own group and a home under
#     /home, no password, no supplementary groups;
#   - one subordinate range each in /etc/subuid and /etc/subgid, which newuidmap and
#     newgidmap (Debian `uidmap`, contrib/install-deps.sh rootless) read: the one useradd
#     allots (Debian's login.defs gives new users 65536 ids), or else 65536 ids from
#     $MSP_TEST_SUBID_START (default 655360);
#   - its runtime directory /run/user/UID, owned by it, mode 0700, as pam_systemd makes it
#     on a login (no systemd here).
# `env` prints MSP_TEST_USER, MSP_TEST_UID, MSP_TEST_GID, MSP_TEST_HOME, MSP_TEST_XDG
# (XDG_RUNTIME_DIR), MSP_TEST_SUBID_START and MSP_TEST_SUBID_COUNT.
# `run` keeps no capability and no root group: the command sees what a user logged in
# over ssh would (HOME, USER, LOGNAME, XDG_RUNTIME_DIR, a default PATH), plus any
# MSP_* and TMPDIR variables of the caller. The bounding set stays full, as on a login:
# setuid newuidmap/newgidmap gain CAP_SETUID/CAP_SETGID from it (an empty one makes them
# fail with "open of uid_map failed: Permission denied").
set -euo pipefail

user=${MSP_TEST_USER:-msp-rootless}
subid_start=${MSP_TEST_SUBID_START:-655360}
subid_count=65536

die() {
        echo "test-user: $*" >&2
        exit 1
}

# add_subid_range FILE: the user's range, unless FILE already grants it one.
add_subid_range() {
        local file=$1
        touch "$file"
        grep -q "^$user:" "$file" && return 0
        if awk -F: -v s="$subid_start" -v c="$subid_count" \
                '$2 < s + c && s < $2 + $3 { found = 1 } END { exit !found }' "$file"; then
                die "$file: ids $subid_start+$subid_count overlap another range; set MSP_TEST_SUBID_START"
        fi
        echo "$user:$subid_start:$subid_count" >> "$file"
}

ensure() {
        [ "$(id -u)" = 0 ] || die "ensure needs root (it creates the user $user)"
        if ! getent passwd "$user" >/dev/null; then
                useradd --create-home --user-group --shell /bin/bash "$user" ||
                        die "useradd $user failed"
        fi
        add_subid_range /etc/subuid
        add_subid_range /etc/subgid
        local uid gid xdg
        uid=$(id -u "$user")
        gid=$(id -g "$user")
        xdg=/run/user/$uid
        mkdir -p /run/user
        [ -d "$xdg" ] || install -d -m 0700 -o "$uid" -g "$gid" "$xdg"
        [ "$(stat -c '%u %a' "$xdg")" = "$uid 700" ] ||
                die "$xdg exists but is not owned by $user with mode 0700"
}

print_env() {
        getent passwd "$user" >/dev/null || die "no user $user (run: $0 ensure)"
        local range
        range=$(grep "^$user:" /etc/subuid 2>/dev/null | head -n 1) ||
                die "/etc/subuid has no range for $user (run: $0 ensure)"
        echo "MSP_TEST_USER=$user"
        echo "MSP_TEST_UID=$(id -u "$user")"
        echo "MSP_TEST_GID=$(id -g "$user")"
        echo "MSP_TEST_HOME=$(getent passwd "$user" | cut -d: -f6)"
        echo "MSP_TEST_XDG=/run/user/$(id -u "$user")"
        echo "MSP_TEST_SUBID_START=$(echo "$range" | cut -d: -f2)"
        echo "MSP_TEST_SUBID_COUNT=$(echo "$range" | cut -d: -f3)"
}

run_as_user() {
        [ $# -gt 0 ] || die "run needs a command"
        local uid home keep=() v
        uid=$(id -u "$user") || die "no user $user (run: $0 ensure)"
        home=$(getent passwd "$user" | cut -d: -f6)
        for v in $(compgen -e); do
                case "$v" in MSP_*|TMPDIR) keep+=("$v=${!v}") ;; esac
        done
        exec setpriv --reuid="$uid" --regid="$(id -g "$user")" --init-groups \
                --inh-caps=-all \
                env -i HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
                XDG_RUNTIME_DIR="/run/user/$uid" \
                PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
                "${keep[@]}" "$@"
}

case "${1:-}" in
ensure) ensure; print_env ;;
env) print_env ;;
run) shift; run_as_user "$@" ;;
*) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
