#!/bin/bash
# Soak bench: `dcprof record -a -g --continuous` for minutes beside the
# churn of a build server or a fleet machine, and what the recorder takes
# as it goes on: resident memory (anonymous and file-backed), open file
# descriptors and CPU, sampled every few seconds, with the plateau and the
# slope over the second half; every period written, no sample lost; the
# bytes a period takes on disk per sample.
#
# The churn (bench/workloads/busy.c and soak.c): one burner and a
# short-lived process every CHURN_MS (busy), a process of 64 threads that
# wake every few milliseconds, a JIT that writes a new function and its
# perf-map line every 50 ms, and a new binary built and run every DEPLOY_S
# seconds (a deploy: each has a build id of its own, the one before is
# removed).
# Prints markdown tables on stdout, progress on stderr. Fails when a period
# is missing, a sample was lost, or a bound set below is broken.
#
# Environment:
#   BENCH_MINUTES=30      length of the recording (quick: 3)
#   BENCH_PERIOD=60       --period (quick: 15)
#   BENCH_EVERY=10        seconds between two readings (quick: 3)
#   BENCH_DEPLOY_S=5      seconds between two new binaries
#   BENCH_MEMORY_LIMIT    passed as --memory-limit (unset: the default)
#   BENCH_MAX_RSS_MB      fail when resident memory passes this after warm-up
#                         (default 32, the target; quick: 48, a regression's
#                         alarm on a run too short to settle)
#   BENCH_MAX_SLOPE_MB_H  fail when anonymous memory grows faster than this
#                         over the second half (MB an hour; default 1, the
#                         target; quick: none, three minutes cannot tell)
#   BENCH_QUICK=1, BENCH_KEEP=1, BENCH_BURNERS (1), BENCH_CHURN_MS (5),
#   BUILD, DCPROF, CC
set -u
BENCH_BURNERS=${BENCH_BURNERS:-1}
BENCH_CHURN_MS=${BENCH_CHURN_MS:-5}
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MINUTES=${BENCH_MINUTES:-$(by_mode 30 3)}
PERIOD=${BENCH_PERIOD:-$(by_mode 60 15)}
EVERY=${BENCH_EVERY:-$(by_mode 10 3)}
DEPLOY_S=${BENCH_DEPLOY_S:-5}
MAX_RSS_MB=${BENCH_MAX_RSS_MB-$(by_mode 32 48)}
MAX_SLOPE_MB_H=${BENCH_MAX_SLOPE_MB_H-$(by_mode 1 '')}
need_dcprof
need "$CC" "a C compiler is needed for the churn"
bench_init
HZ=$(getconf CLK_TCK)

compile soak -O2 -g -pthread "$TOP/bench/workloads/soak.c"
start_busy
start_bg "$TMP/soak" threads 64
start_bg "$TMP/soak" jit

# a deploy every DEPLOY_S: a binary of its own (its build id follows its
# text), run for a moment, the one before removed
mkdir -p "$TMP/deploy"
deploy() {
	local n=0 prev=
	while :; do
		n=$((n + 1))
		printf '%s\n' '#include <time.h>' \
			"static volatile unsigned long sink = $n;" \
			'int main(void) { clock_t end = clock() + CLOCKS_PER_SEC / 5;' \
			'while (clock() < end) sink = sink * 7 + 1; return 0; }' \
			>"$TMP/deploy/app.c"
		$CC -O1 -o "$TMP/deploy/app-$n" "$TMP/deploy/app.c" 2>/dev/null &&
			"$TMP/deploy/app-$n"
		[ -n "$prev" ] && rm -f "$prev"
		prev=$TMP/deploy/app-$n
		sleep "$DEPLOY_S"
	done
}
start_bg deploy

limit_args=()
[ -n "${BENCH_MEMORY_LIMIT:-}" ] && limit_args=(--memory-limit "$BENCH_MEMORY_LIMIT")
D=$TMP/periods
"$DCPROF" record -a -g --continuous "$D" --period "$PERIOD" --keep-size 50M \
	"${limit_args[@]+"${limit_args[@]}"}" 2>"$TMP/dcprof.err" &
RECORDER_PID=$!
say "recording $MINUTES min in periods of $PERIOD s (pid $RECORDER_PID), a reading every $EVERY s"

# seconds RssAnon RssFile fds cpu-seconds, a line a reading
reading() {
	local pid=$1 t=$2
	[ -r "/proc/$pid/status" ] || return 1
	awk -v t="$t" -v fds="$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" \
		-v cpu="$(awk -v hz="$HZ" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$pid/stat")" '
		/^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
		END { printf "%.1f %d %d %d %.2f\n", t, a, f, fds, cpu }' "/proc/$pid/status"
}
: >"$TMP/readings"
t0=$EPOCHREALTIME
end=$(awk -v a="$t0" -v m="$MINUTES" 'BEGIN { printf "%.0f", a + m * 60 }')
while [ "${EPOCHREALTIME%.*}" -lt "$end" ]; do
	t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
	reading "$RECORDER_PID" "$t" >>"$TMP/readings" ||
		die "the recorder is gone: $(tail -3 "$TMP/dcprof.err")"
	sleep "$EVERY"
