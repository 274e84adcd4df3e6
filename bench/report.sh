#!/bin/bash
# Report bench: the wall time of `dcprof report` against `perf report
# --stdio` on the same busy workload, recorded -a -g by both (one recorder
# at a time, never both at once), at several recording lengths.
#
# Four pairs of comparable views, each timed best of RUNS with its output
# to /dev/null, after one unmeasured run whose output is kept (to count its
# lines, and to see whether the tool works on the file at all):
#   flat      dcprof report                 perf report --no-children -g none
#   children  dcprof report --children      perf report --children -g none
#   tree      dcprof report --tree callee   perf report --no-children
#                                             (-g graph,0.5,callee: perf's
#                                             default call graph under each
#                                             entry, sampled function first)
#   top-tree  the same two trees with --percent-limit 0.5: entries and
#             branches under 0.5% hidden by both
# Both group by process name, file and symbol by default. A perf report that
# fails on a file is said so in the table; the bench goes on.
# Prints markdown tables on stdout (the time of each view, the ratio
# perf / dcprof, and how each tool's time grows with the recording's
# length), progress on stderr. About 17 minutes with the defaults (11 of
# them recording), unless bench/record.sh left recordings to share.
#
# Environment:
#   BENCH_REPORT_DURATIONS="30 300"  seconds of each recording
#   BENCH_QUICK=1          a duration of 1 s at 99 Hz, one timed run of each
#                          report
#   BENCH_RUNS=3           timed runs of each report (the best is kept)
#   BENCH_RECORDINGS=DIR   take the recordings of N seconds from DIR
#                          (dcprof-N.data and perf-N.data, as bench/record.sh
#                          leaves them there: the same workload, recorded
#                          the same way) instead of recording them again
#   BENCH_FREQ=999         sampling frequency of both recorders
#   BENCH_BURNERS=2        CPU-burning processes of the workload
#   BENCH_CHURN_MS=50      one short-lived process every this many ms (0: none)
#   BENCH_KEEP=1           keep the temporary directory (its path is printed)
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FREQ=${BENCH_FREQ:-$(by_mode 999 99)}
RUNS=${BENCH_RUNS:-$(by_mode 3 1)}
DURATIONS=${BENCH_REPORT_DURATIONS:-$(by_mode "30 300" 1)}

need_dcprof
need "$PERF" "no '$PERF' in PATH"
need jq "jq is needed to read 'dcprof report --format json'"
need python3 "python3 is needed to read perf.data"
[ "$RUNS" -ge 1 ] 2>/dev/null || die "BENCH_RUNS must be a positive number"
for d in $DURATIONS; do
	[ "$d" -ge 1 ] 2>/dev/null || die "bad duration '$d' in BENCH_REPORT_DURATIONS"
