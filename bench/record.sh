#!/bin/bash
# Recording bench: dcprof record -a and perf record -a side by side on the
# same busy workload, in one run, one recorder at a time.
#
# For each recorder, without and with -g: the recorder's own CPU time
# (user+sys, through getrusage of its children as bash's `times` reports it),
# the samples it took, the CPU per 1,000 samples, the output size and bytes
# per sample; then the output size at shorter durations, to see how it grows.
# dcprof uses a symbol cache of its own in the temporary directory, filled
# by the warm-up recording (the steady state of a machine that records
# more than once); "dcprof-cold" runs without one, deriving everything.
# Prints markdown tables on stdout, progress on stderr.
#
# Environment:
#   BENCH_DURATION=30      seconds of each main recording
#   BENCH_GROWTH="5 15"    shorter durations for the growth table (the main
#                          recording is the last point)
#   BENCH_QUICK=1          BENCH_DURATION=5, BENCH_GROWTH="2 3" (for trying)
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
if [ -n "${BENCH_QUICK:-}" ] && [ "${BENCH_QUICK}" != 0 ]; then
	DURATION=${BENCH_DURATION:-5}
	GROWTH=${BENCH_GROWTH:-2 3}
else
	DURATION=${BENCH_DURATION:-30}
	GROWTH=${BENCH_GROWTH:-5 15}
fi
NCPU=$(nproc)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dcprof-bench-record.XXXXXX")
WORKLOAD_PID=
RECORDER_PID=

cleanup() {
	if [ -n "$RECORDER_PID" ]; then
		kill -INT "$RECORDER_PID" 2>/dev/null
		wait "$RECORDER_PID" 2>/dev/null
	fi
	if [ -n "$WORKLOAD_PID" ]; then
		# the workload stops its burners on SIGTERM; they also die with it
		kill -TERM "$WORKLOAD_PID" 2>/dev/null
		wait "$WORKLOAD_PID" 2>/dev/null
	fi
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "record.sh: kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
	echo "record.sh: $*" >&2
	exit 1
}

say() {
	echo "record.sh: $*" >&2
}

[ -x "$DCPROF" ] || die "no '$DCPROF': run make first"
command -v "$PERF" >/dev/null || die "no '$PERF' in PATH"
command -v jq >/dev/null || die "jq is needed to read 'dcprof report --format json'"
command -v python3 >/dev/null || die "python3 is needed to count perf.data records"

# perf record -B (--no-buildid): perf 6.1 aborts in its closing build-id
# pass ("assertion failed at util/build-id.c:1010", "stack smashing
# detected") whenever another recorder asked the kernel for MMAP2 build ids
# at the same time (any dcprof, e.g. a test run): the kernel sets
# PERF_RECORD_MISC_MMAP_BUILD_ID in the shared header of an MMAP2 event for
# the build-id consumer and never clears it, so perf's copy claims a build id
# and carries dev/inode instead. -B skips that pass: perf does less work
# than by default, which makes the CPU comparison stricter for dcprof.
# BENCH_PERF_BUILDID=1 runs perf record -N instead (the pass, without copying
# binaries into ~/.debug) on a machine where nothing else records.
if [ -n "${BENCH_PERF_BUILDID:-}" ] && [ "$BENCH_PERF_BUILDID" != 0 ]; then
	PERF_MODE=-N
else
	PERF_MODE=-B
fi

# Counts the records of a perf.data without perf's session code (which trips
# over the misflagged MMAP2s described above): prints samples, samples lost
# (LOST and LOST_SAMPLES), MMAP2 records, and MMAP2 records flagged with a
# build id that perf never asked for.
perf_count() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
magic, _, _, _, _, off, size = struct.unpack_from("<8sQQQQQQ", d, 0)
if magic != b"PERFILE2":
    sys.exit("not a perf.data file")
end = off + size if size else len(d)
samples = lost = mmap2 = flagged = 0
while off + 8 <= end:
    kind, misc, rsize = struct.unpack_from("<IHH", d, off)
    if rsize < 8:
        break
    if kind == 9:
        samples += 1
    elif kind == 2:
        lost += struct.unpack_from("<Q", d, off + 16)[0]
    elif kind == 13:
        lost += struct.unpack_from("<Q", d, off + 8)[0]
    elif kind == 10:
        mmap2 += 1
        flagged += bool(misc & 0x4000)
    off += rsize
