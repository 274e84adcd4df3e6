#!/bin/bash
# Report bench: the wall time of `dcprof report` against `perf report
# --stdio` on the same busy workload, recorded -a -g by both (one recorder
# at a time, never both at once), at several recording lengths.
#
# Three pairs of comparable views, each timed best of RUNS with its output
# to /dev/null, after one unmeasured run whose output is kept (to count its
# lines, and to see whether the tool works on the file at all):
#   flat      dcprof report                 perf report --no-children -g none
#   children  dcprof report --children      perf report --children -g none
#   tree      dcprof report --tree callee   perf report --no-children
#                                             (-g graph,0.5,callee: perf's
#                                             default call graph under each
#                                             entry, sampled function first)
# Both group by process name, file and symbol by default. A perf report that
# fails on a file is said so in the table; the bench goes on.
# Prints markdown tables on stdout (the time of each view, the ratio
# perf / dcprof, and how each tool's time grows with the recording's
# length), progress on stderr.
#
# Environment:
#   BENCH_REPORT_DURATIONS="30 300"  seconds of each recording
#   BENCH_QUICK=1          durations "5 15" (for trying)
#   BENCH_RUNS=3           timed runs of each report (the best is kept)
#   BENCH_FREQ=999         sampling frequency of both recorders
#   BENCH_BURNERS=2        CPU-burning processes of the workload
#   BENCH_CHURN_MS=50      one short-lived process every this many ms (0: none)
#   BENCH_KEEP=1           keep the temporary directory (its path is printed)
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
DCPROF=${DCPROF:-$BUILD/dcprof}
PERF=${PERF:-perf}
CC=${CC:-cc}
FREQ=${BENCH_FREQ:-999}
BURNERS=${BENCH_BURNERS:-2}
CHURN_MS=${BENCH_CHURN_MS:-50}
RUNS=${BENCH_RUNS:-3}
if [ -n "${BENCH_QUICK:-}" ] && [ "${BENCH_QUICK}" != 0 ]; then
	DURATIONS=${BENCH_REPORT_DURATIONS:-5 15}
else
	DURATIONS=${BENCH_REPORT_DURATIONS:-30 300}
fi
NCPU=$(nproc)
# Neither tool may ask a debuginfod server for anything.
unset DEBUGINFOD_URLS

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dcprof-bench-report.XXXXXX")
WORKLOAD_PID=
RECORDER_PID=

stop_workload() {
	if [ -n "$WORKLOAD_PID" ]; then
		# the workload stops its burners on SIGTERM; they also die with it
		kill -TERM "$WORKLOAD_PID" 2>/dev/null
		wait "$WORKLOAD_PID" 2>/dev/null
		WORKLOAD_PID=
	fi
}

cleanup() {
	if [ -n "$RECORDER_PID" ]; then
		kill -INT "$RECORDER_PID" 2>/dev/null
		wait "$RECORDER_PID" 2>/dev/null
	fi
	stop_workload
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "report.sh: kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
	echo "report.sh: $*" >&2
	exit 1
}

say() {
	echo "report.sh: $*" >&2
}

[ -x "$DCPROF" ] || die "no '$DCPROF': run make first"
command -v "$PERF" >/dev/null || die "no '$PERF' in PATH"
command -v jq >/dev/null || die "jq is needed to read 'dcprof report --format json'"
command -v python3 >/dev/null || die "python3 is needed to read perf.data"
[ "$RUNS" -ge 1 ] 2>/dev/null || die "BENCH_RUNS must be a positive number"
for d in $DURATIONS; do
	[ "$d" -ge 1 ] 2>/dev/null || die "bad duration '$d' in BENCH_REPORT_DURATIONS"
