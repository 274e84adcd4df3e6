#!/bin/bash
# exclusive: bounds top -a's peak memory, which every process on the machine adds to
# dcprof top --stdio -a during a storm of 500 short-lived processes (the
# storm workload of t0120-storm.sh: at most two children at a time, each
# exec'ing the storm binary to burn 8 ms in storm_child_burn), refreshed
# every second for 8 intervals, the storm running from the second:
# (a) the recorder's memory stays bounded: the top process's peak resident
#     set (VmHWM in /proc/PID/status, read just before its last interval)
#     is under 96 MiB;
# (b) the children are named: in the last interval's output (JSON, all
#     rows), >= 95% of the samples in the storm binary's code are in
#     (storm binary, storm_child_burn) under the children's name "storm",
#     the others in its glue (STORM_GLUE, test-lib.sh: at most
#     STORM_GLUE_MAX a child), no storm row is [unknown] or named by a
#     bare ":PID", and no child
#     has a ":PID" row outside the kernel; the kernel samples a child
#     takes on its way out (unmap, __fput, slab frees), which come after
#     its EXIT record, keep its name: at most 0.2% of the children's
#     samples in ":PID" rows (2% before the recorder kept an exited
#     process for a grace period);
# (c) processes that exit keep their rows until reset: the storm has ended
#     before the last interval, and that interval still has a
#     storm_child_burn row for >= 95% of the 500 children, and all their
#     session samples (kernel, loader and all) are >= 90% of the
#     children's CPU time (getrusage in the parent) at 999 Hz.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

STORM=$(build_workload storm)
CHILDREN=500 BURN_MS=8 ITER=8 BOUND_KB=$((96 * 1024))

"$DCPROF" top --stdio -a -F 999 --delay 1 --iterations $ITER --format json \
	--limit 1000000 --sort comm,pid,file,symbol >"$TMP/top.json" \
	2>"$TMP/top.err" &
TOP_PID=$!
_spawned+=("$TOP_PID")
sleep 1
"$STORM" $CHILDREN $BURN_MS >"$TMP/storm.out" || die "storm failed"
read -r _ _ PARENT _ CPU_US _ <"$TMP/storm.out" && [ -n "$CPU_US" ] ||
	die "storm printed no summary: $(cat "$TMP/storm.out")"
STORM_DONE=$(wc -l <"$TMP/top.json")
# VmHWM only grows: keep the last value read while top runs
hwm=
while kill -0 "$TOP_PID" 2>/dev/null; do
	v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$TOP_PID/status" 2>/dev/null)
	[ -n "$v" ] && hwm=$v
	sleep 0.1
done
wait "$TOP_PID" || die "top failed: $(tail -3 "$TMP/top.err")"
[ -n "$hwm" ] || die "could not read top's VmHWM"
[ "$(wc -l <"$TMP/top.json")" -eq $ITER ] ||
	die "want $ITER intervals, got $(wc -l <"$TMP/top.json")"
[ "$STORM_DONE" -lt $ITER ] ||
	die "the storm outlasted top ($STORM_DONE intervals)"
echo "top VmHWM ${hwm} kB (bound $BOUND_KB kB); storm ended after interval $STORM_DONE"
# under ASan the resident size is the sanitizer's: the plain build holds it
if [ -n "$SAN_CFLAGS" ]; then
	skip_part "memory bounds are measured on the plain build"
else
	[ "$hwm" -lt $BOUND_KB ] || die "top's VmHWM ${hwm} kB >= $BOUND_KB kB"
fi

python3 - "$TMP/top.json" "$STORM" "$PARENT" $CHILDREN "$CPU_US" <<'PY' ||
import json, os, re, sys
lines = open(sys.argv[1]).read().splitlines()
binary, parent, nchild = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cpu_us = int(sys.argv[5])
d = json.loads(lines[-1])
rows = d["rows"]
bare = re.compile(r"^:?\d+$|^\[unknown\]$")
mine = [r for r in rows if r["file"] == binary]
burn = [r for r in mine if r["symbol"] == "storm_child_burn"
        and r["comm"] == "storm" and int(r["pid"]) != parent]
good = sum(r["session_samples"] for r in burn)
total = sum(r["session_samples"] for r in mine)
glue_re = re.compile(os.environ["STORM_GLUE"])
# the bound is a child's: the parent's own fork loop runs in main
glue = {}
for r in mine:
    if glue_re.match(r["symbol"]) and int(r["pid"]) != parent:
        glue[r["pid"]] = glue.get(r["pid"], 0) + r["session_samples"]
wrong = [r for r in mine if r not in burn and not glue_re.match(r["symbol"])
         and int(r["pid"]) != parent]
pids = {int(r["pid"]) for r in burn}
unnamed = [r for r in mine if bare.match(r["comm"]) or r["symbol"] == "[unknown]"]
# a child that lost its name would have a bare ":PID" row next to its
# named ones (all 500 children are accounted for by name, below)
colon = [r for r in rows if bare.match(r["comm"]) and int(r["pid"]) in pids]
user_colon = [r for r in colon if not r["file"].startswith("[kernel")]
ncolon = sum(r["session_samples"] for r in colon)
# all the children's samples (kernel, loader and all) against their CPU time
kids = sum(r["session_samples"] for r in rows if int(r["pid"]) in pids)
want = cpu_us * 999 // 1000000
print("last interval: %d rows; %d storm children with a storm_child_burn "
      "row; %d of %d storm-binary samples there (%.2f%%); %d samples, CPU "
      "time says %d; unnamed %s; bare-pid rows %s (%d samples, %d rows)"
      % (len(rows), len(pids), good, total,
         100.0 * good / total if total else 0, kids, want,
         [(r["comm"], r["pid"], r["symbol"]) for r in unnamed][:5],
         [(r["comm"], r["symbol"], r["session_samples"]) for r in colon][:8], sum(r["session_samples"] for r in colon), len(colon)))
parent_glue = sum(r["session_samples"] for r in mine
                  if int(r["pid"]) == parent and glue_re.match(r["symbol"]))
print("glue: up to %d samples a child, %d of the parent; elsewhere in the "
      "binary: %s" % (max(glue.values(), default=0), parent_glue,
         [(r["comm"], r["pid"], r["symbol"]) for r in wrong][:5]))
assert total and good >= 0.95 * total, "children's samples misattributed"
assert not wrong, "storm samples outside storm_child_burn and the glue"
worst = max(glue, key=glue.get, default=None)
assert worst is None or glue[worst] <= int(os.environ["STORM_GLUE_MAX"]), \
    "too many samples of child %s in the glue: %s" % (worst, [
        (r["comm"], r["symbol"], r["session_samples"]) for r in mine
        if r["pid"] == worst])
assert not unnamed, "unnamed storm rows"
assert not user_colon, "storm children's user code as bare pids"
assert ncolon <= 0.002 * kids, "too many exit samples as bare pids"
assert len(pids) >= 0.95 * nchild, "only %d children kept rows" % len(pids)
assert kids >= 0.90 * want, "children's samples lost"
PY
	die "storm children's rows are not named or not kept"

pass
