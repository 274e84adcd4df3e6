#!/bin/bash
# Shared helpers of the tests/t scripts: source it first.
#   die MSG         fail the test (exit 1)
#   pass            succeed (exit 0)
#   skip MSG        skip the test (exit 77); tests/run.sh counts it, and
#                   under CI fails it unless docs/TESTING.md allows it
#   skip_part MSG   say loudly that a part of the test does not run (the
#                   test goes on); counted and judged like a skip
#   need CMD...     skip unless every command exists; under CI fail
#   need_root       skip unless running as root; under CI fail
#   test_seed       seed $RANDOM from DCPROF_TEST_SEED (or a fresh seed) and
#                   print it, so that a random choice can be repeated
#   sample_rate HZ [MIN_HZ]
#                   set RATE to HZ, or to the kernel's perf_event_max_sample_rate
#                   if lower and at least MIN_HZ (default HZ: the test needs
#                   that rate); skip (CI: fail) otherwise. Not in $(...)
#   wait_line FILE REGEX [SECONDS]
#                   wait until a line of FILE matches REGEX (grep -E)
#   build_workload NAME [GCC ARGS...]
#                   compile tests/workloads/NAME.c into $TMP/NAME, print its
#                   path (under tests/run.sh, compiled once per run and
#                   copied, with a build id of the test's own)
#   record_once DATA WORKLOAD [RECORD OPTIONS...] -- [WORKLOAD ARGS...]
#                   dcprof record OPTIONS -o DATA -- WORKLOAD ARGS, WORKLOAD
#                   built by build_workload (no GCC ARGS); stdout and stderr
#                   left in $TMP/out and $TMP/err as by expect_exit, WORKLOAD
#                   set to the binary recorded. Under tests/run.sh recorded
#                   once per run for these arguments, binary and profile in
#                   the shared directory, and DATA, out and err copies: for
#                   tests that only read the recording (never change the
#                   binary at $WORKLOAD); accuracy tests record their own
#   check_split_shares TRUTH MIN_TOTAL [POINTS [LABEL]]
#                   "NAME COUNT" lines on stdin against the truth a workload
#                   printed into the file TRUTH (tests/tools/split_shares.py):
#                   the truth's names hold MIN_TOTAL counts or more, and each
#                   one's share of them is within POINTS (default 3) of its
#                   share of the measured time. Status 0, 1 when a share is
#                   off, 3 when too few counts (not judged, if the test
#                   allows that); the shares are printed
#   report_counts JSON [KEY [FILE]]
#                   "NAME COUNT" lines of a report's JSON rows: samples
#                   summed by the column KEY (symbol), only FILE's rows if
#                   given; fail if JSON cannot be read
#   spawn CMD...    start CMD in the background; killed at exit; sets $SPAWNED
#   wait_stopped PID [SECONDS]
#                   wait until PID is stopped (state T), fail after SECONDS (10)
#   expect_exit CODE CMD...
#                   run CMD, fail unless it exits with CODE; its stdout and
#                   stderr are left in $TMP/out and $TMP/err
# Sets TOP (the source tree), BUILD (absolute build dir, from the environment
# or $TOP/build), DCPROF (the binary), TMP (a temporary directory removed at
# exit).
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
DCPROF=$BUILD/dcprof
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dcprof-test.XXXXXX")
TEST_NAME=$(basename "$0" .sh)
# No symbol cache unless a test asks for one: every test derives symbols
# from the files themselves, whatever earlier runs left in the cache.
export DCPROF_CACHE_DIR=
# python3 through a version manager's shim (pyenv's is a shell script that
# runs a dozen processes) costs 0.3 s a call on the test machines, and the
# tests call it hundreds of times: the interpreter it resolves to (found
# once by tests/run.sh, else here) comes first in PATH.
if [ -z "${DCPROF_TEST_PYTHON3:-}" ]; then
	DCPROF_TEST_PYTHON3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
	export DCPROF_TEST_PYTHON3
fi
if [ -x "${DCPROF_TEST_PYTHON3:-}" ] && mkdir "$TMP/.bin" &&
	ln -s "$DCPROF_TEST_PYTHON3" "$TMP/.bin/python3"; then
	PATH=$TMP/.bin:$PATH
