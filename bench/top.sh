#!/bin/bash
# dcprof top against perf top, side by side in one run (issue 16): both
# -a -F 999 for BENCH_DURATION seconds (default 30) on the busy workload
# (BURNERS processes burning CPU, a short-lived process every CHURN_MS ms),
# refreshed every second, text output to /dev/null (dcprof top --stdio,
# perf top --stdio). Prints a markdown table: the recorder's CPU (user +
# system of the process) and its ratio to perf top's, and for dcprof the
# samples, the lost ones and the time spent naming addresses. Needs root
# (-a).
set -u
BENCH=top
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_dcprof
need "$PERF" python3 timeout
[ "$(id -u)" -eq 0 ] || die "needs root (-a)"
DURATION=${BENCH_DURATION:-30}
bench_init
trap bench_cleanup EXIT

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
