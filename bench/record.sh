#!/bin/bash
# Recording bench: dcprof record -a and perf record -a side by side on the
# same busy workload, in one run, one recorder at a time.
#
# For each recorder, without and with -g: the recorder's own CPU time
# (user+sys, through getrusage of its children as bash's `times` reports it),
# the samples it took, the CPU per 1,000 samples, the output size and bytes
# per sample; then the output size at 5, 20 and 60 s of recording
# (BENCH_GROWTH), to see how it grows with the work.
# dcprof uses a symbol cache of its own in the temporary directory, filled
# by the warm-up recording (the steady state of a machine that records
# more than once); "dcprof-cold" runs without one, deriving everything.
# Prints markdown tables on stdout, progress on stderr. About 9 minutes with
# the defaults (18 recordings, 520 s of them); bench/run.sh runs a shorter
# variant, of about 5 minutes.
#
# Environment:
#   BENCH_DURATION=30      seconds of each main recording
#   BENCH_GROWTH="5 20 60" durations of the growth table (a duration equal to
#                          BENCH_DURATION reuses the main recordings)
#   BENCH_GROWTH_NO_G=...  its durations without -g (default: BENCH_GROWTH;
#                          a duration left out shows as "-", and the main
#                          table is always recorded with and without -g)
#   BENCH_QUICK=1          BENCH_DURATION=1, BENCH_GROWTH=1, BENCH_FREQ=99,
#                          no warm-up
#   BENCH_FREQ=999         sampling frequency of both recorders
#   BENCH_BURNERS=2        CPU-burning processes of the workload
#   BENCH_CHURN_MS=50      one short-lived process every this many ms (0: none)
#   BENCH_RECORDINGS=DIR   also leave the -g recordings of dcprof (the one
#                          with the symbol cache) and perf in DIR, as
#                          dcprof-N.data and perf-N.data (N: seconds), for
#                          bench/report.sh to time its reports on
#   BENCH_KEEP=1           keep the temporary directory (its path is printed)
#   BENCH_PERF_BUILDID=1   perf record -N instead of -B (see bench/lib.sh)
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FREQ=${BENCH_FREQ:-$(by_mode 999 99)}
DURATION=${BENCH_DURATION:-$(by_mode 30 1)}
GROWTH=${BENCH_GROWTH:-$(by_mode "5 20 60" 1)}
GROWTH_NO_G=${BENCH_GROWTH_NO_G-$GROWTH}
# every growth duration, shortest first, once
GROWTH_ALL=$(printf '%s\n' $GROWTH $GROWTH_NO_G | sort -nu | tr '\n' ' ')
for d in $DURATION $GROWTH_ALL; do
	[ "$d" -ge 1 ] 2>/dev/null || die "bad duration '$d'"
done

need_dcprof
need "$PERF" "no '$PERF' in PATH"
need jq "jq is needed to read 'dcprof report --format json'"
need python3 "python3 is needed to count perf.data records"
bench_init

# perf record -B; BENCH_PERF_BUILDID=1 runs perf record -N instead (its
# closing build-id pass, without copying binaries into ~/.debug), for a
# machine where nothing else records (see perf_record in bench/lib.sh).
if is_on "${BENCH_PERF_BUILDID:-}"; then
	PERF_MODE=-N
else
	PERF_MODE=-B
fi

# Runs recorder $1 (dcprof, dcprof-cold or perf) for $2 seconds, with call
# graphs if $3 is -g, writing $4 (output) and $5 (its stderr); sets CPU_MS.
record_attempt() {
	local tool=$1 secs=$2 g=$3 out=$4 err=$5 cache=$TMP/cache
	case $tool in
	dcprof*)
		# dcprof-cold: no symbol cache, everything derived
		[ "$tool" = dcprof-cold ] && cache=
		DCPROF_CACHE_DIR=$cache recorder "$DCPROF" record -a -F "$FREQ" \
			${g:+"$g"} --duration "$secs" -o "$out" 2>"$err"
		;;
	*)
		recorder perf_record -F "$FREQ" -a ${g:+"$g"} -o "$out" \
			-- sleep "$secs" 2>"$err"
		;;
	esac
}

