#!/bin/bash
# dcprof diff OLD NEW (issue 19, item 7) on two recordings of the moved
# workload whose hot function moved: hot_left 80% -> 20%, hot_right
# 20% -> 80%. JSON: both functions with their samples and shares in each
# recording (within 8 points of the truth), delta the new share minus the
# old, rows sorted by absolute delta, samples adding up to each total,
# "left_out" what --limit left out; text: the two at the top, with signed
# deltas; usage errors exit 2; `diff --help` lists exactly the options of
# its getopt table (src/cmd/diff.c).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/t08-help.inc"
. "$(dirname "$0")/t08-optable.inc"
need gcc python3
need_perf_events

W=$(build_workload moved)
A=$TMP/old.data
B=$TMP/new.data
expect_exit 0 "$DCPROF" record -o "$A" -- "$W" 1.5 left
expect_exit 0 "$DCPROF" record -o "$B" -- "$W" 1.5 right

expect_exit 0 "$DCPROF" diff --format json "$A" "$B"
cp "$TMP/out" "$TMP/all.json"
python3 - "$TMP/all.json" <<'PY' || die "diff's JSON is wrong: $(head -c 600 "$TMP/all.json")"
import json, sys
d = json.load(open(sys.argv[1]))
fns = d["functions"]
for side in ("old", "new"):
    assert sum(f[side + "_samples"] for f in fns) == d[side]["total"] > 500
    for f in fns:
        want = 100.0 * f[side + "_samples"] / d[side]["total"]
        assert abs(f[side + "_percent"] - want) < 0.001, f
for f in fns:
    assert abs(f["delta"] - (f["new_percent"] - f["old_percent"])) < 0.001, f
deltas = [abs(f["delta"]) for f in fns]
assert deltas == sorted(deltas, reverse=True), "not sorted by |delta|"
top = {f["symbol"]: f for f in fns[:2]}
assert set(top) == {"hot_left", "hot_right"}, list(top)
l, r = top["hot_left"], top["hot_right"]
assert abs(l["old_percent"] - 80) <= 8 and abs(l["new_percent"] - 20) <= 8, l
assert abs(r["old_percent"] - 20) <= 8 and abs(r["new_percent"] - 80) <= 8, r
assert l["delta"] < -40 < 40 < r["delta"], (l["delta"], r["delta"])
assert d["left_out"] == 0
print("diff: hot_left %+.1f, hot_right %+.1f points, %d functions"
      % (l["delta"], r["delta"], len(fns)))
PY

expect_exit 0 "$DCPROF" diff --format json --limit 1 "$A" "$B"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); n = len(json.load(open(sys.argv[2]))["functions"])
assert len(d["functions"]) == 1 and d["left_out"] == n - 1, d["left_out"]' \
	"$TMP/out" "$TMP/all.json" || die "diff --limit 1: left_out is wrong"

# text: the two at the top, signed
expect_exit 0 "$DCPROF" diff "$A" "$B"
grep -v '^#' "$TMP/out" | sed -n '2,3p' >"$TMP/top"
grep -Eq '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +-[0-9]{2}\.[0-9]{2}  \[\.\] hot_left \(' "$TMP/top" &&
	grep -Eq '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +\+[0-9]{2}\.[0-9]{2}  \[\.\] hot_right \(' "$TMP/top" ||
	die "diff's text does not start with the moved functions: $(cat "$TMP/out" | head -6)"

expect_exit 2 "$DCPROF" diff "$A"
expect_exit 2 "$DCPROF" diff --limit x "$A" "$B"
expect_exit 1 "$DCPROF" diff "$A" "$TMP/missing.data"

options_of_source "$TOP/src/cmd/diff.c" >"$TMP/table"
help_options diff >"$TMP/help"
diff "$TMP/table" "$TMP/help" >"$TMP/d" ||
	die "diff --help and its option table differ (< table, > help): $(tr '\n' ' ' <"$TMP/d")"
[ -s "$TMP/table" ] || die "no options read from src/cmd/diff.c"
pass
