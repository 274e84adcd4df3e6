#!/bin/bash
# -g: frame-pointer call chains on the split workload (built with
# -fno-omit-frame-pointer): the recording succeeds, the flat report (leaf
# frames) keeps the 50/30/20 split within 3 points, and the file stays
# small (< 1 MB).
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

SPLIT=$(build_workload split -fno-omit-frame-pointer)
F=$TMP/g.data
expect_exit 0 "$DCPROF" record -g -o "$F" -- "$SPLIT" 3 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/report.json"
[ "$(json_get "$TMP/report.json" 'd["meta"]["callchain"]')" = true ] ||
	die "meta.callchain is not true"
# against the CPU time each function really took (tests/workloads/split.c)
python3 - "$TMP/report.json" "$TMP/truth" <<'PY' || die "shares are off with -g"
import json, sys
d = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read().split()
took = {t[i][:-3]: int(t[i + 1]) for i in range(3, len(t), 2)}
rows = {r["symbol"]: r["samples"] for r in d["rows"]}
want = {s: 100.0 * ns / sum(took.values()) for s, ns in took.items()}
total = sum(rows.get(s, 0) for s in want)
assert total >= 2000, "only %d samples in the three functions" % total
for s, w in want.items():
    share = 100.0 * rows.get(s, 0) / total
    print("%s: %.1f%% (want %.1f%%)" % (s, share, w))
    assert abs(share - w) <= 3, "%s has %.1f%%, want %.1f%% +- 3" % (s, share, w)
PY
size=$(stat -c %s "$F")
echo "profile with -g: $size bytes"
[ "$size" -lt 1048576 ] || die "the -g profile is $size bytes"

pass