# Runs one measured recording of tool $1 for $2 seconds, -g if $3 is -g,
# into $TMP/$1$3-$2.data (unless done already); leaves
# "cpu_ms samples lost bytes" in $TMP/$1$3-$2.res.
record_one() {
	local tool=$1 secs=$2 g=$3
	local name=$tool$g-$secs out err res try=1 counts
	out=$TMP/$name.data
	err=$TMP/$name.err
	res=$TMP/$name.res
	[ -e "$res" ] && return

	say "$tool record -a ${g:+$g }for $secs s"
	until record_attempt "$tool" "$secs" "$g" "$out" "$err"; do
		cat "$err" >&2
		# with -N, perf may abort in its build-id pass (see above)
		[ "$tool" = perf ] && [ "$try" -lt 3 ] &&
			grep -q 'stack smashing\|assertion failed' "$err" ||
			die "$tool record failed"
		echo "$name" >>"$TMP/perf-aborts"
		try=$((try + 1))
		rm -f "$out"
		say "perf record aborted, again (try $try)"
	done

	local samples lost bytes
	bytes=$(stat -c %s "$out")
	if [ "$tool" != perf ]; then
		"$DCPROF" report -i "$out" --format json --limit 1 \
			>"$TMP/$name.json" || die "dcprof report failed on '$out'"
		samples=$(jq '.stats.samples' "$TMP/$name.json")
		lost=$(jq '.stats.lost_samples + .stats.lost_records' \
			"$TMP/$name.json")
	else
		counts=$(perf_data "$out") || die "cannot read '$out'"
		# samples lost_records lost_samples throttle unthrottle mmap2 flagged
		set -- $counts
		samples=$1 lost=$(($2 + $3))
		echo "$name $7 $6" >>"$TMP/perf-misflagged"
	fi
	[ -n "$samples" ] && [ "$samples" -gt 0 ] ||
		die "no sample count for $name (see $err)"
	echo "$CPU_MS $samples $lost $bytes" >"$res"
}

# The value of field $2 (cpu_ms samples lost bytes) of run $1, "-" if that
# run was not made.
field() {
	local i
	case $2 in
	cpu_ms) i=1 ;; samples) i=2 ;; lost) i=3 ;; bytes) i=4 ;;
	esac
	if [ -e "$TMP/$1.res" ]; then
		awk -v i="$i" '{ print $i }' "$TMP/$1.res"
	else
		echo -
	fi
}

# Other load on the machine skews every figure: say how much there was.
load_start=$(load_avg)
tasks_start=$(nprocs)
start_busy

# Unmeasured warm-up of both (a second each): page cache, kallsyms, perf's
# build-id cache, dcprof's symbol cache. Not in the quick mode, whose
# figures are not read.
if ! is_on "${BENCH_QUICK:-}"; then
	say "warming up"
	for tool in dcprof perf; do
		record_attempt $tool 1 "" "$TMP/warm-$tool.data" "$TMP/warm-$tool.err" ||
			say "warm-up of $tool failed"
	done
	record_attempt dcprof 1 -g "$TMP/warm-g.data" "$TMP/warm-g.err" ||
		say "warm-up of dcprof -g failed"
fi

# Alternate which recorder goes first, so that neither always gets the
# workload at the same point of its life.
record_one dcprof "$DURATION" ""
record_one perf "$DURATION" ""
record_one dcprof-cold "$DURATION" ""
record_one dcprof-cold "$DURATION" -g
record_one perf "$DURATION" -g
record_one dcprof "$DURATION" -g
first=dcprof second=perf
for d in $GROWTH_ALL; do
	for g in "" -g; do
		want=$GROWTH
		[ -z "$g" ] && want=$GROWTH_NO_G
		[[ " $want " == *" $d "* ]] || continue
		record_one $first "$d" "$g"
		record_one $second "$d" "$g"
		t=$first first=$second second=$t
	done
done
load_end=$(load_avg)
stop_bg

# The -g recordings, for bench/report.sh (hard links: $TMP goes at exit).
if [ -n "${BENCH_RECORDINGS:-}" ] && [ "$PERF_MODE" = -B ]; then
	mkdir -p "$BENCH_RECORDINGS" || die "cannot make '$BENCH_RECORDINGS'"
	for d in $DURATION $GROWTH_ALL; do
		for tool in dcprof perf; do
			f=$TMP/$tool-g-$d.data
			[ -e "$f" ] || continue
			ln -f "$f" "$BENCH_RECORDINGS/$tool-$d.data" 2>/dev/null ||
				cp "$f" "$BENCH_RECORDINGS/$tool-$d.data" ||
				die "cannot leave $f in '$BENCH_RECORDINGS'"
		done
	done
	say "left the -g recordings in $BENCH_RECORDINGS"
fi

# Reads the figures back and prints the tables.
per1k() { # CPU_MS SAMPLES
	if [ "$1" = - ]; then echo -; else div "$(($1 * 1000))" "$2" %.1f; fi
}

