#!/bin/bash
# exclusive: wants the other CPUs idle (samples_other_idle) and times --duration
# record's targets and limits, as perf users type them: -p (and perf's -t)
# of a thread that does not lead its process records that process, and
# says so in one line; -p of a zombie or of a dead pid is refused ("no
# such process"); -F above perf_event_max_sample_rate is refused naming
# the limit and the sysctl; --duration with a command stops recording and
# leaves the command running (exit 0), unless --kill-at-end; an --only
# argument that is neither a file nor a whole build id is refused. Every
# refusal: one line, exit 1, no file written. A one-thread command's
# recording says how many of the other tasks' samples are the idle task's
# (the CPUs it left idle: at least half of the other CPUs' samples), in
# record's summary, report's header and JSON; before, only "(0 idle)" of
# the kept samples, which read as if no CPU had been idle.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 timeout
need_perf_events

# refused WHAT ARGS...: record exits 1 with one line, writes nothing
refused() {
	local what=$1
	shift
	rm -f "$TMP/refused.data"
	expect_exit 1 timeout 20 "$DCPROF" record -o "$TMP/refused.data" "$@"
	one_line_error
	ls "$TMP"/refused.data* >/dev/null 2>&1 &&
		die "$what: a file was written: $(ls "$TMP"/refused.data*)"
	echo "$what: $(cat "$TMP/err")"
}

# samples_of FILE SYMBOL: the samples the report gives SYMBOL
samples_of() {
	expect_exit 0 "$DCPROF" report -i "$1" --format json --sort symbol
	cp "$TMP/out" "$TMP/samples.json"
	json_get "$TMP/samples.json" \
		"sum(r['samples'] for r in d['rows'] if r['symbol'] == '$2')"
}

# --- -p and -t of a thread that is not its process's leader -------------
T3=$(build_workload threads3)
spawn "$T3" "$TMP/tids"
PID=$SPAWNED
wait_line "$TMP/tids" '^ready$'
TIDS=($(sed -n 's/^tid //p' "$TMP/tids"))
[ "${#TIDS[@]}" -eq 2 ] || die "threads3 wrote no tids: $(cat "$TMP/tids")"
[ "$(sed -n 's/^Tgid:\t//p' "/proc/${TIDS[0]}/status")" = "$PID" ] ||
	die "tid ${TIDS[0]} is not a thread of $PID"
for opt in -p -t; do
	tid=${TIDS[0]}
	[ "$opt" = -t ] && tid=${TIDS[1]}
	F=$TMP/thread$opt.data
	expect_exit 0 "$DCPROF" record $opt "$tid" --duration 1.5 -o "$F"
	[ "$(grep -c "thread of process $PID\b" "$TMP/err")" -eq 1 ] ||
		die "record $opt $tid does not say once that it records process $PID: $(cat "$TMP/err")"
	# three busy threads on the machine's CPUs for 1.5 s at 999 Hz: at
	# least a few hundred samples each, whatever else runs
	main=$(samples_of "$F" main_spin)
	worker=$(samples_of "$F" worker_spin)
	echo "record $opt $tid (a thread of $PID): main_spin $main, worker_spin $worker samples"
	[ "$main" -ge 100 ] || die "record $opt $tid: $main samples of main_spin"
	[ "$worker" -ge 100 ] || die "record $opt $tid: $worker samples of worker_spin"
done
kill -KILL "$PID"
wait "$PID" 2>/dev/null

# --- a zombie, a dead pid --------------------------------------------------
python3 -c '
import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid, flush=True)
time.sleep(60)
' >"$TMP/zombie" &
_spawned+=($!)
wait_line "$TMP/zombie" '^[0-9]+$'
Z=$(cat "$TMP/zombie")
for ((i = 0; i < 100; i++)); do
	grep -q '^State:.Z' "/proc/$Z/status" 2>/dev/null && break
	sleep 0.05
done
grep -q '^State:.Z' "/proc/$Z/status" || die "$Z did not become a zombie"
refused "zombie" -p "$Z"
grep -qi "no such process" "$TMP/err" || die "zombie: not 'no such process'"
grep -q "\b$Z\b" "$TMP/err" || die "zombie: pid $Z not named"

true &
DEAD=$!
wait "$DEAD"
refused "dead pid" -p "$DEAD"
grep -qi "no such process" "$TMP/err" || die "dead pid: not 'no such process'"
grep -q "\b$DEAD\b" "$TMP/err" || die "dead pid: pid $DEAD not named"

