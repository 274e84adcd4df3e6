#!/bin/bash
# Durability: a recorder killed with SIGKILL leaves a file that opens and
# reports the samples up to its last flush, marked incomplete; SIGINT and
# SIGTERM finish the profile cleanly (complete, exit 0).
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

SPIN=$(build_workload spin)
spawn "$SPIN" "$TMP/ready"
PID=$SPAWNED
wait_file "$TMP/ready"

# samples of the spin process in its binary, then in spin_forever, in a
# report sorted by pid,file,symbol
spin_samples() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
mine = [r for r in d["rows"] if r["pid"] == int(sys.argv[2])
        and r["file"] == sys.argv[3]]
print(sum(r["samples"] for r in mine),
      sum(r["samples"] for r in mine if r["symbol"] == "spin_forever"))
' "$1" "$PID" "$SPIN"
}

F=$TMP/killed.data
"$DCPROF" record -a --flush-interval 0.5 -o "$F" --ready-fd 3 \
	>"$TMP/rec.out" 2>"$TMP/rec.err" 3>"$TMP/rec.ready" &
REC=$!
_spawned+=("$REC")
# the recorder says when its events are on and the walk is done: 2.5 s
# of recording from then on, whatever the start cost
wait_line "$TMP/rec.ready" '^recording$' 30
sleep 2.5
kill -KILL "$REC"
wait "$REC" 2>/dev/null
[ -e "$F" ] || die "no profile after SIGKILL"
ls "$F".tmp.* >/dev/null 2>&1 &&
	echo "note: a SIGKILL leaves a temporary file behind: $(ls "$F".tmp.*)"

expect_exit 0 "$DCPROF" report -i "$F"
grep -q "^# INCOMPLETE" "$TMP/out" || die "the text report does not say INCOMPLETE"
expect_exit 0 "$DCPROF" report -i "$F" --sort pid,file,symbol --format json
cp "$TMP/out" "$TMP/killed.json"
[ "$(json_get "$TMP/killed.json" 'd["meta"]["complete"]')" = false ] ||
	die "meta.complete is not false after SIGKILL"
read -r infile n < <(spin_samples "$TMP/killed.json")
# 2.5 s of recording, flushed every 0.5 s: the file holds at least the first
# 2 s minus one flush interval, 1.5 s, of a process that keeps one CPU busy
# (~1500 samples at 999 Hz). The bound is 500 so that a machine busy with
# other work (the spin process then gets less than a CPU) still passes,
# while a file that holds only the walk or nothing at all fails.
echo "after SIGKILL: $infile samples in the spin binary, $n in spin_forever"
[ "$infile" -ge 500 ] || die "only $infile samples of the spin binary survived SIGKILL"
[ "$n" -ge 500 ] ||
	die "after SIGKILL, $infile samples in the spin binary but $n named spin_forever (symbols unresolved)"
expect_exit 0 "$DCPROF" cookies -i "$F"

for sig in INT TERM; do
	F=$TMP/$sig.data
	"$DCPROF" record -a -o "$F" --ready-fd 3 >"$TMP/rec.out" \
		2>"$TMP/rec.err" 3>"$TMP/$sig.ready" &
	REC=$!
	_spawned+=("$REC")
	wait_line "$TMP/$sig.ready" '^recording$' 30
	sleep 1.5
	kill -$sig "$REC"
	wait "$REC"
	rc=$?
	[ "$rc" -eq 0 ] || die "SIG$sig: record exited $rc: $(cat "$TMP/rec.err")"
	grep -q "^dcprof: wrote '$F'" "$TMP/rec.err" ||
		die "SIG$sig: no closing summary: $(cat "$TMP/rec.err")"
	expect_exit 0 "$DCPROF" report -i "$F" --sort pid,file,symbol \
		--format json
	cp "$TMP/out" "$TMP/$sig.json"
	[ "$(json_get "$TMP/$sig.json" 'd["meta"]["complete"]')" = true ] ||
		die "SIG$sig: the profile is not complete"
	read -r infile n < <(spin_samples "$TMP/$sig.json")
	echo "SIG$sig: $n samples of spin_forever"
	[ "$n" -ge 300 ] || die "SIG$sig: only $n samples of spin_forever"
	ls "$F".tmp.* >/dev/null 2>&1 && die "SIG$sig left a temporary file"
done

pass
