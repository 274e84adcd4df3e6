#!/bin/bash
# -p of a process whose child already runs: the recording covers the
# process's existing descendants and all their threads, on both backends
# (issue 41: a parent waiting on a spinning child recorded nothing, "0
# kept", and said nothing). The tree is sh (waits) -> sh (waits) ->
# threads3 (three spinning threads) started before dcprof: -p of the top
# sh for 1.5 s must keep at least 50 samples each (a busy machine of two
# CPUs gives them hundreds) of threads3's main_spin
# and worker_spin, all of them under threads3's pid. A -p of a sleeping
# process with no children keeps nothing: record says why in one line,
# naming the pid, and exits 0; report of it says why its table is empty.
# With -i (--no-inherit; top's too), -p of the top sh
# keeps none of threads3's samples, nor record -i of a command of a
# child it forks while recording (without -i: at least 50). The same tree of user nobody recorded by
# nobody (perf_event_paranoid 2: inherited per-task events, opened for the
# descendants' threads too) keeps the same samples.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 timeout
need_perf_events

T3=$(build_workload threads3)
# the "; :" keeps each sh from exec'ing its last command: three levels
cat >"$TMP/parent.sh" <<'SH'
sh -c '"$0" "$1"; :' "$1" "$2" &
wait
SH
spawn sh "$TMP/parent.sh" "$T3" "$TMP/tids"
PARENT=$SPAWNED
wait_line "$TMP/tids" '^ready$'
MIDDLE=$(pgrep -P "$PARENT")
_spawned+=($MIDDLE)
LEAF=$(pgrep -x -P "$MIDDLE" threads3) ||
	die "no threads3 below $PARENT: $(ps -o pid,ppid,comm --ppid "$PARENT")"
_spawned+=("$LEAF")
echo "tree: sh $PARENT -> sh -> threads3 $LEAF ($(ls /proc/$LEAF/task | wc -l) threads)"

# samples_of FILE SYMBOL: SYMBOL's samples, and the pids they were of
samples_of() {
	expect_exit 0 "$DCPROF" report -i "$1" --format json --sort pid,symbol
	cp "$TMP/out" "$TMP/samples.json"
	json_get "$TMP/samples.json" \
		"'%d %s' % (sum(r['samples'] for r in d['rows'] if r['symbol'] == '$2'), ','.join(sorted({str(r['pid']) for r in d['rows'] if r['symbol'] == '$2'})))"
}

check_backend() {
	local backend=$1 F=$TMP/tree-$1.data main worker
	expect_exit 0 "$DCPROF" record --backend "$backend" -p "$PARENT" \
		--duration 1.5 -o "$F"
	read -r main main_pids <<<"$(samples_of "$F" main_spin)"
	read -r worker worker_pids <<<"$(samples_of "$F" worker_spin)"
	echo "$backend: -p $PARENT: main_spin $main samples (pids $main_pids), worker_spin $worker (pids $worker_pids)"
	[ "$main" -ge 50 ] ||
		die "$backend: -p of the parent kept $main samples of its grandchild's main_spin"
	[ "$worker" -ge 50 ] ||
		die "$backend: -p of the parent kept $worker samples of its grandchild's worker threads"
	[ "$main_pids" = "$LEAF" ] && [ "$worker_pids" = "$LEAF" ] ||
		die "$backend: the samples are not of threads3's pid $LEAF"
	grep -q "no samples of" "$TMP/err" &&
		die "$backend: the empty-recording hint on a recording that kept samples"
	true
}

check_backend perf
# -i (perf's --no-inherit): the parent alone, which only waits
expect_exit 0 "$DCPROF" record -i -p "$PARENT" --duration 1 -o "$TMP/alone.data"
grep -q "no samples of process $PARENT: it did not run" "$TMP/err" ||
	die "-i -p $PARENT does not say that the process alone did not run: $(cat "$TMP/err")"
read -r alone _ <<<"$(samples_of "$TMP/alone.data" main_spin)"
[ "$alone" -eq 0 ] || die "-i -p $PARENT kept $alone samples of its grandchild"
echo "-i -p $PARENT: no samples of its grandchild, and the hint"
# top takes -i as record does
for i in "" -i; do
	expect_exit 0 "$DCPROF" top --stdio $i -p "$PARENT" --iterations 2 \
		--delay 0.5 -o "$TMP/top$i.data"
	read -r spun _ <<<"$(samples_of "$TMP/top$i.data" main_spin)"
	echo "top $i -p $PARENT: $spun samples of its grandchild's main_spin"
	if [ -n "$i" ]; then
		[ "$spun" -eq 0 ] || die "top -i -p $PARENT kept $spun samples of its grandchild"
	else
		[ "$spun" -ge 50 ] || die "top -p $PARENT kept $spun samples of its grandchild"
	fi
