#!/bin/bash
# Functions without symbols in a distribution's own stripped program
# (docs/SYMBOLS.md, issue 17): Debian's `sort` (coreutils: no .symtab, no
# debug file installed, .eh_frame kept) sorting a few million generated
# lines. Fewer than 1% of sort's samples may sit in rows that name no
# function: no [unresolved] row for the file at all, and its per-address
# names (FILE+0xOFFSET where no FDE covers the address, i.e. a START that is
# no FDE's start) under 1% in total. The hottest made names are FDE starts:
# each START of `sort+0xSTART` (a file offset) turned into a vaddr through
# the PT_LOAD segment holding it is the pc_begin of an FDE that
# `readelf --debug-dump=frames` lists, and `annotate` shows the function
# over the FDE's whole range. Builds before FDE naming put every sample of
# the file in one [unresolved] row (some 90% of sort's samples here).
. "$(dirname "$0")/test-lib.sh"
need sort awk python3 readelf
need_perf_events
test_seed
# no debug file may come from the network either
unset DEBUGINFOD_URLS

SORT=$(readlink -f "$(command -v sort)")
"$SORT" --version 2>/dev/null | head -1 | grep -q 'GNU coreutils' ||
	skip "'$SORT' is not GNU coreutils' sort"
readelf -SW "$SORT" >"$TMP/sections" || die "readelf -S '$SORT' failed"
grep -q ' \.symtab ' "$TMP/sections" &&
	skip "'$SORT' is not stripped (it has a .symtab): the test is about a stripped program"
grep -q ' \.gnu_debugdata ' "$TMP/sections" &&
	skip "'$SORT' carries MiniDebugInfo (.gnu_debugdata), which names its functions"
grep -q ' \.eh_frame ' "$TMP/sections" || die "'$SORT' has no .eh_frame"
BID=$(readelf -n "$SORT" | awk '/Build ID/ { print $3 }')
for dbg in ${BID:+"/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug"} \
	"/usr/lib/debug$SORT.debug" "/usr/lib/debug$SORT"; do
	[ -e "$dbg" ] &&
		skip "a debug file of '$SORT' is installed ($dbg, e.g. coreutils-dbgsym): the test needs one without"
done

# The FDEs of the file (pc_begin, pc_end in hex) and its loadable segments
# (offset, vaddr, filesz), to turn a file offset START into a vaddr.
readelf --debug-dump=frames "$SORT" 2>/dev/null |
	sed -n 's/.* FDE .* pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1 \2/p' >"$TMP/fdes"
[ "$(wc -l <"$TMP/fdes")" -ge 50 ] ||
	die "readelf lists $(wc -l <"$TMP/fdes") FDEs in '$SORT'"
readelf -lW "$SORT" | awk '$1 == "LOAD" { print $2, $3, $5 }' >"$TMP/loads"
[ -s "$TMP/loads" ] || die "readelf -l lists no PT_LOAD in '$SORT'"

# About 100 MB of random lines, sorted by two numeric keys in the C locale:
# sort's own code (key comparison, the merge sort, line reading) takes most
# of the 3-5 s of CPU, libc little (a text key in the C locale would spend
# it in memcmp).
IN=$TMP/in.txt
awk -v seed="$SEED" 'BEGIN {
	srand(seed)
	for (i = 0; i < 3000000; i++)
		printf "%d %x %.6f\n", int(rand() * 1e9), int(rand() * 2^31), rand() * 1e6
}' >"$IN" || die "cannot write the input"

F=$TMP/sort.data
expect_exit 0 env LC_ALL=C "$DCPROF" record -o "$F" -- \
	"$SORT" --parallel=1 -S 512M -T "$TMP" -k3,3n -k1,1n -o "$TMP/sorted" "$IN"
[ "$(wc -l <"$TMP/sorted")" = 3000000 ] || die "sort did not sort its input"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,file,symbol
cp "$TMP/out" "$TMP/report.json"