fi
_spawned=()

_cleanup() {
	local p
	for p in "${_spawned[@]+"${_spawned[@]}"}"; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${_spawned[@]+"${_spawned[@]}"}"; do
		wait "$p" 2>/dev/null
	done
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap _cleanup EXIT

die() {
	echo "$TEST_NAME: FAIL: $*" >&2
	exit 1
}

pass() {
	echo "$TEST_NAME: ok"
	exit 0
}

# tests/run.sh sets DCPROF_SKIPS to a file that collects what was skipped,
# one line each, so that a skip can be counted and judged under CI.
_note_skip() {
	[ -z "${DCPROF_SKIPS:-}" ] || printf '%s\n' "$*" >>"$DCPROF_SKIPS"
}

skip() {
	echo "$TEST_NAME: skip: $*" >&2
	_note_skip "$*"
	exit 77
}

skip_part() {
	echo "$TEST_NAME: SKIP PART: $*" >&2
	_note_skip "$*"
}

# Under CI nothing may be missing: scripts/install-deps.sh installs every
# tool and CI runs as root.
need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && continue
		[ -z "${CI:-}" ] ||
			die "'$c' is not installed under CI (scripts/install-deps.sh must install it)"
		skip "'$c' is not installed"
	done
}

need_root() {
	[ "$(id -u)" -eq 0 ] && return 0
	[ -z "${CI:-}" ] || die "needs root, and CI must run as root"
	skip "needs root"
}

# The BPF backend loads (root): else skip, and under CI fail when it was
# not built.
# need_python311: PY, Debian's /usr/bin/python3 (CPython 3.11), which the
# Python walk's tests record: a failure under CI when it is not there, a
# skip elsewhere; the unwind tables and names go to a cache of the test's
# own (DCPROF_CACHE_DIR)
need_python311() {
	PY=/usr/bin/python3
	[ -x "$PY" ] && "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
		{ [ -z "${CI:-}" ] || die "$PY is not CPython 3.11 under CI"
		  skip "$PY is not CPython 3.11"; }
	mkdir -m 700 "$TMP/cache"
	export DCPROF_CACHE_DIR=$TMP/cache
}

need_bpf_backend() {
	need_root
	_shared_probe bpf-backend && return 0
	if "$DCPROF" record --backend bpf --duration 0.3 -o "$TMP/.bpf-probe.data" \
		>"$TMP/.bpf-probe.out" 2>"$TMP/.bpf-probe.err"; then
		_shared_probe_passed bpf-backend
		return 0
	fi
	if grep -q "was not built" "$TMP/.bpf-probe.err"; then
		[ -z "${CI:-}" ] ||
			die "the BPF backend was not built under CI: $(cat "$TMP/.bpf-probe.err")"
		skip "$(cat "$TMP/.bpf-probe.err")"
	fi
	skip "the kernel refuses BPF: $(cat "$TMP/.bpf-probe.err")"
}

test_seed() {
	SEED=${DCPROF_TEST_SEED:-$(( ($(date +%s%N) / 1000 + $$) % 1000000 ))}
	RANDOM=$SEED
	echo "$TEST_NAME: seed $SEED (DCPROF_TEST_SEED=$SEED repeats its random choices)"
}

sample_rate() {
	local want=$1 min=${2:-$1} max
	max=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null) ||
		max=$want
	if [ "$want" -le "$max" ]; then
		RATE=$want
	elif [ "$max" -ge "$min" ]; then
		echo "$TEST_NAME: sampling at $max Hz, the kernel's perf_event_max_sample_rate, not $want"
		RATE=$max
	else
		[ -z "${CI:-}" ] ||
			die "needs $min Hz, the kernel allows $max (perf_event_max_sample_rate)"
		skip "needs $min Hz, the kernel allows $max (perf_event_max_sample_rate)"
	fi
}

wait_line() {
	local f=$1 re=$2 limit=$(( ${3:-10} * 20 )) i
	for ((i = 0; i < limit; i++)); do
		grep -qE -- "$re" "$f" 2>/dev/null && return 0
		sleep 0.05
	done
	die "no line matching '$re' in '$f' after ${3:-10} s: $(tail -c 300 "$f" 2>/dev/null)"
}

