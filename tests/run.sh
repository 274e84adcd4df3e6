#!/bin/bash
# Runs every unit test binary given as arguments and every tests/t/t*.sh
# script (TESTS="t0160* t0620*": only the scripts whose names match one of
# these patterns), several at a time (below), and closes with the time each
# test took, slowest first, and one "N passed, N failed, N skipped" line.
#
# Skips are counted, never passed over: a script that exits 77, a part of
# a script announced with skip_part (test-lib.sh), and a cmocka test that
# called skip() ("[  SKIPPED ] NAME" in its binary's output). Under CI (CI
# set) every skip is a failure unless docs/TESTING.md lists it in its
# "Skips allowed under CI" table: one row per allowed skip, the test
# (tNNNN-name, or BINARY:TEST for cmocka) in backquotes, then the start
# of its skip message in backquotes (empty: any message), then the reason.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
failed=() skipped=()
suite_start=$SECONDS
notes=$(mktemp -d "${TMPDIR:-/tmp}/dcprof-run.XXXXXX")
trap 'rm -rf "$notes"' EXIT

# allowed NAME MESSAGE: is this skip on the CI list?
allowed() {
	local name=$1 msg=$2 lname lmsg
	while IFS=$'\t' read -r lname lmsg; do
		[ "$lname" = "$name" ] || continue
		[ -z "$lmsg" ] && return 0
		[ "${msg#"$lmsg"}" != "$msg" ] && return 0
	done < <(sed -n '/^## Skips allowed under CI/,/^## /p' docs/TESTING.md |
		sed -n 's/^| `\([^`]*\)` | `\([^`]*\)` |.*/\1\t\2/p;
			s/^| `\([^`]*\)` | *|.*/\1\t/p')
	return 1
}

# judge NAME MESSAGE: count one skip; under CI, 1 unless it is allowed
judge() {
	skip=$((skip + 1)); skipped+=("$1")
	if [ -n "${CI:-}" ] && ! allowed "$1" "$2"; then
		echo "--- $1: skipped under CI and not allowed in docs/TESTING.md: $2"
		return 1
	fi
	return 0
}

# "MICROSECONDS NAME" of every test, for the table of the slowest at the end
: >"$notes/times"
us() { echo "${EPOCHREALTIME/./}"; }

# Tests run JOBS at a time (DCPROF_TEST_JOBS, else one per CPU), except a
# script that says "# exclusive: WHY" in its first lines: it times CPUs,
# records the whole machine or changes what other tests rely on, and runs
# with nothing else running. A test's output is kept in its log and printed
# in one piece when it ends, so that the outputs of concurrent tests do not
# mix; an exclusive test's output is printed as it comes.
jobs=${DCPROF_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "tests/run.sh: DCPROF_TEST_JOBS must be a count, not '$jobs'" >&2; exit 2; }
# A test that hangs fails after this many seconds, its process group
# killed, and the suite goes on (DCPROF_TEST_TIMEOUT)
limit=${DCPROF_TEST_TIMEOUT:-900}
[[ $limit =~ ^[1-9][0-9]*$ ]] || { echo "tests/run.sh: DCPROF_TEST_TIMEOUT must be seconds, not '$limit'" >&2; exit 2; }
# bounded CMD...: CMD, killed with what it started after $limit seconds
bounded() {
	timeout -k 10 "$limit" "$@"
}
# Probes and fixtures that tests/t/test-lib.sh makes once per run
DCPROF_TEST_SHARED=$notes/shared
mkdir "$DCPROF_TEST_SHARED"
export DCPROF_TEST_SHARED

# the interpreter behind python3, resolved once (test-lib.sh)
DCPROF_TEST_PYTHON3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
export DCPROF_TEST_PYTHON3

# exclusive SCRIPT: print why SCRIPT must run alone, if it says so
exclusive() {
	sed -n '1,30s/^# exclusive: \(..*\)/\1/p' "$1" | head -1
}

# chosen NAME: is the script NAME one of those TESTS asks for?
chosen() {
	local p pats
	[ -n "${TESTS:-}" ] || return 0
	read -ra pats <<<"$TESTS"
	for p in "${pats[@]}"; do
		# shellcheck disable=SC2053 # a pattern, on purpose
		[[ $1 == $p ]] && return 0
	done
	return 1
}

# judge_unit NAME RC: count a unit binary's result from its log
judge_unit() {
	local name=$1 rc=$2 ok=1 t
	[ "$rc" -eq 0 ] || ok=0
	# cmocka lists each skipped test once as it runs and once at the end
	while read -r t; do
		echo "--- $name:$t: SKIP"
		judge "$name:$t" "" || ok=0
	done < <(sed -n 's/^\[  SKIPPED \] \([A-Za-z_][A-Za-z0-9_]*\)$/\1/p' \
		"$notes/$name.log" | sort -u)
	if [ "$ok" -eq 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); failed+=("$name")
	fi
}

# judge_script NAME RC: count a script's result, its skips from its notes
judge_script() {
	local name=$1 rc=$2 ok=1 msg
	case $rc in
	0|77)
		while IFS= read -r msg; do
			if [ "$rc" -eq 77 ]; then
				echo "--- $name: SKIP ($msg)"
			else
				echo "--- $name: part skipped ($msg)"
			fi
			judge "$name" "$msg" || ok=0
		done <"$notes/$name.skips"
		# a 77 without a note: skipped by something other than skip()
		if [ "$rc" -eq 77 ] && [ ! -s "$notes/$name.skips" ]; then
			echo "--- $name: SKIP"
			judge "$name" "" || ok=0
		fi
		[ "$rc" -eq 0 ] && [ "$ok" -eq 1 ] && pass=$((pass + 1))
		[ "$ok" -eq 1 ] || { fail=$((fail + 1)); failed+=("$name"); }
		;;
	124|137) fail=$((fail + 1)); failed+=("$name")
		echo "--- $name: FAIL (no end after $limit s: killed)" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "--- $name: FAIL ($rc)" ;;
	esac
}

# The queue: "unit PATH" or "script PATH", exclusive scripts apart
queue=() alone=()
for bin in "$@"; do
	queue+=("unit $bin")
done
for t in tests/t/t[0-9]*.sh; do
	[ -e "$t" ] || continue
	chosen "$(basename "$t" .sh)" || continue
	if [ -n "$(exclusive "$t")" ]; then
		alone+=("$t")
	else
		queue+=("script $t")
	fi
done

# start KIND PATH: run one test in the background, its output into its log
declare -A running=() started=()
start() {
	local kind=$1 path=$2 name pid
	if [ "$kind" = unit ]; then
		name=$(basename "$path")
		bounded "$path" >"$notes/$name.log" 2>&1 &
	else
		name=$(basename "$path" .sh)
		: >"$notes/$name.skips"
		DCPROF_SKIPS=$notes/$name.skips bounded bash "$path" \
			>"$notes/$name.log" 2>&1 </dev/null &
	fi
	pid=$!
	running[$pid]="$kind $name"
	started[$pid]=$(us)
}

# reap: wait for one running test to end, print its output and judge it
reap() {
	local pid rc kind name took
	wait -n -p pid
	rc=$?
	[ -n "${running[$pid]:-}" ] || return 0
	read -r kind name <<<"${running[$pid]}"
	took=$(($(us) - started[$pid]))
	unset "running[$pid]" "started[$pid]"
	echo "=== $name"
	cat "$notes/$name.log"
	echo "--- $name: $((took / 1000000)) s"
	echo "$took $name" >>"$notes/times"
	if [ "$kind" = unit ]; then
		judge_unit "$name" "$rc"
	else
		judge_script "$name" "$rc"
	fi
}

# The longest first, as a table of an earlier run says (DCPROF_TEST_TIMES,
# else this build's): the pool then ends with short tests, all its jobs
# busy to the end. A test the table does not know counts as 10 s.
times_file=${DCPROF_TEST_TIMES:-${BUILD:-build}/test-times}
if [ -r "$times_file" ] && [ ${#queue[@]} -gt 1 ]; then
	mapfile -t queue < <(
		for item in "${queue[@]}"; do
			name=$(basename "${item#* }" .sh)
			t=$(awk -v n="$name" '$3 == n { print $1; exit }' "$times_file")
			echo "${t:-10} $item"
		done | sort -s -k1,1 -rn | cut -d' ' -f2-)
fi

for item in ${queue[@]+"${queue[@]}"}; do
	while [ ${#running[@]} -ge "$jobs" ]; do
		reap
	done
	# shellcheck disable=SC2086 # "KIND PATH"
	start $item
done
while [ ${#running[@]} -gt 0 ]; do
	reap
done

for t in ${alone[@]+"${alone[@]}"}; do
	name=$(basename "$t" .sh)
	echo "=== $name (alone: $(exclusive "$t"))"
	: >"$notes/$name.skips"
	start_us=$(us)
	# through a process substitution, not a pipe: a process the script
	# leaves behind with its output open must not hold the suite up
	DCPROF_SKIPS=$notes/$name.skips bounded bash "$t" > >(tee "$notes/$name.log") 2>&1 </dev/null
	rc=$?
	took=$(($(us) - start_us))
	echo "--- $name: $((took / 1000000)) s"
	echo "$took $name" >>"$notes/times"
	judge_script "$name" "$rc"
done

# where the suite's time goes, slowest first; kept in $BUILD/test-times
# (CI prints it) for comparing runs
{
	awk -v wall=$((SECONDS - suite_start)) -v jobs="$jobs" '{ s += $1 }
		END { printf "time per test, slowest first (total %.1f s; %d s from start to end, %d at a time):\n", s / 1e6, wall, jobs }' \
		"$notes/times"
	sort -rn "$notes/times" | awk '{ printf "%7.1f s  %s\n", $1 / 1e6, $2 }'
} >"$notes/table"
head -21 "$notes/table"
if [ -n "${BUILD:-}" ] && [ -d "$BUILD" ] && cp "$notes/table" "$BUILD/test-times"; then
	echo "(every test's time: $BUILD/test-times)"
fi
# why each failed, last: a CI log may be read from its end only
for name in ${failed[@]+"${failed[@]}"}; do
	echo "--- why $name failed (its last lines):"
	tail -n 4 "$notes/$name.log" 2>/dev/null | cut -c1-300 | sed 's/^/    /'
done
[ ${#skipped[@]} -gt 0 ] && echo "skipped: ${skipped[*]}"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
[ -n "${TESTS:-}" ] && echo "only the scripts matching TESTS=$TESTS"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
