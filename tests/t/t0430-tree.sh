#!/bin/bash
# Call trees on a known split: main -> middle -> {leaf_sixty 60%,
# leaf_forty 40%}. The caller tree puts both leaves under middle with
# 60/40 of its samples within 3 points; the callee tree puts middle under
# each leaf; --children gives middle the inclusive time of both; the
# filters, --percent-limit and --max-stack do what they say.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload sym_chain)
F=$TMP/chain.data

expect_exit 0 "$DCPROF" record -g -o "$F" -- "$W" 3
for order in caller callee; do
	expect_exit 0 "$DCPROF" report -i "$F" --format json --tree $order \
		--comm sym_chain
	cp "$TMP/out" "$TMP/$order.json"
done
expect_exit 0 "$DCPROF" report -i "$F" --format json --children \
	--sort symbol --comm sym_chain
cp "$TMP/out" "$TMP/children.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol \
	--comm sym_chain --symbol leaf_forty
cp "$TMP/out" "$TMP/filtered.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol \
	--percent-limit 30
cp "$TMP/out" "$TMP/limited.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/unlimited.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --tree caller \
	--comm sym_chain --max-stack 1
cp "$TMP/out" "$TMP/depth1.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm \
	--pid 1
cp "$TMP/out" "$TMP/nopid.json"

# --pid selecting something: two sym_chain processes of one recording,
# each selected alone keeps exactly its own samples
F2=$TMP/two.data
expect_exit 0 "$DCPROF" record -o "$F2" -- bash -c "\"$W\" 1 & \"$W\" 1; wait"
expect_exit 0 "$DCPROF" report -i "$F2" --format json --sort comm,pid
cp "$TMP/out" "$TMP/bypid.json"
read -r P1 P2 < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = {}
for r in d["rows"]:
    if r["comm"] == "sym_chain":
        n[r["pid"]] = n.get(r["pid"], 0) + r["samples"]
print(*sorted(n, key=lambda p: -n[p])[:2])' "$TMP/bypid.json")
[ -n "${P2:-}" ] || die "not two sym_chain processes in $F2: $(head -c 600 "$TMP/bypid.json")"
for p in "$P1" "$P2" "$P1,$P2"; do
	expect_exit 0 "$DCPROF" report -i "$F2" --format json --sort comm,pid \
		--pid "$p"
	python3 - "$TMP/bypid.json" "$TMP/out" "$p" <<'PY' || die "--pid $p selects the wrong samples"
import json, sys
full = json.load(open(sys.argv[1]))
sel = json.load(open(sys.argv[2]))
want_pids = {int(x) for x in sys.argv[3].split(",")}
want = sum(r["samples"] for r in full["rows"] if r["pid"] in want_pids)
got_pids = {r["pid"] for r in sel["rows"]}
print("--pid %s: %d samples of pids %s (expected %d)" % (sys.argv[3],
      sel["total"], sorted(got_pids), want))
assert want >= 300, "only %d samples of %s" % (want, want_pids)
assert got_pids == want_pids, (got_pids, want_pids)
assert sel["total"] == want, (sel["total"], want)
PY
done

python3 - "$TMP" <<'PY' || die "call trees are wrong"
import json, sys, os
T = sys.argv[1]
load = lambda n: json.load(open(os.path.join(T, n)))

def walk(nodes, depth=0):
    for n in nodes:
        yield n
        yield from walk(n["children"])

caller = load("caller.json")
mids = [n for n in walk(caller["tree"]["roots"]) if n["name"] == "middle"]
assert mids, "no middle in the caller tree"
mid = max(mids, key=lambda n: n["samples"])
kids = {k["name"]: k["samples"] for k in mid["children"]}
s, f = kids.get("leaf_sixty", 0), kids.get("leaf_forty", 0)
assert s + f >= 2000, "only %d samples under middle" % (s + f)
share = 100.0 * s / (s + f)
print("caller tree: middle %d samples, leaf_sixty %.1f%% (want 60%%)" % (mid["samples"], share))
assert abs(share - 60) <= 3, "leaf_sixty has %.1f%% of middle" % share
mains = [n for n in walk(caller["tree"]["roots"]) if n["name"] == "main"]
assert mains, "no main in the caller tree"
top_main = max(mains, key=lambda n: n["samples"])
assert any(c["name"] == "middle" for c in top_main["children"]), \
    "middle is not under main"