build_workload() {
	local name=$1 key made
	shift
	if [ -z "${DCPROF_TEST_SHARED:-}" ]; then
		_compile_workload "$TMP/$name" "$name" "$@"
		echo "$TMP/$name"
		return
	fi
	# compiled once per suite run for these arguments; each test gets
	# its own copy, to run, replace or delete as it likes, with a build id
	# of its own (unless the arguments set one): to a recorder that knows
	# files by build id, another test's copy is another program
	key=$(printf '%s\0' "$name" "$@" | md5sum | cut -c1-16)
	made=$DCPROF_TEST_SHARED/workloads/$name.$key
	mkdir -p "$DCPROF_TEST_SHARED/workloads"
	(
		flock 9
		[ -e "$made" ] || {
			_compile_workload "$made.new" "$name" "$@" &&
				mv "$made.new" "$made"
		}
	) 9>"$made.lock" || exit 1
	cp "$made" "$TMP/$name" || die "cannot copy workload '$name'"
	case " $* " in
	*--build-id*) ;;
	*) python3 "$TOP/tests/tools/set_build_id.py" "$TMP/$name" \
		"$TEST_NAME $key" || die "cannot set the build id of '$name'" ;;
	esac
	echo "$TMP/$name"
}

record_once() {
	local data=$1 name=$2 opts=() key dir rc
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	[ $# -gt 0 ] || die "record_once: no -- before the workload's arguments"
	shift
	if [ -z "${DCPROF_TEST_SHARED:-}" ]; then
		WORKLOAD=$(build_workload "$name") || exit 1
		expect_exit 0 "$DCPROF" record "${opts[@]}" -o "$data" -- \
			"$WORKLOAD" "$@"
		return
	fi
	# recorded by the first test of the run that asks, into a directory
	# of its own with the binary it ran: the profile names that binary's
	# path and build id, which stay as they are for the whole run. A
	# recording that failed fails every test that asks for it, with its
	# error, rather than being tried again by each.
	key=$(printf '%s\0' "$DCPROF" "$name" "${opts[@]}" -- "$@" |
		md5sum | cut -c1-16)
	dir=$DCPROF_TEST_SHARED/recordings/$name.$key
	WORKLOAD=$dir/$name
	mkdir -p "$dir" || die "cannot make '$dir'"
	(
		flock -w 300 9 ||
			die "the shared recording of '$name' was not made within 300 s"
		[ -e "$dir/done" ] && exit 0
		[ -e "$dir/failed" ] &&
			die "the shared recording of '$name' failed in an earlier test: $(cat "$dir/failed")"
		if ! (_compile_workload "$WORKLOAD" "$name") >"$dir/build.err" 2>&1
		then
			echo "cannot build workload '$name': $(head -c 500 "$dir/build.err")" \
				>"$dir/failed"
			die "$(cat "$dir/failed")"
		fi
		"$DCPROF" record "${opts[@]}" -o "$dir/data" -- "$WORKLOAD" "$@" \
			>"$dir/out" 2>"$dir/err"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "'dcprof record ${opts[*]} -- $name $*' exited $rc: $(head -c 500 "$dir/err")" \
				>"$dir/failed"
			die "$(cat "$dir/failed")"
		fi
		: >"$dir/done"
	) 9>"$dir/lock" || exit 1
	cp "$dir/data" "$data" && cp "$dir/out" "$TMP/out" &&
		cp "$dir/err" "$TMP/err" ||
		die "cannot copy the shared recording of '$name'"
}

check_split_shares() {
	python3 "$TOP/tests/tools/split_shares.py" check "$1" "$2" "${3:-3}" \
		"${4:-}"
}

report_counts() {
	python3 "$TOP/tests/tools/split_shares.py" counts "$@" ||
		die "cannot read the rows of '$1'"
}

# _compile_workload OUT NAME [GCC ARGS...]
_compile_workload() {
	local out=$1 name=$2
	shift 2
	gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -Wl,--build-id \
		-o "$out" "$TOP/tests/workloads/$name.c" -lpthread "$@" ||
		die "cannot build workload '$name'"
}

# _shared_probe NAME: did a test of this suite run already see the probe
# NAME pass (tests/run.sh keeps DCPROF_TEST_SHARED for the run)?
# _shared_probe_passed NAME: say so for the tests after this one.
_shared_probe() {
	[ -n "${DCPROF_TEST_SHARED:-}" ] && [ -e "$DCPROF_TEST_SHARED/$1.ok" ]
}

_shared_probe_passed() {
	[ -z "${DCPROF_TEST_SHARED:-}" ] || : >"$DCPROF_TEST_SHARED/$1.ok"
}

# Folded user stacks, for the unwinding tests:
#   folded_tool: tests/tools/folded.c (a profile's stacks, folded, read
#     through the public API) built into $TMP/folded
#   record_folded NAME ARGS...: dcprof record -o $TMP/NAME.data ARGS...,
#     its user stacks into $TMP/NAME.folded
#   check_folded FOLDED COMM EXPR...: tests/tools/folded_check.py, or die
folded_tool() {
	# shellcheck disable=SC2086
	gcc -std=gnu11 -O1 -g $SAN_CFLAGS -I"$TOP/include" -o "$TMP/folded" \
		"$TOP/tests/tools/folded.c" -L"$BUILD" -ldcprof \
		-Wl,-rpath,"$BUILD" || die "cannot build the folded-stacks tool"
}

record_folded() {
	local name=$1
	shift
	expect_exit 0 "$DCPROF" record -o "$TMP/$name.data" "$@"
	"$TMP/folded" -u "$TMP/$name.data" >"$TMP/$name.folded" ||
		die "cannot read '$name.data'"
}

check_folded() {
	python3 "$TOP/tests/tools/folded_check.py" "$@" ||
		die "check failed on '$1'"
}

# The storm workload's glue (tests/workloads/storm.c): the symbols of its
# binary other than storm_child_burn that a storm process runs in, the C
# runtime's start and exit code, main (a child between its fork and its
# exec is still "storm-parent" there) and PLT stubs (named or not). A VM
# whose timer interrupt waits for the return to user mode puts 1-2
# samples a child there (2-4% of the binary's); elsewhere none. The
# storm tests allow this much, at most STORM_GLUE_MAX a child. The parent
# runs its fork loop in main: those samples are its own, not bounded (6
# over 500 forks seen).
export STORM_GLUE='^(main|_start|_init|_fini|frame_dummy|__do_global_dtors_aux|(de)?register_tm_clones|.*@plt|storm\+0x[0-9a-f]+)$'
export STORM_GLUE_MAX=3

spawn() {
	"$@" &
	SPAWNED=$!
	_spawned+=("$SPAWNED")
}

# wait_exec PID PROGRAM [SECONDS]: until process PID runs PROGRAM (its
# exe's base name), past the fork and exec that started it
wait_exec() {
	local pid=$1 limit=$(( ${3:-10} * 20 )) i exe
	for ((i = 0; i < limit; i++)); do
		exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || true
		[ "${exe##*/}" = "$2" ] && return 0
		[ -e "/proc/$pid" ] || die "process $pid exited"
		sleep 0.05
	done
	die "process $pid does not run $2"
}

wait_stopped() {
	local pid=$1 limit=$(( ${2:-10} * 20 )) i state
	for ((i = 0; i < limit; i++)); do
		state=$(sed -n 's/.*) \([A-Za-z]\) .*/\1/p' "/proc/$pid/stat" \
			2>/dev/null) || true
		[ "$state" = T ] && return 0
		[ -e "/proc/$pid" ] || die "process $pid exited"
		sleep 0.05
	done
	die "process $pid did not stop"
}

expect_exit() {
	local want=$1 rc
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq "$want" ] ||
		die "'$*' exited $rc, expected $want: $(head -c 500 "$TMP/err")"
}

