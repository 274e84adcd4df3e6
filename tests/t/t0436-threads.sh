#!/bin/bash
# Threads are visible: three threads of one process, named worker-alpha,
# -beta and -gamma with pthread_setname_np, burning 3:2:1 of their CPU
# time. `report --sort comm` shows the thread names (as perf's comm) with
# shares within 5 points of 50/33/17; `--sort tid` the threads' tids with
# the same shares; `--sort process` the process's name; the pprof export
# has thread and tid labels (decoded by protoc against the repo's
# profile.proto); the flame graph has a thread level with --group thread.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 protoc gzip
need_perf_events

W=$(build_workload named_threads)
F=$TMP/threads.data
TIDS=$TMP/tids
# the perf ring's records name the threads; the backends that count
# stacks themselves are the business of their own tests
BACKEND=()
"$DCPROF" record --help | grep -q -- --backend && BACKEND=(--backend perf)

expect_exit 0 "$DCPROF" record "${BACKEND[@]}" -g -o "$F" -- "$W" "$TIDS" 1.5
[ "$(wc -l <"$TIDS")" = 3 ] || die "the workload wrote no tids: $(cat "$TIDS")"

for sort in comm tid process; do
	expect_exit 0 "$DCPROF" report -i "$F" --sort "$sort" --format json
	cp "$TMP/out" "$TMP/$sort.json"
done
expect_exit 0 "$DCPROF" report -i "$F" --sort comm
cp "$TMP/out" "$TMP/comm.txt"
expect_exit 0 "$DCPROF" export --format pprof -i "$F" -o "$TMP/out.pb.gz"
gzip -dc "$TMP/out.pb.gz" >"$TMP/out.pb"
protoc --decode perftools.profiles.Profile --proto_path="$TOP/proto" \
	"$TOP/proto/profile.proto" <"$TMP/out.pb" >"$TMP/decoded.txt" ||
	die "protoc cannot decode the export"
expect_exit 0 "$DCPROF" flamegraph --group thread -i "$F" -o "$TMP/fg.html"

python3 - "$TMP" "$TIDS" "$(basename "$W")" <<'PY' || die "threads are not shown as they ran"
import ast, json, re, sys
tmp, tids_file, process = sys.argv[1:]
want = {"worker-alpha": 50.0, "worker-beta": 100 / 3, "worker-gamma": 50 / 3}
tids = {}
for line in open(tids_file):
    name, tid = line.split()
    tids[int(tid)] = name

def rows(sort):
    return json.load(open("%s/%s.json" % (tmp, sort)))["rows"]

comm = {r["comm"]: r["percent"] for r in rows("comm")}
for name, share in want.items():
    assert name in comm, "--sort comm: no %s in %s" % (name, sorted(comm))
    assert abs(comm[name] - share) < 5, \
        "--sort comm: %s has %.2f%%, expected %.2f%%" % (name, comm[name], share)
text = open(tmp + "/comm.txt").read()
assert all(n in text for n in want), "the text report has no thread names"

by_tid = {r["tid"]: r["percent"] for r in rows("tid")}
for tid, name in tids.items():
    assert tid in by_tid, "--sort tid: no %d (%s) in %s" % (tid, name, sorted(by_tid))
    assert abs(by_tid[tid] - want[name]) < 5, \
        "--sort tid: %d (%s) has %.2f%%" % (tid, name, by_tid[tid])

# The command's process before its exec is still named dcprof: a sample
# may land there, never more than a trace of one.
proc = {r["process"]: r["percent"] for r in rows("process")}
assert proc.get(process[:15], 0) >= 99 and \
    set(proc) <= {process[:15], "dcprof"}, "--sort process: %s" % proc

# pprof: the string table and each sample's labels
strings, labels, cur = [], [], None
for line in open(tmp + "/decoded.txt"):
    line = line.strip()
    if line.startswith("string_table:"):
        strings.append(ast.literal_eval("b" + line.split(":", 1)[1].strip()).decode())
    elif line == "label {":
        cur = {}
    elif cur is not None and line == "}":
        labels.append(cur)
        cur = None
    elif cur is not None and ":" in line:
        k, v = line.split(":", 1)
        cur[k.strip()] = int(v)
threads = {}
for l in labels:
    threads.setdefault(strings[l["key"]], set()).add(
        strings[l["str"]] if "str" in l else l["num"])
assert set(want) <= threads.get("thread", set()), \
    "pprof thread labels %s" % threads.get("thread")
assert set(tids) <= threads.get("tid", set()), \
    "pprof tid labels %s, tids %s" % (threads.get("tid"), sorted(tids))
assert process[:15] in threads.get("comm", set()), "pprof comm %s" % threads.get("comm")

page = open(tmp + "/fg.html").read()
assert all(n in page for n in want), "the flame graph has no thread level"
PY
pass