python3 - "$TMP/report.json" "$SORT" "$TMP/fdes" "$TMP/loads" \
	>"$TMP/top" <<'PY' || die "sort's samples are not named by function"
import json, re, sys
d = json.load(open(sys.argv[1]))
path = sys.argv[2]
base = path.rsplit("/", 1)[1]
fdes = {}
for l in open(sys.argv[3]):
    b, e = l.split()
    fdes[int(b, 16)] = int(e, 16)
loads = [tuple(int(x, 16) for x in l.split()) for l in open(sys.argv[4])]

def vaddr(off):
    for o, v, n in loads:
        if o <= off < o + n:
            return off - o + v
    return None

rows = [r for r in d["rows"] if r["comm"] == "sort"]
total = sum(r["samples"] for r in rows)
mine = [r for r in rows if r["file"] == path]
in_file = sum(r["samples"] for r in mine)
assert in_file >= 1000 and in_file >= total / 3, \
    "only %d of sort's %d samples in %s" % (in_file, total, path)
pct = lambda n: 100.0 * n / total

unresolved = sum(r["samples"] for r in mine if r["symbol"] == "[unresolved]")
assert unresolved == 0, \
    "%d samples (%.1f%% of sort's %d) in the [unresolved] row of %s" % (
        unresolved, pct(unresolved), total, path)

made = re.compile(re.escape(base) + r"\+0x([0-9a-f]+)")
fn, per_addr = {}, {}
for r in mine:
    m = made.fullmatch(r["symbol"])
    if not m:
        continue  # a real name (PLT stubs: __errno_location@plt)
    v = vaddr(int(m.group(1), 16))
    (fn if v in fdes else per_addr)[r["symbol"]] = (r["samples"], v)
n_addr = sum(s for s, _ in per_addr.values())
sys.stderr.write("sort: %d samples, %d in %s: %d functions named by FDE, "
                 "%d per-address names with %d samples (%.2f%%)\n" % (
                     total, in_file, base, len(fn), len(per_addr), n_addr,
                     pct(n_addr)))
assert pct(n_addr) < 1, \
    "%.2f%% of sort's samples in %d per-address names (no FDE starts there): %s" % (
        pct(n_addr), len(per_addr),
        ", ".join(sorted(per_addr, key=lambda k: -per_addr[k][0])[:10]))

# The hottest made names are functions: their starts are FDE starts, and
# they group many samples each (one row per function, not per address).
top = sorted(fn.items(), key=lambda kv: -kv[1][0])[:5]
assert len(top) >= 3, "only %d functions of %s named by FDE" % (len(top), base)
assert pct(top[0][1][0]) >= 10, \
    "the hottest function %s has %.1f%% of sort's samples" % (top[0][0], pct(top[0][1][0]))
for name, (s, v) in top:
    sys.stderr.write("  %-14s %6d samples %5.1f%%  FDE pc=%x..%x\n" % (
        name, s, pct(s), v, fdes[v]))
    print(name, s, "%x" % v, fdes[v] - v)
PY

# annotate the hottest one: the function over the FDE's range
read -r top samples _ size <"$TMP/top"
expect_exit 0 "$DCPROF" annotate -i "$F" --format json "$top"
python3 - "$TMP/out" "$top" "$samples" "$size" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
name, samples, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
start = int(name.split("+")[1], 16)
fn = d["functions"]
assert len(fn) == 1, "%d functions" % len(fn)
fn = fn[0]
assert fn["start"] == start and fn["size"] == size, \
    "annotated %x+%d, want %x+%d (the FDE's range)" % (fn["start"], fn["size"], start, size)
ins = fn["instructions"]
assert len(ins) >= 5 and all(i["text"] for i in ins), "no code shown"
assert fn["samples"] == samples == sum(i["samples"] for i in ins), \
    "annotate has %d samples, the report %d" % (fn["samples"], samples)
PY
	die "annotate $top is wrong: $(head -c 300 "$TMP/out")"

pass
