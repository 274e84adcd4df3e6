#!/bin/bash
# --call-graph dwarf: user stacks unwound by the recorder from copies of the
# user stack, through code built without frame pointers.
#  - main -> a shared-library function -> callbacks in main (all built with
#    -fomit-frame-pointer): >= 95% of the callbacks' samples carry the full
#    chain, and the 70/30 split of the callbacks is within 3 points;
#  - on a frame-pointer build, dwarf and fp call trees agree within 3 points;
#  - qsort in the system libc calling a comparison function: complete;
#  - the caller of a leaf function is kept (frame pointers lose it);
#  - a 200-deep recursion reaches main with dwarf,32768, and is marked as
#    truncated at the end of the stack copy with the default 8 KiB.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$TOP/tests/workloads
build() { # DIR CFLAGS...
	local dir=$TMP/$1
	shift
	mkdir -p "$dir"
	gcc -std=gnu11 -O1 -g "$@" -shared -fPIC -Wl,--build-id \
		-o "$dir/libdcpwork.so" "$W/unwind_lib.c" ||
		die "cannot build the workload library"
	gcc -std=gnu11 -O1 -g "$@" -Wl,--build-id -o "$dir/unwind_main" \
		"$W/unwind_main.c" -L"$dir" -ldcpwork -Wl,-rpath,"$dir" ||
		die "cannot build the workload"
}
build nofp -fomit-frame-pointer
build fp -fno-omit-frame-pointer
build leaf -fno-omit-frame-pointer -momit-leaf-frame-pointer
folded_tool

# record NAME DCPROF-ARGS... -- COMMAND: the user stacks in $TMP/NAME.folded,
# by the perf ring (its -g walks frame pointers, its dwarf copies stacks)
record() { record_folded "$1" --backend perf "${@:2}"; }
# check FOLDED EXPR...: Python over the folded stacks of unwind_main
check() { check_folded "$1" unwind_main "${@:2}"; }

# 1. no frame pointers anywhere but libc's own
record cb --call-graph dwarf -- "$TMP/nofp/unwind_main" cb 3
check "$TMP/cb.folded" '
cb = count(lambda f: "cb_seventy" in f or "cb_thirty" in f)
full = {n: count(lambda f, n=n: has_seq(f, ["main", "unwind_lib_run", n]))
        for n in ("cb_seventy", "cb_thirty")}
total = sum(full.values())
print("callback samples %d, full chains %d (%.1f%%)" % (cb, total, 100.0 * total / max(cb, 1)))
assert cb >= 1000, "only %d callback samples" % cb
assert total >= 0.95 * cb, "only %d of %d callback samples are complete" % (total, cb)
share = 100.0 * full["cb_seventy"] / total
print("cb_seventy %.1f%% (want 70)" % share)
assert abs(share - 70) <= 3, "split %.1f%%, want 70 +- 3" % share
'
"$DCPROF" report -i "$TMP/cb.data" >"$TMP/cb.report" || die "report failed"
grep -q '^# truncated stacks: ' "$TMP/cb.report" ||
	grep -q '^# samples: ' "$TMP/cb.report" || die "no report header"

# 2. a frame-pointer build: dwarf and fp trees agree
record fp-g -g -- "$TMP/fp/unwind_main" cb 3
record fp-dwarf --call-graph dwarf -- "$TMP/fp/unwind_main" cb 3
cat >"$TMP/tree.py" <<'PY'
def tree(rows):
    t = {}
    tot = sum(c for f, c in rows)
    for n in ("cb_seventy", "cb_thirty"):
        t[n] = 100.0 * sum(c for f, c in rows if has_seq(f, ["main", "unwind_lib_run", n])) / tot
    return t
PY
check "$TMP/fp-g.folded" "exec(open('$TMP/tree.py').read())" \
	"import json; json.dump(tree(rows), open('$TMP/fp-g.tree', 'w'))"
