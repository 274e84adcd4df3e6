#!/bin/bash
# dcprof cookies after recording the split workload: the split binary's
# cookie with the build id readelf reports and samples > 0, the kernel
# cookie and [vdso], in JSON and in text with the same numbers; profiles are
# created 0600, a second recording moves the first to FILE.old, and a
# symlink planted at the output path is not followed.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 readelf
need_perf_events

SPLIT=$(build_workload split)
BID=$(readelf -n "$SPLIT" | awk '/Build ID/ { print $3 }')
[ -n "$BID" ] || die "workload has no build id"
F=$TMP/c.data

expect_exit 0 "$DCPROF" record -o "$F" -- "$SPLIT" 1
[ "$(stat -c %a "$F")" = 600 ] || die "'$F' has mode $(stat -c %a "$F")"
expect_exit 0 "$DCPROF" cookies -i "$F" --format json
cp "$TMP/out" "$TMP/cookies.json"
expect_exit 0 "$DCPROF" cookies -i "$F"
cp "$TMP/out" "$TMP/cookies.txt"
python3 - "$TMP/cookies.json" "$TMP/cookies.txt" "$SPLIT" "$BID" <<'PY' || die "cookie table"
import json, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
binary, bid = sys.argv[3], sys.argv[4]
cs = d["cookies"]
split = [c for c in cs if c.get("build_id") == bid]
assert len(split) == 1, split
s = split[0]
assert s["kind"] == "file" and binary in s["paths"] and s["samples"] > 0, s
kernel = [c for c in cs if c["kind"] == "kernel"]
assert len(kernel) == 1 and kernel[0]["name"] == "[kernel.kallsyms]", kernel
vdso = [c for c in cs if c["kind"] == "vdso"]
assert len(vdso) == 1 and vdso[0]["name"] == "[vdso]", vdso
assert len(set(c["cookie"] for c in cs)) == len(cs), "duplicate cookies"
# text: one line per cookie, with the same cookie, kind, samples and path
lines = [l.split() for l in text[1:]]
assert len(lines) == len(cs), (len(lines), len(cs))
for c, l in zip(cs, lines):
    assert int(l[0]) == c["cookie"] and l[1] == c["kind"], (c, l)
    assert str(c["samples"]) in l, (c, l)
    if c.get("build_id"):
        assert l[2] == c["build_id"], (c, l)
    name = c["paths"][0] if c["paths"] else c["name"]
    assert " ".join(l).find(name) >= 0, (c, l)
print("split %d samples, kernel %d, vdso %d" % (s["samples"], kernel[0]["samples"], vdso[0]["samples"]))
PY
# the cookies' samples add up: each cookie's count is the report's samples
# whose leaf frame is in its file (report --sort file), and together they
# are the report's total
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort file
cp "$TMP/out" "$TMP/report.json"
python3 - "$TMP/cookies.json" "$TMP/report.json" <<'PY' || die "the cookies' samples do not add up to the report"
import json, sys
cs = json.load(open(sys.argv[1]))["cookies"]
rep = json.load(open(sys.argv[2]))
by_file = {}
for r in rep["rows"]:
    by_file[r["file"]] = by_file.get(r["file"], 0) + r["samples"]
by_cookie = {}
for c in cs:
    if c["samples"]:
        by_cookie[c["name"]] = by_cookie.get(c["name"], 0) + c["samples"]
print("report by file:", by_file)
print("cookies:       ", by_cookie)
assert sum(by_cookie.values()) == rep["total"], (sum(by_cookie.values()), rep["total"])
assert sum(by_file.values()) == rep["total"], (sum(by_file.values()), rep["total"])
assert by_cookie == by_file, "per file: cookies %s, report %s" % (by_cookie, by_file)
PY

# a second recording moves the first aside
cp "$F" "$TMP/first.data"
expect_exit 0 "$DCPROF" record -o "$F" -- true
cmp -s "$F.old" "$TMP/first.data" || die "the first profile is not '$F.old'"
[ "$(stat -c %a "$F")" = 600 ] || die "second profile mode $(stat -c %a "$F")"

# a planted symlink is not followed
echo "precious" >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/link.data"
"$DCPROF" record -o "$TMP/link.data" -- true >"$TMP/out" 2>"$TMP/err"
[ "$(cat "$TMP/victim")" = precious ] || die "the symlink's target was written"
[ "$(stat -c %a "$TMP/victim")" = 644 ] || die "the symlink's target changed mode"
if [ -e "$TMP/link.data" ] && [ ! -L "$TMP/link.data" ]; then
	expect_exit 0 "$DCPROF" report -i "$TMP/link.data"
fi

pass
