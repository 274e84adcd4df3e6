#!/bin/bash
# report's filters mean one thing everywhere (issue 41):
# - --symbol keeps the stacks with a frame in the function, in the flat
#   view, --children and both trees alike, and for every --value: on
#   sym_chain (main -> middle -> leaf_sixty 60% / leaf_forty 40%),
#   --symbol middle keeps at least 95% of the process's samples in every
#   view (before: 0 in the flat view, "0 of the N samples kept match"),
#   with the same total in each; --symbol leaf_forty about 40% (within 6
#   points); on nap_burn recorded --off-cpu, --symbol main keeps all of
#   its CPU samples and all of its off-CPU time (before: the CPU view
#   kept none);
# - --tid: the thread alone (threads3: one worker's tid keeps only
#   worker_spin samples of that tid); --pid of that worker's tid reports
#   its process (main_spin too), said in one line;
# - a filter that leaves nothing says on stderr, in one line, how many
#   samples each filter removed.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

report() { # OUT ARGS...: report as JSON into $TMP/OUT.json
	local out=$1
	shift
	expect_exit 0 "$DCPROF" report -i "$F" --format json "$@"
	cp "$TMP/out" "$TMP/$out.json"
}

# --- --symbol in every view ------------------------------------------------
SC=$(build_workload sym_chain)
F=$TMP/chain.data
expect_exit 0 "$DCPROF" record -g -o "$F" -- "$SC" 1.5
report all --comm sym_chain --sort symbol
report flat --comm sym_chain --sort symbol --symbol middle
report children --comm sym_chain --sort symbol --children --symbol middle
report caller --comm sym_chain --tree caller --symbol middle
report callee --comm sym_chain --tree callee --symbol middle
report forty --comm sym_chain --sort symbol --symbol leaf_forty
python3 - "$TMP" <<'PY' || die "--symbol does not mean the same in every view"
import json, sys
d = lambda n: json.load(open("%s/%s.json" % (sys.argv[1], n)))
whole = d("all")["total"]
totals = {v: d(v)["total"] for v in ("flat", "children", "caller", "callee")}
print("sym_chain: %d samples; --symbol middle keeps %s" % (whole, totals))
for v, t in totals.items():
    assert t >= 0.95 * whole, "%s: %d of %d" % (v, t, whole)
assert len(set(totals.values())) == 1, totals
flat = {r["symbol"]: r["samples"] for r in d("flat")["rows"]}
assert flat.get("leaf_sixty", 0) + flat.get("leaf_forty", 0) >= 0.9 * totals["flat"], flat
forty = d("forty")["total"]
print("--symbol leaf_forty: %.1f%% of the process" % (100.0 * forty / whole))
assert abs(100.0 * forty / whole - 40) <= 6, forty
PY

# --- the same for off-CPU time -----------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
	NAP=$(build_workload nap_burn)
	F=$TMP/nap.data
	expect_exit 0 "$DCPROF" record --off-cpu -o "$F" -- "$NAP" 1.5 "$TMP/nap.truth"
	for v in cpu off-cpu; do
		report "nap-$v" --comm nap_burn --value "$v"
		report "nap-$v-main" --comm nap_burn --value "$v" --symbol main
	done
	python3 - "$TMP" <<'PY' || die "--symbol main differs between CPU and off-CPU"
import json, sys
d = lambda n: json.load(open("%s/%s.json" % (sys.argv[1], n)))["total"]
for v in ("cpu", "off-cpu"):
    print("nap_burn, --value %s: %d, --symbol main %d" % (v, d("nap-" + v), d("nap-%s-main" % v)))
    assert d("nap-" + v) > 0
    assert d("nap-%s-main" % v) >= 0.95 * d("nap-" + v), v
PY
else
	skip_part "not root: --off-cpu is not tried"
fi

# --- --tid, --pid of a thread ------------------------------------------------
T3=$(build_workload threads3)
spawn "$T3" "$TMP/tids"
PID=$SPAWNED
wait_line "$TMP/tids" '^ready$'
W=$(sed -n 's/^tid //p' "$TMP/tids" | head -1)
F=$TMP/threads.data
expect_exit 0 "$DCPROF" record -p "$PID" --duration 1 -o "$F"
kill -KILL "$PID"
wait "$PID" 2>/dev/null
report tid --sort tid,symbol --tid "$W"
[ ! -s "$TMP/err" ] || die "--tid $W: stderr: $(cat "$TMP/err")"
report pidoftid --sort pid,symbol --pid "$W"
[ "$(grep -c "$W is a thread of process $PID" "$TMP/err")" -eq 1 ] ||
	die "--pid $W does not say once that it reports process $PID: $(cat "$TMP/err")"
python3 - "$TMP" "$W" "$PID" <<'PY' || die "--tid or --pid of a thread selects the wrong samples"
import json, sys
d = lambda n: json.load(open("%s/%s.json" % (sys.argv[1], n)))
w, pid = int(sys.argv[2]), int(sys.argv[3])
tid = d("tid")["rows"]
print("--tid %d: %s" % (w, [(r["tid"], r["symbol"], r["samples"]) for r in tid][:4]))
assert tid and all(r["tid"] == w for r in tid)
assert max(tid, key=lambda r: r["samples"])["symbol"] == "worker_spin"
assert "main_spin" not in {r["symbol"] for r in tid}
p = d("pidoftid")["rows"]
syms = {r["symbol"] for r in p}
print("--pid %d (a thread): pids %s, %s" % (w, {r["pid"] for r in p}, sorted(syms)[:4]))
assert p and all(r["pid"] == pid for r in p)
assert {"main_spin", "worker_spin"} <= syms
PY

# --- what emptied a report ---------------------------------------------------
expect_exit 0 "$DCPROF" report -i "$F" --format json
kept=$(json_get "$TMP/out" 'd["total"]')
expect_exit 0 "$DCPROF" report -i "$F" --comm threads3 --symbol no_such_function
cat "$TMP/err"
[ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	grep -q "^dcprof: warning: no sample matches --comm, --symbol: of the $kept samples kept, --comm removed 0, --symbol removed $kept$" "$TMP/err" ||
	die "--symbol no_such_function: the line does not say --symbol removed all $kept samples"
expect_exit 0 "$DCPROF" report -i "$F" --comm no_such_comm --symbol main_spin
grep -q "^dcprof: warning: no sample matches --comm, --symbol: of the $kept samples kept, --comm removed $kept, --symbol removed 0$" "$TMP/err" ||
	die "--comm no_such_comm: the line does not say --comm removed all $kept samples: $(cat "$TMP/err")"
pass
