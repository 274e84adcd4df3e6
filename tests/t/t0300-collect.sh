#!/bin/bash
# dcprof collect on a stopped three-thread workload: its tasks, its maps with
# cookie and build id, JSON output, the same output through any buffer size,
# and clear failures for bad input.
. "$(dirname "$0")/test-lib.sh"
need gcc readelf python3

W=$(build_workload collect_threads)
spawn "$W"
PID=$SPAWNED
wait_stopped "$PID"
BID=$(readelf -n "$W" | awk '/Build ID/ { print $3 }')
[ -n "$BID" ] || die "workload has no build id"

# maps: the workload binary with a cookie and its build id
expect_exit 0 "$DCPROF" collect --kind maps -p "$PID"
cp "$TMP/out" "$TMP/maps.txt"
grep -q "^mmap2 pid $PID tid $PID .* r-xp cookie [1-9][0-9]* build-id $BID path $W\$" \
	"$TMP/maps.txt" || die "maps do not show '$W' with build id $BID"
grep -q ' path /.*libc\.so' "$TMP/maps.txt" || die "maps do not show libc"
grep -qE "^[0-9]+ records in [0-9]+ reads, 0 tasks vanished\$" "$TMP/err" ||
	die "no summary line: $(cat "$TMP/err")"
grep -v "^mmap2 pid $PID " "$TMP/maps.txt" && die "records of other processes"

# tasks: three threads with their names, and the executable's map
expect_exit 0 "$DCPROF" collect -p "$PID"
cp "$TMP/out" "$TMP/tasks.txt"
[ "$(grep -c "^fork  pid $PID tid [0-9]* ppid" "$TMP/tasks.txt")" -eq 3 ] ||
	die "expected 3 fork records: $(cat "$TMP/tasks.txt")"
for name in collect-main collect-w1 collect-w2; do
	grep -q "^comm  pid $PID tid [0-9]* comm $name\$" "$TMP/tasks.txt" ||
		die "no comm record for '$name'"
done
grep -q "^comm  pid $PID tid $PID comm collect-main\$" "$TMP/tasks.txt" ||
	die "the leader is not named collect-main"
grep -q "^fork  pid $PID tid $PID ppid $$ ptid $$ " "$TMP/tasks.txt" ||
	die "the leader's parent is not the test shell"
[ "$(grep -c "^mmap2 .*build-id $BID path $W\$" "$TMP/tasks.txt")" -eq 1 ] ||
	die "tasks do not carry the executable's map"

# JSON parses, and says the same
for kind in tasks maps; do
	expect_exit 0 "$DCPROF" collect --kind $kind -p "$PID" --format json
	python3 -m json.tool "$TMP/out" >/dev/null || die "invalid JSON ($kind)"
	python3 - "$TMP/out" "$kind" "$PID" "$BID" <<'PY' || die "JSON content ($kind)"
import json, sys
doc = json.load(open(sys.argv[1]))
kind, pid, bid = sys.argv[2], int(sys.argv[3]), sys.argv[4]
recs, summ = doc["records"], doc["summary"]
assert summ["records"] == len(recs), summ
assert all(r["pid"] == pid and r["injected"] for r in recs)
if kind == "tasks":
    assert summ["tasks"] == 3, summ
    comms = sorted(r["comm"] for r in recs if r["type"] == "comm")
    assert comms == ["collect-main", "collect-w1", "collect-w2"], comms
else:
    assert any(r.get("build_id") == bid and r["cookie"] > 0 for r in recs)
    assert summ["maps"] == len(recs), summ
PY
done

# any buffer that holds the largest record gives the same output
size=8
while ! "$DCPROF" collect --kind maps -p "$PID" --buffer $size \
	>"$TMP/small.txt" 2>"$TMP/err"; do
	new=$(sed -n 's/.*next record of \([0-9]*\) bytes$/\1/p' "$TMP/err")
	[ -n "$new" ] && [ "$new" -gt "$size" ] ||
		die "no record size in '$(cat "$TMP/err")'"
	size=$new
done
cmp -s "$TMP/small.txt" "$TMP/maps.txt" ||
	die "output through a $size-byte buffer differs"
reads=$(sed -n 's/.* in \([0-9]*\) reads.*/\1/p' "$TMP/err")
[ "$reads" -gt 2 ] || die "a $size-byte buffer took only $reads reads"

# the whole system includes the workload
expect_exit 0 "$DCPROF" collect
grep -q "^comm  pid $PID tid $PID comm collect-main\$" "$TMP/out" ||
	die "the system-wide walk misses the workload"
expect_exit 0 "$DCPROF" collect --kind maps --buffer 4k
grep -q "build-id $BID path $W\$" "$TMP/out" ||
	die "the system-wide maps miss the workload"

# bad input: one line, the right exit status
true &
DEAD=$!
wait $DEAD
expect_exit 1 "$DCPROF" collect -p "$DEAD"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || die "dead pid: $(cat "$TMP/err")"
grep -q "no process with pid $DEAD" "$TMP/err" || die "dead pid: $(cat "$TMP/err")"
[ -s "$TMP/out" ] && die "dead pid printed records"
expect_exit 1 "$DCPROF" collect -p "$PID" --buffer 0
[ "$(wc -l <"$TMP/err")" -eq 1 ] || die "--buffer 0: $(cat "$TMP/err")"
expect_exit 1 "$DCPROF" collect -p "$PID" --buffer 16
grep -q "cannot hold the next record of [0-9]* bytes" "$TMP/err" ||
	die "--buffer 16: $(cat "$TMP/err")"
expect_exit 2 "$DCPROF" collect --kind bogus
expect_exit 2 "$DCPROF" collect -p 12x
expect_exit 2 "$DCPROF" collect --format xml
expect_exit 2 "$DCPROF" collect --buffer lots
expect_exit 2 "$DCPROF" collect --kind
expect_exit 0 "$DCPROF" collect --help
grep -q -- "--kind" "$TMP/out" || die "--help does not list --kind"

pass
