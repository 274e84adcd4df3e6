#!/bin/bash
# Runs every libFuzzer target built into $1 (build-fuzz/fuzz) for
# FUZZ_SECONDS each (default 60): first over the files of
# tests/fuzz/regressions/<target>/ (inputs that once crashed), then fuzzing
# from a scratch copy of tests/fuzz/corpus/<target>/. Any crash, leak or
# sanitizer report fails; the crashing input is kept in the scratch
# directory and its path printed.
set -u
cd "$(dirname "$0")/../.."
bindir=${1:?usage: tests/fuzz/run.sh BINDIR}
seconds=${FUZZ_SECONDS:-60}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/dcprof-fuzz.XXXXXX")
fail=0

for bin in "$bindir"/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	reg=tests/fuzz/regressions/$name
	if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
		echo "=== $name: $(ls -A "$reg" | wc -l) regression inputs"
		if ! "$bin" -runs=1 -timeout=10 -rss_limit_mb=2048 "$reg"/* \
			>"$scratch/$name.reg.log" 2>&1; then
			tail -40 "$scratch/$name.reg.log"
			echo "--- $name: a regression input fails"
			fail=1
		fi
	elif [ -n "${CI:-}" ]; then
		# every target has edge cases to replay: a missing directory
		# means the replay silently stopped
		echo "--- $name: no inputs in $reg to replay under CI"
		fail=1
	else
		echo "--- $name: no regression inputs in $reg (skipped)"
	fi
	mkdir -p "$scratch/$name/corpus" "$scratch/$name/artifacts"
	cp tests/fuzz/corpus/"$name"/* "$scratch/$name/corpus/" 2>/dev/null
	echo "=== $name: ${seconds}s"
	if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len=262144 -print_final_stats=1 \
		-artifact_prefix="$scratch/$name/artifacts/" \
		"$scratch/$name/corpus" >"$scratch/$name.log" 2>&1; then
		tail -60 "$scratch/$name.log"
		echo "--- $name: FAIL, inputs in $scratch/$name/artifacts/:"
		ls "$scratch/$name/artifacts/"
		fail=1
	else
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|cov:' \
			"$scratch/$name.log" | tail -3
		echo "--- $name: ok"
	fi
done
[ "$fail" -eq 0 ] && rm -rf "$scratch"
exit "$fail"
