#!/bin/bash
# --only marks the files worth profiling: recording the whole system while
# the split workload runs, with --only its binary (by path, then by build
# id), keeps only samples whose leaf frame is in that binary, and counts the
# rest as filtered; the split stays right. --only of a path that does not
# exist is one clear error, exit 1, and leaves the earlier profile alone.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 readelf
need_perf_events

SPLIT=$(build_workload split)
BID=$(readelf -n "$SPLIT" | awk '/Build ID/ { print $3 }')
[ -n "$BID" ] || die "workload has no build id"

check_only() { # FILE
	expect_exit 0 "$DCPROF" report -i "$1" --sort comm,file,symbol \
		--format json
	cp "$TMP/out" "$1.json"
	grep '^split: ' "$TMP/split.out" >"$TMP/truth" ||
		die "split printed no truth"
	python3 - "$1.json" "$SPLIT" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
binary = sys.argv[2]
s = d["stats"]
files = sorted(set(r["file"] for r in d["rows"]))
print("files %s, stats %s" % (files, s))
assert files == [binary], "rows of other files: %s" % files
assert s["samples_filtered"] > 0, s
# every sample of the system is either kept or filtered by --only
assert s["samples_kept"] + s["samples_filtered"] == s["samples"], s
assert s["samples_other_tasks"] == 0, s
PY
	# against the CPU time each function really took
	# (tests/workloads/split.c)
	report_counts "$1.json" | check_split_shares "$TMP/truth" 1000 3
}

expect_exit 0 "$DCPROF" record -a --only "$SPLIT" -o "$TMP/path.data" -- \
	"$SPLIT" 2 --truth
cp "$TMP/out" "$TMP/split.out"
check_only "$TMP/path.data" || die "--only '$SPLIT' keeps the wrong samples"
expect_exit 0 "$DCPROF" report -i "$TMP/path.data"
grep -q "^# samples: .* [1-9][0-9]* filtered by --only" "$TMP/out" ||
	die "the text header does not show the filtered samples"

expect_exit 0 "$DCPROF" record -a --only "$BID" -o "$TMP/bid.data" -- \
	"$SPLIT" 2 --truth
cp "$TMP/out" "$TMP/split.out"
check_only "$TMP/bid.data" || die "--only $BID keeps the wrong samples"

# the cookie of the split binary is the one marked
expect_exit 0 "$DCPROF" cookies -i "$TMP/bid.data" --format json
cp "$TMP/out" "$TMP/cookies.json"
[ "$(json_get "$TMP/cookies.json" \
	'[c["build_id"] for c in d["cookies"] if c["marked"]]')" = "[\"$BID\"]" ] ||
	die "the marked cookies are not just the split binary's"

cp "$TMP/bid.data" "$TMP/before.data"
expect_exit 1 "$DCPROF" record -a --only /nonexistent -o "$TMP/bid.data" -- \
	"$SPLIT" 1
one_line_error
grep -q "/nonexistent" "$TMP/err" || die "the error does not name the file"
cmp -s "$TMP/bid.data" "$TMP/before.data" ||
	die "a failed --only changed the earlier profile"
[ -e "$TMP/bid.data.old" ] && die "a failed --only moved the earlier profile"

pass