check "$TMP/fp-dwarf.folded" "exec(open('$TMP/tree.py').read())" '
import json
g = json.load(open("'"$TMP"'/fp-g.tree"))
d = tree(rows)
for n in d:
    print("%s: fp %.1f%%, dwarf %.1f%%" % (n, g[n], d[n]))
    assert abs(g[n] - d[n]) <= 3, "%s: fp %.1f%% vs dwarf %.1f%%" % (n, g[n], d[n])
'

# 3. qsort of the system libc calling back
record qsort --call-graph dwarf -- "$TMP/nofp/unwind_main" qsort 2
check "$TMP/qsort.folded" '
cmp = count(lambda f: "compare" in f)
# glibc 2.36 qsort tail-calls qsort_r: either name stands for it
qs = lambda f: ["qsort" if x.startswith("qsort") else x for x in f]
full = count(lambda f: has_ordered(qs(f), ["main", "qsort", "compare"]))
print("compare samples %d, through qsort to main %d" % (cmp, full))
assert cmp >= 300, "only %d samples in compare" % cmp
assert full >= 0.95 * cmp, "only %d of %d compare stacks are complete" % (full, cmp)
'

# 4. a leaf function: frame pointers lose its caller, dwarf keeps it
record leaf-g -g -- "$TMP/leaf/unwind_main" leaf 2
record leaf-dwarf --call-graph dwarf -- "$TMP/leaf/unwind_main" leaf 2
for mode in g dwarf; do
	check "$TMP/leaf-$mode.folded" '
leaf = count(lambda f: f and f[-1] == "leaf_burn")
kept = count(lambda f: has_seq(f, ["main", "middle", "leaf_burn"]))
print("'"$mode"': leaf_burn samples %d, caller kept in %d (%.1f%%)" % (leaf, kept, 100.0 * kept / max(leaf, 1)))
assert leaf >= 500, "only %d leaf samples" % leaf
if "'"$mode"'" == "dwarf":
    assert kept >= 0.95 * leaf, "dwarf lost the caller of the leaf"
else:
    # the leaf sets up no frame: the chain goes from leaf_burn to the
    # caller of middle, and middle is missing (else -g did not walk
    # frame pointers, or the workload has no frameless leaf)
    lost = count(lambda f: f and f[-1] == "leaf_burn" and "main" in f
                 and "middle" not in f)
    print("g: the caller lost in %d (%.1f%%)" % (lost, 100.0 * lost / max(leaf, 1)))
    assert kept <= 0.05 * leaf, "frame pointers kept the caller of the leaf in %d of %d" % (kept, leaf)
    assert lost >= 0.9 * leaf, "only %d of %d fp stacks of the leaf go to main without middle" % (lost, leaf)
'
done

# 5. 200 frames deep: 32 KiB of stack reach main, 8 KiB are marked short
record deep --call-graph dwarf,32768 -- "$TMP/nofp/unwind_main" recurse 2 200
check "$TMP/deep.folded" '
bottom = count(lambda f: "bottom_burn" in f)
deep = count(lambda f: "bottom_burn" in f and f.count("recurse") >= 200 and has_seq(f, ["main", "recurse"]))
print("bottom_burn samples %d, reaching main through 200 frames %d" % (bottom, deep))
assert bottom >= 300, "only %d samples at the bottom" % bottom
assert deep >= 0.95 * bottom, "only %d of %d deep stacks reach main" % (deep, bottom)
'
record shallow --call-graph dwarf -- "$TMP/nofp/unwind_main" recurse 2 200
"$DCPROF" report -i "$TMP/shallow.data" --format json >"$TMP/shallow.json" ||
	die "report failed"
cut=$(json_get "$TMP/shallow.json" 'd["stats"]["unwind_truncated_stack_end"]')
[ "$cut" -ge 300 ] ||
	die "with 8 KiB of stack, only $cut stacks were marked as cut at the end of the copy"
check "$TMP/shallow.folded" '
bad = count(lambda f: "bottom_burn" in f and "main" in f)
assert bad == 0, "%d shallow stacks claim to reach main" % bad
'
"$DCPROF" report -i "$TMP/shallow.data" | grep -q '^# truncated stacks: [1-9]' ||
	die "the report header does not show the truncated stacks"

pass