done
# shellcheck disable=SC2086 # a list of numbers
set -- $DURATIONS
FIRST_D=$1
LAST_D=${!#}

# A copy of the binary: a rebuild of the tree during the bench changes
# nothing (dcprof links libdcprof statically).
cp "$DCPROF" "$TMP/dcprof" || die "cannot copy '$DCPROF'"
DCPROF=$TMP/dcprof

# Frame pointers, so that -g unwinds the workload's own frames too (as
# bench/record.sh builds it).
$CC -std=gnu11 -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls \
	-o "$TMP/busy" "$TOP/bench/workloads/busy.c" -lm ||
	die "cannot build bench/workloads/busy.c"

# Runs "$@" in the background as the current recorder, so that an
# interrupted bench stops it; returns its exit status.
run_recorder() {
	"$@" &
	RECORDER_PID=$!
	wait "$RECORDER_PID"
	local rc=$?
	RECORDER_PID=
	return $rc
}

# perf record -B (--no-buildid): perf 6.1 aborts in its closing build-id
# pass whenever another recorder asked the kernel for MMAP2 build ids at the
# same time (see bench/record.sh and "perf and the build-id flag" in
# docs/PERFORMANCE.md).
record() { # TOOL SECONDS
	local tool=$1 secs=$2 out=$TMP/$1-$2.data err=$TMP/$1-$2.record.err
	say "$tool record -a -g for $secs s"
	if [ "$tool" = dcprof ]; then
		run_recorder "$DCPROF" record -a -g -F "$FREQ" --duration "$secs" \
			-o "$out" 2>"$err" ||
			die "dcprof record failed: $(tail -c 400 "$err")"
	else
		run_recorder "$PERF" record -B -e cpu-clock -F "$FREQ" -a -g \
			-o "$out" -- sleep "$secs" 2>"$err" ||
			die "perf record failed: $(tail -c 400 "$err")"
	fi
}

# The same kernel bug sets PERF_RECORD_MISC_MMAP_BUILD_ID on MMAP2 records
# of perf's that carry device and inode, not a build id, and perf report
# then misreads them (or aborts). perf never asked for build ids, so the
# flag is cleared on every MMAP2 record of perf.data, in place, before perf
# reads it back (as bench/unwind.sh does). Prints the samples, the samples
# lost, the MMAP2 records and how many of them were cleared.
perf_fix_count() {
	python3 - "$1" <<'PY'
import mmap, struct, sys
with open(sys.argv[1], "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    if m[:8] != b"PERFILE2":
        sys.exit("not a perf.data file")
    off, size = struct.unpack_from("<QQ", m, 40)
    pos, end = off, (off + size if size else len(m))
    samples = lost = mmap2 = fixed = 0
    while pos + 8 <= end:
        typ, misc, sz = struct.unpack_from("<IHH", m, pos)
        if sz < 8:
            break
        if typ == 9:
            samples += 1
        elif typ == 2:
            lost += struct.unpack_from("<Q", m, pos + 16)[0]
        elif typ == 13:
            lost += struct.unpack_from("<Q", m, pos + 8)[0]
        elif typ == 10:
            mmap2 += 1
            if misc & (1 << 14):
                struct.pack_into("<H", m, pos + 4, misc & ~(1 << 14))
                fixed += 1
        pos += sz
    m.flush()
print(samples, lost, mmap2, fixed)
PY
}

# The command line of view $1 for tool $2 on file $3.
view_cmd() {
	local view=$1 tool=$2 f=$3
	if [ "$tool" = dcprof ]; then
		case $view in
		flat) echo "$DCPROF report -i $f" ;;
		children) echo "$DCPROF report -i $f --children" ;;
		tree) echo "$DCPROF report -i $f --tree callee" ;;
		esac
	else
		case $view in
		flat) echo "$PERF report --stdio -i $f --no-children -g none" ;;
		children) echo "$PERF report --stdio -i $f --children -g none" ;;
		tree) echo "$PERF report --stdio -i $f --no-children -g graph,0.5,callee" ;;
		esac
	fi
}

# Wall milliseconds of one run of "$@" with stdout to $OUT and stderr to
# $TMP/last.err; sets MS and returns the command's status.
time_once() {
	local t0 t1 rc
	t0=$EPOCHREALTIME
	"$@" >"$OUT" 2>"$TMP/last.err"
	rc=$?
	t1=$EPOCHREALTIME
	MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
	return $rc
}

