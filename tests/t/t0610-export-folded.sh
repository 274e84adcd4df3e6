#!/bin/bash
# dcprof export --format folded on a known 50/30/20 split: every line is
# "frames count", the counts add up to the report's total, the three
# functions' leaf shares are within 3 points of the CPU time the workload
# measured for each (as t0100), --no-comm drops exactly the
# first frame, and a process whose name holds a space, ';', a newline and
# a byte that is not UTF-8 still yields one parseable, valid UTF-8 line
# per stack, as does pprof for its path.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 protoc gzip
need_perf_events

F=$TMP/split.data

# the workload measures its truth: the thread CPU time each function took;
# the recording is shared with other tests that read it (record_once), and
# its binary, $WORKLOAD, is only read here
record_once "$F" split -g -- 3 --truth
SPLIT=$WORKLOAD
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/report.json"
expect_exit 0 "$DCPROF" export --format folded -i "$F"
cp "$TMP/out" "$TMP/folded.txt"
[ -s "$TMP/err" ] && die "export wrote to stderr: $(head -c 500 "$TMP/err")"
expect_exit 0 "$DCPROF" export --format folded --no-comm -i "$F" \
	-o "$TMP/nocomm.txt"
[ -s "$TMP/out" ] && die "export -o also wrote to stdout"

python3 - "$TMP/folded.txt" "$TMP/nocomm.txt" "$TMP/report.json" "$TMP/leaf" <<'PY' ||
import json, re, sys

def read(path):
    data = open(path, "rb").read()
    text = data.decode("utf-8")  # strict: readers decode UTF-8
    assert text.endswith("\n"), "no final newline"
    lines = {}
    for line in text[:-1].split("\n"):
        m = re.fullmatch(r"(.+) ([0-9]+)", line)
        assert m, "unparseable line %r" % line
        assert m.group(1) not in lines, "stack twice: %r" % line
        assert ";;" not in m.group(1), "empty frame: %r" % line
        lines[m.group(1)] = int(m.group(2))
    return lines

folded = read(sys.argv[1])
nocomm = read(sys.argv[2])
report = json.load(open(sys.argv[3]))
total = sum(folded.values())
assert total == report["total"], "total %d, report %d" % (total,
                                                         report["total"])
assert total == report["stats"]["samples_kept"], "total vs samples_kept"
assert sum(nocomm.values()) == total, "--no-comm total"

stripped = {}
for stack, n in folded.items():
    rest = stack.split(";", 1)
    assert len(rest) == 2, "no frame after the comm: %r" % stack
    stripped[rest[1]] = stripped.get(rest[1], 0) + n
assert stripped == nocomm, "--no-comm is not the output minus its first frame"
assert any(s.startswith("split;") for s in folded), "no 'split' root frame"
assert not any(s.startswith("split;") for s in nocomm), "comm in --no-comm"

# the leaf functions' samples, for the shares against the truth below
leaf = {}
for stack, n in folded.items():
    # the leaf function: calls inlined into it (_[i]) come after it
    name = [f for f in stack.split(";") if not f.endswith("_[i]")][-1]
    leaf[name] = leaf.get(name, 0) + n
with open(sys.argv[4], "w") as out:
    for fn, n in leaf.items():
        out.write("%s %d\n" % (fn, n))
# root first: main calls the three functions, so it comes before them
assert all(s.index(";main;") < s.index(";work_") for s in folded
           if ";work_" in s and ";main;" in s), "frames not root first"
PY
	die "the folded export does not match the workload or the report"
# the split's truth names its three functions (split_shares.py checks)
check_split_shares "$TMP/truth" 2000 3 <"$TMP/leaf" ||
	die "the folded export does not match the workload"

# A hostile name: the kernel takes the comm from the file name as it is.
WEIRD="$TMP/we ird;n"$'\n'"m"$'\xff'
cp "$SPLIT" "$WEIRD"
expect_exit 0 "$DCPROF" record -g -o "$TMP/weird.data" -- "$WEIRD" 1
expect_exit 0 "$DCPROF" report -i "$TMP/weird.data" --format json
cp "$TMP/out" "$TMP/weird.json"
expect_exit 0 "$DCPROF" export --format folded -i "$TMP/weird.data" \
	-o "$TMP/weird.txt"
python3 - "$TMP/weird.txt" "$TMP/weird.json" <<'PY' ||
import json, re, sys

text = open(sys.argv[1], "rb").read().decode("utf-8")
total = 0
roots = set()
for line in text[:-1].split("\n"):
    m = re.fullmatch(r"(.+) ([0-9]+)", line)
    assert m, "unparseable line %r" % line
    total += int(m.group(2))
    roots.add(m.group(1).split(";")[0])
report = json.load(open(sys.argv[2]))
assert total == report["total"], "total %d, report %d" % (total,
                                                         report["total"])
print("roots: %r" % sorted(roots))
assert any(r.startswith("we ird") for r in roots), "the comm is lost"
assert any("work_fifty" in line for line in text.split("\n"))
PY
	die "a hostile comm breaks the folded output"

expect_exit 0 "$DCPROF" export --format pprof -i "$TMP/weird.data" \
	-o "$TMP/weird.pb.gz"
gzip -dc "$TMP/weird.pb.gz" | protoc --decode perftools.profiles.Profile \
	--proto_path="$TOP/proto" "$TOP/proto/profile.proto" \
	>"$TMP/weird.decoded" || die "protoc cannot decode the hostile export"
# (protoc shows the newline as \n and the escape's backslash as \\)
grep -qF 'we ird;n\nm\\xff' "$TMP/weird.decoded" ||
	die "the hostile path is not in the pprof string table"

pass
