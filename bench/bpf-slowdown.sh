#!/bin/bash
# Workload slowdown of the BPF backend against the ring backend and perf
# record, side by side in one run (issue 14): bench/workloads/units.c (one
# thread per CPU doing fixed chunks of work) alone, under `dcprof record
# --backend bpf -a -g`, `dcprof record --backend perf -a -g` and `perf
# record -a -g`, at each rate of BENCH_SLOW_RATES (default "999 10000"),
# BENCH_SLOW_RUNS runs (default 3) of BENCH_SLOW_SECONDS (default 4) per
# mode, the order of the modes rotating run by run. Prints a markdown
# table: chunks/s of each run, the median, the slowdown against alone. Needs
# root (the BPF backend and -a).
set -u
BENCH=bpf-slowdown
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_dcprof
need "$PERF"
[ "$(id -u)" -eq 0 ] || die "needs root (the BPF backend and -a)"
RATES=${BENCH_SLOW_RATES:-999 10000}
RUNS=${BENCH_SLOW_RUNS:-3}
SECS=${BENCH_SLOW_SECONDS:-4}
bench_init
compile units -O2 "$TOP/bench/workloads/units.c" -lpthread

MODES=(alone bpf ring perf)
for rate in $RATES; do
	for run in $(seq 1 "$RUNS"); do
		for k in "${!MODES[@]}"; do
			mode=${MODES[$(((k + run - 1) % ${#MODES[@]}))]}
			f=$TMP/$mode-$rate-$run
			say "rate $rate, run $run: $mode"
			case $mode in
			alone) "$TMP/units" "$SECS" >"$f.out" 2>"$f.err" ;;
			bpf | ring)
				backend=$mode
				[ "$mode" = ring ] && backend=perf
				"$DCPROF" record --backend "$backend" -a -g -F "$rate" \
					-o "$f.data" -- "$TMP/units" "$SECS" >"$f.out" 2>"$f.err" ;;
			perf) perf_record -a -g -F "$rate" -o "$f.data" -- \
				"$TMP/units" "$SECS" >"$f.out" 2>"$f.err" ;;
			esac || die "$mode at $rate Hz failed: $(tail -2 "$f.err")"
			v=$(sed -n 's/^units: .* \([0-9.]*\) chunks\/s$/\1/p' "$f.out")
			[ -n "$v" ] || die "units printed no rate ($mode, $rate Hz)"
			echo "$v" >>"$TMP/$mode-$rate.rates"
			rm -f "$f.data"
		done
	done
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "Machine: $(nproc) CPUs ($(cpu_model)), kernel $(uname -r); units with one thread per CPU, $SECS s a run, $RUNS runs a mode; load $(load_avg)."
echo
echo "| rate | mode | chunks/s, each run | median | slowdown |"
echo "|---:|---|---|---:|---:|"
for rate in $RATES; do
	base=$(median "$TMP/alone-$rate.rates")
	for mode in "${MODES[@]}"; do
		m=$(median "$TMP/$mode-$rate.rates")
		echo "| $rate | $mode | $(paste -sd' ' "$TMP/$mode-$rate.rates") | $m | $(awk -v m="$m" -v b="$base" 'BEGIN { printf "%.1f%%", 100 * (b - m) / b }') |"
	done
done
