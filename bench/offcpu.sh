#!/bin/bash
# Off-CPU bench: dcprof record -a --off-cpu (the perf ring, and --backend
# bpf) and perf record -e sched:sched_switch -g -a side by side, in one
# run, one recorder at a time,
# on two workloads (tests/workloads/off_cpu.c):
#   pingpong: two threads passing a byte back and forth through two pipes
#             as fast as they can (tens of thousands of switches a second);
#   rounds:   t0198's program (10 ms rounds: burn 4 ms, sleep 4 ms, wait
#             ~2 ms for a helper thread through a pipe).
# For each (workload, recorder): the recorder's own CPU time (user+sys of
# the recorder alone: the workload runs apart, started by this script;
# for bpf plus the run time of its programs, kernel.bpf_stats_enabled=1),
# the output size, and for pingpong the round trips per second against a
# run without a recorder (the slowdown). bpftrace's off-CPU one-liner with
# kernel and user stacks runs too when it is installed (its CPU plus its
# programs' run time; its output is its printed maps). Prints a markdown table on stdout,
# progress on stderr. About 6 minutes with the defaults.
#
# perf runs with -B (no build-id pass at its end), which otherwise aborts
# on this kernel (docs/PERFORMANCE.md, "perf and the build-id flag").
#
# Environment:
#   BENCH_DURATION=10   seconds of each workload run (each recording:
#                       2 s more, the workload in its middle)
#   BENCH_ROUNDS=3      then pingpong's slowdown again, the recorders and a
#                       run without one alternating this many rounds (one
#                       run's slowdown moves by several points from the
#                       next's), with kernel.bpf_stats_enabled=0 as
#                       outside a bench (the run-time accounting costs
#                       two clock reads per program run); 0 leaves it out
#   BENCH_QUICK=1       1 s of each workload, recorded without a lead
#                       (below) or a pause before it, no rounds
#   BENCH_KEEP=1        keep the temporary directory
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${BENCH_DURATION:-$(by_mode 10 1)}
need_dcprof
need "$PERF" "perf is needed (the reference recorder)"
need taskset "taskset (util-linux) pins pingpong to one CPU"
[ "$(id -u)" = 0 ] || die "run as root: both recorders trace every CPU"
bench_init
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
trap 'sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"; bench_cleanup' EXIT

compile off_cpu -O1 -g -fno-omit-frame-pointer \
	"$TOP/tests/workloads/off_cpu.c" -lpthread
W=$TMP/off_cpu

# run_workload NAME [LEAD]: the workload for DURATION seconds, in the
# background, LEAD seconds from now (default 0); its output (pingpong: the
# round trips) goes to $TMP/NAME.out. pingpong's
# two threads share CPU 0: across two CPUs its speed is set by how fast an
# idle virtual CPU wakes up (13,000 round trips a second alone, more with
# any recorder keeping the CPUs busy: every slowdown came out negative);
# on one CPU it switches without idling (180,000 a second, within 2% from
# run to run), and a recorder's cost in the switch path shows.
run_workload() {
	(
		sleep "${2:-0}"
		if [ "$1" = pingpong ]; then
			exec taskset -c 0 "$W" "$1" "$DURATION" "$TMP/$1.main"
		else
			exec "$W" "$1" "$DURATION" "$TMP/$1.main"
		fi
	) >"$TMP/$1.out" &
	WORKLOAD_PID=$!
}

# Each recording lasts LEAD seconds more than the workload at both ends:
# the workload runs while every recorder is recording. A recorder's start
# (perf's synthesis of the running tasks, dcprof's collection walk) takes
# 0.1 to 0.3 s in which its events are not yet all on; pingpong started
# with the recorder ran that much of its time unslowed, which counted as a
# smaller slowdown for the slower starter (perf: its first half second
# had 80,000 round trips against 46,000 in each of the next, dcprof's
# 45,000). The quick mode, whose figures are not read, records without it.
LEAD=$(by_mode 1 0)
RECORD_SECS=$((DURATION + 2 * LEAD))
# the pause before each run (none in the quick mode)
SETTLE=$(by_mode 0.5 0)

# record RECORDER WORKLOAD: one recording of RECORD_SECS seconds with the
# workload running in the middle; sets CPU_MS, SIZE and TRIPS
record() {
	local who=$1 name=$2 out=$TMP/$1-$2.data
	sleep "$SETTLE"
	run_workload "$name" "$LEAD"
	case $who in
	dcprof)
		recorder "$DCPROF" record -a --off-cpu --duration "$RECORD_SECS" \
			-o "$out" >/dev/null 2>"$TMP/$who.err" ||
			die "dcprof failed: $(tail -3 "$TMP/$who.err")"
		;;
	dcprof-bpf)
		recorder "$DCPROF" record -v --backend bpf -a --off-cpu \
			--duration "$RECORD_SECS" -o "$out" >/dev/null \
			2>"$TMP/$who.err" ||
			die "dcprof --backend bpf failed: $(tail -3 "$TMP/$who.err")"
		# the BPF programs' run time counts as the recorder's
		bpf_ns=$(sed -n 's/.*program ran [0-9]* times for \([0-9]*\) ns.*/\1/p' \
			"$TMP/$who.err" | awk '{ s += $1 } END { printf "%.0f", s }')
		CPU_MS=$((CPU_MS + bpf_ns / 1000000))
		;;
	bpftrace)
		# each switch-out's time, stacks and name kept per thread;
		# at its switch-in the time off the CPU is summed by stacks;
		# the per-thread maps are cleared in END, once the probes are
		# off (a clear racing the switches fails)
		bpftrace_record "$RECORD_SECS" '
