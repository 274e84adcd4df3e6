#!/bin/bash
# Disk full: a 256 KiB tmpfs is mounted and recorded into with -g and a
# 0.2 s flush interval while fault_busy walks 2^16 distinct call stacks on
# every CPU, until the file system fills. dcprof must exit non-zero (within
# the 30 s --duration it was given) with one error line on stderr naming the
# file and "No space left on device"; the file left behind must open with
# `dcprof report` (exit 0, incomplete, and the disk full: its last META
# chunk says so, in room kept past the file's end) and hold the samples of
# the flushes written before the disk filled, and no temporary file may be
# left. Then a command recorded into the full disk: it is neither killed
# nor abandoned (issue 41: it was killed without a word): dcprof says in
# one line that the disk is full and that it waits for the command, which
# runs to its end (its last step writes a marker), exits 1, and its file
# reports the disk full, with the samples written before.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 mount umount
need_root
need_perf_events
cp "$DCPROF" "$TMP/dcprof" && DCPROF=$TMP/dcprof || die "cannot copy dcprof"

MNT=$TMP/small\ disk
mkdir "$MNT" || die "cannot create '$MNT'"
mount -t tmpfs -o size=256k tmpfs "$MNT" ||
	skip "cannot mount a tmpfs (not allowed in this container?)"
trap 'umount "$MNT" 2>/dev/null; _cleanup' EXIT

BUSY=$(build_workload fault_busy)
spawn "$BUSY" "$(nproc)" 0 16

F=$MNT/full.data
start=$(date +%s)
expect_exit 1 "$DCPROF" record -a -g --flush-interval 0.2 --duration 30 \
	-o "$F"
echo "dcprof failed after $(($(date +%s) - start)) s: $(cat "$TMP/err")"
one_line_error
grep -qF "$F" "$TMP/err" || die "the error does not name '$F'"
grep -q "No space left on device" "$TMP/err" ||
	die "the error does not say 'No space left on device'"
grep -q "disk is full" "$TMP/err" || die "the error does not say the disk is full"
ls -la "$MNT"
[ "$(ls -A "$MNT" | grep -v -x -F "full.data")" = "" ] ||
	die "files left beside the profile: $(ls -A "$MNT")"

expect_exit 0 "$DCPROF" report -i "$F" --format json
cp "$TMP/out" "$TMP/full.json"
python3 - "$TMP/full.json" "$F" <<'PY' || die "the flushes before the disk filled are not intact"
import json, os, sys
d = json.load(open(sys.argv[1]))
kept = sum(r["samples"] for r in d["rows"])
print("file of %d bytes: %d samples kept in %d rows, complete %s" % (
    os.path.getsize(sys.argv[2]), kept, len(d["rows"]), d["meta"]["complete"]))
assert not d["meta"]["complete"]
assert d["meta"]["disk_full"], "the file does not say the disk was full"
assert kept > 0, "no samples survived"
assert d["meta"]["callchain"]
PY
expect_exit 0 "$DCPROF" report -i "$F"
grep -q "^# INCOMPLETE: the disk was full" "$TMP/out" ||
	die "report does not say the disk was full: $(grep INCOMPLETE "$TMP/out")"
kill -KILL "$SPAWNED"
wait "$SPAWNED" 2>/dev/null

# --- a command recorded into a disk that fills ---------------------------
rm -f "$MNT"/*
# 24 KiB left: the command's stacks fill it within its first second or two
dd if=/dev/zero of="$MNT/fill" bs=4k count=58 2>/dev/null
F=$MNT/cmd.data
start=$(date +%s%N)
expect_exit 1 "$DCPROF" record -g --flush-interval 0.2 -o "$F" -- \
	sh -c '"$0" 2 4 16; echo done >"$1"' "$BUSY" "$TMP/marker"
took=$(( ($(date +%s%N) - start) / 1000000 ))
echo "a command into a full disk: dcprof returned after $took ms: $(cat "$TMP/err")"
one_line_error
grep -q "disk is full" "$TMP/err" || die "the error does not say the disk is full"
grep -q "waiting for 'sh' (pid [0-9]*) to exit" "$TMP/err" ||
	die "the error does not say that dcprof waits for the command"
[ "$(cat "$TMP/marker" 2>/dev/null)" = done ] ||
	die "the command did not run to its end (no marker)"
[ "$took" -ge 3500 ] || die "dcprof returned after $took ms, before the command's 4 s"
expect_exit 0 "$DCPROF" report -i "$F" --format json
cp "$TMP/out" "$TMP/cmd.json"
python3 - "$TMP/cmd.json" <<'PY' || die "the command's file does not say the disk was full"
import json, sys
d = json.load(open(sys.argv[1]))
kept = sum(r["samples"] for r in d["rows"])
print("command's file: %d samples kept, %.1f s, disk_full %s" % (
    kept, d["meta"]["duration_ns"] / 1e9, d["meta"]["disk_full"]))
assert not d["meta"]["complete"] and d["meta"]["disk_full"]
assert kept > 0
PY
pass
