#!/bin/bash
# A process started before recording: with -a its samples are attributed to
# its own binary and function (>= 95%: the rest may be kernel entry and
# timer frames); with -p PID only that process is kept, and its samples are
# spin_forever. None of its samples is unattributed or lacks its name, not
# even those taken between enabling the events and the collection walk
# reading its maps (at 4999 Hz, a few dozen: the recorder holds them until
# the walk has described the process).
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events
# 4999 Hz for the early samples; where the kernel's
# perf_event_max_sample_rate is lower, as fast as it allows (at least 999)
sample_rate 4999 999

SPIN=$(build_workload spin)
spawn "$SPIN" "$TMP/ready"
PID=$SPAWNED
wait_file "$TMP/ready"

# attributed: the share of the spin process's samples in (its binary,
# spin_forever), given rows sorted by pid,file,symbol
check_share() {
	python3 - "$1" "$PID" "$SPIN" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pid, binary, floor = int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
mine = [r for r in d["rows"] if r["pid"] == pid]
total = sum(r["samples"] for r in mine)
good = sum(r["samples"] for r in mine
           if r["file"] == binary and r["symbol"] == "spin_forever")
lost = sum(r["samples"] for r in mine
           if r["file"] == "[unknown]" or r["comm"] != "spin")
print("pid %d: %d of %d samples in %s spin_forever, %d unattributed or "
      "unnamed; top rows %s" % (
    pid, good, total, binary, lost,
    sorted(((r["samples"], r["comm"], r["file"], r["symbol"])
            for r in mine), reverse=True)[:3]))
# a spinning process gets most of a CPU: 2 s at 4999 Hz is ~10000 samples
assert total >= 500, "only %d samples of the spin process" % total
assert good >= floor * total, "only %.1f%% attributed" % (100.0 * good / total)
assert lost == 0, "%d samples without the process's file or name" % lost
PY
}

expect_exit 0 "$DCPROF" record -a -F "$RATE" --duration 2 -o "$TMP/all.data"
expect_exit 0 "$DCPROF" report -i "$TMP/all.data" --sort comm,pid,file,symbol \
	--format json
cp "$TMP/out" "$TMP/all.json"
check_share "$TMP/all.json" 0.95 || die "system-wide: samples misattributed"
[ "$(json_get "$TMP/all.json" 'd["stats"]["tasks_injected"]')" -gt 1 ] ||
	die "system-wide recording injected no existing tasks"

expect_exit 0 "$DCPROF" record -p "$PID" -F "$RATE" --duration 2 -o "$TMP/pid.data"
expect_exit 0 "$DCPROF" report -i "$TMP/pid.data" \
	--sort comm,pid,file,symbol --format json
cp "$TMP/out" "$TMP/pid.json"
check_share "$TMP/pid.json" 0.95 || die "-p: samples misattributed"
others=$(json_get "$TMP/pid.json" \
	'sorted(set("%s/%d" % (r["comm"], r["pid"]) for r in d["rows"]))')
[ "$others" = "[\"spin/$PID\"]" ] || die "-p $PID keeps other processes: $others"

pass