tracepoint:sched:sched_switch {
	@start[args->prev_pid] = nsecs;
	@kst[args->prev_pid] = kstack;
	@ust[args->prev_pid] = ustack;
	$t = @start[args->next_pid];
	if ($t) {
		@off[@kst[args->next_pid], @ust[args->next_pid], args->next_comm] =
			sum(nsecs - $t);
		delete(@start[args->next_pid]);
	}
}
interval:s:'"$RECORD_SECS"' { exit(); }
END { clear(@start); clear(@kst); clear(@ust); }' "$out"
		CPU_MS=$((CPU_MS + BPF_NS / 1000000))
		;;
	perf)
		recorder "$PERF" record -q -B -e sched:sched_switch -g -a \
			-o "$out" -- sleep "$RECORD_SECS" >/dev/null \
			2>"$TMP/$who.err" ||
			die "perf failed: $(tail -3 "$TMP/$who.err")"
		;;
	perf-same)
		# what dcprof's ring asks of the kernel with --off-cpu: the
		# switches with stacks, the wake-ups without, cpu-clock
		# samples at 999 Hz with stacks
		recorder "$PERF" record -q -B \
			-e sched:sched_switch/call-graph=fp/ \
			-e sched:sched_wakeup/call-graph=no/ \
			-e cpu-clock/period=1001001,call-graph=fp/ -a \
			-o "$out" -- sleep "$RECORD_SECS" >/dev/null \
			2>"$TMP/$who.err" ||
			die "perf failed: $(tail -3 "$TMP/$who.err")"
		;;
	esac
	wait "$WORKLOAD_PID"
	SIZE=$(stat -c %s "$out")
	TRIPS=$(cat "$TMP/$name.out")
}

say "baseline: pingpong alone for $DURATION s"
run_workload pingpong
wait "$WORKLOAD_PID"
BASE_TRIPS=$(cat "$TMP/pingpong.out")

echo "| workload | recorder | recorder CPU (ms) | output (bytes) | round trips/s | slowdown |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for name in pingpong rounds; do
	declare -A cpu=() size=()
	whos="dcprof dcprof-bpf perf"
	command -v bpftrace >/dev/null && whos+=" bpftrace"
	for who in $whos; do
		say "$who on $name, $DURATION s"
		record "$who" "$name"
		cpu[$who]=$CPU_MS
		size[$who]=$SIZE
		if [ "$name" = pingpong ]; then
			rate=$((TRIPS / DURATION))
			slow=$(awk -v b="$BASE_TRIPS" -v t="$TRIPS" \
				'BEGIN { printf "%.1f%%", 100 * (b - t) / b }')
		else
			rate=- slow=-
		fi
		echo "| $name | $who | ${cpu[$who]} | ${size[$who]} | $rate | $slow |"
	done
	for who in dcprof dcprof-bpf; do
		[ -n "${cpu[bpftrace]:-}" ] && awk -v n="$name" -v w="$who" \
			-v ds="${size[$who]}" -v bs="${size[bpftrace]}" \
			-v dc="${cpu[$who]}" -v bc="${cpu[bpftrace]}" 'BEGIN {
			printf "| %s | bpftrace / %s | %.1fx | %.0fx | | |\n", n, w,
				dc ? bc / dc : 0, ds ? bs / ds : 0 }'
		awk -v n="$name" -v w="$who" -v ds="${size[$who]}" \
			-v ps="${size[perf]}" -v dc="${cpu[$who]}" \
			-v pc="${cpu[perf]}" 'BEGIN {
			printf "| %s | perf / %s | %.1fx | %.0fx | | |\n", n, w,
				dc ? pc / dc : 0, ds ? ps / ds : 0 }'
	done
done
echo
echo "pingpong alone: $((BASE_TRIPS / DURATION)) round trips/s; $DURATION s each, $NCPU CPUs"

ROUNDS=${BENCH_ROUNDS:-$(by_mode 3 0)}
[ "$ROUNDS" -gt 0 ] || exit 0
echo
echo "pingpong's round trips, the recorders alternating with none, $ROUNDS rounds"
echo "(perf-same: perf record with the events dcprof's ring asks for: the"
echo "switches with stacks, the wake-ups, cpu-clock at 999 Hz with stacks):"
echo
echo "| recorder | round trips/s, each round | mean | slowdown |"
echo "| --- | --- | ---: | ---: |"
declare -A trips=()
sysctl -qw kernel.bpf_stats_enabled=0
whos="none dcprof dcprof-bpf perf perf-same"
command -v bpftrace >/dev/null && whos+=" bpftrace"
for round in $(seq "$ROUNDS"); do
	for who in $whos; do
		say "round $round: pingpong with $who"
		if [ "$who" = none ]; then
			sleep "$SETTLE"
			run_workload pingpong
			wait "$WORKLOAD_PID"
			TRIPS=$(cat "$TMP/pingpong.out")
		else
			record "$who" pingpong
		fi
		trips[$who]+="$((TRIPS / DURATION)) "
	done
done
none_mean=$(echo "${trips[none]}" | awk '{ for (i = 1; i <= NF; i++) s += $i; print s / NF }')
for who in $whos; do
	echo "${trips[$who]}" | awk -v w="$who" -v base="$none_mean" '{
		for (i = 1; i <= NF; i++) s += $i
		m = s / NF
		printf "| %s | %s | %.0f | %s |\n", w, $0, m,
			w == "none" ? "-" : sprintf("%.1f%%", 100 * (base - m) / base) }'
done
