#!/bin/bash
# Off-CPU bench: dcprof record -a --off-cpu and perf record -e
# sched:sched_switch -g -a side by side, in one run, one recorder at a time,
# on two workloads (tests/workloads/off_cpu.c):
#   pingpong: two threads passing a byte back and forth through two pipes
#             as fast as they can (tens of thousands of switches a second);
#   rounds:   t0198's program (10 ms rounds: burn 4 ms, sleep 4 ms, wait
#             ~2 ms for a helper thread through a pipe).
# For each (workload, recorder): the recorder's own CPU time (user+sys of
# the recorder alone: the workload runs apart, started by this script),
# the output size, and for pingpong the round trips per second against a
# run without a recorder (the slowdown). Prints a markdown table on stdout,
# progress on stderr. About 1 minute with the defaults.
#
# Environment:
#   BENCH_DURATION=10   seconds of each recording (and workload run)
#   BENCH_KEEP=1        keep the temporary directory
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${BENCH_DURATION:-10}
need_dcprof
need "$PERF" "perf is needed (the reference recorder)"
[ "$(id -u)" = 0 ] || die "run as root: both recorders trace every CPU"
bench_init

compile off_cpu -O1 -g -fno-omit-frame-pointer \
	"$TOP/tests/workloads/off_cpu.c" -lpthread
W=$TMP/off_cpu

# run_workload NAME: the workload for DURATION seconds, in the background;
# its output (pingpong: the round trips) goes to $TMP/NAME.out
run_workload() {
	"$W" "$1" "$DURATION" "$TMP/$1.main" >"$TMP/$1.out" &
	WORKLOAD_PID=$!
}

# record RECORDER WORKLOAD: one recording of DURATION seconds while the
# workload runs; sets CPU_MS, SIZE and TRIPS
record() {
	local who=$1 name=$2 out=$TMP/$1-$2.data
	sleep 0.5
	run_workload "$name"
	case $who in
	dcprof)
		recorder "$DCPROF" record -a --off-cpu --duration "$DURATION" \
			-o "$out" >/dev/null 2>"$TMP/$who.err" ||
			die "dcprof failed: $(tail -3 "$TMP/$who.err")"
		;;
	perf)
		recorder "$PERF" record -q -e sched:sched_switch -g -a \
			-o "$out" -- sleep "$DURATION" >/dev/null \
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
	for who in dcprof perf; do
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
	awk -v n="$name" -v ds="${size[dcprof]}" -v ps="${size[perf]}" \
		-v dc="${cpu[dcprof]}" -v pc="${cpu[perf]}" 'BEGIN {
		printf "| %s | perf / dcprof | %.1fx | %.0fx | | |\n", n,
			dc ? pc / dc : 0, ds ? ps / ds : 0 }'
done
echo
echo "pingpong alone: $((BASE_TRIPS / DURATION)) round trips/s; $DURATION s each, $NCPU CPUs"
