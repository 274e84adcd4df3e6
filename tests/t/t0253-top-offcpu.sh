#!/bin/bash
# exclusive: top's intervals of wall time must hold the workload's functions, named
# dcprof top --off-cpu on nap_burn (one thread: 2 ms of CPU time in
# burn_cpu, a 6 ms sleep in nap, and its own measure of both), rows of its
# process only (--pid):
# - --value off-cpu, JSON, 4 intervals of 2 s, the first the start (waits already
#   under way are not charged, the first addresses may still be being
#   named): in each of the other 3 nap leads, its share of the process's
#   off-CPU time within 4 points of the truth and its ms within 10% of it;
#   the truth is nap's wall time against that plus burn_cpu's wait for a
#   CPU (the kernel's run delay) in the rounds that ended in the interval
#   (end_ns: the preemption of an interval differs on a shared machine;
#   a wait is charged when it ends, once the recorder has read it, so the
#   edges of an interval are a round or two apart from the truth's);
# - the CPU view (the default value) with --off-cpu, 3 intervals, the first
#   the start: burn_cpu leads with >= 80% of the process's samples, as many
#   as its rounds' 2 ms of CPU time at 999 Hz (within 15%), and no row
#   without samples (off-CPU time stays out of it);
# - --value wall, text, 3 intervals: the header says off-CPU is on, ms
#   columns, and after the first the process's rows add up to the interval
#   (within 15%: one thread, on or off the CPU);
# - bad input: --value off-cpu or --off-cpu-min without --off-cpu,
#   --off-cpu with --only, --off-cpu-min or --value not understood.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events
need_root

W=$(build_workload nap_burn)
spawn "$W" 19 "$TMP/truth"
WL=$SPAWNED
sleep 0.5

expect_exit 0 "$DCPROF" top --stdio --off-cpu --value off-cpu --iterations 4 \
	--delay 2 --pid "$WL" --format json
cp "$TMP/out" "$TMP/off.json"
expect_exit 0 "$DCPROF" top --stdio --off-cpu --iterations 3 --pid "$WL" \
	--format json
cp "$TMP/out" "$TMP/cpu.json"
expect_exit 0 "$DCPROF" top --stdio --off-cpu --value wall --iterations 3 \
	--pid "$WL" --limit 100
cp "$TMP/out" "$TMP/wall.txt"
wait "$WL" || die "nap_burn failed"

python3 - "$TMP" "$W" <<'PY' || die "top --off-cpu is off the truth"
import bisect, json, sys
tmp, mine = sys.argv[1:]
rounds = [tuple(map(int, l.split())) for l in open(tmp + "/truth")]
ends = [r[0] for r in rounds]

def truth(start, end):
    """nap's ms and share of the off-CPU time in the rounds ended in
    [start, end]"""
    a = bisect.bisect_left(ends, start) - 1
    b = bisect.bisect_right(ends, end) - 1
    assert a >= 0 and b > a, "no rounds in the interval"
    nap = rounds[b][1] - rounds[a][1]
    pre = rounds[b][2] - rounds[a][2]
    return nap / 1e6, 100.0 * nap / (nap + pre)

def rounds_in(d):
    return sum(1 for e in ends if d["end_ns"] - d["seconds"] * 1e9 <= e <= d["end_ns"])

off = [json.loads(l) for l in open(tmp + "/off.json")]
assert len(off) == 4, len(off)
for d in off:
    n = d["interval"]
    assert d["off_cpu"] is True and d["value"] == "off-cpu", d["value"]
    rows = d["rows"]
    if n == 1:
        continue
    assert rows, "interval %d: no rows" % n
    top = rows[0]
    assert top["symbol"] == "nap" and top["file"] == mine, \
        "interval %d: first row %s %s" % (n, top["file"], top["symbol"])
    want_ms, want = truth(d["end_ns"] - d["seconds"] * 1e9, d["end_ns"])
    print("interval %d: nap %.1f%% (want %.1f%%), %.0f ms (want %.0f)"
          % (n, top["share"], want, top["ms"], want_ms))
    assert abs(top["share"] - want) <= 4, \
        "interval %d: nap %.1f%% of the off-CPU time, want %.1f%%" % (n, top["share"], want)
    assert abs(top["ms"] / want_ms - 1) <= 0.1, \
        "interval %d: nap %.0f ms, want %.0f" % (n, top["ms"], want_ms)
    assert "samples" not in top and top["session_ms"] >= top["ms"]

cpu = [json.loads(l) for l in open(tmp + "/cpu.json")]
for d in cpu:
    n = d["interval"]
    assert d["off_cpu"] is True and d["value"] == "cpu", d["value"]
    rows = d["rows"]
    if n == 1:
        continue
    total = sum(r["samples"] for r in rows)
    assert total >= 40, "interval %d: %d samples" % (n, total)
    assert rows[0]["symbol"] == "burn_cpu", \
        "interval %d: CPU view led by %s" % (n, rows[0]["symbol"])
    share = 100.0 * rows[0]["samples"] / total
    want = rounds_in(d) * 0.002 * 999
    print("interval %d: burn_cpu %.1f%% of the samples, %d (want %.0f)"
          % (n, share, rows[0]["samples"], want))
    # the rest: 4-6% in pvm_irq_enable on a VM whose timer interrupt
    # waits for the kernel to enable interrupts again, 2-4% the
    # workload's own clock and run-delay reads (84.9% seen once)
    assert share >= 80, "interval %d: burn_cpu %.1f%%; the other rows: %s" % (
        n, share, ", ".join("%s %s %d" % (r["file"], r["symbol"], r["samples"])
                            for r in rows[1:]))
    assert abs(rows[0]["samples"] / want - 1) <= 0.15, \
        "interval %d: burn_cpu %d samples, want %.0f" % (n, rows[0]["samples"], want)
    for r in rows:
        assert r["session_samples"] > 0, "a row without samples: %s" % r

blocks = [b for b in open(tmp + "/wall.txt").read().split("\n\n") if b.strip()]
assert len(blocks) == 3, len(blocks)
for b in blocks[1:]:
    lines = b.splitlines()
    head = lines[0]
    assert ", off-CPU " in head and "value wall" in head, head
    secs = float(head.split(": ")[1].split(" s,")[0])
    assert lines[1].split()[:4] == ["last", "session", "ms", "session_ms"], lines[1]
    ms = sum(float(l.split()[2]) for l in lines[2:])
    print("%s: the process's wall time %.0f ms in %.2f s" % (head.split(":")[0], ms, secs))
    assert abs(ms / (secs * 1000) - 1) <= 0.15, "%.0f ms in %.2f s" % (ms, secs)
PY

# --- bad input --------------------------------------------------------------
refused() { # MESSAGE ARGS...
	local msg=$1
	shift
	expect_exit 2 "$DCPROF" top --stdio "$@"
	head -1 "$TMP/err" | grep -q -- "^dcprof: $msg" ||
		die "top $*: $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || die "top $*: printed $(head -3 "$TMP/out")"
}
refused "--value off-cpu needs --off-cpu" --value off-cpu
refused "--value wall needs --off-cpu" --value wall
refused "--off-cpu-min needs --off-cpu" --off-cpu-min 100
refused "--off-cpu cannot be combined with --only" --off-cpu --only /bin/true
refused "invalid --off-cpu-min '-5'" --off-cpu --off-cpu-min -5
refused "unknown value 'idle'" --off-cpu --value idle

pass
