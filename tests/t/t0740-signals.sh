#!/bin/bash
# exclusive: wants 300 samples of one thread in 1 s of wall time
# Signals: (a) the profiled command killed by SIGKILL and by SIGSEGV: dcprof
# exits 128 + the signal number and the profile is complete with the
# command's samples; (b) SIGTERM and SIGINT to a system-wide dcprof: it
# exits 0 and the profile is complete (report JSON meta.complete true),
# with the samples of the whole recording.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events
cp "$DCPROF" "$TMP/dcprof" && DCPROF=$TMP/dcprof || die "cannot copy dcprof"

BUSY=$(build_workload fault_busy)

check_complete() { # FILE MIN_SAMPLES [COMM]
	expect_exit 0 "$DCPROF" report -i "$1" --format json
	cp "$TMP/out" "$TMP/check.json"
	python3 - "$TMP/check.json" "$2" "${3:-}" <<'PY' || die "'$1' is not a complete profile"
import json, sys
d = json.load(open(sys.argv[1]))
want, comm = int(sys.argv[2]), sys.argv[3]
rows = [r for r in d["rows"] if not comm or r["comm"] == comm]
n = sum(r["samples"] for r in rows)
print("complete %s, %d samples%s" % (d["meta"]["complete"], n,
                                     " of " + comm if comm else ""))
assert d["meta"]["complete"]
assert n >= want, "%d samples, expected >= %d" % (n, want)
PY
}

for sig in KILL SEGV; do
	num=$(kill -l "$sig")
	F=$TMP/cmd-$sig.data
	expect_exit $((128 + num)) "$DCPROF" record -o "$F" -- \
		bash -c "\"$BUSY\" 1 1 && kill -$sig \$\$"
	echo "command killed by SIG$sig: dcprof exited $((128 + num))"
	# 1 s of one busy thread at 999 Hz, with room for a loaded machine
	check_complete "$F" 300 fault_busy
done

spawn "$BUSY" 1 0 14 "$TMP/busy.ready"
wait_line "$TMP/busy.ready" '^running$' 10
for sig in TERM INT; do
	F=$TMP/sig-$sig.data
	"$DCPROF" record -a -o "$F" --ready-fd 3 >"$TMP/rec.out" \
		2>"$TMP/rec.err" 3>"$TMP/$sig.ready" &
	REC=$!
	_spawned+=("$REC")
	# 1.5 s of recording from the moment the recorder says it records
	wait_line "$TMP/$sig.ready" '^recording$' 30
	sleep 1.5
	kill -"$sig" "$REC"
	wait "$REC"
	rc=$?
	[ "$rc" -eq 0 ] || die "dcprof exited $rc on SIG$sig: $(cat "$TMP/rec.err")"
	echo "SIG$sig: dcprof exited 0"
	check_complete "$F" 300 fault_busy
done
pass