# Times view $1 of both tools on the recordings of $2 seconds: one
# unmeasured run each (output kept), then RUNS runs each, alternating, to
# /dev/null. Leaves "best_ms lines" or "failed: ..." in $TMP/$tool-$view-$2.res.
time_view() {
	local view=$1 secs=$2 tool f rc i best
	local -a cmd
	for tool in dcprof perf; do
		f=$TMP/$tool-$secs.data
		read -ra cmd <<<"$(view_cmd "$view" "$tool" "$f")"
		OUT=$TMP/$tool-$view-$secs.out
		time_once "${cmd[@]}"
		rc=$?
		if [ $rc -ne 0 ]; then
			if [ $rc -gt 128 ]; then
				why="crashed (signal $((rc - 128)))"
			else
				why="failed (exit $rc)"
			fi
			say "$tool $view on $secs s: $why: $(tail -c 300 "$TMP/last.err")"
			echo "$why" >"$TMP/$tool-$view-$secs.res"
			continue
		fi
		echo "" "$(wc -l <"$OUT")" >"$TMP/$tool-$view-$secs.res"
	done
	for ((i = 0; i < RUNS; i++)); do
		for tool in dcprof perf; do
			grep -q '^ ' "$TMP/$tool-$view-$secs.res" || continue
			f=$TMP/$tool-$secs.data
			read -ra cmd <<<"$(view_cmd "$view" "$tool" "$f")"
			OUT=/dev/null
			if ! time_once "${cmd[@]}"; then
				say "$tool $view on $secs s failed in a timed run"
				echo "failed in a timed run" >"$TMP/$tool-$view-$secs.res"
				continue
			fi
			echo "$MS" >>"$TMP/$tool-$view-$secs.ms"
		done
	done
	for tool in dcprof perf; do
		grep -q '^ ' "$TMP/$tool-$view-$secs.res" || continue
		best=$(sort -g "$TMP/$tool-$view-$secs.ms" | head -1)
		echo "$best $(cat "$TMP/$tool-$view-$secs.res")" \
			>"$TMP/$tool-$view-$secs.res"
	done
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
tasks_start=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
say "workload: $BURNERS burners, a short-lived process every $CHURN_MS ms"
"$TMP/busy" "$BURNERS" "$CHURN_MS" &
WORKLOAD_PID=$!
sleep 1
kill -0 "$WORKLOAD_PID" 2>/dev/null || die "the workload did not start"

# One recorder at a time; which goes first alternates with the length.
first=dcprof second=perf
for d in $DURATIONS; do
	record $first "$d"
	record $second "$d"
	t=$first first=$second second=$t
done
# The reports are timed on a machine without the workload.
stop_workload
load_rec=$(cut -d' ' -f1-3 /proc/loadavg)

for d in $DURATIONS; do
	"$DCPROF" report -i "$TMP/dcprof-$d.data" --format json --limit 1 \
		>"$TMP/dcprof-$d.json" || die "dcprof report --format json failed"
	echo "$(jq '.stats.samples' "$TMP/dcprof-$d.json") $(jq \
		'.stats.lost_samples + .stats.lost_records' "$TMP/dcprof-$d.json")" \
		>"$TMP/dcprof-$d.count"
	perf_fix_count "$TMP/perf-$d.data" >"$TMP/perf-$d.count" ||
		die "cannot read '$TMP/perf-$d.data'"
done

VIEWS="flat children tree"
for d in $DURATIONS; do
	for view in $VIEWS; do
		say "timing $view on the $d s recordings"
		time_view "$view" "$d"
	done
done

# Reads the figures back and prints the tables.
res() { cat "$TMP/$1-$2-$3.res"; } # TOOL VIEW SECONDS
ok() { [[ $(res "$@") =~ ^[0-9] ]]; }
ms() { res "$@" | awk '{ print $1 }'; }
nlines() { res "$@" | awk '{ print $2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
ratio2() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
cell() { # TOOL VIEW SECONDS: "N ms" or the failure
	if ok "$@"; then echo "$(ms "$@") ms"; else res "$@"; fi
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "### Report: dcprof report against perf report --stdio"
echo
echo "Recorded (one recorder at a time): \`dcprof record -a -g -F $FREQ --duration N -o F\`, \`perf record -B -e cpu-clock -F $FREQ -a -g -o F -- sleep N\`."
echo "Timed: wall time, best of $RUNS, output to /dev/null, after one unmeasured run; the workload stopped."
echo "Machine: $NCPU CPUs ($cpu), kernel $(uname -r); workload: $BURNERS burners + a short-lived process every $CHURN_MS ms; $("$PERF" --version); dcprof $("$DCPROF" --version | awk '{ print $2 }')."
echo "Load average (1, 5, 15 min) at the start: $load_start, after recording: $load_rec, at the end: $(cut -d' ' -f1-3 /proc/loadavg); $tasks_start processes at the start."
echo
echo "| recording | dcprof samples (lost) | dcprof bytes | perf samples (lost) | perf.data bytes | perf MMAP2 records with the false build-id flag (cleared) |"
echo "|---|---:|---:|---:|---:|---:|"
for d in $DURATIONS; do
	read -r ds dl <"$TMP/dcprof-$d.count"
	read -r ps pl pm pf <"$TMP/perf-$d.count"
	echo "| $d s | $ds ($dl) | $(stat -c %s "$TMP/dcprof-$d.data") | $ps ($pl) | $(stat -c %s "$TMP/perf-$d.data") | $pf of $pm |"
done
echo
echo "| view | recording | dcprof | perf | perf / dcprof (target ≥ 10) | output lines, dcprof / perf |"
echo "|---|---|---:|---:|---:|---:|"
for view in $VIEWS; do
	for d in $DURATIONS; do
		r=-
		if ok dcprof "$view" "$d" && ok perf "$view" "$d"; then
			r=$(ratio "$(ms perf "$view" "$d")" "$(ms dcprof "$view" "$d")")
		fi
		echo "| $view | $d s | $(cell dcprof "$view" "$d") | $(cell perf "$view" "$d") | $r | $(nlines dcprof "$view" "$d") / $(nlines perf "$view" "$d") |"
	done
done
echo
echo "Views: flat \`dcprof report\` / \`perf report --stdio --no-children -g none\`; children \`dcprof report --children\` / \`perf report --stdio --children -g none\`; tree \`dcprof report --tree callee\` (the whole tree) / \`perf report --stdio --no-children -g graph,0.5,callee\` (perf's default: each entry's callers, branches under 0.5% hidden)."
echo
echo "| view | tool | $FIRST_D s | $LAST_D s | time ×, $FIRST_D s → $LAST_D s (recording × $(ratio2 "$LAST_D" "$FIRST_D"); target: flat) |"
echo "|---|---|---:|---:|---:|"
for view in $VIEWS; do
	for tool in dcprof perf; do
		g=-
		if ok $tool "$view" "$FIRST_D" && ok $tool "$view" "$LAST_D"; then
			g=$(ratio2 "$(ms $tool "$view" "$LAST_D")" "$(ms $tool "$view" "$FIRST_D")")
		fi
		echo "| $view | $tool | $(cell $tool "$view" "$FIRST_D") | $(cell $tool "$view" "$LAST_D") | $g |"
	done
done
