#!/bin/bash
# exclusive: its off-CPU OTLP export once differed from the folded one in a recording made under load: alone until that is understood
# dcprof export --format otlp on a known 50/30/20 split, decoded by
# python3-protobuf with protoc's Python of proto/otlp_profiles.proto and
# checked by tests/tools/otlp_check.py (every dictionary table has its
# zero entry at 0, every index is inside its table): one resource with
# service.name and the host's attributes, one scope (dcprof), one Profile
# (samples/count; no cpu/nanoseconds Profile, which is the samples times
# the period and would be counted twice) with period_type cpu/nanoseconds,
# the report's period, time and duration; its total equal to the
# report's, its stacks equal to `export --format folded` stack for stack, its
# process.executable.name and process.pid attributes equal to the
# report's comm/pid rows; the three functions' shares within 3 points of
# the CPU time the workload measured; the workload's mapping with its
# build id (readelf's); with --off-cpu a second Profile with every ns off
# the CPU, stack for stack, and no period; the file 0600, as every export.
. "$(dirname "$0")/test-lib.sh"
need gcc readelf
need_python_protobuf
need_perf_events

F=$TMP/split.data

# the recording is shared with other tests that read it (record_once), and
# names the binary it ran, $WORKLOAD: its path and build id are the ones
# to find in the export
record_once "$F" split -g -- 3 --truth
SPLIT=$WORKLOAD
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,pid
cp "$TMP/out" "$TMP/report.json"
expect_exit 0 "$DCPROF" export --format folded --no-comm -i "$F"
cp "$TMP/out" "$TMP/folded"

expect_exit 0 "$DCPROF" export --format otlp -i "$F" -o "$TMP/out.otlp"
[ -s "$TMP/err" ] && die "export wrote to stderr: $(head -c 500 "$TMP/err")"
"$PYPB" "$TOP/tests/tools/otlp_check.py" "$TMP/pb" "$TMP/out.otlp" \
	>"$TMP/flat.json" || die "the OTLP export breaks the schema's rules"

