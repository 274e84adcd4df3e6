#!/bin/bash
# Continuous profiling bench: the recorder's cost and memory over many
# periods, and the time to read a day of periods.
#
# 1. On the busy workload (bench/lib.sh), `dcprof record -a -g --continuous
#    DIR --period P` at its default rate (99 Hz) for SECONDS, and, in the
#    same run, a single `dcprof record -F 99 -a -g` (what cutting periods
#    adds) and `perf record -F 99 -a -g` for the same time: each one's CPU
#    time (utime + stime from /proc/PID/stat, read just before it is
#    stopped) as a percentage of one core, and dcprof's RSS at every
#    period (flat: the aggregate starts empty each period; the process
#    table, cookies and pinned files follow what runs).
# 2. The period files of 1. copied under the names of a whole day of 60 s
#    periods (1440 files, round robin), then `dcprof report -i DIR` (the
#    whole day) and `--since/--until` of one hour, best of RUNS.
# Prints markdown tables on stdout, progress on stderr.
#
# Environment:
#   BENCH_SECONDS=60   length of the recording
#   BENCH_PERIOD=2     --period of the recording
#   BENCH_RUNS=3       timed runs of each report (the best is kept)
#   BENCH_QUICK=1      3 s of periods of 1 s, each report once
#   BENCH_KEEP=1, BENCH_BURNERS, BENCH_CHURN_MS, BUILD, DCPROF, PERF, CC
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECONDS_RUN=${BENCH_SECONDS:-$(by_mode 60 3)}
PERIOD=${BENCH_PERIOD:-$(by_mode 2 1)}
RUNS=${BENCH_RUNS:-$(by_mode 3 1)}
need_dcprof
need "$PERF" "perf is needed for the side-by-side figure"
bench_init
HZ=$(getconf CLK_TCK)

# utime + stime of PID in seconds
cpu_of() {
	awk -v hz="$HZ" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

start_busy
D=$TMP/periods
"$DCPROF" record -a -g --continuous "$D" --period "$PERIOD" 2>"$TMP/dcprof.err" &
dcprof_pid=$!
"$PERF" record -F 99 -a -g -o "$TMP/perf.data" >/dev/null 2>"$TMP/perf.err" &
perf_pid=$!
"$DCPROF" record -F 99 -a -g -o "$TMP/single.data" 2>"$TMP/single.err" &
single_pid=$!
say "recording $SECONDS_RUN s: dcprof (pid $dcprof_pid) and perf (pid $perf_pid)"
: >"$TMP/rss"
seen=0
t0=$(date +%s%N)
while [ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt "$SECONDS_RUN" ]; do
	sleep 0.2
	n=$(grep -c "^dcprof: period '" "$TMP/dcprof.err")
	if [ "$n" -gt "$seen" ]; then
		if [ "$seen" -eq 0 ]; then
			# past the start (the /proc walk, the kernel's symbols)
			steady_t=$(date +%s%N)
			steady_dcprof=$(cpu_of "$dcprof_pid")
			steady_perf=$(cpu_of "$perf_pid")
			steady_single=$(cpu_of "$single_pid")
		fi
		seen=$n
		echo "$n $(rss_kib "$dcprof_pid")" >>"$TMP/rss"
	fi
done
dcprof_cpu=$(cpu_of "$dcprof_pid")
perf_cpu=$(cpu_of "$perf_pid")
single_cpu=$(cpu_of "$single_pid")
now=$(date +%s%N)
elapsed=$(( (now - t0) / 1000000 ))
steady=$(( (now - steady_t) / 1000000 ))
kill -TERM "$dcprof_pid"
kill -TERM "$perf_pid" "$single_pid"
wait "$dcprof_pid" "$perf_pid" "$single_pid"
stop_bg

files=$(ls "$D" | wc -l)
bytes=$(cat "$D"/* | wc -c)
echo "## Continuous recording: $((elapsed / 1000)) s, -a -g at 99 Hz, a period every $PERIOD s, $NCPU CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| recorder | CPU time | % of one core | after the first period |"
echo "| --- | --- | --- | --- |"
awk -v c="$dcprof_cpu" -v s="$elapsed" -v c0="$steady_dcprof" -v s0="$steady" 'BEGIN { printf "| dcprof record --continuous | %.2f s | %.2f%% | %.2f%% |\n", c, 100 * c / (s / 1000), 100 * (c - c0) / (s0 / 1000) }'
awk -v c="$single_cpu" -v s="$elapsed" -v c0="$steady_single" -v s0="$steady" 'BEGIN { printf "| dcprof record -F 99 -a -g (one profile) | %.2f s | %.2f%% | %.2f%% |\n", c, 100 * c / (s / 1000), 100 * (c - c0) / (s0 / 1000) }'
awk -v c="$perf_cpu" -v s="$elapsed" -v c0="$steady_perf" -v s0="$steady" 'BEGIN { printf "| perf record -F 99 -a -g | %.2f s | %.2f%% | %.2f%% |\n", c, 100 * c / (s / 1000), 100 * (c - c0) / (s0 / 1000) }'
echo
echo "$files period files, $bytes bytes in all ($((bytes / (files > 0 ? files : 1))) per file); perf.data: $(stat -c %s "$TMP/perf.data") bytes"
echo
echo "dcprof's RSS (KiB) after period 1, 2, ...: $(awk '{ printf "%s ", $2 }' "$TMP/rss")"
awk 'NR == 2 { first = $2 } { last = $2; if ($2 > max) max = $2 }
	END { printf "from period 2 to the last: %+d KiB (max %d KiB)\n", last - first, max }' "$TMP/rss"
echo

# a day of 60 s periods, from the files just written
DAY=$TMP/day
mkdir "$DAY"
mapfile -t src < <(ls "$D"/*.dcprof)
[ "${#src[@]}" -gt 0 ] || die "no period files"
python3 - "$DAY" "${src[@]}" <<'PY'
import os, shutil, sys, datetime
day, src = sys.argv[1], sys.argv[2:]
t0 = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)
for i in range(1440):
    t = t0 + datetime.timedelta(minutes=i)
    shutil.copyfile(src[i % len(src)], os.path.join(
        day, t.strftime("%Y%m%dT%H%M%S.000Z-bench.dcprof")))
PY
best() {
	local b=999999 t s e
	for ((r = 0; r < RUNS; r++)); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || die "failed: $*"
		e=$(date +%s%N)
		t=$(( (e - s) / 1000000 ))
		[ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
echo "## Reading a day of 60 s periods (1440 files, $(cat "$DAY"/* | wc -c) bytes)"
echo
echo "| command | best of $RUNS |"
echo "| --- | --- |"
echo "| dcprof report -i DIR (1440 files) | $(best "$DCPROF" report -i "$DAY") ms |"
echo "| dcprof report -i DIR --since '2026-12-01 12:00' --until '2026-12-01 13:00' (60 files) | $(best "$DCPROF" report -i "$DAY" --since '2026-12-01 12:00' --until '2026-12-01 13:00') ms |"
echo "| dcprof flamegraph -i DIR (1440 files) | $(best "$DCPROF" flamegraph -i "$DAY" -o "$TMP/fg.html") ms |"
echo "| dcprof export --format pprof -i DIR (1440 files, whole rows) | $(best "$DCPROF" export --format pprof -i "$DAY" -o "$TMP/day.pb.gz") ms |"
