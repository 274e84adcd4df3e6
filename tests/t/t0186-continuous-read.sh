#!/bin/bash
# exclusive: wants 5,000 samples in 9 s of wall time
# Reading a time range of record --continuous: `report -i DIR` merges the
# periods (their summaries) into one profile whose samples are the sum of
# the files' and whose split shares are right; --since/--until (ISO 8601,
# "YYYY-MM-DD HH:MM:SS", relative) select exactly the periods that start
# in [since, until); an empty range says so and exits non-zero; flamegraph
# and export read a range too; bad times are refused.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

SPLIT=$(build_workload split)
D=$TMP/periods
spawn sh -c 'exec "$0" 12 --truth >"$1"' "$SPLIT" "$TMP/truth"
pid=$SPAWNED
expect_exit 0 "$DCPROF" record -F 999 -p "$pid" --continuous "$D" --period 2 \
	--duration 9
wait "$pid"
mapfile -t files < <(ls "$D")
[ "${#files[@]}" -ge 4 ] || die "only ${#files[@]} periods"
for f in "${files[@]}"; do
	expect_exit 0 "$DCPROF" report -i "$D/$f" --format json
	cp "$TMP/out" "$TMP/$f.json"
done

# the whole directory: the sum of the files, and the split's shares
expect_exit 0 "$DCPROF" report -i "$D" --format json --sort symbol
cp "$TMP/out" "$TMP/all.json"
python3 - "$TMP/all.json" "$TMP"/*.dcprof.json <<'PY' || die "the merged range is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
files = [json.load(open(p)) for p in sys.argv[2:]]
kept = sum(f["stats"]["samples_kept"] for f in files)
rows = sum(r["samples"] for r in d["rows"])
print("merged: %d samples kept, rows %d; files: %d" % (d["stats"]["samples_kept"], rows, kept))
assert d["stats"]["samples_kept"] == kept
assert rows == sum(sum(r["samples"] for r in f["rows"]) for f in files)
assert d["meta"]["complete"]
PY
# more than 5000 samples in the three functions
report_counts "$TMP/all.json" | check_split_shares "$TMP/truth" 5001 3 ||
	die "the merged range is wrong"
# the same total through the whole rows (by pid: no summary)
expect_exit 0 "$DCPROF" report -i "$D" --format json --sort pid
[ "$(json_get "$TMP/out" 'sum(r["samples"] for r in d["rows"])')" = \
  "$(json_get "$TMP/all.json" 'sum(r["samples"] for r in d["rows"])')" ] ||
	die "whole rows and summaries of the range disagree"

# --since/--until: periods 2 and 3 exactly (ISO 8601, then "date time")
iso() { python3 -c 'import sys; n = sys.argv[1]; print("%s-%s-%sT%s:%s:%sZ" % (n[0:4], n[4:6], n[6:8], n[9:11], n[11:13], n[13:15]))' "$1"; }
since=$(iso "${files[1]}")
until=$(iso "${files[3]}" | sed 's/T/ /; s/Z$//')
expect_exit 0 "$DCPROF" report -i "$D" --since "$since" --until "$until" --format json
cp "$TMP/out" "$TMP/range.json"
want=$(( $(json_get "$TMP/${files[1]}.json" 'd["stats"]["samples_kept"]') +
	 $(json_get "$TMP/${files[2]}.json" 'd["stats"]["samples_kept"]') ))
got=$(json_get "$TMP/range.json" 'd["stats"]["samples_kept"]')
echo "--since '$since' --until '$until': $got samples (periods 2 and 3: $want)"
[ "$got" = "$want" ] || die "the range holds $got samples, periods 2 and 3 $want"
# an offset: the same instant an hour east
since_east=$(echo "$since" | python3 -c 'import sys, datetime as dt
t = dt.datetime.strptime(sys.stdin.read().strip(), "%Y-%m-%dT%H:%M:%SZ") + dt.timedelta(hours=1)
print(t.strftime("%Y-%m-%dT%H:%M:%S+01:00"))')
expect_exit 0 "$DCPROF" report -i "$D" --since "$since_east" --until "$until" --format json
[ "$(json_get "$TMP/out" 'd["stats"]["samples_kept"]')" = "$want" ] ||
	die "--since with a zone offset selects other periods"

# the start as a period file is named (basic form, ms): the same periods;
# a millisecond past it (extended form with a fraction): period 3 alone
since_basic=${files[1]%%Z*}Z
expect_exit 0 "$DCPROF" report -i "$D" --since "$since_basic" --until "$until" --format json
[ "$(json_get "$TMP/out" 'd["stats"]["samples_kept"]')" = "$want" ] ||
	die "--since '$since_basic' (a period file's start) selects other periods"
since_frac=$(python3 -c 'import sys, datetime as dt
t = dt.datetime.strptime(sys.argv[1], "%Y%m%dT%H%M%S.%fZ") + dt.timedelta(milliseconds=1)
print(t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000))' "$since_basic")
expect_exit 0 "$DCPROF" report -i "$D" --since "$since_frac" --until "$until" --format json
[ "$(json_get "$TMP/out" 'd["stats"]["samples_kept"]')" = \
  "$(json_get "$TMP/${files[2]}.json" 'd["stats"]["samples_kept"]')" ] ||
	die "--since '$since_frac' (1 ms after period 2's start) is not period 3 alone"
# a range that ends before it starts: said so, not an empty range
expect_exit 2 "$DCPROF" report -i "$D" --since -1h --until -2h
grep -q "^dcprof: --since '-1h' is later than --until '-2h'" "$TMP/err" ||
	die "a reversed range: $(cat "$TMP/err")"

# relative times: all in the last hour, none before it
expect_exit 0 "$DCPROF" report -i "$D" --since -1h --format json
[ "$(json_get "$TMP/out" 'd["stats"]["samples_kept"]')" = \
  "$(json_get "$TMP/all.json" 'd["stats"]["samples_kept"]')" ] || die "--since -1h misses periods"
expect_exit 1 "$DCPROF" report -i "$D" --until -1h
one_line_error
grep -q "no period of '$D' starts between the start and " "$TMP/err" ||
	die "an empty range does not say so: $(cat "$TMP/err")"
expect_exit 1 "$DCPROF" report -i "$D" --since "2001-01-01" --until "2001-01-02"
grep -q "no period" "$TMP/err" || die "an empty range does not say so"
# a directory of other files (a profile and its .old beside it) is not a
# range that missed
mkdir "$TMP/plain" && cp "$TMP/all.json" "$TMP/plain/dcprof.data"
expect_exit 1 "$DCPROF" report -i "$TMP/plain"
one_line_error
grep -q "'$TMP/plain' is a directory without a period file of record --continuous" \
	"$TMP/err" || die "a plain directory: $(cat "$TMP/err")"

# flamegraph and export of a range
expect_exit 0 "$DCPROF" flamegraph -i "$D" --since "$since" --until "$until" -o "$TMP/fg.html"
grep -q work_fifty "$TMP/fg.html" || die "the range's flame graph lacks work_fifty"
expect_exit 0 "$DCPROF" export -i "$D" --since "$since" --format folded -o "$TMP/folded"
grep -q work_thirty "$TMP/folded" || die "the range's folded stacks lack work_thirty"

# bad times, and a range on a file
for t in yesterday 2026-13-01 "2026-12-03 25:00" -5x "2026-12-03T10:00+1"; do
	"$DCPROF" report -i "$D" --since "$t" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "--since '$t' exited $rc"
	grep -q "^dcprof: invalid --since '$t'" "$TMP/err" || die "--since '$t': $(cat "$TMP/err")"
done
"$DCPROF" report -i "$D/${files[0]}" --since -1h >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || die "--since on a file is not refused"
grep -q "read a directory" "$TMP/err" || die "--since on a file: $(cat "$TMP/err")"
pass
