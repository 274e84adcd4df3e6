#!/bin/bash
# Workload slowdown of the BPF backend against the ring backend and perf
# record, side by side in one run: bench/workloads/units.c (one thread per
# CPU doing fixed chunks of work) alone, under the floor (an empty BPF
# program on cpu-clock, bpftrace), `dcprof record --backend bpf -a -g`
# (stacks unwound by tables) and `--call-graph fp`, `dcprof record
# --backend perf -a -g`, `perf record -a -g` and `--call-graph dwarf`, at
# each rate of BENCH_SLOW_RATES (default "999 10000"),
# BENCH_SLOW_RUNS runs (default 3) of BENCH_SLOW_SECONDS (default 4) per
# mode, the order of the modes rotating run by run. Prints a markdown
# table: chunks/s of each run, the median, the slowdown against alone. Needs
# root (the BPF backend and -a). BENCH_QUICK=1: one run of 1 s per mode
# at 999 Hz.
set -u
BENCH=bpf-slowdown
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_dcprof
need "$PERF"
[ "$(id -u)" -eq 0 ] || die "needs root (the BPF backend and -a)"
RATES=${BENCH_SLOW_RATES:-$(by_mode "999 10000" 999)}
RUNS=${BENCH_SLOW_RUNS:-$(by_mode 3 1)}
SECS=${BENCH_SLOW_SECONDS:-$(by_mode 4 1)}
bench_init
compile units -O2 "$TOP/bench/workloads/units.c" -lpthread

# floor: cpu-clock at the same rate on every CPU with an empty BPF program
# (bpftrace), the timer interrupt no profiler avoids; bpf: dcprof's -g,
# stacks unwound in the kernel by tables; bpf-fp: frame pointers alone;
# perf-dwarf: perf's stack copies for the same full stacks
MODES=(alone floor bpf bpf-fp ring perf perf-dwarf)
command -v bpftrace >/dev/null || die "bpftrace is not installed (apt-get install bpftrace): the floor row needs it"
for rate in $RATES; do
	for run in $(seq 1 "$RUNS"); do
		for k in "${!MODES[@]}"; do
			mode=${MODES[$(((k + run - 1) % ${#MODES[@]}))]}
			f=$TMP/$mode-$rate-$run
			say "rate $rate, run $run: $mode"
			case $mode in
			alone) "$TMP/units" "$SECS" >"$f.out" 2>"$f.err" ;;
			floor)
				bpftrace -e "profile:hz:$rate { }" >"$f.bt" 2>&1 &
				bt=$!
				for _ in $(seq 100); do
					grep -q Attaching "$f.bt" && break
					sleep 0.1
				done
				grep -q Attaching "$f.bt" ||
					die "bpftrace did not attach: $(tail -2 "$f.bt")"
				"$TMP/units" "$SECS" >"$f.out" 2>"$f.err"
				kill -INT "$bt"
				wait "$bt" ;;
			bpf | bpf-fp | ring)
				backend=perf
				cg=-g
				[ "$mode" = ring ] || backend=bpf
				[ "$mode" = bpf-fp ] && cg="--call-graph fp"
				# shellcheck disable=SC2086
				"$DCPROF" record --backend "$backend" -a $cg -F "$rate" \
					-o "$f.data" -- "$TMP/units" "$SECS" >"$f.out" 2>"$f.err" ;;
			perf) perf_record -a -g -F "$rate" -o "$f.data" -- \
				"$TMP/units" "$SECS" >"$f.out" 2>"$f.err" ;;
			perf-dwarf) perf_record -a --call-graph dwarf -F "$rate" \
				-o "$f.data" -- "$TMP/units" "$SECS" >"$f.out" 2>"$f.err" ;;
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
