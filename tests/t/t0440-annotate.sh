#!/bin/bash
# annotate: the hot loop's instructions (the lines marked HOT LOOP in the
# workload) carry most of leaf_sixty's samples; source lines are
# interleaved in the text form, which has no colours in a pipe.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload sym_chain)
F=$TMP/chain.data

expect_exit 0 "$DCPROF" record -o "$F" -- "$W" 2
expect_exit 0 "$DCPROF" annotate leaf_sixty -i "$F" --format json
cp "$TMP/out" "$TMP/annotate.json"
LINES=$(grep -n "/\* HOT LOOP \*/" "$TOP/tests/workloads/sym_chain.c" | cut -d: -f1 |
	paste -sd,)
python3 - "$TMP/annotate.json" "$LINES" <<'PY' || die "the hot loop is not where the samples are"
import json, sys
d = json.load(open(sys.argv[1]))
hot = {int(x) for x in sys.argv[2].split(",")}
f = d["functions"][0]
assert f["symbol"] == "leaf_sixty", f["symbol"]
total = f["samples"]
assert total >= 500, "only %d samples" % total
assert sum(i["samples"] for i in f["instructions"]) == total, "samples outside instructions"
in_loop = sum(i["samples"] for i in f["instructions"] if i["line"] in hot)
print("%d of %d samples on the hot loop's lines %s" % (in_loop, total, sorted(hot)))
assert in_loop >= 0.7 * total, "only %d of %d in the loop" % (in_loop, total)
top = max(f["instructions"], key=lambda i: i["samples"])
assert top["line"] in hot, "the hottest instruction is on line %d" % top["line"]
assert all(i["text"] for i in f["instructions"])
PY

expect_exit 0 "$DCPROF" annotate leaf_sixty -i "$F"
grep -q "sym_chain.c:[0-9]*:.*HOT LOOP" "$TMP/out" ||
	die "no source line interleaved: $(head -c 2000 "$TMP/out")"
grep -q $'\033' "$TMP/out" && die "colours in a pipe"
grep -qE "^ +[0-9]+\.[0-9]+% +[0-9]+ +[0-9a-f]+:  " "$TMP/out" ||
	die "no instruction line with samples: $(head -c 2000 "$TMP/out")"
expect_exit 1 "$DCPROF" annotate no_such_function -i "$F"
one_line_error

# a binary replaced since recording is refused, not misread
build_workload sym_chain -O2 >/dev/null
expect_exit 1 "$DCPROF" annotate leaf_sixty -i "$F"
one_line_error
grep -q "replaced" "$TMP/err" || die "unclear refusal: $(cat "$TMP/err")"

pass