# --- -F above the kernel's maximum ---------------------------------------
MAX=$(cat /proc/sys/kernel/perf_event_max_sample_rate) ||
	die "cannot read perf_event_max_sample_rate"
for hz in 1000000 $((MAX + 1)); do
	[ "$hz" -gt "$MAX" ] || continue
	refused "-F $hz" -F "$hz" -- true
	grep -q "kernel.perf_event_max_sample_rate" "$TMP/err" ||
		die "-F $hz: the sysctl is not named"
	grep -q "\b$MAX\b" "$TMP/err" || die "-F $hz: the maximum $MAX is not named"
done
refused "-F $((MAX + 1)) -a" -F $((MAX + 1)) -a --duration 1

# --- --duration with a command: it keeps running, unless --kill-at-end ----
ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=$(ms)
expect_exit 0 "$DCPROF" record --duration 1 -o "$TMP/dur.data" -- \
	sh -c 'echo $$ >"$0"; exec sleep 3' "$TMP/dur.pid"
took=$(( $(ms) - t0 ))
CMD=$(cat "$TMP/dur.pid")
_spawned+=("$CMD")
echo "--duration 1 -- sleep 3: dcprof returned after $took ms: $(tail -1 "$TMP/err")"
[ "$took" -lt 2500 ] || die "--duration 1 took $took ms"
state=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$CMD/status" 2>/dev/null)
[ -n "$state" ] && [ "$state" != Z ] ||
	die "the command (pid $CMD) did not keep running after --duration"
[ "$(cat "/proc/$CMD/comm")" = sleep ] || die "pid $CMD is not the sleep"
grep -q "keeps running" "$TMP/err" || die "dcprof does not say the command keeps running"
expect_exit 0 "$DCPROF" report -i "$TMP/dur.data" --format json
cp "$TMP/out" "$TMP/dur.json"
[ "$(json_get "$TMP/dur.json" 'd["meta"]["complete"]')" = true ] ||
	die "--duration: the profile is not complete"
kill "$CMD"

t0=$(ms)
expect_exit 143 "$DCPROF" record --duration 1 --kill-at-end -o "$TMP/kill.data" -- \
	sh -c 'echo $$ >"$0"; exec sleep 3' "$TMP/kill.pid"
took=$(( $(ms) - t0 ))
CMD=$(cat "$TMP/kill.pid")
echo "--duration 1 --kill-at-end -- sleep 3: exit 143 after $took ms"
[ "$took" -lt 2500 ] || die "--kill-at-end took $took ms"
[ ! -e "/proc/$CMD" ] || die "--kill-at-end: the command (pid $CMD) still runs"
expect_exit 2 "$DCPROF" record --kill-at-end -a --duration 1 -o "$TMP/k.data"

# --- the idle CPUs of a command's recording --------------------------------
BURN=$(build_workload cpu_burn)
expect_exit 0 "$DCPROF" record -o "$TMP/idle.data" -- "$BURN" 2
grep -q "of other tasks ([0-9]* idle)" "$TMP/err" ||
	die "record's summary does not say how many other samples are idle: $(cat "$TMP/err")"
expect_exit 0 "$DCPROF" report -i "$TMP/idle.data" --limit 1
grep -q "^# samples: .* of other tasks ([0-9]* idle)$" "$TMP/out" ||
	die "report's header: $(grep '^# samples' "$TMP/out")"
expect_exit 0 "$DCPROF" report -i "$TMP/idle.data" --format json
python3 - "$TMP/out" "$(nproc)" <<'PY' || die "the other CPUs' idle samples are miscounted"
import json, sys
d = json.load(open(sys.argv[1]))
s, cpus = d["stats"], int(sys.argv[2])
secs = d["meta"]["duration_ns"] / 1e9
other_cpus = (cpus - 1) * secs * 999
print("one-thread command on %d CPUs, %.1f s: %d of other tasks, %d idle "
      "(the other CPUs: %.0f samples)" % (cpus, secs, s["samples_other_tasks"],
                                         s["samples_other_idle"], other_cpus))
assert s["samples_other_idle"] <= s["samples_other_tasks"]
assert s["samples_other_idle"] >= 0.5 * other_cpus
PY

# --- --only: a file or a whole build id ----------------------------------
refused "--only ab" --only ab -- true
grep -q "'ab'" "$TMP/err" || die "--only ab: the argument is not named"
refused "--only of 20 hex digits" --only 0123456789abcdef0123 -- true
refused "--only of a missing file" --only "$TMP/no-such-file" -- true

pass
