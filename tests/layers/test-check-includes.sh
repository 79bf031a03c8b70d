#!/usr/bin/env bash
# TAP: tests/layers/check-includes.py on small trees made here: it passes a tree that keeps
# the order and fails each kind of include against it, naming the file, line and rule.
set -u
check=${CHECK_INCLUDES:?set by tests/meson.build}
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/out"; }

# a tree: low/ (face low/low.h), high/ using low, top.c using both
tree() {
        rm -rf "$tmp/src"
        mkdir -p "$tmp/src/t/low" "$tmp/src/t/high"
        echo '#pragma once' > "$tmp/src/t/low/low.h"
        echo '#pragma once' > "$tmp/src/t/low/low-int.h"
        printf '#include "low/low.h"\n#include "low/low-int.h"\n' > "$tmp/src/t/low/low.c"
        printf '#pragma once\n#include "low/low.h"\n' > "$tmp/src/t/high/high.h"
        printf '#include "high/high.h"\n#include <stdio.h>\n#include "gen.h"\n' > "$tmp/src/t/high/high.c"
        printf '#include "high/high.h"\n#include "low/low.h"\n' > "$tmp/src/t/top.c"
}
run() {
        "$python" "$check" --source-root "$tmp/src" --stamp "$tmp/stamp" --root t=t \
                --layer 'low|t/low||t/low/low.h' --layer 'high|t/high|low|' \
                --layer 'top|t|low+high|' > "$tmp/out" 2>&1
}
expect_fail() {         # description, pattern the message must hold
        if run; then not_ok "$1: passed"; elif grep -q -- "$2" "$tmp/out"; then ok "$1"
        else not_ok "$1: message"; fi
}

echo "1..13"
tree
if run && [ -s "$tmp/stamp" ]; then ok "a tree in order passes"; else not_ok "a tree in order passes"; fi

tree; echo '#include "high/high.h"' >> "$tmp/src/t/low/low.c"
expect_fail "a lower layer including a higher one" 't/low/low.c:3: "high/high.h": layer low may not use high'

tree; echo '#include "low/low-int.h"' >> "$tmp/src/t/high/high.c"
expect_fail "another folder's inside instead of its face" "t/high/high.c:4: \"low/low-int.h\": include low's face (t/low/low.h)"

tree; echo '#include "low-int.h"' >> "$tmp/src/t/low/low.c"
expect_fail "a header named without its folder" 't/low/low.c:3: "low-int.h": name the folder'

tree; echo '#include "top.c"' >> "$tmp/src/t/high/high.c"
expect_fail "the root layer from below" 'layer high may not use top'

tree
"$python" "$check" --source-root "$tmp/src" --stamp "$tmp/stamp" --layer 'low|t/low|nowhere|' > "$tmp/out" 2>&1
if [ $? -ne 0 ] && grep -q "unknown layer nowhere" "$tmp/out"; then ok "an unknown layer in the table"
else not_ok "an unknown layer in the table"; fi
tree; printf '#pragma once\n#include "low/low-int.h"\n' > "$tmp/src/t/low/low.h"
echo '#include "low/low.h"' >> "$tmp/src/t/low/low-int.h"
expect_fail "two headers including each other" 'include circle: t/low/low.*-> t/low/low.*-> t/low/low'
tree; printf '#pragma once\n' > "$tmp/src/t/low/low-int.h"; echo '#include "low/low.h"' > "$tmp/src/t/low/low-int.c"
echo '#include "low/low-int.h"' > "$tmp/src/t/low/low.h"
expect_fail "two modules (x.c with x.h) using each other" 'module circle (x.c and x.h are one module): t/low/low.*-> t/low/low'
tree; echo '#include <high/high.h>' >> "$tmp/src/t/top.c"
expect_fail "a header of the tree in <...>" "t/top.c:3: <high/high.h>: include this tree's headers in quotes"
tree; echo '#include "low/../low/low.h"' >> "$tmp/src/t/high/high.c"
expect_fail "a name with .." 't/high/high.c:4: "low/../low/low.h": name the header from its folder, without ".."'
tree; mkdir -p "$tmp/src/tests/lib"; echo '#pragma once' > "$tmp/src/tests/lib/fixture.h"
echo '#include "tests/lib/fixture.h"' >> "$tmp/src/t/low/low.c"
expect_fail "a header under tests/ in product code" 't/low/low.c:3: "tests/lib/fixture.h": tests/lib/fixture.h belongs to no layer'
tree; printf '#define HIGH "high/high.h"\n#include HIGH\n' >> "$tmp/src/t/low/low.c"
expect_fail "a computed include" 't/low/low.c:4: #include HIGH: name the header in quotes'
tree; mkdir -p "$tmp/src/t/extra"; echo '#include "high/high.h"' > "$tmp/src/t/extra/extra.c"
expect_fail "a folder of sources no layer names" 't/extra/: a folder of sources that no layer of the table names'
exit $((fails > 0))