done
# and a child forked while recording: kept, but not with -i
for i in "" -i; do
	expect_exit 0 "$DCPROF" record $i -o "$TMP/fork$i.data" -- \
		sh -c '"$0" "$1" & sleep 1.5; kill $!' "$T3" "$TMP/tids$i"
	read -r forked _ <<<"$(samples_of "$TMP/fork$i.data" main_spin)"
	echo "record $i -- sh forking threads3: $forked samples of main_spin"
	if [ -n "$i" ]; then
		[ "$forked" -eq 0 ] || die "-i kept $forked samples of the command's child"
	else
		[ "$forked" -ge 50 ] || die "the command's child has $forked samples"
	fi
done
if "$DCPROF" record --backend bpf --duration 0.3 -o "$TMP/probe.data" \
	>/dev/null 2>"$TMP/probe.err"; then
	check_backend bpf
else
	[ -z "${CI:-}" ] || die "the BPF backend does not load: $(cat "$TMP/probe.err")"
	skip_part "the BPF backend does not load: $(cat "$TMP/probe.err")"
fi
kill -KILL "$LEAF" "$MIDDLE" "$PARENT" 2>/dev/null
wait "$PARENT" 2>/dev/null

# --- a user without per-CPU events: inherited per-task events ------------
# (perf_event_paranoid 2): those of the existing descendants are opened too
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 &&
	command -v setpriv >/dev/null &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -eq 2 ]; then
	as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" \
		--clear-groups "$@"; }
	chmod 711 "$TMP"
	mkdir -m 777 "$TMP/u"
	cp "$DCPROF" "$T3" "$TMP/parent.sh" "$TMP/u/" && chmod 755 "$TMP/u/"* ||
		die "cannot copy the programs for nobody"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		sh "$TMP/u/parent.sh" "$TMP/u/threads3" "$TMP/u/tids" &
	PARENT=$!
	_spawned+=("$PARENT")
	wait_line "$TMP/u/tids" '^ready$'
	MIDDLE=$(pgrep -P "$PARENT")
	_spawned+=($MIDDLE)
	LEAF=$(pgrep -x -P "$MIDDLE" threads3) || die "no threads3 of nobody"
	_spawned+=("$LEAF")
	DCPROF=$TMP/u/dcprof
	F=$TMP/u/tree.data
	expect_exit 0 as_nobody "$DCPROF" record -p "$PARENT" --duration 1.5 -o "$F"
	grep -q "per-task events" "$TMP/err" ||
		die "as nobody, record did not fall back to per-task events: $(cat "$TMP/err")"
	read -r main main_pids <<<"$(samples_of "$F" main_spin)"
	read -r worker worker_pids <<<"$(samples_of "$F" worker_spin)"
	echo "per-task events (nobody): -p $PARENT: main_spin $main samples (pids $main_pids), worker_spin $worker (pids $worker_pids)"
	[ "$main" -ge 50 ] && [ "$worker" -ge 50 ] ||
		die "per-task events: -p of the parent kept $main and $worker samples of its grandchild's threads"
	DCPROF=$BUILD/dcprof
	kill -KILL "$LEAF" "$MIDDLE" "$PARENT" 2>/dev/null
	wait "$PARENT" 2>/dev/null
else
	[ -z "${CI:-}" ] || die "CI runs as root, with user nobody and setpriv"
	skip_part "per-task events: not root, no user nobody or setpriv, or perf_event_paranoid is not 2"
fi

# --- a target that never runs: one line says why ------------------------
spawn sleep 30
SLEEPER=$SPAWNED
expect_exit 0 "$DCPROF" record -p "$SLEEPER" --duration 0.5 -o "$TMP/empty.data"
cat "$TMP/err"
[ "$(grep -c "no samples of process $SLEEPER or its descendants" "$TMP/err")" -eq 1 ] ||
	die "-p of a sleeping process does not say once why nothing was kept"
grep "no samples of" "$TMP/err" | grep -q "of other tasks" ||
	die "the hint does not say how many samples were of other tasks"
other=$(sed -n 's/.* \([0-9]*\) of other tasks.*/\1/p' "$TMP/err" | head -1)
expect_exit 0 "$DCPROF" report -i "$TMP/empty.data"
grep -q "^# nothing kept: all $other samples were of tasks other than the recorded ones" "$TMP/out" ||
	die "report of the empty recording does not say why: $(head -9 "$TMP/out")"
pass
