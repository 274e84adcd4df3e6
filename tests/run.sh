#!/bin/bash
# Runs every unit test binary given as arguments, then every tests/t/t*.sh
# script, and closes with one "N passed, N failed, N skipped" line.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
failed=()

for bin in "$@"; do
	name=$(basename "$bin")
	if "$bin"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); failed+=("$name")
	fi
done

for t in tests/t/t[0-9]*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	echo "=== $name"
	bash "$t"
	rc=$?
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)); echo "--- $name: SKIP" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "--- $name: FAIL ($rc)" ;;
	esac
done

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
