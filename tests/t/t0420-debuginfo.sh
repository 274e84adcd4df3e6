#!/bin/bash
# Separate debug files: a stripped binary's samples are named after their
# functions' starts (split+0x..., docs/SYMBOLS.md), not after symbols; with
# its debug file in a --debuginfo-dir (found by build id),
# report --resymbolize names them, and --write stores the names. A path
# that now holds another build of the binary is reported as a mismatch.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 objcopy strip readelf
need_perf_events

SPLIT=$(build_workload split)
BID=$(readelf -n "$SPLIT" | awk '/Build ID/ { print $3 }')
[ -n "$BID" ] || die "workload has no build id"
DBG=$TMP/debug
mkdir -p "$DBG/.build-id/${BID:0:2}"
objcopy --only-keep-debug "$SPLIT" "$DBG/.build-id/${BID:0:2}/${BID:2}.debug" ||
	die "objcopy failed"
strip --strip-all "$SPLIT" || die "strip failed"
F=$TMP/strip.data

expect_exit 0 "$DCPROF" record -o "$F" -- "$SPLIT" 2
shares() { # JSON FILE -> "fifty thirty twenty unnamed (split+0x... or [unresolved])"
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {}
for r in d["rows"]:
    if r["comm"] == "split":
        rows[r["symbol"]] = rows.get(r["symbol"], 0) + r["samples"]
print(rows.get("work_fifty", 0), rows.get("work_thirty", 0),
      rows.get("work_twenty", 0),
      sum(n for s, n in rows.items()
          if s == "[unresolved]" or s.startswith("split+0x")))
PY
}

expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,symbol
read -r a b c u <<<"$(shares "$TMP/out")"
[ "$a$b$c" = 000 ] || die "the stripped binary was named at record time ($a $b $c)"
[ "$u" -ge 1000 ] || die "only $u samples without a symbol in the stripped binary"

# without the directory, nothing changes
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,symbol \
	--resymbolize
read -r a b c u <<<"$(shares "$TMP/out")"
[ "$a$b$c" = 000 ] || die "names appeared without the debug file"

expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,symbol \
	--resymbolize --debuginfo-dir "$DBG"
cp "$TMP/out" "$TMP/resym.json"
read -r a b c u <<<"$(shares "$TMP/resym.json")"
echo "resymbolized: fifty $a thirty $b twenty $c unresolved $u"
[ "$a" -gt "$b" ] && [ "$b" -gt "$c" ] && [ "$c" -gt 100 ] ||
	die "resymbolized names are missing or off: $a $b $c"
[ "$u" -lt "$c" ] || die "$u samples are still unresolved"
[ "$(json_get "$TMP/resym.json" 'd["resymbolize"]["objects_mismatched"]')" = 0 ] ||
	die "a mismatch was reported for the right binary"

# the names are not stored unless asked for; --write stores them
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,symbol
read -r a b c u <<<"$(shares "$TMP/out")"
[ "$a" = 0 ] || die "a report without --write changed the profile"
expect_exit 0 "$DCPROF" report -i "$F" --resymbolize --debuginfo-dir "$DBG" --write
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,symbol
read -r a b c u <<<"$(shares "$TMP/out")"
[ "$a" -gt 100 ] || die "--write did not store the names"

# another build at the same path: a mismatch, and the names stay
build_workload split -O2 >/dev/null
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,symbol \
	--resymbolize --debuginfo-dir "$DBG"
grep -q "replaced" "$TMP/err" || die "no mismatch warning: $(cat "$TMP/err")"
[ "$(json_get "$TMP/out" 'd["resymbolize"]["objects_mismatched"]')" -ge 1 ] ||
	die "the mismatch is not counted"
read -r a b c u <<<"$(shares "$TMP/out")"
[ "$a" -gt 100 ] || die "names were lost on a mismatch"

# --- .gnu_debuglink, at record time: the debug file in the binary's .debug
# directory names it; a debug file of another build under the same name,
# met first (next to the binary), is passed over. Beside it runs a stripped
# binary with no debug file anywhere: no debuginfod server is named, so
# libdwfl's debuginfod client (libdebuginfod, libcurl) must not be loaded
# for it; with a server named, it is asked.
mkdir -p "$TMP/dl/.debug"
cp "$(build_workload split)" "$TMP/dl/linked" || die "cannot copy the workload"
objcopy --only-keep-debug "$TMP/dl/linked" "$TMP/dl/.debug/linked.debug" &&
	strip --strip-all "$TMP/dl/linked" &&
	objcopy --add-gnu-debuglink="$TMP/dl/.debug/linked.debug" "$TMP/dl/linked" ||
	die "cannot split the debug file off"
objcopy --only-keep-debug "$(build_workload split -O2)" "$TMP/dl/linked.debug" ||
	die "cannot make the decoy debug file"
[ "$(readelf -n "$TMP/dl/linked.debug" 2>/dev/null | awk '/Build ID/ { print $3 }')" != \
	"$(readelf -n "$TMP/dl/linked" | awk '/Build ID/ { print $3 }')" ] ||
	die "the decoy has the binary's build id"
# (another build: a file of the same build id would be the same cookie)
strip --strip-all "$(build_workload split -O2)" || die "strip failed"
env -u DEBUGINFOD_URLS LD_DEBUG=files "$DCPROF" record -o "$TMP/dl.data" \
	-- sh -c '"$0" 2 & "$1" 1; wait' "$TMP/dl/linked" "$TMP/split" \
	>"$TMP/out" 2>"$TMP/err" ||
	die "record of the debuglinked binary failed: $(grep dcprof "$TMP/err")"
grep -q "libdebuginfod" "$TMP/err" &&
	die "libdebuginfod was loaded with no debuginfod server named"
expect_exit 0 "$DCPROF" report -i "$TMP/dl.data" --format json --sort comm,symbol
python3 - "$TMP/out" <<'PY' || die "the debuglinked binary is not named by its debug file"
import json, sys
d = json.load(open(sys.argv[1]))
rows, other = {}, 0
for r in d["rows"]:
    if r["comm"] == "linked":
        rows[r["symbol"]] = rows.get(r["symbol"], 0) + r["samples"]
    elif r["comm"] == "split" and r["symbol"].startswith("split+0x"):
        other += r["samples"]
a, b, c = (rows.get("work_" + f, 0) for f in ("fifty", "thirty", "twenty"))
print("debuglink: fifty %d thirty %d twenty %d of %d; %d unnamed beside it"
      % (a, b, c, sum(rows.values()), other))
assert a > b > c > 100, rows
assert other > 100, "the binary without a debug file did not run"
PY
DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_CACHE_PATH=$TMP/dcache \
	LD_DEBUG=files "$DCPROF" record -o "$TMP/dd.data" -- "$TMP/split" 1 \
	>"$TMP/out" 2>"$TMP/err" || die "record with a server named failed: $(grep dcprof "$TMP/err")"
grep -q "libdebuginfod" "$TMP/err" ||
	die "libdebuginfod was not loaded with a debuginfod server named"

pass