done
# shellcheck disable=SC2086 # a list of numbers
set -- $DURATIONS
FIRST_D=$1
LAST_D=${!#}
bench_init

# A copy of the binary: a rebuild of the tree during the bench changes
# nothing (dcprof links libdcprof statically).
cp "$DCPROF" "$TMP/dcprof" || die "cannot copy '$DCPROF'"
DCPROF=$TMP/dcprof

# perf record -B: see perf_record in bench/lib.sh.
record() { # TOOL SECONDS
	local tool=$1 secs=$2 out=$TMP/$1-$2.data err=$TMP/$1-$2.record.err
	say "$tool record -a -g for $secs s"
	if [ "$tool" = dcprof ]; then
		recorder "$DCPROF" record -a -g -F "$FREQ" --duration "$secs" \
			-o "$out" 2>"$err" ||
			die "dcprof record failed: $(tail -c 400 "$err")"
	else
		recorder perf_record -F "$FREQ" -a -g -o "$out" \
			-- sleep "$secs" 2>"$err" ||
			die "perf record failed: $(tail -c 400 "$err")"
	fi
}

# The command line of view $1 for tool $2 on file $3.
view_cmd() {
	local view=$1 tool=$2 f=$3
	if [ "$tool" = dcprof ]; then
		case $view in
		flat) echo "$DCPROF report -i $f" ;;
		children) echo "$DCPROF report -i $f --children" ;;
		tree) echo "$DCPROF report -i $f --tree callee" ;;
		top-tree) echo "$DCPROF report -i $f --tree callee --percent-limit 0.5" ;;
		esac
	else
		case $view in
		flat) echo "$PERF report --stdio -i $f --no-children -g none" ;;
		children) echo "$PERF report --stdio -i $f --children -g none" ;;
		tree) echo "$PERF report --stdio -i $f --no-children -g graph,0.5,callee" ;;
		top-tree) echo "$PERF report --stdio -i $f --no-children -g graph,0.5,callee --percent-limit 0.5" ;;
		esac
	fi
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
		time_cmd "${cmd[@]}" >"$OUT" 2>"$TMP/last.err"
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
			if ! time_cmd "${cmd[@]}" >/dev/null 2>"$TMP/last.err"; then
				say "$tool $view on $secs s failed in a timed run"
				echo "failed in a timed run" >"$TMP/$tool-$view-$secs.res"
				continue
			fi
			printf '%.1f\n' "$MS" >>"$TMP/$tool-$view-$secs.ms"
		done
	done
	for tool in dcprof perf; do
		grep -q '^ ' "$TMP/$tool-$view-$secs.res" || continue
		best=$(sort -g "$TMP/$tool-$view-$secs.ms" | head -1)
		echo "$best $(cat "$TMP/$tool-$view-$secs.res")" \
			>"$TMP/$tool-$view-$secs.res"
	done
}

load_start=$(load_avg)
tasks_start=$(nprocs)

# The recordings bench/record.sh left, where there are both tools' of a
# length; the others are made here.
shared='' to_record=''
for d in $DURATIONS; do
	if [ -n "${BENCH_RECORDINGS:-}" ] &&
		[ -s "$BENCH_RECORDINGS/dcprof-$d.data" ] &&
		[ -s "$BENCH_RECORDINGS/perf-$d.data" ]; then
		for tool in dcprof perf; do
			cp "$BENCH_RECORDINGS/$tool-$d.data" "$TMP/$tool-$d.data" ||
				die "cannot copy $BENCH_RECORDINGS/$tool-$d.data"
		done
		shared="$shared $d"
	else
		to_record="$to_record $d"
	fi
done
# "20 s, 60 s"
shared=$(echo $shared | sed 's/\([0-9]\)\( \|$\)/\1 s,\2/g; s/,$//')
[ -z "$shared" ] || say "the $shared recordings are bench/record.sh's"

# One recorder at a time; which goes first alternates with the length.
if [ -n "$to_record" ]; then
	start_busy
	first=dcprof second=perf
	for d in $to_record; do
		record $first "$d"
		record $second "$d"
		t=$first first=$second second=$t
	done
	# The reports are timed on a machine without the workload.
	stop_bg
fi
load_rec=$(load_avg)

for d in $DURATIONS; do
	"$DCPROF" report -i "$TMP/dcprof-$d.data" --format json --limit 1 \
		>"$TMP/dcprof-$d.json" || die "dcprof report --format json failed"
	echo "$(jq '.stats.samples' "$TMP/dcprof-$d.json") $(jq \
		'.stats.lost_samples + .stats.lost_records' "$TMP/dcprof-$d.json")" \
		>"$TMP/dcprof-$d.count"
	# perf report misreads (or aborts on) the MMAP2 records the kernel
	# flags as carrying a build id: clear the flag (see perf_data).
	perf_data clear "$TMP/perf-$d.data" >"$TMP/perf-$d.count" ||
		die "cannot read '$TMP/perf-$d.data'"
done

