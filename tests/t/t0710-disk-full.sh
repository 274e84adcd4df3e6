#!/bin/bash
# Disk full: a 256 KiB tmpfs is mounted and recorded into with -g and a
# 0.2 s flush interval while fault_busy walks 2^16 distinct call stacks on
# every CPU, until the file system fills. dcprof must exit non-zero (within
# the 30 s --duration it was given) with one error line on stderr naming the
# file and "No space left on device"; the file left behind must open with
# `dcprof report` (exit 0, incomplete) and hold the samples of the flushes
# written before the disk filled, and no temporary file may be left.
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
assert kept > 0, "no samples survived"
assert d["meta"]["callchain"]
PY
expect_exit 0 "$DCPROF" report -i "$F"
pass
