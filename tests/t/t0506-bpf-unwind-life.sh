#!/bin/bash
# exclusive: wants 1,000 walks in a 1.5 s window of a process that runs by the wall clock
# The BPF backend's kernel unwinding through what happens to a process
# while it is recorded, every program built with -fomit-frame-pointer:
#  - a function whose time is in libc's memcpy keeps those samples, under
#    main (a frame-pointer walk skips it: memcpy has no frame);
#  - the walks name >= 90% of the frames (file, offset) themselves, in a
#    command's recording and in one of a running process (-p);
#  - time in the vdso (clock_gettime) stays with its callers: the vdso has
#    no file, and its table is built from the recorder's own image;
#  - a signal handler's frames lead back through the signal frame to the
#    function it interrupted, and to main, when the signal came during a
#    system call made from the vdso too;
#  - a process that execs: the new program's stacks are whole;
#  - a library dlopened during the recording: stacks through it are whole;
#  - a binary replaced on disk while it runs, the old and the new program
#    running side by side from the same path: each one's stacks are whole
#    and named from its own file;
#  - --unwind-memory with room for one program's tables and a few rows more
#    than the larger of two: a program that execs the other after a pause
#    has its first tables evicted (counted) for the second's, and both
#    programs' stacks are whole.
# Each: >= 95% of the samples of the function checked reach main (those
# taken while a command's tables are built are walked by frame pointers);
# of those in the vdso and in the signal handler, recorded once the
# tables are built, >= 99% (by frame pointers, the vdso's frames lose
# 2-5% of them).
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_bpf_backend

W=$TOP/tests/workloads
NOFP="-std=gnu11 -O1 -g -fomit-frame-pointer -Wl,--build-id"
mkdir -p "$TMP/nofp" "$TMP/rep"
# shellcheck disable=SC2086
gcc $NOFP -shared -fPIC -o "$TMP/nofp/libdcpwork.so" "$W/unwind_lib.c" &&
	gcc $NOFP -shared -fPIC -Dunwind_lib_run=plugin_run \
		-o "$TMP/nofp/libplugin.so" "$W/unwind_lib.c" &&
	gcc $NOFP -o "$TMP/nofp/unwind_main" "$W/unwind_main.c" \
		-L"$TMP/nofp" -ldcpwork -Wl,-rpath,"$TMP/nofp" ||
	die "cannot build the workloads"
folded_tool

# record NAME DCPROF-ARGS...: the user stacks in $TMP/NAME.folded
record() { record_folded "$1" --backend bpf "${@:2}"; }
check() { check_folded "$@"; }

# whole FOLDED COMM WHAT SEQ: of the samples whose stack holds the frames
# SEQ (a Python list) in a row, >= 95% have main above them
whole() {
	check "$1" "$2" "seq = $4" '
n = count(lambda f: has_seq(f, seq))
whole = count(lambda f: has_seq(f, seq) and f.index("main") < f.index(seq[0]) if "main" in f else False)
print("'"$3"': %d samples, %d (%.1f%%) under main" % (n, whole, 100.0 * whole / max(n, 1)))
assert n >= 200, "only %d samples" % n
assert whole >= 0.95 * n, "only %d of %d under main" % (whole, n)
'
}

# named NAME: the walks named >= 90% of the user frames they found
# (file, offset) in the kernel, the rest being addresses user space named
named() {
	local walked n
	expect_exit 0 "$DCPROF" report -i "$TMP/$1.data" --format json
	walked=$(json_get "$TMP/out" 'd["unwind"]["table_frames"] + d["unwind"]["fp_frames"]')
	n=$(json_get "$TMP/out" 'd["unwind"]["named_frames"]')
	echo "$1: $n of $walked frames named in the kernel"
	[ "$walked" -ge 1000 ] && [ "$n" -ge $((walked * 9 / 10)) ] ||
		die "$1: $n of $walked frames named in the kernel"
}

# 1. time in memcpy stays with its caller
record memcpy -g -- "$TMP/nofp/unwind_main" memcpy 1.5
whole "$TMP/memcpy.folded" unwind_main "memcpy" \
	'["copy_burn", [g for f, c in rows for g in f if g.startswith("__mem")][0]]'
named memcpy

# running(): record NAME for 1.5 s of a process already running
# unwind_main ARGS...: its tables are built before the recording starts,
# so that no sample is walked while they are built (measured above)
running() {
	local name=$1
	shift
	spawn "$TMP/nofp/unwind_main" "$@"
	wait_exec "$SPAWNED" unwind_main
	record "$name" -g -p "$SPAWNED" --duration 1.5
	kill "$SPAWNED"
	wait "$SPAWNED" 2>/dev/null
}

# 2. the vdso
running clock clock 30
check "$TMP/clock.folded" unwind_main '
n = count(lambda f: any(g.startswith("[[vdso]") or g.startswith("__vdso") for g in f))
whole = count(lambda f: any(g.startswith("[[vdso]") or g.startswith("__vdso") for g in f) and has_seq(f, ["main", "clock_burn"]))
print("the vdso: %d samples, %d (%.1f%%) under main" % (n, whole, 100.0 * whole / max(n, 1)))
assert n >= 500, "only %d samples in the vdso" % n
assert whole >= 0.99 * n, "only %d of %d under main" % (whole, n)
'
named clock
# ... walked by the vdso's table, not by frame pointers
expect_exit 0 "$DCPROF" report -i "$TMP/clock.data" --format json
walks=$(json_get "$TMP/out" 'd["unwind"]["walks"]')
by_fp=$(json_get "$TMP/out" 'd["unwind"]["fp_frames"]')
echo "the vdso: $by_fp frames by frame pointers in $walks walks"
[ "$walks" -ge 1000 ] && [ "$by_fp" -le $((walks / 100)) ] ||
	die "the vdso is walked by frame pointers ($by_fp frames in $walks walks)"

