#!/bin/bash
# dcprof flamegraph on a known 50/30/20 split recorded with call chains: the
# HTML page is one self-contained file (nothing fetched from the network)
# that carries the tree whose totals are the report's; the SVG is well-formed
# XML naming the three functions; output is replaced whole or not at all;
# usage errors exit 2 and other errors are one line and exit 1. Then the
# page in headless chromium: frames drawn match the tree, a real click on
# work_fifty zooms into it, a search for work_thirty finds the report's
# share, the icicle toggle flips, the canvas's own pixels show each hot
# frame filled and as wide as its share, and a screenshot is kept in
# $BUILD/test-output/flamegraph.png.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/browser/setup.sh"
need gcc python3
need_perf_events

SPLIT=$(build_workload split)
F=$TMP/split.data

expect_exit 0 "$DCPROF" record -g -o "$F" -- "$SPLIT" 3
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/report.json"

expect_exit 0 "$DCPROF" flamegraph -i "$F" -o "$TMP/fg.html"
[ -s "$TMP/err" ] && die "flamegraph wrote to stderr: $(head -c 500 "$TMP/err")"
expect_exit 0 "$DCPROF" flamegraph -i "$F" --format svg -o "$TMP/fg.svg"
# an .svg name without --format is the picture too, --format html wins
expect_exit 0 "$DCPROF" flamegraph -i "$F" -o "$TMP/named.SVG"
head -c 300 "$TMP/named.SVG" | grep -q '<svg' ||
	die "-o named.SVG wrote no SVG: $(head -c 100 "$TMP/named.SVG")"
expect_exit 0 "$DCPROF" flamegraph -i "$F" --format html -o "$TMP/page.svg"
grep -q 'id="fg-data"' "$TMP/page.svg" || die "--format html -o page.svg wrote no page"

# self-contained: no external script, style, image or fetch of any kind
if grep -Eio '<script[^>]*src=|<link[^>]*href=|<img[^>]*src=|https?://|fetch\(|XMLHttpRequest|import\(' \
	"$TMP/fg.html" >"$TMP/net.txt"; then
	die "the page refers to the network: $(head -5 "$TMP/net.txt")"
fi

python3 - "$TMP/fg.html" "$TMP/report.json" <<'PY' || die "the page's data is wrong"
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
report = json.load(open(sys.argv[2]))
m = re.search(r'<script type="application/json" id="fg-data">(.*?)</script>', html, re.S)
assert m, "no data block"
d = json.loads(m.group(1))
K, nodes, S = d["stride"], d["nodes"], d["strings"]
n = len(nodes) // K
assert n > 3, "only %d nodes" % n
assert S[nodes[0]] == "all" and nodes[3] == 0, "node 0 is not the root"
assert d["total"] == report["total"] == nodes[4], \
    "totals: page %d, root %d, report %d" % (d["total"], nodes[4], report["total"])
# depth first: each node's children add up to at most its own samples
kids = {}
stack = []
for i in range(n):
    depth = nodes[i * K + 3]
    del stack[depth:]
    if depth:
        assert len(stack) == depth, "node %d skips a level" % i
        kids[stack[-1]] = kids.get(stack[-1], 0) + nodes[i * K + 4]
    stack.append(i)
for p, v in kids.items():
    assert v <= nodes[p * K + 4], "children of %s exceed it" % S[nodes[p * K]]
names = {S[nodes[i * K]] for i in range(n)}
for f in ("work_fifty", "work_thirty", "work_twenty", "main"):
    assert f in names, "%s is not in the tree" % f
PY

python3 - "$TMP/fg.svg" <<'PY' || die "the SVG is wrong"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
titles = [t.text for t in root.iter(ns + "title")]
for f in ("work_fifty", "work_thirty", "work_twenty"):
    assert any(t.startswith(f + " ") for t in titles), "no frame titled %s" % f
texts = [t.text or "" for t in root.iter(ns + "text")]
assert "work_fifty" in texts, "work_fifty has no readable label"
PY

# output: an existing file is replaced whole, a symlink is replaced and not
# followed, and no temporary file stays behind
echo old >"$TMP/target"
ln -s "$TMP/target" "$TMP/link.html"
expect_exit 0 "$DCPROF" flamegraph -i "$F" -o "$TMP/link.html"
[ "$(cat "$TMP/target")" = old ] || die "the output followed a symlink"
[ -L "$TMP/link.html" ] && die "the symlink was not replaced"
grep -q work_fifty "$TMP/link.html" || die "the replaced output has no data"
ls -a "$TMP" | grep -q '\.tmp$' && die "a temporary file was left: $(ls -a "$TMP")"

