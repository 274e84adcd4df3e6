#!/bin/bash
# The summary of a profile (docs/FORMAT.md): rows summed over pids, each
# frame one address of its function. Recorded with -g: a storm of 1,000
# short-lived processes (a new pid each: 300 gave 971 rows, under the 64
# KiB of rows and stacks below which no summary is written) and a function
# inlined into two callers.
# (a) the compact file has a summary, with at most a third of the full
#     file's rows (the storm's pids) and fewer stack bytes;
# (b) every view reads the same from the summary as from the whole file:
#     the same file with its summary removed (as earlier versions wrote
#     it) gives byte-identical reports (flat, --children, both trees,
#     JSON, --no-inline, --no-demangle, filters, --max-stack,
#     --percent-limit, --sort) and flame graphs;
# (c) the views that need pids read the whole file: --sort pid shows each
#     storm child;
# (d) `report --resymbolize --write` on the file without a summary writes
#     one again.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

STORM=$(build_workload storm)
INLINE=$(build_workload sym_inline)
F=$TMP/summary.data
PLAIN=$TMP/plain.data

expect_exit 0 "$DCPROF" record -g -o "$F" -- sh -c "'$STORM' 1000 5 && '$INLINE' 1"

# Chunk statistics from the chunk headers (raw_size: the uncompressed
# payload, 4 bytes of count then 24 bytes per row); with "strip OUT",
# also writes the file without its summary chunks (types 10 to 13).
chunks() {
	python3 - "$@" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
hs = struct.unpack_from("<I", d, 12)[0]
out, off, raw = bytearray(d[:hs]), hs, {}
while off < len(d):
    t, fl, ps, rs = struct.unpack_from("<IIQQ", d, off)
    end = off + 32 + ((ps + 7) & ~7)
    raw[t] = raw.get(t, 0) + rs
    if not 10 <= t <= 13:
        out += d[off:end]
    off = end
rows = lambda t: (raw.get(t, 0) - 4) // 24 if t in raw else 0
print(rows(5), rows(11), raw.get(4, 0), raw.get(10, 0))
if len(sys.argv) > 3:
    struct.pack_into("<Q", out, 24, len(out))
    struct.pack_into("<I", out, 40, 0)
    struct.pack_into("<I", out, 40, zlib.crc32(bytes(out[:hs])))
    open(sys.argv[3], "wb").write(out)
PY
}

# (a)
read -r rows sum_rows stack_bytes sum_stack_bytes < <(chunks "$F" strip "$PLAIN") ||
	die "cannot read the chunks of '$F'"
echo "rows: $rows in the file, $sum_rows in its summary; stack bytes $stack_bytes, $sum_stack_bytes"
[ "$rows" -ge 300 ] || die "only $rows rows for 300 processes"
[ "$sum_rows" -ge 1 ] || die "the compact file has no summary"
[ $((sum_rows * 3)) -le "$rows" ] ||
	die "the summary has $sum_rows rows, the file $rows: pids not summed"
[ "$sum_stack_bytes" -lt "$stack_bytes" ] ||
	die "the summary's stacks ($sum_stack_bytes bytes) are not smaller than the file's ($stack_bytes)"
read -r plain_rows plain_sum _ < <(chunks "$PLAIN")
[ "$plain_rows" = "$rows" ] && [ "$plain_sum" = 0 ] ||
	die "the copy without a summary is wrong ($plain_rows rows, $plain_sum in a summary)"

# (b) Both files under one name, so that the outputs can be compared
# byte for byte (the reports print the file's name).
mkdir "$TMP/sum" "$TMP/plain"
cp "$F" "$TMP/sum/p.data"
cp "$PLAIN" "$TMP/plain/p.data"
views=(
	""
	"--children"
	"--tree caller"
	"--tree callee"
	"--format json"
	"--format json --children"
	"--format json --tree caller"
	"--tree caller --no-inline"
	"--tree callee --no-demangle"
	"--children --comm storm"
	"--tree caller --max-stack 2"
	"--tree callee --percent-limit 1"
	"--sort symbol --symbol storm_child_burn"
	"--sort file,comm --children"
	"--file storm --children"
)
for v in "${views[@]}"; do
	# shellcheck disable=SC2086 # the options of one view
	(cd "$TMP/sum" && "$DCPROF" report -i p.data $v >../sum.out 2>&1) ||
		die "report $v failed on the file with a summary: $(head -c 300 "$TMP/sum.out")"
	# shellcheck disable=SC2086
	(cd "$TMP/plain" && "$DCPROF" report -i p.data $v >../plain.out 2>&1) ||
		die "report $v failed on the file without one: $(head -c 300 "$TMP/plain.out")"
	# JSON says which it read; nothing else may differ
	sed -i 's/^\({"file":"p.data","meta":{"complete":[a-z]*,"summary":\)[a-z]*,/\1?,/' \
		"$TMP/sum.out" "$TMP/plain.out"
	cmp -s "$TMP/sum.out" "$TMP/plain.out" ||
		die "report $v differs with the summary: $(diff "$TMP/plain.out" "$TMP/sum.out" | head -c 1000)"
	[ "$(wc -l <"$TMP/sum.out")" -ge 1 ] || die "report $v printed nothing"
done
for fmt in html svg; do
	(cd "$TMP/sum" && "$DCPROF" flamegraph -i p.data --format $fmt -o fg.$fmt) ||
		die "flamegraph --format $fmt failed with the summary"
	(cd "$TMP/plain" && "$DCPROF" flamegraph -i p.data --format $fmt -o fg.$fmt) ||
		die "flamegraph --format $fmt failed without it"
	cmp -s "$TMP/sum/fg.$fmt" "$TMP/plain/fg.$fmt" ||
		die "the $fmt flame graph differs with the summary"
done
echo "${#views[@]} report views and 2 flame graphs identical"

expect_exit 0 "$DCPROF" report -i "$F" --format json
[ "$(json_get "$TMP/out" 'd["meta"]["summary"]')" = true ] ||
	die "the report did not read the summary"
expect_exit 0 "$DCPROF" report -i "$PLAIN" --format json
[ "$(json_get "$TMP/out" 'd["meta"]["summary"]')" = false ] ||
	die "the report says it read a summary the file does not have"

# (c)
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,pid --comm storm
[ "$(json_get "$TMP/out" 'd["meta"]["summary"]')" = false ] ||
	die "--sort pid read the summary"
pids=$(json_get "$TMP/out" 'len(set(r["pid"] for r in d["rows"]))')
echo "--sort pid: $pids storm pids"
[ "$pids" -ge 850 ] || die "--sort pid shows $pids storm processes of 1000"

# (d)
expect_exit 0 "$DCPROF" report -i "$PLAIN" --resymbolize --write
read -r _ sum_rows _ < <(chunks "$PLAIN")
[ "$sum_rows" -ge 1 ] || die "--resymbolize --write wrote no summary"
pass
