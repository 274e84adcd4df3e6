#!/bin/bash
# The flame graph page of a profile recorded with --off-cpu, in headless
# chromium: the rounds of t0198's program (4 ms burning in f1_burn, 4 ms
# asleep in f2_sleep, ~2 ms waiting for a pipe in f3_wait).
# - the file carries each frame's samples and ns off the CPU once (stride
#   6), not a tree per value; --value chooses the first view;
# - the value switch is there and real clicks on it switch the page: in the
#   off-CPU view f2_sleep and f3_wait are as wide on the canvas as the
#   folded export has them (within 5%) and as the program's clock timed
#   them (2:1 on an idle machine; within 0.3), in the off-CPU colours
#   (blue-violet: red equals green, blue well above), tooltips and the
#   total in ms; in the wall view they stay
#   off-CPU coloured and f1_burn keeps its on-CPU colour; in the CPU view
#   f1_burn is the widest of the three, in samples; in every view the
#   frames drawn are the file's tree's frames wide enough at that value;
# - a CPU-only profile of the same program has no switch and no off-CPU
#   data; a diff of two off-CPU profiles has none either.
# Screenshots of the three views: $BUILD/test-output/flamegraph-offcpu-*.png
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/browser/setup.sh"
need gcc python3
need_perf_events
need_root

W=$(build_workload off_cpu)
F=$TMP/off.data
C=$TMP/cpu.data

expect_exit 0 "$DCPROF" record --off-cpu -o "$F" -- "$W" rounds 3 "$TMP/main" "$TMP/times"
expect_exit 0 "$DCPROF" flamegraph -i "$F" --value off-cpu -o "$TMP/off.html"
[ -s "$TMP/err" ] && die "flamegraph wrote to stderr: $(head -c 500 "$TMP/err")"
expect_exit 0 "$DCPROF" flamegraph -i "$F" --value wall -o "$TMP/wall.html"
expect_exit 0 "$DCPROF" record -g -o "$C" -- "$W" rounds 1 "$TMP/main-cpu"
expect_exit 0 "$DCPROF" flamegraph -i "$C" -o "$TMP/cpu.html"
expect_exit 0 "$DCPROF" flamegraph --diff "$F" "$F" -o "$TMP/diff.html"
expect_exit 0 "$DCPROF" flamegraph -i "$F" --format svg -o "$TMP/off.svg"
expect_exit 0 "$DCPROF" export --format folded --value off-cpu -i "$F"
cp "$TMP/out" "$TMP/off.folded"
grep -q f1_burn "$TMP/off.svg" || die "the SVG of the off-CPU profile has no f1_burn"
# the off-CPU picture's tooltips give time, not a count of "samples"
# that are nanoseconds
expect_exit 0 "$DCPROF" flamegraph -i "$F" --value off-cpu -o "$TMP/offv.svg"
grep -q '<title>all ([0-9.]* ms, 100.00%)</title>' "$TMP/offv.svg" ||
	die "the off-CPU SVG's tooltips are not in ms: $(grep -o '<title>all [^<]*' "$TMP/offv.svg")"
grep -q '<title>all ([0-9]* samples, 100.00%)</title>' "$TMP/off.svg" ||
	die "the CPU SVG's tooltips are not in samples: $(grep -o '<title>all [^<]*' "$TMP/off.svg")"

python3 - "$TMP" <<'PY' || die "the pages' data is wrong"
import json, os, re, sys
tmp = sys.argv[1]

