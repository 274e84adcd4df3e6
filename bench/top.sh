#!/bin/bash
# dcprof top against perf top, side by side in one run (issue 16): both
# -a -F 999 for BENCH_DURATION seconds (default 30) on the busy workload
# (BURNERS processes burning CPU, a short-lived process every CHURN_MS ms),
# refreshed every second, text output to /dev/null (dcprof top --stdio,
# perf top --stdio). Prints a markdown table: the recorder's CPU (user +
# system of the process) and its ratio to perf top's, and for dcprof the
# samples, the lost ones and the time spent naming addresses. Needs root
# (-a).
# Then the time to build and draw one screen with 10,000 distinct symbols
# in the session: a workload of 10,000 tiny functions called round robin
# (generated, one process per CPU), dcprof top --stdio -a -F 9999 --sort
# symbol for BENCH_DRAW_DURATION 1 s intervals (default 10), the table
# (table_ms: after the snapshot and the wait for the naming thread's names,
# naming_wait_ms, reported apart: the interval's samples folded in, the
# rows shown put in order) and the print of a 20-row screen
# (prev_draw_ms) that top reports in its JSON, in wall and CPU time, with
# the samples lost per interval. BENCH_TOP_ONLY=draw runs this part alone.
# BENCH_QUICK=1: top for 2 s, and 1,000 symbols for 2 intervals.
set -u
BENCH=top
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_dcprof
need "$PERF" python3 timeout
[ "$(id -u)" -eq 0 ] || die "needs root (-a)"
DURATION=${BENCH_DURATION:-$(by_mode 30 2)}
bench_init
trap bench_cleanup EXIT

# --- one screen with 10,000 symbols ---------------------------------------
draw_bench() {
	local n secs=${BENCH_DRAW_DURATION:-$(by_mode 10 2)} i
	n=$(by_mode 10000 1000)
	python3 - "$n" >"$TMP/syms.c" <<'PY'
import sys
n = int(sys.argv[1])
print("#include <unistd.h>\nstatic volatile unsigned long sink;")
for i in range(n):
    print("__attribute__((noinline)) void f%05d(void)"
          " { for (int k = 0; k < 300; k++) sink++; }" % i)
print("static void (*const fn[])(void) = {")
print(",\n".join("f%05d" % i for i in range(n)) + "};")
print("int main(void) { for (;;) for (unsigned i = 0; i < %d; i++) fn[i](); }" % n)
PY
	compile syms -O1 -g "$TMP/syms.c"
	for ((i = 0; i < $(nproc); i++)); do
		start_bg "$TMP/syms"
	done
	say "dcprof top --stdio, $n symbols, $secs s"
	"$DCPROF" top --stdio -a -F 9999 --sort symbol --delay 1 \
		--iterations "$secs" --format json >"$TMP/draw.json" \
		2>"$TMP/draw.err" || die "dcprof top failed: $(tail -3 "$TMP/draw.err")"
	stop_bg
	python3 - "$TMP/draw.json" "$n" <<'PY'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
# the draw of interval i is reported by interval i + 1
# table_ms: the table alone, after the snapshot (the wait for the naming
# thread's names, naming_wait_ms, the recorder draining meanwhile, is
# reported apart): the interval's samples folded in and the rows put in
# order; the screen is the table and the draw, in wall time and in the CPU
# time of top's thread (the workload holds every CPU, so the wall time
# counts the time other tasks had the CPU); naming_ms is the naming
# thread's last batch
rows = [(d[i]["entries"], d[i]["naming_ms"], d[i]["naming_wait_ms"],
         d[i]["table_ms"], d[i]["table_cpu_ms"], d[i + 1]["prev_draw_ms"],
         d[i + 1]["prev_draw_cpu_ms"], d[i]["lost"])
        for i in range(len(d) - 1)]
full = [r for r in rows if r[0] >= n]
print()
print("| interval | groups in session | naming ms | wait ms | table ms "
      "| table CPU ms | draw ms | screen ms (table + draw) | screen CPU ms | lost |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for i, (e, m, w, b, bc, p, pc, lost) in enumerate(rows, 1):
    print("| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %d |"
          % (i, e, m, w, b, bc, p, b + p, bc + pc, lost))
if full:
    s = sorted(r[3] + r[5] for r in full)
    c = sorted(r[4] + r[6] for r in full)
    print()
    print("With >= %d groups: screen (table + draw) median %.2f ms, max "
          "%.2f ms; its CPU time median %.2f ms, max %.2f ms; over %d "
          "intervals." % (n, s[len(s) // 2], s[-1], c[len(c) // 2], c[-1],
                          len(s)))
PY
}
if [ "${BENCH_TOP_ONLY:-}" = draw ]; then
	draw_bench
	exit 0
fi

start_busy

say "dcprof top --stdio, $DURATION s"
recorder "$DCPROF" top --stdio -a -F 999 --delay 1 --iterations "$DURATION" \
	--format json >"$TMP/dcprof.json" 2>"$TMP/dcprof.err" ||
	die "dcprof top failed: $(tail -3 "$TMP/dcprof.err")"
DCP_CPU=$CPU_MS
read -r DCP_SAMPLES DCP_LOST DCP_NAMING < <(python3 - "$TMP/dcprof.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(sum(r["samples"] for r in rows), sum(r["lost"] for r in rows),
      "%.0f" % rows[-1]["naming_total_ms"])
PY
)

# perf top aborts (util/build-id.c assertion) on MMAP2 records the kernel
# flagged with a build id for another consumer, i.e. while any other dcprof
# records (see "perf and the build-id flag" in docs/PERFORMANCE.md): wait
# for a window without one, try again when it aborts anyway, and when no
# run lasts DURATION compare CPU per second of the longest run.
PERF_CPU=- PERF_RAN=0
for try in 1 2 3 4 5; do
	for ((w = 0; w < 60; w++)); do
		pgrep -x dcprof >/dev/null || break
		sleep 1
	done
	say "perf top --stdio, $DURATION s (try $try)"
	start=$(date +%s.%N)
	recorder timeout -s INT "$DURATION" "$PERF" top --stdio -a -F 999 -d 1 \
		</dev/null >/dev/null 2>"$TMP/perf.err"
	rc=$?
	ran=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	if awk -v r="$ran" -v b="$PERF_RAN" 'BEGIN { exit !(r > b) }'; then
		PERF_CPU=$CPU_MS PERF_RAN=$ran
	fi
	awk -v r="$ran" -v d="$DURATION" 'BEGIN { exit !(r >= d - 0.5) }' && break
	say "perf top stopped after $ran s ($rc): $(grep -m1 . "$TMP/perf.err")"
done
[ "$PERF_CPU" != - ] || die "perf top never ran"
DCP_RATE=$(div "$DCP_CPU" "$DURATION" %.1f)
PERF_RATE=$(div "$PERF_CPU" "$PERF_RAN" %.1f)

echo
echo "Machine: $(nproc) CPUs ($(cpu_model)), kernel $(uname -r), $("$PERF" --version); $BURNERS burners + a short-lived process every $CHURN_MS ms; -a -F 999, 1 s refresh; load $(load_avg)."
echo
echo "| viewer | ran s | recorder CPU ms | CPU ms per s | x perf top | samples | lost | naming ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
echo "| perf top --stdio | $PERF_RAN | $PERF_CPU | $PERF_RATE | 1.00 | - | - | - |"
echo "| dcprof top --stdio | $DURATION | $DCP_CPU | $DCP_RATE | $(div "$DCP_RATE" "$PERF_RATE") | $DCP_SAMPLES | $DCP_LOST | $DCP_NAMING |"
draw_bench