VIEWS="flat children tree top-tree"
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
cell() { # TOOL VIEW SECONDS: "N ms" or the failure
	if ok "$@"; then echo "$(ms "$@") ms"; else res "$@"; fi
}

echo "### Report: dcprof report against perf report --stdio"
echo
echo "Recorded (one recorder at a time): \`dcprof record -a -g -F $FREQ --duration N -o F\`, \`perf record -B -e cpu-clock -F $FREQ -a -g -o F -- sleep N\`.${shared:+ The $shared recordings are those of bench/record.sh (the same workload and commands).}"
echo "Timed: wall time, best of $RUNS, output to /dev/null, after one unmeasured run; the workload stopped."
echo "Machine: $NCPU CPUs ($(cpu_model)), kernel $(uname -r); workload: $BURNERS burners + a short-lived process every $CHURN_MS ms; $("$PERF" --version); dcprof $("$DCPROF" --version | awk '{ print $2 }')."
if [ -n "$to_record" ]; then
	echo "Load average (1, 5, 15 min) at the start: $load_start, after recording: $load_rec, at the end: $(load_avg); $tasks_start processes at the start."
else
	echo "Load average (1, 5, 15 min) at the start: $load_start, at the end: $(load_avg); $tasks_start processes at the start."
fi
echo
echo "| recording | dcprof samples (lost) | dcprof bytes | perf samples (lost) | perf.data bytes | perf MMAP2 records with the false build-id flag (cleared) |"
echo "|---|---:|---:|---:|---:|---:|"
for d in $DURATIONS; do
	read -r ds dl <"$TMP/dcprof-$d.count"
	# samples lost_records lost_samples throttle unthrottle mmap2 flagged
	read -r ps plr pls _ _ pm pf <"$TMP/perf-$d.count"
	pl=$((plr + pls))
	echo "| $d s | $ds ($dl) | $(stat -c %s "$TMP/dcprof-$d.data") | $ps ($pl) | $(stat -c %s "$TMP/perf-$d.data") | $pf of $pm |"
done
echo
echo "| view | recording | dcprof | perf | perf / dcprof (target ≥ 10) | output lines, dcprof / perf |"
echo "|---|---|---:|---:|---:|---:|"
for view in $VIEWS; do
	for d in $DURATIONS; do
		r=-
		if ok dcprof "$view" "$d" && ok perf "$view" "$d"; then
			r=$(div "$(ms perf "$view" "$d")" "$(ms dcprof "$view" "$d")" %.1f)
		fi
		echo "| $view | $d s | $(cell dcprof "$view" "$d") | $(cell perf "$view" "$d") | $r | $(nlines dcprof "$view" "$d") / $(nlines perf "$view" "$d") |"
	done
done
echo
echo "Views: flat \`dcprof report\` / \`perf report --stdio --no-children -g none\`; children \`dcprof report --children\` / \`perf report --stdio --children -g none\`; tree \`dcprof report --tree callee\` (the whole tree) / \`perf report --stdio --no-children -g graph,0.5,callee\` (perf's default: each entry's callers, branches under 0.5% hidden); top-tree the same two trees with \`--percent-limit 0.5\` (entries and branches under 0.5% hidden by both)."
echo
echo "| view | tool | $FIRST_D s | $LAST_D s | time ×, $FIRST_D s → $LAST_D s (recording × $(div "$LAST_D" "$FIRST_D"); target: flat) |"
echo "|---|---|---:|---:|---:|"
for view in $VIEWS; do
	for tool in dcprof perf; do
		g=-
		if ok $tool "$view" "$FIRST_D" && ok $tool "$view" "$LAST_D"; then
			g=$(div "$(ms $tool "$view" "$LAST_D")" "$(ms $tool "$view" "$FIRST_D")")
		fi
		echo "| $view | $tool | $(cell $tool "$view" "$FIRST_D") | $(cell $tool "$view" "$LAST_D") | $g |"
	done
done
