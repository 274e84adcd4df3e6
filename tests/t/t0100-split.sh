#!/bin/bash
# dcprof record -- COMMAND on a known 50/30/20 split of CPU time: the
# report's shares of the three functions within 3 percentage points of the
# truth the workload measures; the command's exit status (or 128 + signal) becomes dcprof's; a
# command that cannot run is one clear error and leaves the earlier profile
# at that path alone.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

SPLIT=$(build_workload split)
F=$TMP/split.data

expect_exit 0 "$DCPROF" record -o "$F" -- "$SPLIT" 3 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/report.json"
[ "$(json_get "$TMP/report.json" 'd["meta"]["complete"]')" = true ] ||
	die "the profile is not complete"
# Shares of the three functions among their own sum, against the thread
# CPU time each really took (the workload measures it: its 5/3/2 ms slices
# overshoot by up to a clock-read interval, so the truth is near 48/30/22,
# not 50/30/20); 3 points allow for sampling noise (about 3000 samples).
report_counts "$TMP/report.json" | check_split_shares "$TMP/truth" 2000 3 ||
	die "shares are off"

# the command's exit status becomes dcprof's
expect_exit 3 "$DCPROF" record -o "$TMP/exit.data" -- sh -c 'exit 3'
expect_exit 137 "$DCPROF" record -o "$TMP/exit.data" -- sh -c 'kill -KILL $$'
expect_exit 0 "$DCPROF" report -i "$TMP/exit.data"

# a command that does not exist: one error line, non-zero, earlier profile kept
cp "$F" "$TMP/before.data"
"$DCPROF" record -o "$F" -- "$TMP/no-such-command" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -ne 0 ] || die "a missing command exited 0"
[ "$rc" -lt 128 ] || die "a missing command crashed dcprof ($rc)"
one_line_error
grep -q "no-such-command" "$TMP/err" ||
	die "the error does not name the command: $(cat "$TMP/err")"
cmp -s "$F" "$TMP/before.data" ||
	die "a failed recording changed the earlier profile at '$F'"

pass
