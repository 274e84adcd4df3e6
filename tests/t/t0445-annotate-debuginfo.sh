#!/bin/bash
# annotate --debuginfo-dir: a binary stripped of everything is annotated
# only through its separate debug file in a --debuginfo-dir (found by build
# id): the name of the function and its source lines come from there, and
# without the directory annotate finds nothing. A binary stripped of its
# DWARF alone keeps its names but gets source lines only with the
# directory. A directory that cannot be used is one error line.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 objcopy strip readelf
need_perf_events

W=$(build_workload sym_chain)
BID=$(readelf -n "$W" | awk '/Build ID/ { print $3 }')
[ -n "$BID" ] || die "workload has no build id"
DBG=$TMP/debug
mkdir -p "$DBG/.build-id/${BID:0:2}"
objcopy --only-keep-debug "$W" "$DBG/.build-id/${BID:0:2}/${BID:2}.debug" ||
	die "objcopy failed"
LINES=$(grep -n "/\* HOT LOOP \*/" "$TOP/tests/workloads/sym_chain.c" |
	cut -d: -f1 | paste -sd,)

# lines JSON: "SAMPLES WITH_LINE IN_LOOP" of leaf_sixty's instructions
lines() {
	python3 - "$1" "$LINES" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hot = {int(x) for x in sys.argv[2].split(",")}
f = d["functions"][0]
assert f["symbol"] == "leaf_sixty", f["symbol"]
ins = f["instructions"]
assert sum(i["samples"] for i in ins) == f["samples"], "samples outside instructions"
with_line = sum(1 for i in ins if i["source_file"] and i["line"] > 0)
in_loop = sum(i["samples"] for i in ins
              if i["source_file"] and i["source_file"].endswith("/sym_chain.c")
              and i["line"] in hot)
print(f["samples"], with_line, in_loop)
PY
}

# 1. Stripped of everything when recorded: no name in the profile.
cp "$W" "$TMP/full"
strip --strip-all "$W" || die "strip failed"
F=$TMP/stripped.data
expect_exit 0 "$DCPROF" record -o "$F" -- "$W" 2

expect_exit 1 "$DCPROF" annotate leaf_sixty -i "$F"
one_line_error
grep -q "no samples in 'leaf_sixty'" "$TMP/err" ||
	die "unclear failure without the directory: $(cat "$TMP/err")"

expect_exit 0 "$DCPROF" annotate leaf_sixty -i "$F" --format json \
	--debuginfo-dir "$DBG"
[ -s "$TMP/err" ] && die "warnings: $(head -c 500 "$TMP/err")"
read -r total with_line in_loop <<<"$(lines "$TMP/out")" ||
	die "bad JSON: $(head -c 500 "$TMP/out")"
echo "stripped: $total samples, $in_loop on the hot loop's lines, $with_line instructions with a line"
[ "$total" -ge 500 ] || die "only $total samples in leaf_sixty"
[ "$in_loop" -ge $((total * 7 / 10)) ] ||
	die "only $in_loop of $total samples on the hot loop's lines"

expect_exit 0 "$DCPROF" annotate leaf_sixty -i "$F" --debuginfo-dir "$DBG"
grep -q "sym_chain.c:[0-9]*:.*HOT LOOP" "$TMP/out" ||
	die "no source line interleaved: $(head -c 2000 "$TMP/out")"

# repeated: a directory without the file first, then the right one
mkdir "$TMP/empty"
expect_exit 0 "$DCPROF" annotate leaf_sixty -i "$F" --format json \
	--debuginfo-dir "$TMP/empty" --debuginfo-dir "$DBG"
read -r total with_line in_loop <<<"$(lines "$TMP/out")"
[ "$in_loop" -ge $((total * 7 / 10)) ] ||
	die "the second --debuginfo-dir was not searched ($in_loop of $total)"

# 2. Stripped of its DWARF only: names, but no source lines without the
# directory.
strip --strip-debug -o "$W" "$TMP/full" || die "strip --strip-debug failed"
F2=$TMP/nodwarf.data
expect_exit 0 "$DCPROF" record -o "$F2" -- "$W" 2
expect_exit 0 "$DCPROF" annotate leaf_sixty -i "$F2" --format json
read -r total with_line in_loop <<<"$(lines "$TMP/out")"
[ "$total" -ge 500 ] || die "only $total samples in leaf_sixty"
[ "$with_line" = 0 ] || die "$with_line source lines without DWARF"
expect_exit 0 "$DCPROF" annotate leaf_sixty -i "$F2" --format json \
	--debuginfo-dir "$DBG"
read -r total with_line in_loop <<<"$(lines "$TMP/out")"
echo "no DWARF: $total samples, $in_loop on the hot loop's lines"
[ "$in_loop" -ge $((total * 7 / 10)) ] ||
	die "only $in_loop of $total samples on the hot loop's lines"

# 3. Directories that cannot be used: one line naming them, nothing on
# stdout; a missing argument is a usage error.
for bad in "$TMP/no-such-dir" "$TMP/full"; do
	expect_exit 1 "$DCPROF" annotate leaf_sixty -i "$F" --debuginfo-dir "$bad"
	one_line_error
	grep -qF "$bad" "$TMP/err" || die "the error does not name '$bad': $(cat "$TMP/err")"
	[ -s "$TMP/out" ] && die "output despite the error: $(head -c 200 "$TMP/out")"
done
expect_exit 2 "$DCPROF" annotate leaf_sixty -i "$F" --debuginfo-dir

pass
