#!/bin/bash
# 100,000 short-lived processes: fault_forks forks 100,000 children that
# exit at once (at most 64 alive), pausing after 20,000 and after 100,000.
# The recorder (system-wide, -g) must stay under 64 MiB resident, and must
# not grow with the number of processes: its peak (VmHWM) at 100,000 may
# exceed the one at 20,000 by at most 25% + 4 MiB (linear growth would be
# 5 times). The recording must then finish, open complete, and have seen
# the processes: the profile keeps no count of processes seen, so the
# check is on what it does print: the children's samples are named after
# their parent ("fault_forks", a name they only get from the recorder
# following each fork), in at least COUNT/200 distinct children (about one
# child in fifteen is sampled here; a recorder that misses forks names
# them ":PID").
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_perf_events
# ASan's shadow memory and quarantine make resident size meaningless here;
# the plain build's run of this test holds the bound.
[ -z "$SAN_CFLAGS" ] || skip "memory bounds are measured on the plain build"
cp "$DCPROF" "$TMP/dcprof" && DCPROF=$TMP/dcprof || die "cannot copy dcprof"

COUNT=${FORKS:-100000}
STEP=$((COUNT / 5))
LIMIT_KB=$((64 * 1024))
FORKS_BIN=$(build_workload fault_forks)

F=$TMP/forks.data
"$DCPROF" record -a -g -o "$F" --ready-fd 3 >"$TMP/rec.out" \
	2>"$TMP/rec.err" 3>"$TMP/rec.ready" &
REC=$!
_spawned+=("$REC")
wait_line "$TMP/rec.ready" '^recording$' 30

hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$REC/status"; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$REC/status"; }
# the recorder has caught up with the records of a batch once its peak
# stays put for 1 s (at most 20 s): not a fixed pause a slow machine
# outruns
settle() {
	local i same=0 prev='' cur
	for ((i = 0; i < 40 && same < 2; i++)); do
		sleep 0.5
		cur=$(hwm)
		if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		prev=$cur
	done
	[ "$same" -ge 2 ] || echo "note: the recorder's peak still grew after 20 s ($cur KiB)"
}
PAUSE=$TMP/pause
"$FORKS_BIN" "$COUNT" "$STEP" "$PAUSE" >"$TMP/forks.out" &
FP=$!
_spawned+=("$FP")
base=$(hwm)
h20=
for ((done = STEP; done < COUNT; done += STEP)); do
	wait_file "$PAUSE" 120
	settle
	h=$(hwm)
	echo "after $(cat "$PAUSE") forks: VmHWM $h KiB, VmRSS $(rss) KiB"
	[ -z "$h20" ] && h20=$h
	rm -f "$PAUSE"
done
wait "$FP" || die "fault_forks failed: $(cat "$TMP/forks.out")"
cat "$TMP/forks.out"
settle
h100=$(hwm)
echo "after $COUNT forks: VmHWM $h100 KiB, VmRSS $(rss) KiB (at start $base KiB)"
kill -INT "$REC"
wait "$REC"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc: $(cat "$TMP/rec.err")"

[ "$h100" -le "$LIMIT_KB" ] || die "the recorder grew to $h100 KiB"
[ "$h100" -le $((h20 * 5 / 4 + 4096)) ] ||
	die "the recorder grows with the processes: $h20 KiB at $STEP, $h100 KiB at $COUNT"

expect_exit 0 "$DCPROF" report -i "$F" --sort comm,pid --format json
cp "$TMP/out" "$TMP/forks.json"
python3 - "$TMP/forks.json" "$COUNT" "$FP" <<'PY' || die "the fork storm is not in the profile"
import json, sys
d = json.load(open(sys.argv[1]))
count, parent = int(sys.argv[2]), int(sys.argv[3])
s = d["stats"]
print({k: s[k] for k in ("samples", "lost_records", "lost_samples",
                         "reorder_late", "tasks_injected") if k in s})
assert d["meta"]["complete"], "incomplete profile"
named = {r["pid"] for r in d["rows"] if r["comm"] == "fault_forks"}
children = named - {parent}
print("children sampled under the name fault_forks: %d (of %d forked)"
      % (len(children), count))
assert parent in named, "the parent %d is not named fault_forks" % parent
assert len(children) >= count // 200, \
    "only %d children named: forks missed" % len(children)
PY
pass
