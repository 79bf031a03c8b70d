# Run inside a container that may write its cgroup (cgroups.bats "cgroup tree: ...",
# tests/vm/guest-tests.sh t_cgroup_tree), as /cg-writer.sh NAME:DEPTH...: make each chain
# NAME/NAME/... DEPTH levels deep in the first cgroup hierarchy, park one process in ".x"
# and one 17 levels deep ("c/c/...") in every hierarchy (/sys/fs/cgroup itself on a
# cgroup2 host; on a v1 or hybrid one each hierarchy there plus, with CAP_SYS_ADMIN, the
# cgroup2 one mounted at /tmp/unified), print their output up to "ready=1", then
# "parked", and sleep. msp-helper cgnest/cgpark make the chains through fds.
cg=/sys/fs/cgroup hiers=
if [ -e $cg/cgroup.procs ]; then hiers=$cg; else
        for h in $cg/*; do [ -L $h ] || hiers="$hiers $h"; done
        mkdir -p /tmp/unified && mount -t cgroup2 none /tmp/unified && hiers="$hiers /tmp/unified"
fi
[ ! -e $cg/cpuset/cgroup.clone_children ] || echo 1 >$cg/cpuset/cgroup.clone_children
first=${hiers# }
first=${first%% *}
for chain in "$@"; do
        msp-helper cgnest $first ${chain%:*} ${chain#*:} || exit 1
done
dot= deep=
for h in $hiers; do dot="$dot cgpark $h .x 1 --"; deep="$deep cgpark $h c 17 --"; done
mkfifo /tmp/f1 /tmp/f2
msp-helper $dot sleep-forever >/tmp/f1 &
msp-helper $deep sleep-forever >/tmp/f2 &
for f in /tmp/f1 /tmp/f2; do
        while read -r line && echo "$line" && [ "$line" != ready=1 ]; do :; done <$f
done
echo parked
exec sleep 1000
