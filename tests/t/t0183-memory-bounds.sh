#!/bin/bash
# A continuous recording made with tiny bounds (--memory-limit 4K: one
# file kept to name with, 512 bytes of names kept between periods;
# --max-open-files 2: one pinned file) names every frame as an unbounded
# one does:
# - the period lines count what the bounds made go: names past them,
#   files to name with closed, pins refused; and what is kept stays within
#   them (at most one file to name with, at most 512 bytes of names,
#   shown rounded to KiB);
# - every frame of every stack (report --children) has the name that
#   --resymbolize, which reads the files afresh without bounds, gives it;
# - the known split (50/30/20 by the program's own clock) within 3 points;
# - the same recording with the default bounds lets nothing go for them.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload split)

# bounded DIR ARGS...: record split for 4 s in periods of 1 s
bounded() {
	local d=$1 pid
	shift
	"$W" 4 --truth >"$TMP/truth" &
	pid=$!
	_spawned+=("$pid")
	expect_exit 0 "$DCPROF" record -g -F 499 -p "$pid" --continuous "$d" \
		--period 1 "$@"
	cp "$TMP/err" "$d.err"
	wait "$pid" || die "split failed"
	grep -c "^dcprof: period '" "$d.err" | grep -qv '^0$' ||
		die "no period written: $(tail -3 "$d.err")"
}

bounded "$TMP/tiny" --memory-limit 4K --max-open-files 2
"$DCPROF" report -i "$TMP/tiny" --format json >"$TMP/tiny.json" ||
	die "report failed"
report_counts "$TMP/tiny.json" | check_split_shares "$TMP/truth" 1000 3 ||
	die "the split is off with tiny bounds"
python3 - "$TMP/tiny.err" <<'PY' || die "the period lines do not show the bounds at work"
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("dcprof: period '") and "kept:" in l]
assert lines, "no period line with what is kept"
pat = re.compile(r"kept: (\d+) names \((\d+) KiB\), \d+ pinned files, (\d+) files to name with "
                 r"\(\d+ KiB; (\d+) hits, (\d+) misses\).*past the bounds of 4 KiB and 2 files: "
                 r"(\d+) names, (\d+) files to name with, (\d+) pins refused")
for l in lines:
    m = pat.search(l)
    assert m, "not understood: " + l
    names, kib, files = int(m.group(1)), int(m.group(2)), int(m.group(3))
    assert kib <= 1, "%d KiB of names kept, bound 0.5 KiB" % kib
    assert files <= 1, "%d files kept to name with, bound 1" % files
m = pat.search(lines[-1])
print("last:", lines[-1].split("; ", 1)[1].strip())
evicted_names, evicted_files, refused = int(m.group(6)), int(m.group(7)), int(m.group(8))
assert evicted_names > 0, "no name let go past the bound"
assert evicted_files > 0, "no file to name with closed past the bound"
assert refused > 0, "no pin refused"
PY

# every frame's name, as stored and as the files give it afresh
"$DCPROF" report -i "$TMP/tiny" --children --format json >"$TMP/stored.json" ||
	die "report failed"
"$DCPROF" report -i "$TMP/tiny" --children --format json --resymbolize \
	>"$TMP/fresh.json" || die "report --resymbolize failed"
python3 - "$TMP/stored.json" "$TMP/fresh.json" <<'PY' || die "tiny bounds named frames differently"
import json, sys
def rows(p):
    return sorted((r["comm"], r["file"], r["symbol"], r["samples"], r["children"])
                  for r in json.load(open(p))["rows"])
a, b = rows(sys.argv[1]), rows(sys.argv[2])
diff = sorted(set(a) ^ set(b))
assert not diff, "differ: %s" % diff[:6]
named = [r for r in a if r[0] == "split" and not r[2].startswith(("[", "0x"))]
assert any(r[2] == "main" for r in named), "no main among %s" % named
assert any(r[2] == "__libc_start_call_main" for r in named), "libc not named: %s" % named
print("%d rows named alike, e.g. %s" % (len(a), [r[2] for r in named][:6]))
PY

bounded "$TMP/default"
"$DCPROF" report -i "$TMP/default" --format json >"$TMP/default.json" ||
	die "report failed"
report_counts "$TMP/default.json" | check_split_shares "$TMP/truth" 1000 3 ||
	die "the split is off with the default bounds"
grep "^dcprof: period '" "$TMP/default.err" | grep "kept:" | tail -1 |
	grep -q "past the bounds of 32 MiB and 512 files: 0 names, 0 files to name with, 0 pins refused" ||
	die "the default bounds let something go: $(grep "kept:" "$TMP/default.err" | tail -1)"
pass
