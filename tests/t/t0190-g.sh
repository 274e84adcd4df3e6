#!/bin/bash
# -g: frame-pointer call chains on the split workload (built with
# -fno-omit-frame-pointer): the recording succeeds, the flat report (leaf
# frames) keeps the 50/30/20 split within 3 points, and the file stays
# small (< 1 MB).
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

F=$TMP/g.data
# the recording t0600, t0605 and t0610 read too (build_workload's default
# flags keep the frame pointer)
record_once "$F" split -g -- 3 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/report.json"
[ "$(json_get "$TMP/report.json" 'd["meta"]["callchain"]')" = true ] ||
	die "meta.callchain is not true"
# against the CPU time each function really took (tests/workloads/split.c)
report_counts "$TMP/report.json" | check_split_shares "$TMP/truth" 2000 3 ||
	die "shares are off with -g"
size=$(stat -c %s "$F")
echo "profile with -g: $size bytes"
[ "$size" -lt 1048576 ] || die "the -g profile is $size bytes"

pass