done
elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
kill -TERM "$RECORDER_PID"
wait "$RECORDER_PID"
rc=$?
RECORDER_PID=
stop_bg
[ "$rc" -eq 0 ] || die "the recorder exited $rc: $(tail -3 "$TMP/dcprof.err")"
"$DCPROF" report -i "$D" --format json >"$TMP/all.json" 2>"$TMP/report.err" ||
	die "report of the periods failed: $(tail -2 "$TMP/report.err")"

python3 - "$TMP/readings" "$elapsed" "$PERIOD" "$D" "$TMP/all.json" \
	"$TMP/dcprof.err" "$MAX_RSS_MB" "$MAX_SLOPE_MB_H" <<'PY'
import json, os, sys
readings, elapsed, period, d, allj, err, max_rss, max_slope = sys.argv[1:9]
elapsed, period = float(elapsed), float(period)
rows = [list(map(float, l.split())) for l in open(readings) if l.strip()]
second = [r for r in rows if r[0] >= elapsed / 2]
if len(second) < 3:
    sys.exit("soak.sh: too few readings in the second half (%d)" % len(second))

def slope(col):
    """least squares over the second half, MB an hour"""
    xs = [r[0] for r in second]
    ys = [r[col] / 1024 for r in second]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx * 3600

def mb(kib):
    return kib / 1024

def med(v):
    v = sorted(v)
    return v[len(v) // 2]

rss = [r[1] + r[2] for r in second]
print("Soak: %.1f min of `record -a -g --continuous --period %g` beside the churn;"
      " a reading every %.0f s, %d readings." % (elapsed / 60, period,
      rows[1][0] - rows[0][0] if len(rows) > 1 else 0, len(rows)))
print()
print("| | at start | after warm-up (second half: median / max) | slope, second half |")
print("|---|---:|---:|---:|")
print("| resident, anonymous | %.1f MB | %.1f / %.1f MB | %+.1f MB/h |" % (
    mb(rows[0][1]), mb(med(r[1] for r in second)), mb(max(r[1] for r in second)), slope(1)))
print("| resident, files | %.1f MB | %.1f / %.1f MB | %+.1f MB/h |" % (
    mb(rows[0][2]), mb(med(r[2] for r in second)), mb(max(r[2] for r in second)), slope(2)))
print("| resident, all | %.1f MB | %.1f / %.1f MB | %+.1f MB/h |" % (
    mb(rows[0][1] + rows[0][2]), mb(med(rss)), mb(max(rss)),
    slope(1) + slope(2)))
print("| open descriptors | %d | %d / %d | %+.0f an hour |" % (
    rows[0][3], med(r[3] for r in second), max(r[3] for r in second),
    slope(3) * 1024))
cpu = rows[-1][4]
print("| CPU | | %.2f s in all: %.2f%% of one core | |" % (cpu, 100 * cpu / rows[-1][0]))
print()
a = json.load(open(allj))
st = a["stats"]
files = sorted(f for f in os.listdir(d) if f.endswith(".dcprof"))
size = sum(os.path.getsize(os.path.join(d, f)) for f in files)
said = sum(1 for l in open(err) if l.startswith("dcprof: period '"))
want = int(elapsed // period) - 1
print("| periods | samples | lost | bytes on disk | bytes a sample |")
print("|---:|---:|---:|---:|---:|")
print("| %d written (%d kept) | %d | %d | %d | %.1f |" % (
    said, len(files), st["samples"], st["lost_samples"], size,
    size / max(st["samples"], 1)))
cuts = [l for l in open(err) if l.startswith("dcprof: period '") and "kept:" in l]
if cuts:
    print()
    print("At the last cut, " + cuts[-1].split("; ", 1)[1].strip() + ".")
print()
print("Bounds: resident %s MB after warm-up, anonymous slope %s MB/h." % (
    max_rss or "none", max_slope or "none"))
bad = []
if said < want:
    bad.append("%d periods written, %d due" % (said, want))
if st["lost_samples"]:
    bad.append("%d samples lost" % st["lost_samples"])
if max_rss and mb(max(rss)) > float(max_rss):
    bad.append("resident %.1f MB after warm-up, bound %s MB" % (mb(max(rss)), max_rss))
if max_slope and slope(1) > float(max_slope):
    bad.append("anonymous memory grows %.1f MB/h, bound %s" % (slope(1), max_slope))
if bad:
    sys.exit("soak.sh: " + "; ".join(bad))
PY