BUILD_ID=$(readelf -n "$SPLIT" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$BUILD_ID" ] || die "readelf shows no build id for '$SPLIT'"

python3 - "$TMP/flat.json" "$TMP/report.json" "$TMP/folded" "$SPLIT" \
	"$BUILD_ID" "$TMP/leaf" "$(uname -r)" "$TOP/tests/tools" <<'PY' ||
import collections, json, sys
sys.path.insert(0, sys.argv[8])
import period_stacks
flat = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
split_path, build_id, release = sys.argv[4], sys.argv[5], sys.argv[7]
meta = report["meta"]

assert len(flat["resources"]) == 1, "resources: %d" % len(flat["resources"])
res = flat["resources"][0]
attrs = res["attrs"]
assert attrs["service.name"] == "dcprof", attrs
assert attrs["host.name"] == meta["hostname"], attrs
assert attrs["os.type"] == "linux" and attrs["os.version"] == release, attrs
assert len(res["scopes"]) == 1 and res["scopes"][0]["name"] == "dcprof"
profiles = res["scopes"][0]["profiles"]
types = [(p["type"], p["unit"]) for p in profiles]
assert types == [("samples", "count")], types
period = 10**9 // meta["sample_freq"]
samples = profiles[0]
assert (samples["period_type"], samples["period_unit"], samples["period"]) == \
    ("cpu", "nanoseconds", period), samples["period"]
assert samples["time_unix_nano"] == meta["start_realtime_ns"], "time"
assert samples["duration_nano"] == meta["duration_ns"], "duration"

total = sum(s["value"] for s in samples["samples"])
assert total == report["total"], "total %d, report %d" % (total,
                                                         report["total"])

# the stacks: as the folded export has them (kernel and inlined frames
# unmarked)
want = period_stacks.stacks(open(sys.argv[3]).read())
got = collections.Counter()
for s in samples["samples"]:
    got[";".join(s["stack"])] += s["value"]
if got != want:
    sys.exit("stacks: %d missing, %d extra: %s / %s" % (
        len(want - got), len(got - want), list((want - got).items())[:3],
        list((got - want).items())[:3]))
print("%d stacks, %d samples, as the folded export" % (len(got), total))

per_pid = collections.Counter()
for s in samples["samples"]:
    a = s["attrs"]
    # and the cgroup's, where the sample has one (t0215 checks them)
    assert set(a) - {"linux.cgroup.path", "container.id", "systemd.unit",
                     "k8s.pod.uid"} == {"process.executable.name",
                                        "process.pid", "thread.name",
                                        "thread.id"}, a
    assert isinstance(a["process.pid"], int), a
    per_pid[(a["process.executable.name"], a["process.pid"])] += s["value"]
by_pid = {(r["comm"], r["pid"]): r["samples"] for r in report["rows"]}
assert dict(per_pid) == by_pid, "comm/pid %r, report %r" % (per_pid, by_pid)

# the leaf functions' samples, for the shares against the truth below
leaf = collections.Counter()
for s in samples["samples"]:
    leaf[s["stack"][-1]] += s["value"]
with open(sys.argv[6], "w") as out:
    for fn, n in leaf.items():
        out.write("%s %d\n" % (fn, n))

ours = [m for m in flat["mappings"] if m["file"] == split_path]
assert len(ours) == 1, "mappings of the workload: %d" % len(ours)
got_id = ours[0]["attrs"].get("process.executable.build_id.gnu")
assert got_id == build_id, "build id %s, readelf %s" % (got_id, build_id)
PY
	die "the OTLP export does not match the report or the workload"
check_split_shares "$TMP/truth" 2000 3 <"$TMP/leaf" ||
	die "the OTLP export does not match the workload"

# --off-cpu: a second Profile, off_cpu/nanoseconds without a period, whose
# samples carry every ns off the CPU that the folded export has, stack for
# stack; the first holds only the stacks with CPU samples
W=$(build_workload off_cpu)
expect_exit 0 "$DCPROF" record --off-cpu -g -o "$TMP/off.data" -- "$W" rounds 2 "$TMP/off-main"
expect_exit 0 "$DCPROF" export --format folded --no-comm --value off-cpu -i "$TMP/off.data"
cp "$TMP/out" "$TMP/off.folded"
expect_exit 0 "$DCPROF" export --format folded --no-comm -i "$TMP/off.data"
cp "$TMP/out" "$TMP/off-cpu.folded"
expect_exit 0 "$DCPROF" export --format otlp -i "$TMP/off.data" -o "$TMP/off.otlp"
"$PYPB" "$TOP/tests/tools/otlp_check.py" "$TMP/pb" "$TMP/off.otlp" \
	>"$TMP/off.json" || die "the --off-cpu OTLP export breaks the schema's rules"
python3 - "$TMP/off.json" "$TMP/off.folded" "$TMP/off-cpu.folded" \
	"$TOP/tests/tools" <<'PY' ||
import collections, json, sys
sys.path.insert(0, sys.argv[4])
import period_stacks
profiles = json.load(open(sys.argv[1]))["resources"][0]["scopes"][0]["profiles"]
types = [(p["type"], p["unit"]) for p in profiles]
assert types == [("samples", "count"), ("off_cpu", "nanoseconds")], types
assert (profiles[1]["period_type"], profiles[1]["period"]) == ("", 0), \
    "the off_cpu Profile has a period"
def folded(path):
    return period_stacks.stacks(open(path).read())
def stacks(p):
    c = collections.Counter()
    for s in p["samples"]:
        assert s["value"] > 0, s
        c[";".join(s["stack"])] += s["value"]
    return c
off, cpu = folded(sys.argv[2]), folded(sys.argv[3])
assert sum(off.values()) > 10**8, "only %d ns off the CPU" % sum(off.values())
got = stacks(profiles[1])
for k in sorted(set(got) | set(off)):
    if got.get(k, 0) != off.get(k, 0):
        print("off_cpu Profile %d ns, folded %d ns: %s" % (
            got.get(k, 0), off.get(k, 0), k[:400]))
assert got == off, "the off_cpu Profile differs from folded --value off-cpu"
assert stacks(profiles[0]) == cpu, "the samples Profile differs from folded"
print("off_cpu: %d ns on %d stacks, as the folded export" % (sum(off.values()), len(off)))
PY
	die "the --off-cpu OTLP export does not match the folded export"

# the default output name, in the current directory
(cd "$TMP" && "$DCPROF" export --format otlp -i "$F") ||
	die "export without -o failed"
cmp -s "$TMP/dcprof.otlp.pb" "$TMP/out.otlp" ||
	die "export without -o did not write the same dcprof.otlp.pb"
[ "$(stat -c %a "$TMP/out.otlp")" = 600 ] ||
	die "the export's mode is $(stat -c %a "$TMP/out.otlp")"
# a planted link is not followed
ln -s "$TMP/victim" "$TMP/link.otlp"
"$DCPROF" export --format otlp -i "$F" -o "$TMP/link.otlp" 2>/dev/null
[ ! -e "$TMP/victim" ] || die "the export followed a planted symlink"

pass