# 3. through a signal frame
running signal signal 30
whole "$TMP/signal.folded" unwind_main "the signal handler" \
	'["interrupted"]' 
check "$TMP/signal.folded" unwind_main '
n = count(lambda f: "handler_burn" in f)
back = count(lambda f: "handler_burn" in f and has_seq(f, ["main", "interrupted"]) and f.index("interrupted") < f.index("on_prof"))
print("handler: %d samples, %d (%.1f%%) under the interrupted function and main" % (n, back, 100.0 * back / max(n, 1)))
assert n >= 100, "only %d samples in the handler" % n
assert back >= 0.99 * n, "only %d of %d handler samples lead back" % (back, n)
'

# 4. exec: the program the process becomes (its name is the path's, exe)
record exec -g -- "$TMP/nofp/unwind_main" exec 0.5 cb 1.5
whole "$TMP/exec.folded" exe "after the exec" '["unwind_lib_run"]'
whole "$TMP/exec.folded" unwind_main "before the exec" '["middle"]'

# 5. a library loaded during the recording
record dlopen -g -- "$TMP/nofp/unwind_main" dlopen 2 "$TMP/nofp/libplugin.so"
whole "$TMP/dlopen.folded" unwind_main "the dlopened library" '["plugin_run"]'

# 6. the binary replaced while it runs; the new one, built with other
# names for its callbacks and other code, runs beside it from the path
cp "$TMP/nofp/unwind_main" "$TMP/rep/unwind_main"
"$TMP/rep/unwind_main" cb 4 &
old=$!
# shellcheck disable=SC2086
gcc $NOFP -O2 -Dcb_seventy=new_seventy -Dcb_thirty=new_thirty \
	-o "$TMP/rep/unwind_main.new" "$W/unwind_main.c" -L"$TMP/nofp" \
	-ldcpwork -Wl,-rpath,"$TMP/nofp" || die "cannot build the new binary"
mv -f "$TMP/rep/unwind_main.new" "$TMP/rep/unwind_main"
"$TMP/rep/unwind_main" cb 4 &
new=$!
sleep 0.3
record replaced -g -p "$old,$new" --duration 1.5
kill "$old" "$new" 2>/dev/null
wait
whole "$TMP/replaced.folded" unwind_main "the replaced binary" \
	'["unwind_lib_run", "cb_seventy"]'
whole "$TMP/replaced.folded" unwind_main "its replacement" \
	'["unwind_lib_run", "new_seventy"]'

# 7. tables evicted for room: the rows each program needs (-v), then a
# recording with room for the larger and a few rows more, the rows'
# share of the memory being what dcp_bpf_unwind_size() gives them. The
# first program, built with -O2, has the larger table of its own: the
# second's fit where the first's were (tables are not split or moved).
rows_of() {
	expect_exit 0 "$DCPROF" record --backend bpf -g -v -o "$TMP/rows.data" \
		-- "$@"
	sed -n 's/.*unwind tables ([0-9]* bytes in the kernel, \([0-9]*\) rows of.*/\1/p' \
		"$TMP/err" | grep . || die "-v says no rows: $(grep unwind "$TMP/err")"
}
mkdir -p "$TMP/first"
# shellcheck disable=SC2086
gcc $NOFP -O2 -shared -fPIC -o "$TMP/first/libdcpwork.so" "$W/unwind_lib.c" &&
	gcc $NOFP -O2 -o "$TMP/first/unwind_main" "$W/unwind_main.c" \
		-L"$TMP/first" -ldcpwork -Wl,-rpath,"$TMP/first" ||
	die "cannot build the first program"
# long enough for every table to be built (smallest first, at the polls;
# libc's last)
first=$(rows_of "$TMP/first/unwind_main" leaf 1.5)
second=$(rows_of "$TMP/nofp/unwind_main" cb 1.5)
[ "$first" -ge 10000 ] && [ "$second" -ge 10000 ] ||
	die "the rows of the programs' tables ($first, $second) leave libc's out"
memory=$(python3 -c '
import sys
want = max(int(sys.argv[1]), int(sys.argv[2])) + 8
m = want * 16
while (m - m // 16) // 16 < want:
    m += 1
print(m)' "$first" "$second")
record evict -g --unwind-memory "$memory" -- "$TMP/first/unwind_main" \
	then 0.5 2.5 "$TMP/nofp/unwind_main" cb 1.5
whole "$TMP/evict.folded" unwind_main "the first program" '["middle"]'
whole "$TMP/evict.folded" unwind_main "the second program, tables evicted" \
	'["unwind_lib_run", "cb_seventy"]'
"$DCPROF" report -i "$TMP/evict.data" --format json >"$TMP/evict.json" ||
	die "report failed"
evicted=$(json_get "$TMP/evict.json" 'd["unwind"]["tables_evicted"]')
refused=$(json_get "$TMP/evict.json" 'd["unwind"]["tables_refused"]')
echo "$first and $second rows, $memory bytes: $evicted tables evicted, $refused refused"
# (a refusal can happen to the recorder's own libraries, which the
# command maps until its exec when it is sampled before it)
[ "$evicted" -ge 1 ] ||
	die "$evicted tables evicted ($refused refused) for the second program"
"$DCPROF" report -i "$TMP/evict.data" | grep -q ' evicted, the least recently used' ||
	die "the report header does not say the tables evicted"

pass