echo "### Recording: $DURATION s, -a, cpu-clock at $FREQ Hz"
echo
echo "Commands: \`dcprof record -a -F $FREQ [-g] --duration N -o F\`, \`perf record $PERF_MODE -e cpu-clock -F $FREQ -a [-g] -o F -- sleep N\`."
echo "Machine: $NCPU CPUs ($(cpu_model)), kernel $(uname -r); workload: $BURNERS burners + a short-lived process every $CHURN_MS ms; $("$PERF" --version)."
echo "Load average (1, 5, 15 min) at the start: $load_start, at the end: $load_end; $tasks_start processes at the start."
echo "Expected samples: $NCPU CPUs × $FREQ Hz × $DURATION s ≈ $((NCPU * FREQ * DURATION))."
echo
echo "| recorder | -g | samples | lost | recorder CPU ms | CPU ms / 1k samples | output bytes | bytes / sample |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for g in "" -g; do
	for tool in dcprof dcprof-cold perf; do
		n=$tool$g-$DURATION
		c=$(field "$n" cpu_ms) s=$(field "$n" samples)
		b=$(field "$n" bytes)
		echo "| $tool | ${g:-no} | $s | $(field "$n" lost) | $c | $(per1k "$c" "$s") | $b | $(div "$b" "$s" %.1f) |"
	done
done
echo
echo "| -g | CPU per 1k samples, dcprof / perf (target ≤ 1) | same, no symbol cache | perf.data / dcprof output (target ≥ 20) |"
echo "|---|---:|---:|---:|"
for g in "" -g; do
	d=dcprof$g-$DURATION p=perf$g-$DURATION k=dcprof-cold$g-$DURATION
	dc=$(per1k "$(field "$d" cpu_ms)" "$(field "$d" samples)")
	kc=$(per1k "$(field "$k" cpu_ms)" "$(field "$k" samples)")
	pc=$(per1k "$(field "$p" cpu_ms)" "$(field "$p" samples)")
	echo "| ${g:-no} | $(div "$dc" "$pc") | $(div "$kc" "$pc") | $(div "$(field "$p" bytes)" "$(field "$d" bytes)") |"
done
echo
echo "### Output size against duration (bytes, and bytes / sample)"
echo
hdr="| recorder | -g |" sep="|---|---|"
for d in $GROWTH_ALL; do
	hdr="$hdr $d s |"
	sep="$sep---:|"
done
# shellcheck disable=SC2086 # a list of numbers
set -- $GROWTH_ALL
first_d=$1 last_d=${!#}
echo "$hdr size ×, $first_d s → $last_d s (time × $(div "$last_d" "$first_d")) |"
echo "$sep---:|"
for g in "" -g; do
	for tool in dcprof perf; do
		row="| $tool | ${g:-no} |"
		for d in $GROWTH_ALL; do
			n=$tool$g-$d
			b=$(field "$n" bytes)
			if [ "$b" = - ]; then
				row="$row - |"
			else
				row="$row $b ($(div "$b" "$(field "$n" samples)" %.1f)) |"
			fi
		done
		first_b=$(field "$tool$g-$first_d" bytes)
		last_b=$(field "$tool$g-$last_d" bytes)
		if [ "$first_b" = - ] || [ "$last_b" = - ]; then
			row="$row - |"
		else
			row="$row $(div "$last_b" "$first_b") |"
		fi
		echo "$row"
	done
done
if [ "$GROWTH_NO_G" != "$GROWTH" ]; then
	echo
	list() { if [ $# = 0 ]; then echo none; else echo "$* s" | sed 's/ \([0-9]\)/, \1/g'; fi; }
	# shellcheck disable=SC2086 # lists of numbers
	echo "\"-\": not recorded (without -g: $(list $GROWTH_NO_G); with -g: $(list $GROWTH))."
fi
if [ -s "$TMP/perf-aborts" ]; then
	echo
	echo "perf record aborted (build-id pass, run again) in: $(sort "$TMP/perf-aborts" | uniq -c | awk '{ printf "%s%s ×%s", sep, $2, $1; sep = ", " }')."
fi
if [ -s "$TMP/perf-misflagged" ]; then
	echo
	awk '{ f += $2; n += $3 } END {
		printf "perf record %s: %d of the %d MMAP2 records in its files carried the build-id flag perf never asked for (another build-id recorder ran at the same time).\n", mode, f, n }' \
		mode="$PERF_MODE" "$TMP/perf-misflagged"
fi
