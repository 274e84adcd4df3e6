# shellcheck shell=bash disable=SC2034 # the variables are the scripts'
# What the bench scripts share; each sources it first:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# It is not run on its own. It sets
#   TOP     the source tree (the directory above bench/)
#   BUILD   the build directory: $BUILD, else $TOP/build
#   DCPROF  the dcprof binary: $DCPROF, else $BUILD/dcprof
#   PERF    perf: $PERF, else perf;  CC  the C compiler: $CC, else cc
#   NCPU    the online CPUs
#   BENCH   the script's name, for messages ("record" for bench/record.sh)
#   BURNERS, CHURN_MS  the busy workload's settings ($BENCH_BURNERS, else 2;
#           $BENCH_CHURN_MS, else 50), for the scripts that run it
# and unsets DEBUGINFOD_URLS: no tool of a bench goes to the network for
# symbols. bench_init makes the temporary directory $TMP and the traps that
# stop what the bench started (the recorder, the background processes) and
# remove $TMP when the script exits (BENCH_KEEP=1 keeps it).
# With BENCH_QUICK=1 a bench runs as briefly as it can while still going
# through its code (by_mode below), so that CI can run every bench and none
# rots; its figures then are not for reading.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
DCPROF=${DCPROF:-$BUILD/dcprof}
PERF=${PERF:-perf}
CC=${CC:-cc}
NCPU=$(nproc)
BENCH=$(basename "$0" .sh)
BURNERS=${BENCH_BURNERS:-2}
CHURN_MS=${BENCH_CHURN_MS:-50}
unset DEBUGINFOD_URLS
# python3 reads the benches' outputs, dozens of times a bench: the
# interpreter itself, found once, not a version manager's shim that runs
# a dozen processes at every call
PYTHON3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -x "$PYTHON3" ]; then
	python3() { "$PYTHON3" "$@"; }
fi

TMP=
RECORDER_PID=
BG_PIDS=()

say() {
	echo "$BENCH.sh: $*" >&2
}

die() {
	say "$@"
	exit 1
}

# True if $1 is set to something other than 0 (BENCH_QUICK, BENCH_KEEP...).
is_on() {
	[ -n "${1:-}" ] && [ "$1" != 0 ]
}

# by_mode FULL QUICK: the default of a setting, FULL, or QUICK under
# BENCH_QUICK.
by_mode() {
	if is_on "${BENCH_QUICK:-}"; then
		echo "$2"
	else
		echo "$1"
	fi
}

# need COMMAND WHY: dies unless COMMAND is in PATH.
need() {
	command -v "$1" >/dev/null || die "$2"
}

need_dcprof() {
	[ -x "$DCPROF" ] || die "no '$DCPROF': run make first"
}

bench_init() {
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/dcprof-bench-$BENCH.XXXXXX") ||
		die "cannot make a temporary directory"
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

bench_cleanup() {
	stop_recorder
	stop_bg
	[ -n "$TMP" ] || return
	if is_on "${BENCH_KEEP:-}"; then
		say "kept $TMP"
	else
		rm -rf "$TMP"
	fi
}

# --- Background processes (workloads) ------------------------------------

# Starts "$@" in the background (with the redirections of the call) and
# adds it to the processes stop_bg and the exit stop; its pid is BG_LAST.
start_bg() {
	"$@" &
	BG_LAST=$!
	BG_PIDS+=("$BG_LAST")
}

# Stops every background process started so far (SIGTERM) and waits for it.
stop_bg() {
	local p
	for p in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	BG_PIDS=()
}

# wait_file FILE SECONDS: waits until a background process has written
# FILE (not empty), SECONDS at most; fails if it has not.
wait_file() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	[ -s "$1" ]
}

# compile OUT CC-ARGUMENTS...: builds $TMP/OUT (C, gnu11).
compile() {
	local out=$1
	shift
	$CC -std=gnu11 -o "$TMP/$out" "$@" ||
		die "cannot build $out (compiler '$CC')"
}

