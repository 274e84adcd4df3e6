#!/bin/bash
# dcprof export --format pprof on a known 50/30/20 split, decoded by an
# independent decoder (protoc against the repo's profile.proto): the string
# table, the sample types and period, totals equal to the report's, the
# three functions' shares within 3 points of the CPU time the workload
# measured for each (as t0100), every id a sample or location
# names defined, the build id of the workload's mapping equal to readelf's,
# and the comm and pid labels.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 protoc readelf gzip
need_perf_events

F=$TMP/split.data

# the workload measures its truth: the thread CPU time each function took;
# the recording is shared with other tests that read it (record_once), and
# names the binary it ran, $WORKLOAD
record_once "$F" split -g -- 3 --truth
SPLIT=$WORKLOAD
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/report.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,pid
cp "$TMP/out" "$TMP/report-pid.json"

expect_exit 0 "$DCPROF" export --format pprof -i "$F" -o "$TMP/out.pb.gz"
[ -s "$TMP/err" ] && die "export wrote to stderr: $(head -c 500 "$TMP/err")"
gzip -t "$TMP/out.pb.gz" || die "the output is not gzip"
gzip -dc "$TMP/out.pb.gz" >"$TMP/out.pb"
protoc --decode perftools.profiles.Profile --proto_path="$TOP/proto" \
	"$TOP/proto/profile.proto" <"$TMP/out.pb" >"$TMP/decoded.txt" ||
	die "protoc cannot decode the export"

BUILD_ID=$(readelf -n "$SPLIT" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$BUILD_ID" ] || die "readelf shows no build id for '$SPLIT'"

python3 - "$TMP/decoded.txt" "$TMP/report.json" "$SPLIT" "$BUILD_ID" \
	"$TMP/report-pid.json" "$TMP/leaf" \
	<<'PY' || die "the pprof export does not match the workload or the report"
import ast, json, sys

def parse(lines):
    """protoc's text format: 'key: value' and 'key {' ... '}'."""
    root = {}
    stack = [root]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        if value.startswith('"'):
            value = ast.literal_eval("b" + value).decode("utf-8",
                                                        "surrogateescape")
        elif value in ("true", "false"):
            value = value == "true"
        else:
            value = int(value)
        stack[-1].setdefault(key, []).append(value)
    assert len(stack) == 1, "unbalanced braces"
    return root

p = parse(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
split_path, build_id = sys.argv[3], sys.argv[4]
by_pid = {(r["comm"], r["pid"]): r["samples"]
          for r in json.load(open(sys.argv[5]))["rows"]}
one = lambda m, k, d=0: m.get(k, [d])[0]

st = p["string_table"]
assert st[0] == "", "string_table[0] is %r" % st[0]
s = lambda i: st[i]

types = [(s(one(t, "type")), s(one(t, "unit"))) for t in p["sample_type"]]
assert types == [("samples", "count"), ("cpu", "nanoseconds")], types
pt = p["period_type"][0]
assert (s(one(pt, "type")), s(one(pt, "unit"))) == ("cpu", "nanoseconds")
meta = report["meta"]
period = one(p, "period")
assert period == 10**9 // meta["sample_freq"], "period %d" % period
assert one(p, "time_nanos") == meta["start_realtime_ns"], "time_nanos"
assert one(p, "duration_nanos") == meta["duration_ns"], "duration_nanos"

mappings = {one(m, "id"): m for m in p["mapping"]}
functions = {one(f, "id"): f for f in p["function"]}
locations = {one(l, "id"): l for l in p["location"]}
assert 0 not in mappings and 0 not in functions and 0 not in locations
for l in locations.values():
    m = mappings.get(one(l, "mapping_id"))
    assert m, "location %d names mapping %d" % (one(l, "id"),
                                                one(l, "mapping_id"))
    assert one(m, "memory_start") <= one(l, "address") < one(m, "memory_limit")
    assert l.get("line"), "location %d has no line" % one(l, "id")
    for line in l["line"]:
        assert one(line, "function_id") in functions, "function id"
ranges = sorted((one(m, "memory_start"), one(m, "memory_limit"))
                for m in mappings.values())
for a, b in zip(ranges, ranges[1:]):
    assert a[1] <= b[0], "mappings overlap"

total = 0
leaf = {}
per_pid = {}
for smp in p["sample"]:
    v = smp["value"]
    assert len(v) == 2 and v[1] == v[0] * period, "values %r" % v
    total += v[0]
    ids = smp["location_id"]
    for i in ids:
        assert i in locations, "sample names location %d" % i
    # the real function is the last line (inlined calls come first)
    fn = functions[one(locations[ids[0]]["line"][-1], "function_id")]
    name = s(one(fn, "name"))
    leaf[name] = leaf.get(name, 0) + v[0]
    labels = {s(one(l, "key")): l for l in smp.get("label", [])}
    key = (s(one(labels["comm"], "str")), one(labels["pid"], "num"))
    per_pid[key] = per_pid.get(key, 0) + v[0]
assert total == report["total"], "total %d, report %d" % (total,
                                                         report["total"])
assert total == report["stats"]["samples_kept"], "total vs samples_kept"

assert per_pid == by_pid, "comm/pid labels %r, report %r" % (per_pid, by_pid)
assert ("split", ) in {(c, ) for c, _ in per_pid}, "no comm label 'split'"

# the leaf functions' samples, for the shares against the truth below
with open(sys.argv[6], "w") as out:
    for fn, n in leaf.items():
        out.write("%s %d\n" % (fn, n))
names = {s(one(f, "name")): f for f in functions.values()}
for fn in ("work_fifty", "work_thirty", "work_twenty"):
    assert fn in names, "no Function %s" % fn
    f = names[fn]
    assert s(one(f, "system_name")) == fn
    # the source file where DWARF names it, else the object
    assert s(one(f, "filename")) in (split_path, "split.c") or \
        s(one(f, "filename")).endswith("/split.c"), s(one(f, "filename"))

ours = [m for m in mappings.values() if s(one(m, "filename")) == split_path]
assert len(ours) == 1, "mappings of the workload: %d" % len(ours)
assert s(one(ours[0], "build_id")) == build_id, \
    "build id %s, readelf %s" % (s(one(ours[0], "build_id")), build_id)
assert one(ours[0], "has_functions", False), "has_functions"
for m in mappings.values():
    assert s(one(m, "filename")), "mapping %d has no file name" % one(m, "id")
PY
# shares among the three, as the truth is
check_split_shares "$TMP/truth" 2000 3 <"$TMP/leaf" ||
	die "the pprof export does not match the workload"

# the default output name, in the current directory
(cd "$TMP" && "$DCPROF" export --format pprof -i "$F") ||
	die "export without -o failed"
cmp -s "$TMP/dcprof.pb.gz" "$TMP/out.pb.gz" ||
	die "export without -o did not write the same dcprof.pb.gz"
# stdout on request
expect_exit 0 "$DCPROF" export --format pprof -i "$F" -o -
gzip -dc <"$TMP/out" | cmp -s - "$TMP/out.pb" ||
	die "'-o -' did not write the profile to stdout"
# the file is private: it names every process and path on the host
[ "$(stat -c %a "$TMP/out.pb.gz")" = 600 ] ||
	die "the export's mode is $(stat -c %a "$TMP/out.pb.gz")"

pass
