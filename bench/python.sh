#!/bin/bash
# The Python walk's cost: a fixed pure-Python workload (Debian's python3,
# CPython 3.11, no frame pointers; a loop under calls 9 deep) pinned to one
# CPU, its wall time to do the same work alone and under each recorder, in
# rounds that take the settings in turn:
#   none      no recorder
#   python    dcprof record -g: native and Python frames
#   native    DCPROF_BPF_PYTHON=0 dcprof record -g: native frames only
#   perf      perf record -g (frame pointers: python3's stacks end early)
# at two rates. Each recorder is pinned to the other CPU, so the work's
# slowdown is the sampling's cost on its own CPU: the timer interrupt, the
# BPF program, nothing of the recorder's own work.
# Prints per rate and setting: the work's time (median of the rounds, and
# every round), its slowdown against none, the BPF program's run time per
# run, the Python frames a sample holds, the output's bytes per sample, and
# the run time the walk adds per sample of the workload.
#
# Environment:
#   BENCH_ROUNDS=5       rounds (BENCH_QUICK=1: 1)
#   BENCH_WORK=3         seconds of work the workload does alone (quick: 0.3)
#   BENCH_RATES="99 999" sampling rates (quick: 999)
#   BENCH_KEEP=1         keep the temporary directory
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf
set -u
BENCH=python
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS=${BENCH_ROUNDS:-$(by_mode 5 1)}
WORK=${BENCH_WORK:-$(by_mode 3 0.3)}
RATES=${BENCH_RATES:-$(by_mode "99 999" 999)}
PY=/usr/bin/python3
need_dcprof
need "$PERF" "perf is not installed (apt-get install linux-perf)"
need taskset "taskset is not installed (util-linux)"
[ -x "$PY" ] || die "Debian's $PY is not installed"
[ "$(id -u)" -eq 0 ] || die "needs root (the BPF backend)"
[ "$NCPU" -ge 2 ] || die "needs two CPUs: the workload on one, the recorder on the other"
bench_init
sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
trap 'sysctl -qw kernel.bpf_stats_enabled=0; bench_cleanup' EXIT

# the workload: ITER rounds of the loop, its wall time printed
cat >"$TMP/loop.py" <<'PY'
import sys, time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def deep(k, n):
    return leaf(n) if k == 0 else deep(k - 1, n)


t = time.perf_counter()
for _ in range(int(sys.argv[1])):
    deep(8, 2000)
print("%.6f" % (time.perf_counter() - t))
PY
# ITER: the rounds that take about WORK seconds alone
iter=$(taskset -c 1 "$PY" "$TMP/loop.py" 200)
ITER=$(awk -v w="$WORK" -v t="$iter" 'BEGIN { n = int(200 * w / t); print (n > 0 ? n : 1) }')
# the interpreter's unwind tables into the cache first
DCPROF_CACHE_DIR=$TMP/cache "$DCPROF" record -g -o "$TMP/warm.data" -- \
	"$PY" "$TMP/loop.py" 1 >/dev/null 2>&1 || die "dcprof cannot record python3"

# run SETTING RATE ROUND: the workload once under SETTING; appends its time
# to $TMP/SETTING-RATE.times and, for dcprof, "runs ns samples frames bytes"
# to $TMP/SETTING-RATE.bpf
run() {
	local setting=$1 rate=$2 f=$TMP/$1-$2-$3
	case $setting in
	none)
		taskset -c 1 "$PY" "$TMP/loop.py" "$ITER" >"$f.out" ||
			die "the workload failed"
		;;
	python | native)
		local off=1
		[ "$setting" = native ] && off=0
		DCPROF_BPF_PYTHON=$off DCPROF_CACHE_DIR=$TMP/cache taskset -c 0 \
			"$DCPROF" record -v -g -F "$rate" -o "$f.data" -- \
			taskset -c 1 "$PY" "$TMP/loop.py" "$ITER" >"$f.out" 2>"$f.err" ||
			die "dcprof ($setting) failed: $(tail -2 "$f.err")"
		"$DCPROF" report -i "$f.data" --format json --comm python3 |
			python3 -c '
import json, re, sys
d = json.load(sys.stdin)
m = re.search(r"the program ran (\d+) times for (\d+) ns", open(sys.argv[1]).read())
print(m.group(1), m.group(2), d["stats"]["samples_kept"],
      (d.get("python") or {}).get("frames", 0), sys.argv[2])' "$f.err" "$(stat -c %s "$f.data")" \
			>>"$TMP/$setting-$rate.bpf" || die "cannot read the $setting profile"
		;;
	perf)
		taskset -c 0 "$PERF" record -B -e cpu-clock -g -F "$rate" -o "$f.data" -- \
			taskset -c 1 "$PY" "$TMP/loop.py" "$ITER" >"$f.out" 2>"$f.err" ||
			die "perf record failed: $(tail -2 "$f.err")"
		;;
	esac
	tail -1 "$f.out" >>"$TMP/$setting-$rate.times"
}

say "$ROUNDS rounds of ${ITER} loops (about $WORK s alone), rates $RATES"
for ((r = 0; r < ROUNDS; r++)); do
	for rate in $RATES; do
		for setting in none python native perf; do
			run "$setting" "$rate" "$r"
		done
	done
done

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo
echo "Machine: $NCPU CPUs ($(cpu_model)), kernel $(uname -r), $($PY -V 2>&1); $ROUNDS rounds of $ITER loops; load $(load_avg)."
echo
echo "| rate | recorder | work s (median) | every round | slowdown | BPF ns per run | Python samples | Python frames per sample | bytes per sample |"
echo "|---:|---|---:|---|---:|---:|---:|---:|---:|"
for rate in $RATES; do
	base=$(median "$TMP/none-$rate.times")
	for setting in none python native perf; do
		m=$(median "$TMP/$setting-$rate.times")
		all=$(sort -g "$TMP/$setting-$rate.times" | awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 }')
		slow=$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }')
		bpf="- | - | - | -"
		if [ -s "$TMP/$setting-$rate.bpf" ]; then
			bpf=$(awk '{ runs += $1; ns += $2; s += $3; fr += $4; by += $5 }
				END { printf "%.0f | %.0f | %.1f | %.1f", ns / runs, s / NR, fr / s, by / s }' \
				"$TMP/$setting-$rate.bpf")
		fi
		echo "| $rate | $setting | $(printf %.3f "$m") | $all | $slow | $bpf |"
	done
done
echo
# what the walk adds to a sample of the workload: the difference of the
# run time per run, over the share of runs that were the workload's
for rate in $RATES; do
	awk -v rate="$rate" 'FNR == 1 { k++ } { runs[k] += $1; ns[k] += $2; s[k] += $3 }
		END {
			if (!runs[1] || !runs[2] || !s[1]) exit
			per = ns[1] / runs[1] - ns[2] / runs[2]
			printf "- %s Hz: the Python walk adds %.0f ns to each sample of the workload (%.0f%% of the runs were its samples)\n",
				rate, per / (s[1] / runs[1]), 100 * s[1] / runs[1]
		}' "$TMP/python-$rate.bpf" "$TMP/native-$rate.bpf"
done
