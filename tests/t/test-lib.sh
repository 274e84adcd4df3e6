#!/bin/bash
# Shared helpers of the tests/t scripts: source it first.
#   die MSG         fail the test (exit 1)
#   pass            succeed (exit 0)
#   skip MSG        skip the test (exit 77)
#   need CMD...     skip unless every command exists
#   need_root       skip unless running as root
#   build_workload NAME [GCC ARGS...]
#                   compile tests/workloads/NAME.c into $TMP/NAME, print its path
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

skip() {
	echo "$TEST_NAME: skip: $*" >&2
	exit 77
}

need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "'$c' is not installed"
	done
}

need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
}

build_workload() {
	local name=$1
	shift
	gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -Wl,--build-id \
		-o "$TMP/$name" "$TOP/tests/workloads/$name.c" -lpthread "$@" ||
		die "cannot build workload '$name'"
	echo "$TMP/$name"
}

spawn() {
	"$@" &
	SPAWNED=$!
	_spawned+=("$SPAWNED")
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
