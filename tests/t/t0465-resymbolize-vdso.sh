#!/bin/bash
# The vdso named again from a profile that stored no names: a process
# reading the clock in a loop (most samples in the vdso) is recorded, and
# the recorder is killed before it could name anything. Reading the file
# names the frames again from what is running now (the kernel by build id,
# its vdso, the files): the vdso's samples get the vdso function's name,
# the same name a finished recording stores.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload vdso_clock)

# chunk_types FILE: the types of the file's chunks, one a line (FORMAT.md);
# SYMBOLS is 7, SYMBOL_DETAILS 9, SUMMARY_SYMBOLS 12, their details 13
chunk_types() {
	python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"DCPROF\0\0", "not a profile"
off = struct.unpack_from("<I", b, 12)[0]
while off + 32 <= len(b):
    t, _, size = struct.unpack_from("<IIQ", b, off)
    print(t)
    off += 32 + (size + 7) // 8 * 8' "$1"
}

# vdso SHARE: "VDSO_SAMPLES NAMED TOP_NAME" of the report JSON on stdin
vdso_share() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = [r for r in d["rows"] if r["comm"] == "vdso_clock" and r["file"] == "[vdso]"]
total = sum(r["samples"] for r in rows)
named = [r for r in rows if not r["symbol"].startswith("[")]
top = max(named, key=lambda r: r["samples"])["symbol"] if named else "-"
print(total, sum(r["samples"] for r in named), top)'
}

# 1. A finished recording: the names it stored.
F=$TMP/done.data
expect_exit 0 "$DCPROF" record -o "$F" -- "$W" 2
expect_exit 0 "$DCPROF" report -i "$F" --format json
read -r total named top < <(vdso_share <"$TMP/out") || die "bad JSON"
echo "finished: $total vdso samples, $named named, mostly '$top'"
[ "$total" -ge 300 ] || die "only $total samples in the vdso"
[ "$named" -ge $((total * 95 / 100)) ] || die "$named of $total vdso samples named"
case $top in
*clock_gettime*) ;;
*) die "vdso samples named '$top', not clock_gettime" ;;
esac
stored=$top
chunk_types "$F" >"$TMP/done.types" || die "cannot read the chunks of $F"
grep -qx 7 "$TMP/done.types" || die "the finished recording has no SYMBOLS chunk"

# 2. Killed after its flushes but before naming: the file has no names,
#    and reading it names the vdso frames again.
F=$TMP/killed.data
"$DCPROF" record -o "$F" --flush-interval 0.5 --ready-fd 3 -- "$W" 4 \
	2>"$TMP/rec.err" 3>"$TMP/rec.ready" &
rec=$!
_spawned+=("$rec")
# 2.5 s from the moment the recorder records and the workload runs
wait_line "$TMP/rec.ready" '^recording$' 30
sleep 2.5
kill -KILL "$rec"
wait "$rec" 2>/dev/null
# the names below must come from reading the file, not from the file
chunk_types "$F" >"$TMP/killed.types" || die "cannot read the chunks of $F"
if grep -qxE '7|9|12|13' "$TMP/killed.types"; then
	die "the killed recording stored names (chunk types: $(sort -u "$TMP/killed.types" | tr '\n' ' '))"
fi
expect_exit 0 "$DCPROF" report -i "$F" --format json
[ "$(json_get "$TMP/out" 'd["meta"]["complete"]')" = false ] ||
	die "the killed recording claims to be complete"
read -r total named top < <(vdso_share <"$TMP/out") || die "bad JSON"
echo "killed: $total vdso samples, $named named, mostly '$top'"
[ "$total" -ge 300 ] || die "only $total samples in the vdso"
[ "$named" -ge $((total * 95 / 100)) ] ||
	die "$named of $total vdso samples named after the kill"
[ "$top" = "$stored" ] || die "named '$top' after the kill, '$stored' when finished"
pass