print(samples, lost, mmap2, flagged)
PY
}

# Frame pointers, so that -g unwinds the workload's own frames too.
$CC -std=gnu11 -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls \
	-o "$TMP/busy" "$TOP/bench/workloads/busy.c" -lm ||
	die "cannot build bench/workloads/busy.c"

# Runs recorder $1 (dcprof or perf) for $2 seconds, with call graphs if $3
# is -g, writing $4 (output), $5 (its stderr) and $6 (`times` after it).
# The recorder runs in a subshell of its own, so that `times` there reports
# the CPU of the recorder alone (and of perf's `sleep`, which is nothing).
record_attempt() {
	local tool=$1 secs=$2 g=$3 out=$4 err=$5 times_out=$6
	(
		if [ "$tool" = dcprof ] || [ "$tool" = dcprof-cold ]; then
			# dcprof-cold: no symbol cache, everything derived
			cache=$TMP/cache
			[ "$tool" = dcprof-cold ] && cache=
			DCPROF_CACHE_DIR=$cache "$DCPROF" record -a -F "$FREQ" \
				${g:+"$g"} --duration "$secs" -o "$out" 2>"$err" &
		else
			"$PERF" record $PERF_MODE -e cpu-clock -F "$FREQ" -a ${g:+"$g"} \
				-o "$out" -- sleep "$secs" 2>"$err" &
		fi
		pid=$!
		# shellcheck disable=SC2064
		trap "kill -INT $pid 2>/dev/null; wait $pid; exit 130" INT TERM
		wait "$pid"
		rc=$?
		times >"$times_out"
		exit $rc
	) &
	RECORDER_PID=$!
	wait "$RECORDER_PID"
	local rc=$?
	RECORDER_PID=
	return $rc
}

# Runs one measured recording of tool $1 for $2 seconds, -g if $3 is -g,
# into $TMP/$1$3-$2.data; leaves "cpu_ms samples lost bytes" in
# $TMP/$1$3-$2.res.
record_one() {
	local tool=$1 secs=$2 g=$3
	local name=$tool$g-$secs out err res try=1 counts
	out=$TMP/$name.data
	err=$TMP/$name.err
	res=$TMP/$name.res

	say "$tool record -a ${g:+$g }for $secs s"
	until record_attempt "$tool" "$secs" "$g" "$out" "$err" \
		"$TMP/$name.times"; do
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

	# Second line of `times`: children's user and system time, "XmY.ZZZs".
	local cpu_ms
	cpu_ms=$(sed -n 2p "$TMP/$name.times" | awk '
		function secs(t,   m) {
			m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t);
			sub(/s$/, "", t); return m * 60 + t
		}
		{ printf "%.0f", (secs($1) + secs($2)) * 1000 }')

	local samples lost bytes
	bytes=$(stat -c %s "$out")
	if [ "$tool" != perf ]; then
		"$DCPROF" report -i "$out" --format json --limit 1 \
			>"$TMP/$name.json" || die "dcprof report failed on '$out'"
		samples=$(jq '.stats.samples' "$TMP/$name.json")
		lost=$(jq '.stats.lost_samples + .stats.lost_records' \
			"$TMP/$name.json")
	else
		counts=$(perf_count "$out") || die "cannot read '$out'"
		set -- $counts
		samples=$1 lost=$2
		echo "$name $4 $3" >>"$TMP/perf-misflagged"
	fi
	[ -n "$samples" ] && [ "$samples" -gt 0 ] ||
		die "no sample count for $name (see $err)"
	echo "$cpu_ms $samples $lost $bytes" >"$res"
}

# The value of field $2 (cpu_ms samples lost bytes) of run $1.
field() {
	local i
	case $2 in
	cpu_ms) i=1 ;; samples) i=2 ;; lost) i=3 ;; bytes) i=4 ;;
	esac
	awk -v i="$i" '{ print $i }' "$TMP/$1.res"
}

