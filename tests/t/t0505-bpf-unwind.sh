#!/bin/bash
# exclusive: its off-CPU waits must be the time the program's clock saw, and the first samples of a command come before its tables: both change with the machine's load
# The BPF backend's -g: user stacks unwound in the kernel with the files'
# unwind tables (compiled from .eh_frame), through code built without
# frame pointers.
#  - main -> a shared-library function -> callbacks in main, all built
#    with -fomit-frame-pointer: >= 95% of the callbacks' samples carry the
#    whole chain to main, and the 70/30 split is within 2 points;
#  - a frameless leaf keeps its caller (--call-graph fp loses it);
#  - a recursion 100 deep reaches main;
#  - --off-cpu: a function asleep in nanosleep and one reading a pipe, both
#    leaving the CPU inside libc, are under main in every switch-out's
#    stack, with the time the program's own clock saw (0.9-1.02 of it),
#    libc's table read from the cache a first recording filled;
#  - a tiny --unwind-memory: files left without a table are counted, their
#    frames walked by frame pointers, and the profile is whole.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_bpf_backend

W=$TOP/tests/workloads
mkdir -p "$TMP/nofp" "$TMP/leaf"
gcc -std=gnu11 -O1 -g -fomit-frame-pointer -shared -fPIC -Wl,--build-id \
	-o "$TMP/nofp/libdcpwork.so" "$W/unwind_lib.c" ||
	die "cannot build the workload library"
gcc -std=gnu11 -O1 -g -fomit-frame-pointer -Wl,--build-id \
	-o "$TMP/nofp/unwind_main" "$W/unwind_main.c" -L"$TMP/nofp" -ldcpwork \
	-Wl,-rpath,"$TMP/nofp" || die "cannot build the workload"
folded_tool

# record NAME DCPROF-ARGS...: the user stacks in $TMP/NAME.folded
record() { record_folded "$1" --backend bpf "${@:2}"; }
check() { check_folded "$@"; }

# 1. no frame pointers anywhere
record cb -g -- "$TMP/nofp/unwind_main" cb 2
check "$TMP/cb.folded" unwind_main '
cb = count(lambda f: "cb_seventy" in f or "cb_thirty" in f)
full = {n: count(lambda f, n=n: has_seq(f, ["main", "unwind_lib_run", n]))
        for n in ("cb_seventy", "cb_thirty")}
total = sum(full.values())
print("callback samples %d, whole chains %d (%.1f%%)" % (cb, total, 100.0 * total / max(cb, 1)))
assert cb >= 1000, "only %d callback samples" % cb
assert total >= 0.95 * cb, "only %d of %d callback samples are whole" % (total, cb)
share = 100.0 * full["cb_seventy"] / total
print("cb_seventy %.1f%% (want 70)" % share)
assert abs(share - 70) <= 2, "split %.1f%%, want 70 +- 2" % share
'
"$DCPROF" report -i "$TMP/cb.data" --format json >"$TMP/cb.json" ||
	die "report failed"
frames=$(json_get "$TMP/cb.json" 'd["unwind"]["table_frames"]')
tables=$(json_get "$TMP/cb.json" 'd["unwind"]["tables"]')
[ "$frames" -gt 0 ] && [ "$tables" -ge 2 ] ||
	die "the report says $frames frames by $tables tables"
"$DCPROF" report -i "$TMP/cb.data" | grep -q '^# unwound in the kernel: [1-9]' ||
	die "the report header does not show the kernel's unwinding"

# 2. a frameless leaf: the tables keep its caller, frame pointers lose it
gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -momit-leaf-frame-pointer \
	-shared -fPIC -o "$TMP/leaf/libdcpwork.so" "$W/unwind_lib.c" &&
	gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -momit-leaf-frame-pointer \
		-o "$TMP/leaf/unwind_main" "$W/unwind_main.c" -L"$TMP/leaf" \
		-ldcpwork -Wl,-rpath,"$TMP/leaf" || die "cannot build the leaf workload"
record leaf -g -- "$TMP/leaf/unwind_main" leaf 1.5
record leaf-fp --call-graph fp -- "$TMP/leaf/unwind_main" leaf 1.5
check "$TMP/leaf.folded" unwind_main '
leaf = count(lambda f: f and f[-1] == "leaf_burn")
kept = count(lambda f: has_seq(f, ["main", "middle", "leaf_burn"]))
print("tables: leaf_burn %d, caller kept in %d" % (leaf, kept))
assert leaf >= 300 and kept >= 0.95 * leaf, "the tables lost the caller of the leaf"
'
check "$TMP/leaf-fp.folded" unwind_main '
leaf = count(lambda f: f and f[-1] == "leaf_burn")
kept = count(lambda f: has_seq(f, ["main", "middle", "leaf_burn"]))
print("fp: leaf_burn %d, caller kept in %d" % (leaf, kept))
assert leaf >= 300 and kept <= 0.05 * leaf, "--call-graph fp did not walk frame pointers alone"
'

