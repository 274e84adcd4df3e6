#!/bin/bash
# exclusive: wants shares within 3 points of the program's clock, which the timer's skew under load changes
# Functions are told apart by identity, not name: two `static void
# work(void)`, one in same_name.c and one in same_name_b.c of one binary,
# the first doing twice the work of the other. The report has two rows for
# them, their shares of the two within 3 points of the CPU time each took
# by the program's own clock (about 2:1), each named with its source file
# ("work (same_name.c)", "work (same_name_b.c)") in text and JSON, and so
# are they in the folded stacks, the flame graph and annotate, where
# `annotate work` shows both under their labels and a label picks one.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload same_name "$TOP/tests/workloads/same_name_b.c")
F=$TMP/same.data
A='work (same_name.c)'
B='work (same_name_b.c)'

# the perf ring, as the other backends are the business of their tests
BACKEND=()
"$DCPROF" record --help | grep -q -- --backend && BACKEND=(--backend perf)

expect_exit 0 "$DCPROF" record "${BACKEND[@]}" -o "$F" -- "$W" 2 "$TMP/truth"

# text: two rows, one per function
expect_exit 0 "$DCPROF" report -i "$F" --sort symbol
grep -Fq "[.] $A" "$TMP/out" && grep -Fq "[.] $B" "$TMP/out" ||
	die "the text report does not tell the two work apart: $(sed -n '7,10p' "$TMP/out")"

# JSON: the shares of the two, within 3 points of the program's clock
expect_exit 0 "$DCPROF" report -i "$F" --sort symbol --format json
python3 - "$TMP/out" "$A" "$B" "$TMP/truth" <<'PY' || die "the JSON report's shares are wrong"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
pct = {r["symbol"]: r["percent"] for r in rows}
a, b = pct.get(sys.argv[2]), pct.get(sys.argv[3])
assert a is not None and b is not None, "rows %s" % sorted(pct)[:8]
assert "work" not in pct, "a row named plain work: %s" % pct["work"]
assert a + b > 90, "the two work have only %.2f%%" % (a + b)
ta, tb = map(float, open(sys.argv[4]).read().split())
want, got = 100 * ta / (ta + tb), 100 * a / (a + b)
print("work (same_name.c): %.2f%% of the two, the program's clock %.2f%%" % (got, want))
assert abs(got - want) < 3, "share %.2f%%, the program's clock says %.2f%%" % (got, want)
PY

# folded stacks: both, each with its samples
expect_exit 0 "$DCPROF" export --format folded -i "$F"
grep -Fq ";$A " "$TMP/out" && grep -Fq ";$B " "$TMP/out" ||
	die "the folded stacks do not tell the two work apart: $(grep -F work "$TMP/out" | head -3)"

# the flame graph, page and picture
expect_exit 0 "$DCPROF" flamegraph -i "$F" -o "$TMP/fg.html"
grep -Fq "$A" "$TMP/fg.html" && grep -Fq "$B" "$TMP/fg.html" ||
	die "the flame graph does not tell the two work apart"
expect_exit 0 "$DCPROF" flamegraph --format svg -i "$F" -o "$TMP/fg.svg"
grep -Fq "$A" "$TMP/fg.svg" && grep -Fq "$B" "$TMP/fg.svg" ||
	die "the SVG flame graph does not tell the two work apart"

# annotate: `work` gives both, each under its own label; a label gives one
expect_exit 0 "$DCPROF" annotate -i "$F" work
[ "$(grep -c '^# work' "$TMP/out")" -eq 2 ] &&
	grep -Fq "# $A in " "$TMP/out" && grep -Fq "# $B in " "$TMP/out" ||
	die "annotate does not label the two work apart: $(grep '^# work' "$TMP/out")"
expect_exit 0 "$DCPROF" annotate -i "$F" "$A"
[ "$(grep -c '^# work' "$TMP/out")" -eq 1 ] && grep -Fq "# $A in " "$TMP/out" ||
	die "annotate '$A' does not pick that function alone: $(grep '^# work' "$TMP/out")"
pass