[ -x "$DCPROF" ] || die "no dcprof binary at '$DCPROF' (run make first)"

# need_perf_events
#                   skip unless perf_event_open may open a system-wide
#                   cpu-clock event; under CI (CI set) fail instead, since CI
#                   must run every test
need_perf_events() {
	local probe=$TMP/.perf-probe why
	_shared_probe perf-events && return 0
	gcc -std=gnu11 -o "$probe" -x c - <<'C' || die "cannot build the perf probe"
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	if (syscall(SYS_perf_event_open, &a, -1, 0, -1, 0) < 0) {
		printf("%s\n", strerror(errno));
		return 1;
	}
	return 0;
}
C
	if why=$("$probe"); then
		_shared_probe_passed perf-events
		return 0
	fi
	if [ -n "${CI:-}" ]; then
		die "perf_event_open refused under CI: $why"
	fi
	skip "perf_event_open refused ($why; see /proc/sys/kernel/perf_event_paranoid)"
}

# json_get FILE EXPR
#                   print the Python expression EXPR evaluated on the JSON
#                   document in FILE (bound to d); strings print as they are,
#                   anything else as JSON (true, 12, [..])
json_get() {
	python3 - "$1" "$2" <<'PY' || die "cannot evaluate '$2' on '$1'"
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {"d": d, "sum": sum, "len": len, "any": any,
                       "all": all, "set": set, "sorted": sorted})
