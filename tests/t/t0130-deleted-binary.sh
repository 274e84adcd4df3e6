#!/bin/bash
# A binary copied to a temporary directory, started, and deleted (then its
# process killed) while dcprof records system-wide (until SIGINT): the report still names
# spin_forever for that process, since the recorder pinned the file at its
# first sample, and the cookie table lists the path as it was mapped (the
# binary was mapped before it was deleted, so without " (deleted)") with the
# build id of the file. Twice: one copy started before recording (seen by
# the collection walk), one started during it (seen through MMAP2).
. "$(dirname "$0")/test-lib.sh"
need gcc python3 readelf
need_perf_events

# two builds with build ids of their own, kept as $TMP/spin1 and spin2
mkdir "$TMP/sub" || die "cannot create '$TMP/sub'"
for i in 1 2; do
	mv "$(build_workload spin -Wl,--build-id=0x"$(printf "5eed%04x%08x" $i $((RANDOM * RANDOM)))")" \
		"$TMP/spin$i" || die "cannot build spin$i"
	cp "$TMP/spin$i" "$TMP/sub/spin$i" || die "cannot copy spin$i"
done
bid() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
BID1=$(bid "$TMP/spin1") BID2=$(bid "$TMP/spin2")
[ -n "$BID1" ] && [ -n "$BID2" ] && [ "$BID1" != "$BID2" ] ||
	die "the workloads have no distinct build ids ('$BID1', '$BID2')"
BIN1=$TMP/sub/spin1
spawn "$BIN1" "$TMP/ready"
PID=$SPAWNED
wait_file "$TMP/ready"

F=$TMP/deleted.data
"$DCPROF" record -a -o "$F" >"$TMP/rec.out" 2>"$TMP/rec.err" &
REC=$!
_spawned+=("$REC")
wait_file "$F"
BIN2=$TMP/sub/spin2
spawn "$BIN2" "$TMP/ready2"
PID2=$SPAWNED
wait_file "$TMP/ready2"
# The recorder pins a file when it processes the file's first sample, and
# that comes after its walk of the existing tasks: about 1 s with 2,000
# tasks, more under load. Deleting before the pin is a race the test does
# not want, so it waits for the handles (at most 15 s), then 1 s more.
for ((i = 0; i < 300; i++)); do
	fds=$(ls -l "/proc/$REC/fd" 2>/dev/null)
	[[ $fds == *" $BIN1"* && $fds == *" $BIN2"* ]] && break
	[ -e "/proc/$REC" ] || die "the recorder exited: $(cat "$TMP/rec.err")"
	sleep 0.05
done
[ "$i" -lt 300 ] || die "the recorder holds no handle on the binaries after 15 s"
sleep 1
rm "$BIN1" "$BIN2" || die "cannot delete the binaries"
sleep 0.5
# nothing but the recorder holds the files any more
kill -KILL "$PID" "$PID2"
wait "$PID" "$PID2" 2>/dev/null
sleep 0.5
kill -INT "$REC"
wait "$REC"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc: $(cat "$TMP/rec.err")"

for triple in "$PID:$BIN1:$BID1" "$PID2:$BIN2:$BID2"; do
	IFS=: read -r PID BIN BID <<<"$triple"
	expect_exit 0 "$DCPROF" report -i "$F" --sort pid,file,symbol --format json
	cp "$TMP/out" "$TMP/report.json"
	python3 - "$TMP/report.json" "$PID" "$BIN" <<'PY' || die "the deleted binary's samples are not named"
import json, sys
d = json.load(open(sys.argv[1]))
pid, binary = int(sys.argv[2]), sys.argv[3]
mine = [r for r in d["rows"] if r["pid"] == pid]
total = sum(r["samples"] for r in mine)
good = sum(r["samples"] for r in mine
           if r["file"] == binary and r["symbol"] == "spin_forever")
print("pid %d: %d of %d samples in %s spin_forever; top rows %s" % (
    pid, good, total, binary, sorted(((r["samples"], r["file"], r["symbol"])
                                      for r in mine), reverse=True)[:4]))
# about 1.5 s of a busy CPU before the kill, but the machine may be busy
assert total >= 100, "only %d samples" % total
assert good >= 0.95 * total, "only %d of %d attributed; stats %s" % (
    good, total, d["stats"])
PY

	expect_exit 0 "$DCPROF" cookies -i "$F" --format json
	cp "$TMP/out" "$TMP/cookies.json"
	python3 - "$TMP/cookies.json" "$BIN" "$BID" <<'PY' || die "cookies do not list '$BIN' with build id $BID"
import json, sys
d = json.load(open(sys.argv[1]))
binary, bid = sys.argv[2], sys.argv[3]
mine = [c for c in d["cookies"] if any(binary in p for p in c["paths"])]
print(mine)
assert len(mine) == 1, mine
c = mine[0]
assert c["kind"] == "file" and c.get("build_id") == bid, c
assert c["paths"] == [binary], c["paths"]
assert c["samples"] > 0, c
PY
	expect_exit 0 "$DCPROF" cookies -i "$F"
	grep -q "^ *[0-9]* file  *$BID  *[1-9][0-9]*  $BIN\$" "$TMP/out" ||
		die "text cookies do not list '$BIN': $(grep spin "$TMP/out")"
done

pass
