#!/bin/bash
# exclusive: compares the page's deltas, of all the samples, with the reports' flat shares: the samples outside the two functions, more of them under load, set them apart
# dcprof flamegraph --diff on two recordings of one workload whose split is
# changed on purpose (work_a 50% -> 80%, work_b 50% -> 20%): in the page,
# in headless chromium, work_a is coloured as grown and work_b as shrunk,
# each with the delta of the reports' shares within 3 points, and the
# tooltip (a real hover) carries before, after and delta; the SVG of the
# same diff is well-formed and titles the frames with their change.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/browser/setup.sh"
need gcc python3
need_perf_events

RATIO=$(build_workload ratio)
# the unwind tables of ratio and libc into a cache first: the recordings'
# first samples are walked as the rest, not by frame pointers while the
# tables are built (another stack: the widest frame of a name would hold
# only part of its samples)
mkdir -m 700 "$TMP/cache"
export DCPROF_CACHE_DIR=$TMP/cache
expect_exit 0 "$DCPROF" record -g -o "$TMP/warm.data" -- "$RATIO" 1 1 0.2
expect_exit 0 "$DCPROF" record -g -o "$TMP/before.data" -- "$RATIO" 5 5 2
expect_exit 0 "$DCPROF" record -g -o "$TMP/after.data" -- "$RATIO" 8 2 2
for p in before after; do
	expect_exit 0 "$DCPROF" report -i "$TMP/$p.data" --format json --sort symbol
	cp "$TMP/out" "$TMP/$p.json"
done

expect_exit 0 "$DCPROF" flamegraph --diff "$TMP/before.data" "$TMP/after.data" \
	-o "$TMP/diff.html"
expect_exit 0 "$DCPROF" flamegraph --diff "$TMP/before.data" "$TMP/after.data" \
	--format svg -o "$TMP/diff.svg"

python3 - "$TMP/diff.svg" <<'PY' || die "the diff SVG is wrong"
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
titles = {t.text.split(" ")[0]: t.text for t in root.iter(ns + "title")}
for f, sign in (("work_a", "+"), ("work_b", "-")):
    m = re.search(r"before [0-9.]+%, ([+-][0-9.]+) points", titles.get(f, ""))
    assert m and m.group(1)[0] == sign, "%s: %r (frames: %s)" % (
        f, titles.get(f), sorted(titles)[:40])
PY

need_browser
mkdir -p "$BUILD/test-output" || die "cannot create '$BUILD/test-output'"
flame diff "$TMP/diff.html" --frame work_a --frame work_b \
	--screenshot "$BUILD/test-output/flamegraph-diff.png" >"$TMP/browser.json" ||
	die "the browser run failed: $(tail -c 1000 "$TMP/browser.json")"
python3 - "$TMP/browser.json" "$TMP/before.json" "$TMP/after.json" <<'PY' || die "the diff page is wrong; the stacks of work_a and work_b: $(for p in before after; do echo "$p:"; "$DCPROF" export -i "$TMP/$p.data" --format folded | grep 'work_[ab]' | sort -t' ' -k2 -rn | head -4; done)"
import json, re, sys
b = json.load(open(sys.argv[1]))
share = [{r["symbol"]: r["percent"] for r in json.load(open(p))["rows"]}
         for p in sys.argv[2:4]]
assert not b["requests"], "the page made requests: %s" % b["requests"][:5]
assert not b["errors"], "script errors: %s" % b["errors"][:5]
assert b["framesDrawn"] > 0, "nothing drawn"
for f, change in (("work_a", "grew"), ("work_b", "shrank")):
    info = b["frames"][f]
    want = share[1][f] - share[0][f]
    print("%s: %s %+.2f points (reports: %+.2f), colour %s" %
          (f, info["change"], info["delta"], want, info["colour"]))
    assert info["change"] == change, "%s %s, expected %s" % (f, info["change"], change)
    assert abs(info["delta"] - want) <= 3, \
        "%s: delta %+.2f, the reports' %+.2f" % (f, info["delta"], want)
    r, g, bl = map(int, re.findall(r"\d+", info["colour"]))
    if change == "grew":
        assert r == 255 and g < 120 and bl < 120, "%s is not strong red: %s" % (f, info["colour"])
    else:
        assert bl == 255 and r < 120 and g < 120, "%s is not strong blue: %s" % (f, info["colour"])
    tip = info["tooltip"]
    assert f in tip and "before %.2f%%" % info["before"] in tip and \
        "after %.2f%%" % info["after"] in tip and "%+.2f points" % info["delta"] in tip, \
        "tooltip of %s: %r" % (f, tip)
assert "BEFORE" in b["notes"], "the header does not say what only BEFORE has: %r" % b["notes"]
PY

pass