def data(name):
    html = open("%s/%s.html" % (tmp, name), encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="fg-data">(.*?)</script>', html, re.S)
    assert m, "%s: no data block" % name
    return json.loads(m.group(1)), len(html)

off, off_size = data("off")
wall, wall_size = data("wall")
cpu, cpu_size = data("cpu")
diff, _ = data("diff")
K, v = off["stride"], off["nodes"]
n = len(v) // K
assert K == 6, "stride %d: samples and off-CPU ns per frame, once" % K
assert off["offCpu"]["value"] == "off-cpu" and wall["offCpu"]["value"] == "wall", \
    "the first views are %s and %s" % (off["offCpu"]["value"], wall["offCpu"]["value"])
# one tree whatever is shown first: the pages differ in the word only
assert wall["nodes"] == v, "--value wall wrote another tree"
assert abs(wall_size - off_size) <= 4, "pages of %d and %d bytes" % (off_size, wall_size)
assert off["total"] == v[4] and off["offCpu"]["total"] == v[5], "the root is not the totals"
assert off["offCpu"]["sampleNs"] > 0
# each node's values add up over its children, for both values
kids, stack = {}, []
for i in range(n):
    d = v[i * K + 3]
    del stack[d:]
    if d:
        k = kids.setdefault(stack[-1], [0, 0])
        k[0] += v[i * K + 4]
        k[1] += v[i * K + 5]
    stack.append(i)
for p, (s, o) in kids.items():
    assert s <= v[p * K + 4] and o <= v[p * K + 5], "children of node %d exceed it" % p
assert cpu["stride"] == 5 and "offCpu" not in cpu, "the CPU-only page has off-CPU data"
assert "offCpu" not in diff and diff["stride"] == 6, "the diff has off-CPU data"
# what the second value costs: the text of the off-CPU column
column = sum(len(str(v[i * K + 5])) + 1 for i in range(n))
print("pages: CPU-only (1 s) %d bytes, %d frames; off-CPU (3 s) %d bytes, %d frames, "
      "of which the off-CPU ns column %d bytes (%.1f%%)" % (
          cpu_size, len(cpu["nodes"]) // 5, off_size, n, column, 100 * column / off_size))
PY

# ---- the pages in a real browser
need_browser
SHOT=$BUILD/test-output/flamegraph-offcpu
mkdir -p "$BUILD/test-output" || die "cannot create '$BUILD/test-output'"
flame values "$TMP/off.html" --frame f1_burn --frame f2_sleep --frame f3_wait \
	--screenshot "$SHOT" >"$TMP/off.json" ||
	die "the browser run failed: $(tail -c 1000 "$TMP/off.json")"
flame values "$TMP/cpu.html" --frame f1_burn >"$TMP/cpu.json" ||
	die "the browser run failed: $(tail -c 1000 "$TMP/cpu.json")"
python3 - "$TMP/off.json" "$TMP/cpu.json" "$TMP/off.folded" "$TMP/times" <<'PY' || die "the off-CPU page misbehaves in the browser"
import json, re, sys
b = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
folded = {"f2_sleep": 0, "f3_wait": 0}
for line in open(sys.argv[3]):
    stack, n = line.rsplit(" ", 1)
    for name in folded:
        folded[name] += int(n) if ";%s;" % name in stack else 0
in_f2, in_f3 = map(int, open(sys.argv[4]).read().split())
for page in (b, c):
    assert not page["requests"], "the page made requests: %s" % page["requests"][:5]
    assert not page["errors"], "script errors: %s" % page["errors"][:5]
assert b["switchShown"], "the off-CPU page shows no value switch"
assert b["values"] == ["cpu", "off-cpu", "wall"], b["values"]
assert b["initial"] == "off-cpu", "--value off-cpu: the page shows %s first" % b["initial"]
assert "off-CPU" in b["initialTitle"], "the title says %r" % b["initialTitle"]

def off_scheme(rgb):
    """blue-violet: red equals green, blue well above them"""
    r, g, bl = rgb
    return r == g and bl >= r + 60

def frame(view, name):
    f = b["views"][view]["frames"][name]
    assert f["drawn"], "%s view: %s is not drawn" % (view, name)
    p = f["pixels"]
    # the canvas agrees with the page's own value, within 1 point
    assert abs(100 * p["width"] / p["canvasWidth"] - f["info"]["percent"]) <= 1, \
        "%s view: %s is %.1f px of %.0f, its share %.2f%%" % (
            view, name, p["width"], p["canvasWidth"], f["info"]["percent"])
    return f

# off-CPU: the sleep and the pipe wait, 2:1 on the canvas, off-CPU coloured
f2, f3 = frame("off-cpu", "f2_sleep"), frame("off-cpu", "f3_wait")
ratio = f2["pixels"]["width"] / f3["pixels"]["width"]
recorded = folded["f2_sleep"] / folded["f3_wait"]
timed = in_f2 / in_f3
print("off-CPU view: f2_sleep %.0f px, f3_wait %.0f px (%.2f; the folded export %.2f, "
      "the program's clock %.2f); fills %s, %s" % (
          f2["pixels"]["width"], f3["pixels"]["width"], ratio, recorded, timed,
          f2["pixels"]["fill"], f3["pixels"]["fill"]))
# the page draws what was recorded (within pixel rounding), and that is
# the time the program spent there: 2:1 on an idle machine, less when
# others' load lengthens the pipe wait (two wake-ups) more than the sleep
assert abs(ratio / recorded - 1) <= 0.05, \
    "off-CPU view: f2_sleep:f3_wait is %.2f wide, the folded export has %.2f" % (ratio, recorded)
assert abs(ratio - timed) <= 0.3, \
    "off-CPU view: f2_sleep:f3_wait is %.2f wide, the program spent %.2f (within 0.3)" % (ratio, timed)
for f in (f2, f3):
    assert off_scheme(f["pixels"]["fill"]), \
        "off-CPU view: %s is drawn in %s, not the off-CPU colours" % (f["info"]["name"], f["pixels"]["fill"])
assert "off-CPU" in b["views"]["off-cpu"]["legend"], "the legend has no off-CPU colours"

# wall: the waits stay off-CPU coloured, the burn keeps its own colours
w1, w2, w3 = (frame("wall", n) for n in ("f1_burn", "f2_sleep", "f3_wait"))
for f in (w2, w3):
    assert off_scheme(f["pixels"]["fill"]), \
        "wall view: %s is drawn in %s, not the off-CPU colours" % (f["info"]["name"], f["pixels"]["fill"])
assert not off_scheme(w1["pixels"]["fill"]), "wall view: f1_burn is drawn in the off-CPU colours"
assert "mostly off the CPU" in w2["tooltip"], "wall view: f2_sleep's tooltip: %r" % w2["tooltip"]
print("wall view: f1_burn %.1f%% %s, f2_sleep %.1f%%, f3_wait %.1f%%" % (
    w1["info"]["percent"], w1["pixels"]["fill"], w2["info"]["percent"], w3["info"]["percent"]))

# CPU: the burn is the widest, in its own colours
c1 = frame("cpu", "f1_burn")
others = [f["pixels"]["width"] for n, f in b["views"]["cpu"]["frames"].items()
          if n != "f1_burn" and f["drawn"]]
print("CPU view: f1_burn %.0f px (%.1f%%), the others %s" % (
    c1["pixels"]["width"], c1["info"]["percent"], others))
assert all(c1["pixels"]["width"] > 5 * w for w in others), \
    "CPU view: f1_burn is %.0f px, the others %s" % (c1["pixels"]["width"], others)
assert c1["info"]["percent"] >= 80, "CPU view: f1_burn has %.1f%%" % c1["info"]["percent"]
assert not off_scheme(c1["pixels"]["fill"]), "CPU view: f1_burn is in the off-CPU colours"

# every view: its button, its frames, its unit
for view in ("off-cpu", "wall", "cpu"):
    v = b["views"][view]
    assert v["value"] == view and v["pressed"] == view, \
        "clicked %s: the page shows %s, the button pressed is %s" % (view, v["value"], v["pressed"])
    assert v["framesDrawn"] == v["expectedFrames"], \
        "%s view: drew %d frames, the tree has %d wide enough" % (
            view, v["framesDrawn"], v["expectedFrames"])
    unit = "samples" if view == "cpu" else "ms"
    assert re.search(r"[\d,.]+ %s" % unit, v["total"]), "%s view: the total says %r" % (view, v["total"])
    for name, f in v["frames"].items():
        if f["drawn"] and f["tooltip"] is not None:
            assert re.search(r"[\d,.]+ %s, [\d.]+%% of all" % unit, f["tooltip"]), \
                "%s view: %s's tooltip says %r" % (view, name, f["tooltip"])

# a CPU-only profile: no switch
assert not c["switchShown"] and c["values"] == [], "the CPU-only page shows a value switch"
assert c["initial"] == "cpu" and "samples" in c["legend"], c
PY
for v in off-cpu wall cpu; do
	[ -s "$SHOT-$v.png" ] || die "no screenshot at '$SHOT-$v.png'"
done
echo "screenshots: $SHOT-{off-cpu,wall,cpu}.png"

pass