# errors: one line, exit 1, the old output left alone
cp "$TMP/fg.html" "$TMP/keep.html"
expect_exit 1 "$DCPROF" flamegraph -i "$TMP/no-such.data" -o "$TMP/fg.html"
one_line_error
cmp -s "$TMP/fg.html" "$TMP/keep.html" || die "a failed run changed the output"
expect_exit 1 "$DCPROF" flamegraph -i "$F" -o "$TMP/no-such-dir/fg.html"
one_line_error
# usage errors exit 2
expect_exit 2 "$DCPROF" flamegraph -i "$F" --format pdf
expect_exit 2 "$DCPROF" flamegraph --diff "$F"
expect_exit 2 "$DCPROF" flamegraph -i "$F" --diff "$F" "$F"
expect_exit 2 "$DCPROF" flamegraph -i "$F" stray
expect_exit 2 "$DCPROF" flamegraph --bogus
expect_exit 0 "$DCPROF" flamegraph --help
grep -q -- '--diff BEFORE AFTER' "$TMP/out" || die "--help does not show --diff"

# ---- the page in a real browser
need_browser
SHOT=$BUILD/test-output/flamegraph.png
mkdir -p "$BUILD/test-output" || die "cannot create '$BUILD/test-output'"
flame check "$TMP/fg.html" --click work_fifty --search work_thirty \
	--pixels work_fifty,work_thirty,work_twenty \
	--screenshot "$SHOT" >"$TMP/browser.json" ||
	die "the browser run failed: $(tail -c 1000 "$TMP/browser.json")"
python3 - "$TMP/browser.json" "$TMP/report.json" <<'PY' || die "the page misbehaves in the browser"
import json, sys
b = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
print("browser:", json.dumps({k: b[k] for k in ("framesDrawn", "expectedFrames",
      "zoomRoot", "searchPercent", "icicle", "firstPaintMs")}))
assert not b["requests"], "the page made requests: %s" % b["requests"][:5]
assert not b["errors"], "script errors: %s" % b["errors"][:5]
assert b["nodes"] == b["dataNodes"], "the page has %d nodes, the file %d" % (b["nodes"], b["dataNodes"])
assert b["framesDrawn"] > 0, "nothing drawn"
assert b["framesDrawn"] == b["expectedFrames"], \
    "drew %d frames, the tree has %d wide enough" % (b["framesDrawn"], b["expectedFrames"])
assert "work_fifty" in b["tooltip"] and "samples" in b["tooltip"] and "%" in b["tooltip"], \
    "hover tooltip: %r" % b["tooltip"]
assert b["zoomRoot"] == "work_fifty", "the click zoomed into %r" % b["zoomRoot"]
assert abs(b["zoomedWidth"] - b["canvasWidth"]) < 2, \
    "the zoomed frame is %.1f px of %d" % (b["zoomedWidth"], b["canvasWidth"])
assert b["framesDrawnZoomed"] == b["expectedZoomed"], \
    "zoomed, drew %d frames; its ancestors and wide enough subtree are %d" % (
        b["framesDrawnZoomed"], b["expectedZoomed"])
assert b["zoomRootAfterReset"] == "all", "reset left the zoom at %r" % b["zoomRootAfterReset"]
want = {r["symbol"]: r["percent"] for r in report["rows"]}["work_thirty"]
assert abs(b["searchPercent"] - want) <= 3, \
    "search found %.2f%%, the report has %.2f%%" % (b["searchPercent"], want)
assert ("%.2f%%" % b["searchPercent"]) in b["searchLabel"], "the label says %r" % b["searchLabel"]
assert b["icicle"] is True, "the toggle did not flip to the icicle"
# the canvas's pixels: each hot frame is filled with a colour that is not
# the background, as wide as its share of the canvas (within 2 points)
shares = {r["symbol"]: r["percent"] for r in report["rows"]}
for name, p in b["pixels"].items():
    print("pixels: %s fill %s, %.1f px of %.0f (%.2f%%; report %.2f%%)" % (
        name, p["fill"], p["width"], p["canvasWidth"],
        100 * p["width"] / p["canvasWidth"], shares[name]))
    assert p["fill"] != p["background"], "%s is drawn in the background colour" % name
    assert abs(100 * p["width"] / p["canvasWidth"] - shares[name]) <= 2, \
        "%s is %.1f px wide, %.2f%% of the canvas, the report has %.2f%%" % (
            name, p["width"], 100 * p["width"] / p["canvasWidth"], shares[name])
PY
[ -s "$SHOT" ] || die "no screenshot at '$SHOT'"
echo "screenshot: $SHOT"

pass