print(v if isinstance(v, str) else json.dumps(v))
PY
}

# wait_file FILE [SECONDS]
#                   wait until FILE exists and is not empty, fail after
#                   SECONDS (10)
wait_file() {
	local f=$1 limit=$(( ${2:-10} * 20 )) i
	for ((i = 0; i < limit; i++)); do
		[ -s "$f" ] && return 0
		sleep 0.05
	done
	die "'$f' did not appear"
}

# spawn_server PORTFILE COMMAND [ARGS...]
#                   spawn a server that writes the port it listens on into
#                   PORTFILE once it listens (a test's receiver); sets
#                   SERVER, its pid, and PORT
spawn_server() {
	local portfile=$1
	shift
	rm -f "$portfile"
	spawn "$@"
	SERVER=$SPAWNED
	wait_file "$portfile"
	PORT=$(cat "$portfile")
}

# need_python_protobuf
#                   PYPB: a python3 that imports google.protobuf (Debian's
#                   python3-protobuf; a version manager's python3 first in
#                   PATH may lack it), and $TMP/pb holding protoc's Python
#                   of proto/otlp_profiles.proto, for tests/tools/otlp_*.py
need_python_protobuf() {
	local p
	need protoc
	PYPB=
	for p in python3 /usr/bin/python3; do
		"$p" -c 'import google.protobuf' 2>/dev/null && PYPB=$p && break
	done
	if [ -z "$PYPB" ]; then
		[ -z "${CI:-}" ] ||
			die "no python3 imports google.protobuf under CI (scripts/install-deps.sh must install python3-protobuf)"
		skip "no python3 imports google.protobuf (python3-protobuf)"
	fi
	mkdir -p "$TMP/pb" &&
		protoc --proto_path="$TOP/proto" --python_out="$TMP/pb" \
			"$TOP/proto/otlp_profiles.proto" ||
		die "protoc cannot compile proto/otlp_profiles.proto"
}

# one_line_error
#                   fail unless $TMP/err (from expect_exit) holds exactly one
#                   line, starting "dcprof: "
one_line_error() {
	[ "$(wc -l <"$TMP/err")" -eq 1 ] ||
		die "expected one line on stderr, got: $(head -c 500 "$TMP/err")"
	grep -q '^dcprof: ' "$TMP/err" ||
		die "the error line does not start with 'dcprof: ': $(cat "$TMP/err")"
}

# SAN_CFLAGS: the flags a program linked with this build's libdcprof needs
# (empty unless the build is sanitized, as with `make check SANITIZE=1`).
# SAN_PRELOAD: the environment a foreign program (python) needs to load
# such a libdcprof.so.
SAN_CFLAGS=
SAN_PRELOAD=()
if nm -D "$BUILD/libdcprof.so" 2>/dev/null | grep -q __asan_init; then
	SAN_CFLAGS="-fsanitize=address,undefined"
	SAN_PRELOAD=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
		ASAN_OPTIONS=detect_leaks=0)
fi
