#!/bin/bash
# Flame graph bench: a profile with many distinct stacks (aim: 100,000) from
# bench/workloads/stacks.c recorded with call chains at a high rate, then
# the time `dcprof flamegraph` takes to write the HTML and the SVG and
# `dcprof export` pprof and folded stacks (best of RUNS each), and the
# page's load-to-first-paint in headless chromium (median of RUNS fresh
# loads; performance.now() at the first draw, counted from navigation
# start, and at the paint after it). Prints markdown tables.
# Environment: SECONDS_REC (8), FREQ (20000), THREADS (2), DEPTH (5), RUNS (5),
# BENCH_QUICK=1 (a recording of 1 s, each output once),
# BENCH_KEEP=1 (keep the temporary directory), BUILD=build,
# DCPROF=$BUILD/dcprof, CC=cc, CHROMIUM=/usr/bin/chromium.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECONDS_REC=${SECONDS_REC:-$(by_mode 8 1)}
FREQ=${FREQ:-20000}
THREADS=${THREADS:-2}
DEPTH=${DEPTH:-5}
RUNS=${RUNS:-$(by_mode 5 1)}

need_dcprof
bench_init
compile stacks -O1 -g -fno-omit-frame-pointer -Wl,--build-id \
	"$TOP/bench/workloads/stacks.c" -lpthread
"$DCPROF" record -g -F "$FREQ" -o "$TMP/stacks.data" -- \
	"$TMP/stacks" "$SECONDS_REC" "$THREADS" "$DEPTH" >/dev/null 2>"$TMP/rec.err" ||
	die "recording failed: $(tail -3 "$TMP/rec.err")"

ms_of() { # best wall time in whole ms of RUNS runs of a command
	local ms
	ms=$(best_ms "$RUNS" "$@") || die "'$*' failed"
	printf '%.0f\n' "$ms"
}

html_ms=$(ms_of "$DCPROF" flamegraph -i "$TMP/stacks.data" -o "$TMP/fg.html") || exit 1
svg_ms=$(ms_of "$DCPROF" flamegraph -i "$TMP/stacks.data" --format svg -o "$TMP/fg.svg") || exit 1
pprof_ms=$(ms_of "$DCPROF" export -i "$TMP/stacks.data" --format pprof -o "$TMP/out.pb.gz") || exit 1
folded_ms=$(ms_of "$DCPROF" export -i "$TMP/stacks.data" --format folded -o "$TMP/out.folded") || exit 1

# Distinct stacks: the rows of the profile as (comm, stack) with the
# process name as root, which is what the tree merges; its leaves and nodes.
read -r stacks nodes leaves samples < <(python3 - "$TMP/fg.html" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="fg-data">(.*?)</script>', html, re.S).group(1))
K, v = d["stride"], d["nodes"]
n = len(v) // K
# a stack ends at every node with samples of its own (more than its children)
kids = [0] * n
stack = []
for i in range(n):
    dep = v[i * K + 3]
    del stack[dep:]
    if stack:
        kids[stack[-1]] += v[i * K + 4]
    stack.append(i)
own = sum(1 for i in range(n) if v[i * K + 4] > kids[i])
leaves = sum(1 for i in range(n) if i + 1 == n or v[(i + 1) * K + 3] <= v[i * K + 3])
print(own, n, leaves, d["total"])
PY
)

html_size=$(stat -c %s "$TMP/fg.html")
svg_size=$(stat -c %s "$TMP/fg.svg")

echo "### dcprof flamegraph"
echo
echo "Profile: $samples samples, $stacks distinct stacks ($leaves leaves, $nodes tree nodes); recorded -g -F $FREQ for $SECONDS_REC s, $THREADS threads, depth $DEPTH."
echo
echo "| output | time (best of $RUNS) | size |"
echo "|---|---:|---:|"
echo "| HTML | $html_ms ms | $((html_size / 1024)) KiB |"
echo "| SVG | $svg_ms ms | $((svg_size / 1024)) KiB |"
echo "| export pprof | $pprof_ms ms | $(($(stat -c %s "$TMP/out.pb.gz") / 1024)) KiB |"
echo "| export folded | $folded_ms ms | $(($(stat -c %s "$TMP/out.folded") / 1024)) KiB |"
echo

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ] || ! command -v node >/dev/null ||
	! "$TOP/tests/browser/install.sh" >/dev/null 2>&1; then
	echo "(no chromium, node or playwright-core: page load not measured)"
	exit 0
fi
node "$TOP/tests/browser/flame.js" bench "$TMP/fg.html" --runs "$RUNS" >"$TMP/load.json" ||
	die "the browser bench failed"
python3 - "$TMP/load.json" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))["runs"]
med = lambda k: statistics.median(r[k] for r in runs)
print("| page load in headless chromium (median of %d) | ms |" % len(runs))
print("|---|---:|")
print("| data parsed (JSON.parse done) | %.0f |" % med("parsedMs"))
print("| first draw done | %.0f |" % med("firstDrawMs"))
print("| first paint | %.0f |" % med("firstPaintMs"))
print("| search + redraw | %.0f |" % med("searchMs"))
print()
print("Frames drawn at first paint: %d of %d nodes." % (runs[0]["framesDrawn"], runs[0]["nodes"]))
PY