# Other load on the machine skews every figure: say how much there was.
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
tasks_start=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
say "workload: $BURNERS burners, a short-lived process every $CHURN_MS ms"
"$TMP/busy" "$BURNERS" "$CHURN_MS" &
WORKLOAD_PID=$!
sleep 1
kill -0 "$WORKLOAD_PID" 2>/dev/null || die "the workload did not start"

# Unmeasured warm-up of both: page cache, kallsyms, perf's build-id cache,
# dcprof's symbol cache.
say "warming up"
for tool in dcprof perf; do
	record_attempt $tool 2 "" "$TMP/warm-$tool.data" "$TMP/warm-$tool.err" \
		"$TMP/warm-$tool.times" || say "warm-up of $tool failed"
done
record_attempt dcprof 2 -g "$TMP/warm-g.data" "$TMP/warm-g.err" \
	"$TMP/warm-g.times" || say "warm-up of dcprof -g failed"

# Alternate which recorder goes first, so that neither always gets the
# workload at the same point of its life.
record_one dcprof "$DURATION" ""
record_one perf "$DURATION" ""
record_one dcprof-cold "$DURATION" ""
record_one dcprof-cold "$DURATION" -g
record_one perf "$DURATION" -g
record_one dcprof "$DURATION" -g
first=dcprof second=perf
for d in $GROWTH; do
	for g in "" -g; do
		record_one $first "$d" "$g"
		record_one $second "$d" "$g"
		t=$first first=$second second=$t
	done
done

# Reads the figures back and prints the tables.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
per1k() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a * 1000 / b; else print "-" }'; }
perS() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }

kernel=$(uname -r)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "### Recording: $DURATION s, -a, cpu-clock at $FREQ Hz"
echo
echo "Commands: \`dcprof record -a -F $FREQ [-g] --duration N -o F\`, \`perf record $PERF_MODE -e cpu-clock -F $FREQ -a [-g] -o F -- sleep N\`."
echo "Machine: $NCPU CPUs ($cpu), kernel $kernel; workload: $BURNERS burners + a short-lived process every $CHURN_MS ms; $("$PERF" --version)."
echo "Load average (1, 5, 15 min) at the start: $load_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg); $tasks_start processes at the start."
echo "Expected samples: $NCPU CPUs × $FREQ Hz × $DURATION s ≈ $((NCPU * FREQ * DURATION))."
echo
echo "| recorder | -g | samples | lost | recorder CPU ms | CPU ms / 1k samples | output bytes | bytes / sample |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for g in "" -g; do
	for tool in dcprof dcprof-cold perf; do
		n=$tool$g-$DURATION
		c=$(field "$n" cpu_ms) s=$(field "$n" samples)
		b=$(field "$n" bytes)
		echo "| $tool | ${g:-no} | $s | $(field "$n" lost) | $c | $(per1k "$c" "$s") | $b | $(perS "$b" "$s") |"
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
	echo "| ${g:-no} | $(ratio "$dc" "$pc") | $(ratio "$kc" "$pc") | $(ratio "$(field "$p" bytes)" "$(field "$d" bytes)") |"
done
echo
echo "### Output size against duration (bytes, and bytes / sample)"
echo
hdr="| recorder | -g |" sep="|---|---|"
for d in $GROWTH $DURATION; do
	hdr="$hdr $d s |"
	sep="$sep---:|"
done
first_d=${GROWTH%% *}
echo "$hdr size ×, ${first_d:-$DURATION} s → $DURATION s (time × $(ratio "$DURATION" "${first_d:-$DURATION}")) |"
echo "$sep---:|"
for g in "" -g; do
	for tool in dcprof perf; do
		row="| $tool | ${g:-no} |"
		for d in $GROWTH $DURATION; do
			n=$tool$g-$d
			b=$(field "$n" bytes)
			row="$row $b ($(perS "$b" "$(field "$n" samples)")) |"
		done
		row="$row $(ratio "$(field "$tool$g-$DURATION" bytes)" \
			"$(field "$tool$g-${first_d:-$DURATION}" bytes)") |"
		echo "$row"
	done
done
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