assert abs(mid["percent"] - 100.0 * mid["samples"] / caller["total"]) < 0.01

callee = load("callee.json")
roots = {r["name"]: r for r in callee["tree"]["roots"]}
for leaf in ("leaf_sixty", "leaf_forty"):
    assert leaf in roots, "%s is not a root of the callee tree" % leaf
    up = {k["name"] for k in roots[leaf]["children"]}
    assert "middle" in up, "middle does not call %s in the callee tree" % leaf
share = 100.0 * roots["leaf_sixty"]["samples"] / (
    roots["leaf_sixty"]["samples"] + roots["leaf_forty"]["samples"])
assert abs(share - 60) <= 3, "callee tree: leaf_sixty %.1f%%" % share

ch = {r["symbol"]: r for r in load("children.json")["rows"]}
m = ch["middle"]
assert m["children"] >= ch["leaf_sixty"]["children"] + ch["leaf_forty"]["children"] - 5, \
    "middle's inclusive time %d misses its callees" % m["children"]
assert m["samples"] <= 0.05 * m["children"], "middle's self time is too large"
# a sample on middle's first or last instruction, its frame not yet set
# up or already gone, has no main above it (frame pointers skip the
# caller there); middle has its own samples once in a few runs (CI saw
# main fall short of middle once, under the sanitizers)
assert ch["main"]["children"] >= m["children"] - max(2, m["children"] // 200), \
    "main's inclusive time %d is below middle's %d" % (
        ch["main"]["children"], m["children"])
assert 0.9 * ch["leaf_sixty"]["children"] <= ch["leaf_sixty"]["samples"] <= ch["leaf_sixty"]["children"]

# --symbol keeps the stacks through the function: leaf_forty's own
# samples first, the functions it calls (the clock, the kernel's
# interrupts) after, and in all its inclusive time as --children has it
filt = load("filtered.json")
assert filt["rows"][0]["symbol"] == "leaf_forty", filt["rows"]
assert filt["rows"][0]["samples"] >= 0.9 * filt["total"], filt["rows"]
assert filt["total"] == ch["leaf_forty"]["children"], (filt["total"], ch["leaf_forty"])

# --percent-limit 30 keeps exactly the rows at 30% or more: both leaves
# (60% and 40%), not only the top one, and nothing below 30%
lim = load("limited.json")
unlim = load("unlimited.json")
want = [r["symbol"] for r in unlim["rows"] if r["percent"] >= 30]
got = [r["symbol"] for r in lim["rows"]]
print("--percent-limit 30:", got)
assert {"leaf_sixty", "leaf_forty"} <= set(want), unlim["rows"][:4]
assert got == want, "--percent-limit 30 kept %s, expected %s" % (got, want)

d1 = load("depth1.json")
# one sampled frame per stack: a root's children can only be calls
# inlined into that frame (thread_cpu_ns inlined into the leaves)
kept = [(r["name"], c["name"]) for r in d1["tree"]["roots"]
        for c in walk(r["children"]) if not c["inline"]]
assert not kept, "--max-stack 1 kept callers: %s" % kept[:5]

assert load("nopid.json")["rows"] == [], "--pid 1 kept samples"
print("children, filters, limits: ok")
PY

expect_exit 0 "$DCPROF" report -i "$F" --tree caller --comm sym_chain \
	--percent-limit 5
grep -q "^ *[0-9.]*% *[0-9.]*% *  *leaf_sixty$" "$TMP/out" ||
	die "the text tree has no indented leaf_sixty: $(head -c 2000 "$TMP/out")"
expect_exit 2 "$DCPROF" report -i "$F" --tree sideways
expect_exit 2 "$DCPROF" report -i "$F" --children --tree caller

pass