# The busy workload of the record and report benches
# (bench/workloads/busy.c): BURNERS processes burning CPU, and a short-lived
# process every CHURN_MS. Built with frame pointers, so that -g unwinds its
# own frames too; it stops its burners on SIGTERM (they also die with it).
start_busy() {
	[ -x "$TMP/busy" ] ||
		compile busy -O2 -g -fno-omit-frame-pointer \
			-fno-optimize-sibling-calls "$TOP/bench/workloads/busy.c" -lm
	say "workload: $BURNERS burners, a short-lived process every $CHURN_MS ms"
	start_bg "$TMP/busy" "$BURNERS" "$CHURN_MS"
	# a second to be under way before anything is measured
	sleep "$(by_mode 1 0.2)"
	kill -0 "$BG_LAST" 2>/dev/null || die "the workload did not start"
}

# --- Recorders and timing ------------------------------------------------

# Runs "$@" as the current recorder (or any command whose CPU time is
# wanted) and sets CPU_MS to its user + system time in milliseconds: it runs
# in a subshell of its own, whose `times` then reports the CPU of the
# command alone (and of its children, such as perf's `sleep`). It runs in
# the background, so that an interrupted bench stops it with SIGINT (both
# recorders then finish their file). The redirections of the call apply to
# the command. Returns the command's status.
recorder() {
	local rc
	(
		"$@" &
		pid=$!
		# shellcheck disable=SC2064
		trap "kill -INT $pid 2>/dev/null; wait $pid; exit 130" INT TERM
		wait "$pid"
		rc=$?
		times >"$TMP/.times"
		exit $rc
	) &
	RECORDER_PID=$!
	wait "$RECORDER_PID"
	rc=$?
	RECORDER_PID=
	# Second line of `times`: the children's user and system time,
	# each as "XmY.ZZZs".
	CPU_MS=$(sed -n 2p "$TMP/.times" 2>/dev/null | awk '
		function secs(t,   m) {
			m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t);
			sub(/s$/, "", t); return m * 60 + t
		}
		{ printf "%.0f", (secs($1) + secs($2)) * 1000 }')
	return $rc
}

stop_recorder() {
	if [ -n "$RECORDER_PID" ]; then
		kill -INT "$RECORDER_PID" 2>/dev/null || true
		wait "$RECORDER_PID" 2>/dev/null || true
		RECORDER_PID=
	fi
}

# Runs "$@" once, with the redirections of the call, and sets MS to its
# wall time in milliseconds (three decimals); returns the command's status.
time_cmd() {
	local t0 t1 rc
	t0=$EPOCHREALTIME
	"$@"
	rc=$?
	t1=$EPOCHREALTIME
	MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
	return $rc
}