# 3. 100 frames deep
record deep -g -- "$TMP/nofp/unwind_main" recurse 1.5 100
check "$TMP/deep.folded" unwind_main '
bottom = count(lambda f: "bottom_burn" in f)
deep = count(lambda f: "bottom_burn" in f and f.count("recurse") >= 100 and has_seq(f, ["main", "recurse"]))
print("bottom_burn %d, through 100 frames to main %d" % (bottom, deep))
assert bottom >= 300 and deep >= 0.95 * bottom, "only %d of %d deep stacks reach main" % (deep, bottom)
'

# 4. --off-cpu: the switch-outs' stacks through libc to main
gcc -std=gnu11 -O1 -g -fomit-frame-pointer -pthread -o "$TMP/nofp/off_cpu" \
	"$W/off_cpu.c" || die "cannot build the off-CPU workload"
# the waits are in libc: its table, built while the program starts, is read
# from the cache by the recording checked (the first one fills it)
mkdir -m 700 "$TMP/cache"
export DCPROF_CACHE_DIR=$TMP/cache
for run in off-cold off; do
	expect_exit 0 "$DCPROF" record --backend bpf --off-cpu -g \
		-o "$TMP/$run.data" -- "$TMP/nofp/off_cpu" rounds 1.5 "$TMP/life" \
		"$TMP/times"
	expect_exit 0 "$DCPROF" export --format folded --value off-cpu \
		-i "$TMP/$run.data" -o "$TMP/$run.folded"
done
export DCPROF_CACHE_DIR=
python3 - "$TMP/off.folded" "$TMP/times" <<'PY' || die "the off-CPU stacks are not whole"
import sys
stacks = {}
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    stacks[stack] = stacks.get(stack, 0) + int(n)
in_f2, in_f3 = map(int, open(sys.argv[2]).read().split())
# the libc call each waits in, whose caller a frame-pointer walk skips
for name, clock, callee, call in (("f2_sleep", in_f2, "sleep_ns", "clock_nanosleep"),
                                  ("f3_wait", in_f3, "read_byte", "read")):
    got = sum(n for s, n in stacks.items() if ";%s;" % name in s)
    whole = sum(n for s, n in stacks.items()
                if ";__libc_start_call_main;main;" in s and ";%s;" % name in s)
    in_call = [s for s in stacks if ";%s;" % name in s and
               any(f == call or f.startswith(call + "@") or f.startswith("__libc_" + call) for f in s.split(";"))]
    skipped = [s for s in in_call if ";%s;%s;" % (name, callee) not in s]
    print("%s: %.1f ms off the CPU (clock %.1f), %.1f%% under main, %d stacks in %s, %d without %s" % (
        name, got / 1e6, clock / 1e6, 100.0 * whole / max(got, 1), len(in_call),
        call, len(skipped), callee))
    assert 0.9 <= got / clock <= 1.02, "%s: %.3f of its clock" % (name, got / clock)
    assert whole >= 0.99 * got, "%s: stacks without main" % name
    assert in_call and not skipped, "%s: %s missing between it and %s: %s" % (
        name, callee, call, skipped[:2])
PY

# 5. no room for tables: counted, frame pointers instead, a whole profile.
# The program keeps its frame pointers (part 2's build): from a file
# refused a table, frame pointers walk on only into callers that keep one
record tiny -g --unwind-memory 4K -- "$TMP/leaf/unwind_main" cb 1
"$DCPROF" report -i "$TMP/tiny.data" --format json >"$TMP/tiny.json" ||
	die "report failed"
refused=$(json_get "$TMP/tiny.json" 'd["unwind"]["tables_refused"]')
fp=$(json_get "$TMP/tiny.json" 'd["unwind"]["fp_frames"]')
complete=$(json_get "$TMP/tiny.json" 'd["meta"]["complete"]')
[ "$refused" -ge 1 ] && [ "$fp" -ge 1 ] && [ "$complete" = true ] ||
	die "4 KiB for tables: $refused refused, $fp frames by frame pointers, complete $complete"
"$DCPROF" report -i "$TMP/tiny.data" | grep -q 'for want of room' ||
	die "the report header does not say the tables refused"

pass
