#!/bin/bash
# What a continuous recording keeps between periods is what the next one
# needs (the period lines' "kept:" and "let go:", dcp_recorder_memory()):
# - a program that ran and exited: the recorder's handle on its file is
#   closed at a cut after its exit, and the names of its addresses are let
#   go (both counts of "let go" grow);
# - the same file run again later: pinned again, its function named in the
#   periods of that run;
# - a program whose binary is deleted while it runs through many periods:
#   its function named in each of them, the handle on it held while it
#   runs (it is mapped) and closed after it exits.
# On both backends: their handles differ (the BPF one holds files to know
# them by device and inode).
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload spin)
mkdir "$TMP/a" "$TMP/b" || die "cannot create directories"
A=$TMP/a/spin_a
B=$TMP/b/spin_b
REC=
holds() { ls -l "/proc/$REC/fd" 2>/dev/null | grep -q " $1"; }
periods() { grep -c "^dcprof: period '" "$TMP/err"; }
# after N more periods are written
periods_pass() {
	local want=$(($(periods) + $1)) i
	for ((i = 0; i < 200; i++)); do
		[ "$(periods)" -ge "$want" ] && return 0
		kill -0 "$REC" 2>/dev/null || die "the recorder exited: $(tail -3 "$TMP/err")"
		sleep 0.05
	done
	die "no $1 periods written in 10 s"
}
# until the recorder holds (or no longer holds, with !) a handle on a path
until_handle() {
	local i
	for ((i = 0; i < 300; i++)); do
		if [ "$1" = '!' ]; then holds "$2" || return 0; else holds "$1" && return 0; fi
		sleep 0.05
	done
	return 1
}

# letgo BACKEND: the whole story on one backend
letgo() {
	local backend=$1 D=$TMP/periods-$1 PID_A1 PID_A2 PID_B
	cp "$W" "$A" && cp "$W" "$B" || die "cannot copy spin"
	python3 "$TOP/tests/tools/set_build_id.py" "$A" "$TMP a $backend" &&
		python3 "$TOP/tests/tools/set_build_id.py" "$B" "$TMP b $backend" ||
		die "cannot set the build ids"
	rm -f "$TMP/ready-a" "$TMP/ready-b" "$TMP/names"

	"$DCPROF" record --backend "$backend" -a -F 499 --continuous "$D" --period 1 >"$TMP/rec.out" 2>"$TMP/err" &
	REC=$!
	_spawned+=("$REC")
	periods_pass 1

	spawn "$B" "$TMP/ready-b"
	PID_B=$SPAWNED
	wait_file "$TMP/ready-b"
	until_handle "$B" || die "the recorder holds no handle on '$B' after 15 s"
	rm "$B" || die "cannot delete '$B'"

	spawn "$A" "$TMP/ready-a"
	PID_A1=$SPAWNED
	wait_file "$TMP/ready-a"
	until_handle "$A" || die "the recorder holds no handle on '$A' after 15 s"
	periods_pass 2
	kill "$PID_A1"
	wait "$PID_A1" 2>/dev/null
	periods_pass 2
	until_handle '!' "$A" || die "the handle on '$A' is still held 2 periods after its exit"
	kill -0 "$REC" 2>/dev/null || die "the recorder exited: $(tail -3 "$TMP/err")"
	holds "$B" || die "the handle on the deleted '$B' was closed while it runs"

	rm -f "$TMP/ready-a"
	spawn "$A" "$TMP/ready-a"
	PID_A2=$SPAWNED
	wait_file "$TMP/ready-a"
	periods_pass 2
	holds "$A" || die "'$A' run again is not pinned again"
	kill "$PID_A2" "$PID_B"
	wait "$PID_A2" "$PID_B" 2>/dev/null
	periods_pass 2
	until_handle '!' "$A" && until_handle '!' "$B" ||
		die "handles still held 2 periods after the programs exited: $(ls -l "/proc/$REC/fd" | grep spin_)"
	kill -TERM "$REC"
	wait "$REC" || die "record --continuous failed: $(tail -3 "$TMP/err")"

	# each period's samples of the three processes in their own file:
	# named, spin_forever the most (the rest: the start of main)
	for f in "$D"/*.dcprof; do
		"$DCPROF" report -i "$f" --sort pid,file,symbol --format json >"$TMP/p.json" ||
			die "report of '$f' failed"
		python3 - "$TMP/p.json" "$PID_A1" "$PID_A2" "$PID_B" <<'PY' >>"$TMP/names" || die "'$f': a program's samples are not named"
import json, os, sys
rows = json.load(open(sys.argv[1]))["rows"]
for pid in map(int, sys.argv[2:]):
    mine = [r for r in rows if r.get("pid") == pid and
            os.path.basename(r["file"]).startswith("spin_")]
    n = sum(r["samples"] for r in mine)
    named = sum(r["samples"] for r in mine if r["symbol"] == "spin_forever")
    unnamed = [r for r in mine if r["symbol"].startswith(("[", "0x"))]
    assert not unnamed, "pid %d: unnamed %s" % (pid, unnamed)
    if n >= 20:
        print(pid, n, named)
        assert named >= 0.9 * n, "pid %d: %d of %d samples in spin_forever" % (pid, named, n)
PY
	done
	python3 - "$TMP/names" "$PID_A1" "$PID_A2" "$PID_B" "$TMP/err" <<'PY' || die "the periods do not show what was let go"
import re, sys
seen = {}
for l in open(sys.argv[1]):
    pid, n, named = map(int, l.split())
    seen.setdefault(pid, []).append(n)
for name, pid in (("first run", sys.argv[2]), ("second run", sys.argv[3]), ("deleted binary", sys.argv[4])):
    print("%s (pid %s): periods with its samples named: %s" % (name, pid, seen.get(int(pid), [])))
    assert seen.get(int(pid)), "no period with the %s's samples" % name
assert len(seen[int(sys.argv[4])]) >= 4, "the deleted binary in fewer than 4 periods"
lines = [l for l in open(sys.argv[5]) if l.startswith("dcprof: period '")]
m = re.search(r"let go: (\d+) names, (\d+) pinned files, (\d+) open files", lines[-2])
assert m, "no 'let go' in: " + lines[-2]
print("last cut:", lines[-2].split("; ", 1)[1].strip())
assert int(m.group(1)) >= 2, "names let go: " + m.group(1)
assert int(m.group(2)) >= 3, "pinned files let go: " + m.group(2)
assert int(m.group(3)) >= 2, "open files let go: " + m.group(3)
PY
}

for backend in perf bpf; do
	echo "--- $backend"
	letgo "$backend"
done
pass