# best_ms RUNS COMMAND...: prints the best wall time in milliseconds (three
# decimals) of RUNS runs of COMMAND, its output discarded; fails, with the
# command's stderr on ours, if a run fails.
best_ms() {
	local runs=$1 best="" i
	shift
	for ((i = 0; i < runs; i++)); do
		time_cmd "$@" >/dev/null 2>"$TMP/.cmd.err" || {
			cat "$TMP/.cmd.err" >&2
			return 1
		}
		best=$(awk -v a="$MS" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
	done
	echo "$best"
}

# --- Figures -------------------------------------------------------------

# div A B [FORMAT]: A / B in FORMAT (default %.2f), or "-" if B is not > 0.
div() {
	awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" \
		'BEGIN { if (b > 0) printf f, a / b; else print "-" }'
}

cpu_model() { sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1; }
load_avg() { cut -d' ' -f1-3 /proc/loadavg; }
nprocs() { compgen -G '/proc/[0-9]*' | wc -l; }

# --- perf ----------------------------------------------------------------

# perf_record ARGS...: perf record -B -e cpu-clock ARGS (PERF_MODE=-N: with
# perf's closing build-id pass, without copying binaries into ~/.debug).
# -B (--no-buildid) because perf 6.1 aborts in that pass ("assertion failed
# at util/build-id.c:1010", "stack smashing detected") whenever another
# recorder asked the kernel for MMAP2 build ids at the same time (any
# dcprof, e.g. a test run): the kernel sets PERF_RECORD_MISC_MMAP_BUILD_ID
# in the header of an MMAP2 event it shares between consumers, for the
# build-id consumer, and never clears it, so perf's copy claims a build id
# and carries device and inode instead. Without the pass perf does less
# work than by default, which only makes the CPU comparisons stricter for
# dcprof. See "perf and the build-id flag" in docs/PERFORMANCE.md.
# bpftrace_record SECONDS PROGRAM OUT: bpftrace running PROGRAM (which
# ends itself after SECONDS) as the current recorder (CPU_MS as recorder()
# sets it: bpftrace's own CPU, its symbolizing at the end included), its
# printed maps in OUT; BPF_NS: the run time of the BPF programs it loaded
# (those with ids above every program loaded before it), read with bpftool
# half a second before the end (kernel.bpf_stats_enabled must be 1).
# Returns 1 when bpftrace or bpftool is missing.
bpftrace_record() {
	local secs=$1 prog=$2 out=$3 q bpftool last
	bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
	command -v bpftrace >/dev/null && [ -x "$bpftool" ] || return 1
	last=$("$bpftool" prog show -j | python3 -c '
import json, sys
print(max([p["id"] for p in json.load(sys.stdin)] + [0]))')
	(
		sleep "$(awk -v s="$secs" 'BEGIN { print s - 0.5 }')"
		"$bpftool" prog show -j | python3 -c '
import json, sys
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin)
          if p["id"] > int(sys.argv[1])))' "$last" >"$TMP/bpftrace.ns"
	) &
	q=$!
	recorder bpftrace -e "$prog" >"$out" 2>"$out.err" ||
		die "bpftrace failed: $(grep -v 'stack id\|RLIMIT' "$out.err" | tail -2)"
	wait "$q"
	BPF_NS=$(cat "$TMP/bpftrace.ns")
}

perf_record() {
	"$PERF" record "${PERF_MODE:--B}" -e cpu-clock "$@"
}

# perf_data [clear] PERF.DATA: reads the records of a perf.data without
# perf's session code (which trips over the misflagged MMAP2 records above)
# and prints one line:
#   samples lost_records lost_samples throttle unthrottle mmap2 flagged
# (PERF_RECORD_SAMPLE; the counts of PERF_RECORD_LOST and
# PERF_RECORD_LOST_SAMPLES; THROTTLE and UNTHROTTLE records; MMAP2 records
# and those flagged with a build id perf never asked for). With "clear", the
# flag is cleared on every MMAP2 record, in place, so that perf report and
# perf script read the file back (perf never asked for build ids).
perf_data() {
	python3 - "$@" <<'PY'
import mmap, struct, sys
clear = sys.argv[1] == "clear"
path = sys.argv[-1]
with open(path, "r+b" if clear else "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_WRITE if clear else mmap.ACCESS_READ)
    if m[:8] != b"PERFILE2":
        sys.exit("%s: not a perf.data file" % path)
    off, size = struct.unpack_from("<QQ", m, 40)
    end = off + size if size else len(m)
    n = {9: 0, 5: 0, 6: 0, 10: 0}
    lost_rec = lost_samp = flagged = 0
    while off + 8 <= end:
        kind, misc, rsize = struct.unpack_from("<IHH", m, off)
        if rsize < 8:
            break
        if kind in n:
            n[kind] += 1
        if kind == 2:      # PERF_RECORD_LOST: id, lost
            lost_rec += struct.unpack_from("<Q", m, off + 16)[0]
        elif kind == 13:   # PERF_RECORD_LOST_SAMPLES: lost
            lost_samp += struct.unpack_from("<Q", m, off + 8)[0]
        elif kind == 10 and misc & 0x4000:
            flagged += 1
            if clear:
                struct.pack_into("<H", m, off + 4, misc & ~0x4000)
        off += rsize
    if clear:
        m.flush()
print(n[9], lost_rec, lost_samp, n[5], n[6], n[10], flagged)
PY
}
