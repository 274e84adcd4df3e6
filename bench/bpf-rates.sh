#!/bin/bash
# The highest rate without loss, every CPU busy (issue 14), side by side in
# one run: `dcprof record --backend bpf`, `dcprof record --backend perf` and
# `perf record`, each -a -g for BENCH_RATE_SECONDS (default 3) on the busy
# workload (BURNERS processes burning CPU, a short-lived process every
# CHURN_MS ms), at each rate of BENCH_RATES (default "10000 50000 100000",
# each capped at kernel.perf_event_max_sample_rate), BENCH_RATE_RUNS runs
# (default 3) of each, the order of the recorders rotating run by run.
# Prints a markdown table per rate and recorder: samples taken against
# those asked (CPUs x rate x seconds: on a VM whose timer interrupts are VM
# exits the kernel takes fewer, with any recorder), samples and records
# lost in each run, the wall time of each run (dcprof's includes its start
# and its finish, perf's its start-up only as far as `sleep` runs), the
# time each dcprof file says was recorded (its duration: from sampling's
# start to its end, drains after it not counted), and the rate up to
# which a recorder lost nothing in any run. Needs root (the
# BPF backend and -a). BENCH_QUICK=1: one run of 1 s at 999 Hz.
set -u
BENCH=bpf-rates
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_dcprof
need "$PERF" python3
[ "$(id -u)" -eq 0 ] || die "needs root (the BPF backend and -a)"
RATES=${BENCH_RATES:-$(by_mode "10000 50000 100000" 999)}
RUNS=${BENCH_RATE_RUNS:-$(by_mode 3 1)}
SECS=${BENCH_RATE_SECONDS:-$(by_mode 3 1)}
MAX_RATE_FILE=/proc/sys/kernel/perf_event_max_sample_rate
bench_init
start_busy

# run_one RECORDER RATE FILE: one recording; prints "samples lost ms"
# (lost: samples + records, as the recorder counts them)
run_one() {
	local t0 t1 samples lost lrec lsamp
	t0=$(date +%s%N)
	case $1 in
	bpf | ring)
		local backend=bpf
		[ "$1" = ring ] && backend=perf
		"$DCPROF" record --backend "$backend" -a -g -F "$2" \
			--duration "$SECS" -o "$3" >/dev/null 2>"$3.err" ||
			die "dcprof --backend $backend at $2 Hz failed: $(tail -2 "$3.err")"
		t1=$(date +%s%N)
		samples=$(sed -n 's/^dcprof: \([0-9]*\) samples:.*/\1/p' "$3.err")
		recorded=$("$DCPROF" report -i "$3" --format json | python3 -c \
			'import json, sys; print("%.2f" % (json.load(sys.stdin)["meta"]["duration_ns"] / 1e9))')
		lost=$(sed -n 's/^dcprof: lost \([0-9]*\) records and \([0-9]*\) samples.*/\1 \2/p' \
			"$3.err" | awk '{ print $1 + $2 }')
		;;
	perf)
		perf_record -a -g -F "$2" -o "$3" -- sleep "$SECS" \
			>/dev/null 2>"$3.err" ||
			die "perf record at $2 Hz failed: $(tail -2 "$3.err")"
		t1=$(date +%s%N)
		read -r samples lrec lsamp _ < <(perf_data "$3")
		lost=$((lrec + lsamp))
		recorded=- # as long as sleep ran
		;;
	esac
	[ -n "${samples:-}" ] && [ -n "${lost:-}" ] ||
		die "no counts from $1 at $2 Hz: $(tail -2 "$3.err")"
	echo "$samples $lost $(((t1 - t0) / 1000000)) $recorded"
}

RECORDERS=(bpf ring perf)
for want in $RATES; do
	max=$(cat "$MAX_RATE_FILE")
	rate=$((want < max ? want : max))
	echo "$rate" >>"$TMP/rates"
	for run in $(seq 1 "$RUNS"); do
		for k in "${!RECORDERS[@]}"; do
			rec=${RECORDERS[$(((k + run - 1) % ${#RECORDERS[@]}))]}
			say "rate $rate, run $run: $rec"
			run_one "$rec" "$rate" "$TMP/$rec-$rate-$run.data" \
				>>"$TMP/$rec-$rate.runs"
			rm -f "$TMP/$rec-$rate-$run.data"
		done
	done
done

echo
echo "Machine: $(nproc) CPUs ($(cpu_model)), kernel $(uname -r); $BURNERS burners + a short-lived process every $CHURN_MS ms; -a -g for $SECS s, $RUNS runs each; load $(load_avg)."
echo
echo "| rate | recorder | samples, each run | asked | taken | lost, each run | wall ms, each run | recorded s, each run |"
echo "|---:|---|---|---:|---:|---|---|---|"
for rate in $(sort -nu "$TMP/rates"); do
	asked=$(($(nproc) * rate * SECS))
	for rec in "${RECORDERS[@]}"; do
		f=$TMP/$rec-$rate.runs
		echo "| $rate | $rec | $(cut -d' ' -f1 "$f" | paste -sd' ') | $asked |" \
			"$(awk -v a="$asked" '{ s += $1 } END { printf "%.0f%%", 100 * s / NR / a }' "$f") |" \
			"$(cut -d' ' -f2 "$f" | paste -sd' ') | $(cut -d' ' -f3 "$f" | paste -sd' ') |" \
			"$(cut -d' ' -f4 "$f" | paste -sd' ') |"
	done
done
echo
for rec in "${RECORDERS[@]}"; do
	clean=none
	for rate in $(sort -nu "$TMP/rates"); do
		awk '$2 > 0 { bad = 1 } END { exit bad }' "$TMP/$rec-$rate.runs" || break
		clean="$rate Hz"
	done
	echo "- $rec: no loss in any run up to $clean"
done
