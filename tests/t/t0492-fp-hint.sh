#!/bin/bash
# Broken frame-pointer chains said plainly (issue 17, docs/FORMAT.md STACKS
# and STATS): the perf backend's `-g` of Debian's python3 (built without frame pointers) gives
# user stacks whose chain breaks right after the leaf. The recorder's
# closing summary and the report header (text and JSON meta.fp_hint) name
# the file where most broke (python3.11, libpython or libc) and say that
# --call-graph dwarf unwinds them; the stacks end at a [truncated] marker,
# never [unknown], and those markers are not unattributed frames. A program
# built with frame pointers gets no hint. Builds before this printed no
# hint and showed python3;[unknown];LEAF.
. "$(dirname "$0")/test-lib.sh"
need gcc readelf
need_perf_events

PY=/usr/bin/python3
[ -x "$PY" ] || skip "no Debian python3 at $PY"
readelf -SW "$(readlink -f "$PY")" 2>/dev/null | grep -q ' \.eh_frame ' ||
	skip "'$PY' has no .eh_frame"

# A CPU-bound loop in the interpreter, about 2 s.
F=$TMP/py.data
expect_exit 0 "$DCPROF" record --backend perf -g -o "$F" -- "$PY" -c '
import time
t = time.time()
x = 0
while time.time() - t < 2:
    for i in range(10000):
        x += i * i % 7
'
grep -E '^dcprof: .*(python3|libc).*--call-graph dwarf' "$TMP/err" >/dev/null ||
	die "no hint naming python3 or libc and --call-graph dwarf in the summary: $(cat "$TMP/err")"
[ "$(grep -c -- '--call-graph dwarf' "$TMP/err")" -eq 1 ] ||
	die "the hint is not one line: $(cat "$TMP/err")"

expect_exit 0 "$DCPROF" report -i "$F"
grep -E '^# .*(python3|libc).*--call-graph dwarf' "$TMP/out" >/dev/null ||
	die "no hint in the report header: $(head -12 "$TMP/out")"

expect_exit 0 "$DCPROF" report -i "$F" --format json
cp "$TMP/out" "$TMP/py.json"
hint=$(json_get "$TMP/py.json" 'd["meta"]["fp_hint"]')
case $hint in
*python3*--call-graph\ dwarf* | *libc*--call-graph\ dwarf*) ;;
*) die "JSON meta.fp_hint is '$hint'" ;;
esac

# The stacks: the break is a [truncated] marker, not [unknown].
expect_exit 0 "$DCPROF" export -i "$F" --format folded -o "$TMP/py.folded"
# A sample inside python3's own execve, once its name has changed, has
# the user registers of the program being replaced: that frame is unknown
# by nature (and counted), not a broken chain; such stacks are left out.
grep '^python3' "$TMP/py.folded" | grep -v 'do_execveat_common' \
	>"$TMP/py.stacks" || die "no python3 stacks"
grep -q '\[truncated\]' "$TMP/py.stacks" ||
	die "no [truncated] frame: $(head -5 "$TMP/py.stacks")"
grep -q '\[unknown\]' "$TMP/py.stacks" &&
	die "[unknown] frames in python3's stacks: $(grep '\[unknown\]' "$TMP/py.stacks" | head -5)"

# ... and is not counted as unattributed: at most a few stray frames.
kept=$(json_get "$TMP/py.json" 'd["stats"]["samples_kept"]')
unattr=$(json_get "$TMP/py.json" 'd["stats"]["frames_unattributed"]')
truncated=$(awk '/\[truncated\]/ { n += $NF } END { print n + 0 }' "$TMP/py.stacks")
[ "$truncated" -ge $((kept / 2)) ] ||
	die "only $truncated of $kept samples end at [truncated]"
[ "$unattr" -lt $((truncated / 10 + 5)) ] ||
	die "$unattr unattributed frames for $truncated [truncated] stacks"

# A frame-pointer build: whole chains, no hint, no marker.
W=$(build_workload fp_loop -mno-omit-leaf-frame-pointer)
F2=$TMP/fp.data
expect_exit 0 "$DCPROF" record --backend perf -g -o "$F2" -- "$W"
grep -q -- '--call-graph dwarf' "$TMP/err" &&
	die "a hint for a frame-pointer build: $(cat "$TMP/err")"
expect_exit 0 "$DCPROF" report -i "$F2" --format json
cp "$TMP/out" "$TMP/fp.json"
[ -z "$(json_get "$TMP/fp.json" 'd["meta"]["fp_hint"]')" ] ||
	die "JSON meta.fp_hint for a frame-pointer build"
expect_exit 0 "$DCPROF" export -i "$F2" --format folded -o "$TMP/fp.folded"
grep -q '^fp_loop;.*main;outer;work' "$TMP/fp.folded" ||
	die "no whole stack for the frame-pointer build: $(head -3 "$TMP/fp.folded")"
# (the loader and libc, without frame pointers, may break a few at start)
grep 'outer;work' "$TMP/fp.folded" | grep -q '\[truncated\]' &&
	die "[truncated] frames in the frame-pointer build's loop: $(grep '\[truncated\]' "$TMP/fp.folded" | head -3)"
pass
