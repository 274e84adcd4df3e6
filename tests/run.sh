#!/bin/bash
# Runs every unit test binary given as arguments, then every tests/t/t*.sh
# script (TESTS="t0160* t0620*": only the scripts whose names match one of
# these patterns), and closes with the time each test took, slowest first,
# and one "N passed, N failed, N skipped" line.
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
for bin in "$@"; do
	name=$(basename "$bin")
	start_us=$(us)
	"$bin" 2>&1 | tee "$notes/$name.log"
	rc=${PIPESTATUS[0]}
	echo "$(($(us) - start_us)) $name" >>"$notes/times"
	ok=1
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
done

# the interpreter behind python3, resolved once (test-lib.sh)
DCPROF_TEST_PYTHON3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
export DCPROF_TEST_PYTHON3
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

for t in tests/t/t[0-9]*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	chosen "$name" || continue
	echo "=== $name"
	: >"$notes/$name.skips"
	start=$SECONDS
	start_us=$(us)
	# through a process substitution, not a pipe: a process the script
	# leaves behind with its output open must not hold the suite up
	DCPROF_SKIPS=$notes/$name.skips bash "$t" > >(tee "$notes/$name.log") 2>&1
	rc=$?
	# how long each script takes: CI has to stay within its time
	echo "--- $name: $((SECONDS - start)) s"
	echo "$(($(us) - start_us)) $name" >>"$notes/times"
	ok=1
	case $rc in
	0|77)
		while IFS= read -r msg; do
			if [ "$rc" -eq 77 ]; then
				echo "--- $name: SKIP ($msg)"
				judge "$name" "$msg" || ok=0
			else
				echo "--- $name: part skipped ($msg)"
				judge "$name" "$msg" || ok=0
			fi
		done <"$notes/$name.skips"
		# a 77 without a note: skipped by something other than skip()
		if [ "$rc" -eq 77 ] && [ ! -s "$notes/$name.skips" ]; then
			echo "--- $name: SKIP"
			judge "$name" "" || ok=0
		fi
		[ "$rc" -eq 0 ] && [ "$ok" -eq 1 ] && pass=$((pass + 1))
		[ "$ok" -eq 1 ] || { fail=$((fail + 1)); failed+=("$name"); }
		;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "--- $name: FAIL ($rc)" ;;
	esac
done

# where the suite's time goes, slowest first; kept in $BUILD/test-times
# (CI prints it) for comparing runs
{
	awk '{ s += $1 } END { printf "time per test, slowest first (total %.1f s):\n", s / 1e6 }' \
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
